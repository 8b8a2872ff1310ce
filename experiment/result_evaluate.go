package experiment

import (
	"cmp"
	"fmt"
	"github.com/ccsets/ccs/baseline"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/figure"
	"github.com/ccsets/ccs/internal/jsonfloat"
)

func init() {
	Register(Kind{Name: "evaluate", Heading: "A fitted set on a test bundle (ccs evaluate)", Order: 60,
		New: func() Result { return new(Evaluation) }})
}

// Evaluation is ccs evaluate's result (kind "evaluate"): a fitted set's
// coverage of the test positives, exclusion of the test negatives and
// LogVol/d on a test bundle (fractions), with -per-class each class's.
type Evaluation struct {
	Geometry    string         `json:"geometry"`
	Dim         int            `json:"dim"`
	Alpha       float64        `json:"alpha"`
	Threshold   Number         `json:"threshold"`
	Calibration conformal.Info `json:"calibration"`
	Coverage    float64        `json:"coverage"`
	Exclusion   *float64       `json:"exclusion"` // null without negatives
	// LogVolPerDim is +Inf for a whole-space set.
	LogVolPerDim Number `json:"logvol_per_dim"`
	Positives    int    `json:"positives"`
	Negatives    int    `json:"negatives"`
	// NegativesAre, where the test bundle's manifest says its negatives
	// are not random rows (judged not relevant, or hard), says what they
	// are (bundle.ManifestNegatives): what the exclusion is on.
	NegativesAre string            `json:"negatives_are,omitempty"`
	Warnings     []string          `json:"warnings"`
	Classes      []ClassEvaluation `json:"classes,omitempty"`
	// Labels, for a test bundle of several labels a row judged label by
	// label (eval.ByLabel), are each label's coverage of the positives
	// that share it with their anchor.
	Labels []LabelEvaluation `json:"labels,omitempty"`
	// LabelNames, for string labels (ccs bundle's manifest), name the
	// classes: label i is LabelNames[i].
	LabelNames []string `json:"label_names,omitempty"`
	// Collection and Sizes, where a collection was given, are it and how
	// many of its items the set holds around the test anchors.
	Collection string      `json:"collection,omitempty"`
	Sizes      *eval.Sizes `json:"set_sizes,omitempty"`
	// ClassSizes, with per-class on a labelled test bundle, are Sizes
	// class by class of the same anchors.
	ClassSizes []eval.ClassSizes `json:"class_set_sizes,omitempty"`
	// Baselines are the certified top-k baselines measured beside the set
	// on the collection (eval.TopKBaseline), calibrated on
	// BaselineCalibration, the set's calibration bundle.
	Baselines           []eval.TopK `json:"baselines,omitempty"`
	BaselineCalibration string      `json:"baseline_calibration,omitempty"`
	// Exchangeability checks the test anchors against the set's
	// calibration (CheckShift): whether they leave the set more often than
	// chance allows. Absent where the set has no check (pooled, whole
	// space).
	Exchangeability *conformal.Exchangeability `json:"exchangeability,omitempty"`
	// ClassChecks, for a set with one threshold for all classes judged
	// class by class, check each class against the set's calibration
	// (ClassShortfalls): whether it falls short of 1 − α beyond chance.
	ClassChecks []conformal.ClassCheck `json:"class_checks,omitempty"`
}

// Check refuses an evaluation that is not one (a file edited by hand, or
// another document's fields): no calibration mode or α, no positives,
// coverages and exclusions that are not fractions (a report of 9577% or
// of 0% against 1 − α = 100% before).
func (e *Evaluation) Check() error {
	switch {
	case !e.Calibration.Mode.Valid():
		return fmt.Errorf("calibration.mode missing or unknown: want one-per-anchor, pooled, pac or class")
	case !(e.Alpha > 0 && e.Alpha < 1):
		return fmt.Errorf("alpha = %v, want 0 < α < 1", e.Alpha)
	case e.Positives < 1:
		return fmt.Errorf("positives = %d: an evaluation counts at least one test positive", e.Positives)
	}
	fraction := func(what string, v *float64) error {
		if v != nil && !(*v >= 0 && *v <= 1) {
			return fmt.Errorf("%s = %v, not a fraction", what, *v)
		}
		return nil
	}
	if err := fraction("coverage", &e.Coverage); err != nil {
		return err
	}
	if err := fraction("exclusion", e.Exclusion); err != nil {
		return err
	}
	for i, c := range e.Classes {
		if err := fraction(fmt.Sprintf("classes[%d].coverage", i), &c.Coverage); err != nil {
			return err
		}
		if err := fraction(fmt.Sprintf("classes[%d].exclusion", i), c.Exclusion); err != nil {
			return err
		}
	}
	return nil
}

// LabelEvaluation is one label's row of an evaluation label by label
// (eval.LabelResult), with its name where the labels have names.
type LabelEvaluation struct {
	Label     int64   `json:"label"`
	Name      string  `json:"name,omitempty"`
	Anchors   int     `json:"anchors"`
	Positives int     `json:"positives"`
	Coverage  float64 `json:"coverage"`
}

// WithLabels sets e's label by label rows from labels, named by names
// (label i is names[i]; nil: numbers alone).
func (e *Evaluation) WithLabels(labels []eval.LabelResult, names []string) {
	e.Labels = make([]LabelEvaluation, len(labels))
	for i, l := range labels {
		e.Labels[i] = LabelEvaluation{Label: l.Label, Anchors: l.Anchors, Positives: l.Positives, Coverage: l.Coverage}
		if l.Label >= 0 && l.Label < int64(len(names)) {
			e.Labels[i].Name = names[l.Label]
		}
	}
}

// SetSizeText says in a line how many of collection's items the sets
// hold, each anchor's at its class's threshold where classConditional
// says the set has one a class: ccs evaluate -db's line and an
// evaluation's text (WriteText).
func SetSizeText(collection string, z eval.Sizes, classConditional bool) string {
	share := func(v float64) string {
		if z.Items == 0 {
			return ""
		}
		pc := 100 * v / float64(z.Items)
		return fmt.Sprintf(" (%.*f%%)", percentPrecision(pc), pc)
	}
	s := fmt.Sprintf("mean %.1f of %d items of %s%s, median %d, 10th–90th percentile %d–%d (nearest ranks), largest %d",
		z.Mean, z.Items, collection, share(z.Mean), z.Median, z.P10, z.P90, z.Max)
	if z.Empty > 0 {
		s += fmt.Sprintf("; %d sets hold none", z.Empty)
	}
	s += fmt.Sprintf(" (around the test bundle's first %d anchors; an anchor's own item counts where the collection holds it)", z.Anchors)
	if classConditional {
		s += "; each anchor's set at its class's threshold"
	}
	return s
}

// CalibrationSplit is the bundle of cal's anchors s was calibrated on:
// cal itself, or, for an ellipsoid calibrated on half of it (ccs calibrate
// -geometry ellipsoid without -fit, baseline.Halves with the set's seed),
// that half, said in note. Neither is an error naming why (s records no
// split, or another): a top-k baseline calibrated beside s must take the
// set's own calibration units (eval.TopKBaseline).
func CalibrationSplit(s *conformal.Set, cal *bundle.Bundle) (split *bundle.Bundle, note string, err error) {
	want := s.Calibration.Anchors
	switch {
	case want == "":
		return nil, "", eval.ErrNoCalibrationSplit
	case cal.Digest() == want:
		return cal, "", nil
	}
	if _, half, err := baseline.Halves(cal, s.Calibration.Seed); err == nil && half.Digest() == want {
		return half, fmt.Sprintf("the set was calibrated on %d of its %d anchors (the ellipsoid's half, seed %d): k is calibrated on the same half", half.N, cal.N, s.Calibration.Seed), nil
	}
	return nil, "", fmt.Errorf("it is not the split the set was calibrated on (the set records its anchors' digest, %.12s…, this bundle's is %.12s…): the top-k baseline calibrates k on the set's own calibration units", want, cal.Digest())
}

// TopKLabel is the row name of a top-k baseline in ccs evaluate's text.
func TopKLabel(b eval.TopK) string {
	if b.Distance == eval.DistanceL2 {
		return "top-k l2"
	}
	return "top-k"
}

// TopKText is a top-k baseline as ccs evaluate prints it, calibrated on
// the bundle named cal, beside the set's coverage of the same positives.
func TopKText(b eval.TopK, cal string) string {
	by := "the set's distance"
	if b.Distance == eval.DistanceL2 {
		by = "the Euclidean distance"
	}
	k := fmt.Sprintf("k = %d", b.K)
	if b.Items > 0 {
		k += fmt.Sprintf(" of %d items (%.1f%%)", b.Items, 100*float64(b.K)/float64(b.Items))
	}
	if b.Whole {
		k = fmt.Sprintf("k = all %d items (the whole space: too few calibration units for α, or positives beyond every item)", b.K)
	}
	return fmt.Sprintf("%s by %s (rank %d of the n=%d calibration units' ranks in the collection, %s): covers %s of the %d positives of the test bundle's first %d anchors, the set %s of the same",
		k, by, b.Rank, b.N, cal, Percent(b.Coverage), b.Positives, b.Anchors, Percent(b.SetCoverage))
}

// BaselinesText is the lines of the top-k baselines measured beside a
// set, each "top-k      k = …" (TopKLabel, TopKText), calibrated on the
// bundle named cal: as ccs evaluate prints them and an evaluation's text
// (WriteText) says them.
func BaselinesText(baselines []eval.TopK, cal string) string {
	var b strings.Builder
	for _, t := range baselines {
		fmt.Fprintf(&b, "%-10s %s\n", TopKLabel(t), TopKText(t, cal))
	}
	return b.String()
}

// ClassSizesText is the table of the sets' sizes class by class around
// the first anchors test anchors, each class by its name (its number
// where it has none), headed by a line that says so: as ccs evaluate
// -per-class -db prints it and an evaluation's text (WriteText) says it.
func ClassSizesText(anchors int, classes []eval.ClassSizes) string {
	var b strings.Builder
	fmt.Fprintf(&b, "set size by class, around the first %d test anchors\n\n", anchors)
	rows := [][]string{{"class", "anchors", "mean", "median", "p90", "max", "empty"}}
	for _, c := range classes {
		rows = append(rows, []string{cmp.Or(c.Name, fmt.Sprint(c.Label)), fmt.Sprint(c.Anchors), fmt.Sprintf("%.1f", c.Mean),
			fmt.Sprint(c.Median), fmt.Sprint(c.P90), fmt.Sprint(c.Max), fmt.Sprint(c.Empty)})
	}
	writeGrid(&b, rows)
	return b.String()
}

// WorstClassText says which of classes has the lowest coverage
// (eval.WorstClass among the classes of eval.MinClassAnchors test anchors
// or more), named by names, against 1 − α: "0: coverage 59.19% (1−α =
// 90.00%)", what follows "worst class " in ccs evaluate -per-class's text
// and an evaluation's (WriteText).
// WorstClassText says which class has the lowest coverage (eval.WorstClass
// among the classes of eval.MinClassAnchors test anchors or more), named
// by names, against 1 − α: what follows "worst class " in ccs evaluate
// -per-class's text and an evaluation's (WriteText).
func WorstClassText(classes []eval.ClassResult, names []string, alpha float64) string {
	w, fewer := eval.WorstClass(classes, eval.MinClassAnchors)
	among := ""
	if fewer > 0 {
		among = fmt.Sprintf(" of its %d anchors, the lowest of the classes of %d test anchors or more (%d %s fewer, whose coverage moves in steps of a few anchors)", w.Anchors, eval.MinClassAnchors, fewer, hasHave(fewer))
	}
	return fmt.Sprintf("%s: coverage %s%s (1−α = %.2f%%)", ClassName(names, w.Label), Percent(w.Coverage), among, 100*(1-alpha))
}

// WorstLabelText says which of labels (a test bundle of several labels a
// row, label by label) has the lowest coverage of the positives that
// share it (eval.WorstLabel among the labels of eval.MinLabelPositives
// positives or more), named by name, against 1 − α: what follows "worst
// label " in ccs evaluate -per-class's text and an evaluation's
// (WriteText).
func WorstLabelText(labels []eval.LabelResult, name func(int64) string, alpha float64) string {
	w, fewer := eval.WorstLabel(labels, eval.MinLabelPositives)
	among := ""
	if fewer > 0 {
		among = fmt.Sprintf(", the lowest of the labels of %d positives or more (%d %s fewer)", eval.MinLabelPositives, fewer, hasHave(fewer))
	}
	return fmt.Sprintf("%s: coverage %s of the %d positives that share it%s (1−α = %.2f%%: guaranteed over all positives, not label by label; a positive sharing several labels counts for each)",
		name(w.Label), Percent(w.Coverage), w.Positives, among, 100*(1-alpha))
}

// ClassName is label l's name among names (string labels), or its
// number.
func ClassName(names []string, l int64) string {
	if l >= 0 && l < int64(len(names)) {
		return names[l]
	}
	return fmt.Sprint(l)
}

// ClassEvaluation is one class's part of an Evaluation: its test anchors,
// the threshold they were judged with, coverage and exclusion (null
// without negatives).
type ClassEvaluation struct {
	Label int64 `json:"label"`
	// Name is the class's name, for string labels (Evaluation.Name).
	Name      string   `json:"name,omitempty"`
	Anchors   int      `json:"anchors"`
	Threshold Number   `json:"threshold"`
	Coverage  float64  `json:"coverage"`
	Exclusion *float64 `json:"exclusion"`
}

// Number is a float64 in JSON: +Inf (a whole-space set's threshold and
// volume) as "+Inf" (jsonfloat, the one form every output uses).
type Number = jsonfloat.Float

// NewEvaluation is the evaluation of set on a test bundle: its result r
// and, when measured, each class's.
func NewEvaluation(set *conformal.Set, r eval.Result, classes []eval.ClassResult) *Evaluation {
	e := &Evaluation{Geometry: set.Geometry.Kind().String(), Dim: set.Geometry.Dim(), Alpha: set.Alpha,
		Threshold: Number(set.Threshold), Calibration: set.Calibration, Coverage: r.Coverage,
		LogVolPerDim: Number(r.LogVolPerDim), Positives: r.Positives, Negatives: r.Negatives, Warnings: set.Warnings()}
	if math.IsInf(set.Threshold, 1) && !set.ClassConditional() { // a class set's classes decide, r's volume theirs
		e.LogVolPerDim = Number(math.Inf(1))
	}
	if !math.IsNaN(r.Exclusion) {
		x := r.Exclusion
		e.Exclusion = &x
	}
	if e.Warnings == nil {
		e.Warnings = []string{}
	}
	for _, c := range classes {
		ce := ClassEvaluation{Label: c.Label, Anchors: c.Anchors, Threshold: Number(c.Threshold), Coverage: c.Coverage}
		if !math.IsNaN(c.Exclusion) {
			x := c.Exclusion
			ce.Exclusion = &x
		}
		e.Classes = append(e.Classes, ce)
	}
	return e
}

// Texts is the evaluation as one table.
func (e *Evaluation) Texts() []Text { return []Text{e} }

// WriteText writes the evaluation as a table: the set, then its coverage
// against 1 − α, exclusion and LogVol/d; each class's, and the worst.
func (e *Evaluation) WriteText(w io.Writer) error {
	pct := Percent
	opt := func(x *float64) string {
		if x == nil {
			return "n/a"
		}
		return pct(*x)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A fitted set on a test bundle: %s set, d=%d, α=%v, threshold %.6g, %s\n\n", e.Geometry, e.Dim, e.Alpha, float64(e.Threshold), calibrationText(e.Calibration))
	writeGrid(&b, [][]string{
		{"Coverage", "1 − α", "Exclusion", "LogVol/d", "Test positives", "Test negatives"},
		{pct(e.Coverage), pct(1 - e.Alpha), opt(e.Exclusion), fmt.Sprintf("%.4g", float64(e.LogVolPerDim)), fmt.Sprint(e.Positives), fmt.Sprint(e.Negatives)},
	})
	if e.Exchangeability != nil {
		fmt.Fprintf(&b, "\nAgainst the calibration: %s.\n", ShiftText(e.Exchangeability, "test"))
	}
	if e.Sizes != nil {
		fmt.Fprintf(&b, "\nSet size: %s.\n", SetSizeText(e.Collection, *e.Sizes, e.Calibration.Mode == conformal.Class))
	}
	for _, t := range e.Baselines { // a paragraph each (a note each in ccs report)
		fmt.Fprintf(&b, "\n%s", BaselinesText([]eval.TopK{t}, e.BaselineCalibration))
	}
	if len(e.Classes) > 0 {
		rows := [][]string{{"Class", "Anchors", "Threshold", "Coverage", "Exclusion"}}
		results := make([]eval.ClassResult, len(e.Classes))
		for i, c := range e.Classes {
			rows = append(rows, []string{ClassName(e.LabelNames, c.Label), fmt.Sprint(c.Anchors), fmt.Sprintf("%.6g", float64(c.Threshold)), pct(c.Coverage), opt(c.Exclusion)})
			results[i] = eval.ClassResult{Label: c.Label, Anchors: c.Anchors, Result: eval.Result{Coverage: c.Coverage}}
		}
		fmt.Fprintf(&b, "\nPer class of the test bundle's labels:\n\n")
		writeGrid(&b, rows)
		fmt.Fprintf(&b, "\nWorst class %s.\n", WorstClassText(results, e.LabelNames, e.Alpha))
	}
	if len(e.ClassSizes) > 0 && e.Sizes != nil {
		fmt.Fprintf(&b, "\n%s", ClassSizesText(e.Sizes.Anchors, e.ClassSizes))
	}
	if len(e.Labels) > 0 {
		rows := [][]string{{"Label", "Anchors", "Positives sharing it", "Coverage"}}
		results := make([]eval.LabelResult, len(e.Labels))
		for i, l := range e.Labels {
			rows = append(rows, []string{cmp.Or(l.Name, fmt.Sprint(l.Label)), fmt.Sprint(l.Anchors), fmt.Sprint(l.Positives), pct(l.Coverage)})
			results[i] = eval.LabelResult{Label: l.Label, Anchors: l.Anchors, Positives: l.Positives, Coverage: l.Coverage}
		}
		fmt.Fprintf(&b, "\nPer label of the test bundle's positives (several labels a row: the positives that share it with their anchor):\n\n")
		writeGrid(&b, rows)
		name := func(l int64) string {
			for _, x := range e.Labels {
				if x.Label == l && x.Name != "" {
					return x.Name
				}
			}
			return fmt.Sprint(l)
		}
		fmt.Fprintf(&b, "\nWorst label %s.\n", WorstLabelText(results, name, e.Alpha))
	}
	for _, warn := range e.Warnings {
		fmt.Fprintf(&b, "\nWARNING: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// calibrationText says how a set was calibrated: the rank and n of its
// threshold (a class-conditional set's over all classes, taken among the
// kept pairs where its calibration left some out, conformal.Info.OverAll).
func calibrationText(c conformal.Info) string {
	rank, n := c.Rank, c.N
	if o := c.OverAll; o != nil {
		rank, n = o.Rank, o.N
	}
	s := fmt.Sprintf("calibration %v (rank %d of n=%d", c.Mode, rank, n)
	if c.Pairs {
		s += " disjoint pairs"
	}
	if c.OverAll != nil {
		s += fmt.Sprintf(", the threshold over all classes: %d of the %d pairs kept, as a marginal calibration keeps them", n, c.N)
	}
	if c.Delta > 0 {
		s += fmt.Sprintf(", δ=%v", c.Delta)
	}
	if c.OneLabel != "" { // a set of one label's rows alone (-one-label)
		s += fmt.Sprintf(", on the rows of label %q alone", c.OneLabel)
	}
	if l, name := c.Class.LabelAndName(); l != nil { // one class's anchors (-class)
		if name != "" {
			s += fmt.Sprintf(", on class %q's anchors alone", name)
		} else {
			s += fmt.Sprintf(", on class %d's anchors alone", *l)
		}
	}
	return s + ")"
}

// Figures is the coverage of the test positives against 1 − α: over all
// test anchors and, with classes, per class, each a marker on a stem from
// 1 − α (stem-coverage).
func (e *Evaluation) Figures(stem string) ([]*figure.Figure, error) {
	target := 100 * (1 - e.Alpha)
	labels := []string{"all"}
	values := []float64{100 * e.Coverage}
	for _, c := range e.Classes {
		labels = append(labels, ClassName(e.LabelNames, c.Label))
		values = append(values, 100*c.Coverage)
	}
	title := "Coverage of the test positives"
	if len(e.Classes) > 0 {
		title += ", over all test anchors and per class"
	}
	p := figure.Panel(title, "test anchors (all, then each class)", "coverage of test positives (%)")
	if len(e.Classes) == 0 {
		p.X.Label.Text = ""
	}
	n := float64(len(values))
	var entries []figure.Entry
	if e.Calibration.Mode == conformal.OnePerAnchor && e.Calibration.N > 0 {
		band := figure.Translucent(figure.Color(3), 70)
		hi := target + 100/float64(e.Calibration.N+1)
		poly := figure.Band(p, []float64{-0.5, n - 0.5}, []float64{target, target}, []float64{hi, hi}, band)
		entries = append(entries, figure.Entry{Name: fmt.Sprintf("band [1 − α, 1 − α + 1/(n+1)], n = %d", e.Calibration.N), Thumbs: []plot.Thumbnailer{poly}})
	}
	// Each coverage a marker on a stem from 1 − α: the distance to the
	// floor, the axis cut where it may be.
	above, below, all := figure.Color(5), figure.Color(6), figure.Color(0)
	var thumbs [3]plot.Thumbnailer
	for i, v := range values {
		c, k := above, 1
		switch {
		case i == 0:
			c, k = all, 0
		case v < target:
			c, k = below, 2
		}
		figure.Line(p, []float64{float64(i), float64(i)}, []float64{target, v}, draw.LineStyle{Color: c, Width: vg.Points(2)})
		thumbs[k] = figure.Points(p, []float64{float64(i)}, []float64{v}, c, draw.CircleGlyph{}, vg.Points(4))
	}
	tl := figure.Line(p, []float64{-0.5, n - 0.5}, []float64{target, target}, draw.LineStyle{Color: figure.Color(7), Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	entries = append([]figure.Entry{{Name: "1 − α", Thumbs: []plot.Thumbnailer{tl}}, {Name: "all test anchors", Thumbs: []plot.Thumbnailer{thumbs[0]}}}, entries...)
	if thumbs[1] != nil {
		entries = append(entries, figure.Entry{Name: "a class at or above 1 − α", Thumbs: []plot.Thumbnailer{thumbs[1]}})
	}
	if thumbs[2] != nil {
		entries = append(entries, figure.Entry{Name: "a class below 1 − α", Thumbs: []plot.Thumbnailer{thumbs[2]}})
	}
	// The axis from a little below the lowest coverage or 1 − α, to 100%.
	lo := target
	for _, v := range values {
		lo = min(lo, v)
	}
	p.Y.Min, p.Y.Max = max(0, 5*math.Floor((lo-1)/5)), 100
	p.X.Min, p.X.Max = -0.5, n-0.5
	var ticks []plot.Tick
	every := max(1, (len(values)+19)/20) // at most about 20 labels
	for i, l := range labels {
		t := plot.Tick{Value: float64(i)}
		if i%every == 0 {
			t.Label = l
		}
		ticks = append(ticks, t)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	var guarantee string
	switch c := e.Calibration; c.Mode {
	case conformal.OnePerAnchor:
		units := "anchors"
		if c.Pairs {
			units = "disjoint pairs of anchors"
		}
		guarantee = fmt.Sprintf("one-per-anchor calibration on n = %d %s puts the expected coverage over all test anchors in the band [1 − α, 1 − α + 1/(n+1)] (shaded; one calibration draw varies about it)", c.N, units)
	case conformal.PAC:
		guarantee = fmt.Sprintf("PAC calibration puts the coverage over all test anchors at or above 1 − α with probability at least 1 − δ over the calibration draw (δ = %v)", c.Delta)
	case conformal.Class:
		guarantee = "class-conditional calibration puts each class's expected coverage at or above 1 − α"
	default:
		guarantee = "pooled calibration has no guarantee"
	}
	article := "a"
	if strings.IndexAny(e.Geometry, "aeiou") == 0 { // an ellipsoid set
		article = "an"
	}
	caption := fmt.Sprintf("Coverage of the test positives (%d of them) by %s %s set (d=%d) against 1 − α = %.4g%% (dashed), each a marker on a stem from 1 − α: %s.", e.Positives, article, e.Geometry, e.Dim, target, guarantee)
	if len(e.Classes) > 0 {
		caption += " Per class of the test bundle's labels, each class's anchors judged with its own threshold (a class-conditional set) or the set's; a set calibrated over all classes may fall below 1 − α in some."
	}
	cols := figure.LegendCols(len(entries))
	return []*figure.Figure{{Name: stem + "-coverage", Caption: caption, W: 9 * vg.Inch, H: 3.6*vg.Inch + figure.LegendHeight(len(entries), cols),
		Draw: figure.Grid([][]*plot.Plot{{p}}, entries, cols)}}, nil
}

// Name names the classes of string labels (label i is names[i]): the
// document's label_names, and each per-class row's name, so that a row
// read alone (a notebook's loop over "classes") says which class it is.
// A label without a name keeps none.
func (e *Evaluation) Name(names []string) {
	e.LabelNames = names
	for i := range e.Classes {
		e.Classes[i].Name = ""
		if l := e.Classes[i].Label; l >= 0 && l < int64(len(names)) {
			e.Classes[i].Name = names[l]
		}
	}
}

// CheckShift checks test against set's calibration
// (conformal.Set.CheckExchangeable) and says, where its anchors leave the
// set more often than anchors exchangeable with the calibration's would
// but for a chance below ShiftTail — all of them, or, for a
// class-conditional set, all its classes or one class's, each of the two
// tests at ShiftTail/2 — what that means and what to do (name is the test
// bundle's, as messages name it). It returns nil and "" where the set has
// no check (a pooled calibration, a whole-space set).
func CheckShift(set *conformal.Set, test *bundle.Bundle, name string) (*conformal.Exchangeability, string, error) {
	e, err := set.CheckExchangeable(test)
	if err != nil || e == nil {
		return e, "", err
	}
	what := shiftWhat(e)
	if what == "" {
		return e, "", nil
	}
	return e, name + ": " + what + ". They are not exchangeable with the calibration anchors — a shift: another session, batch, donor, site or time — and the set's coverage guarantee does not cover them; calibrate on anchors drawn as these are (docs/calibration.md)", nil
}

// ClassShortfalls checks each class of a labelled test bundle against a
// set with one threshold for all classes (conformal.Set.CheckClasses),
// the classes named by names where they have names, each P multiplied by
// the number of classes checked (Bonferroni, at most 1). warning, where a
// class falls short of 1 − α beyond chance (a P below ShiftTail), names
// those classes, worst first, and says that the guarantee is over all
// classes, not each one's, and what gives each class its own; name names
// the test bundle in it. Nothing is checked (nil, "") for a
// class-conditional set, a set with no check, or a test bundle without
// labels.
func ClassShortfalls(set *conformal.Set, test *bundle.Bundle, names []string, name string) ([]conformal.ClassCheck, string, error) {
	checks, err := classChecks(set, test, names)
	if err != nil || len(checks) == 0 {
		return nil, "", err
	}
	short := shortClasses(checks)
	if len(short) == 0 {
		return checks, "", nil
	}
	cal := set.Calibration
	expected := float64(cal.N+1-cal.Rank) / float64(cal.N+1)
	units := "test anchors"
	if conformal.DisjointPairs(test) != nil {
		units = "disjoint test pairs"
	}
	classes := "a class falls"
	if len(short) > 1 {
		classes = fmt.Sprintf("%d classes fall", len(short))
	}
	var parts []string
	for _, c := range short {
		parts = append(parts, fmt.Sprintf("%s: %d of %d %s outside (%s), probability %.2g", checkedClass(&c), c.Outside, c.Units, units, Percent(float64(c.Outside)/float64(c.Units)), c.P))
	}
	return checks, fmt.Sprintf("%s: %s short of 1−α = %.2f%% beyond chance — %s — where anchors drawn as the calibration anchors were leave the set %.2f%% on average (each class's tail times the %d classes checked). The set's one threshold guarantees coverage over all classes, not each class's: -calibration class (calibration=\"class\" in Python) gives each class its own threshold and guarantee (docs/calibration.md)",
		name, classes, 100*(1-set.Alpha), strings.Join(parts, "; "), 100*expected, len(checks)), nil
}

// classChecks are set.CheckClasses of test, each class named by names
// where it has a name and its P times the classes checked (at most 1).
func classChecks(set *conformal.Set, test *bundle.Bundle, names []string) ([]conformal.ClassCheck, error) {
	checks, err := set.CheckClasses(test)
	for i := range checks {
		c := &checks[i]
		if c.Label >= 0 && c.Label < int64(len(names)) {
			c.Name = names[c.Label]
		}
		c.P = min(1, c.P*float64(len(checks)))
	}
	return checks, err
}

// shortClasses are the checks (their P already times the classes
// checked) below ShiftTail, the least likely first.
func shortClasses(checks []conformal.ClassCheck) []conformal.ClassCheck {
	var short []conformal.ClassCheck
	for _, c := range checks {
		if c.P < ShiftTail {
			short = append(short, c)
		}
	}
	slices.SortStableFunc(short, func(a, b conformal.ClassCheck) int { return cmp.Compare(a.P, b.P) })
	return short
}

// shiftLevel is the probability below which a check of e warns:
// ShiftTail, or for a class-conditional set, which makes two tests (all
// classes summed, and the least likely class with its Bonferroni factor),
// half of it for each, so that anchors exchangeable with the calibration's
// are warned of with probability at most ShiftTail either way.
func shiftLevel(e *conformal.Exchangeability) float64 {
	if e.Worst != nil {
		return ShiftTail / 2
	}
	return ShiftTail
}

// shiftWhat says what a check of e found beyond chance (shiftLevel), or ""
// where it found nothing.
func shiftWhat(e *conformal.Exchangeability) string {
	level := shiftLevel(e)
	switch w := e.Worst; {
	case e.P < level:
		return fmt.Sprintf("its anchors leave the set more often than chance allows: %s, where anchors drawn as the set's calibration anchors were leave %s on average and leave as many with probability %.2g%s%s",
			OutsideText(e, "test"), expectedText(e), e.P, eachClass(e), otherUnits(e))
	case w != nil && w.P < level:
		return fmt.Sprintf("its anchors of %s leave the set more often than chance allows: %d of %d (%s), with probability %.2g (its tail times the %d classes checked)%s",
			checkedClass(w), w.Outside, w.Units, Percent(float64(w.Outside)/float64(w.Units)), w.P, e.Classes, otherUnits(e))
	}
	return ""
}

// OutsideText says in a few words how many of a check's units, of the
// split named (test, or calibration-split where the set has seen it), lie
// outside the set: "41 of 1000 test anchors (one positive each), 4.10%".
func OutsideText(e *conformal.Exchangeability, split string) string {
	units := split + " anchors (one positive each)"
	if e.Pairs {
		units = "disjoint " + split + " pairs"
	}
	if e.PairsFound > e.Units { // as the set's calibration keeps them
		units += fmt.Sprintf(" (of %d found, kept in the classes' shares of anchors)", e.PairsFound)
	}
	return fmt.Sprintf("%d of %d %s, %s", e.Outside, e.Units, units, Percent(float64(e.Outside)/float64(e.Units)))
}

// expectedText is the share of exchangeable units a check expects
// outside: "9.97%", or where the threshold ties calibration scores, "about
// 4.32% (the threshold ties calibration scores; 9.97% for scores without
// ties, which the probability takes)".
func expectedText(e *conformal.Exchangeability) string {
	if e.Untied == 0 {
		return fmt.Sprintf("%.2f%%", 100*e.Expected)
	}
	return fmt.Sprintf("about %.2f%% (the threshold ties calibration scores; at most %.2f%%, for scores without ties, which the probability takes)", 100*e.Expected, 100*e.Untied)
}

// otherUnits says, where a check's units are of another kind than the
// set's calibration units, that its probability is approximate.
func otherUnits(e *conformal.Exchangeability) string {
	if !e.OtherUnits {
		return ""
	}
	cal := "disjoint pairs"
	if e.Pairs {
		cal = "anchors with one positive each"
	}
	return fmt.Sprintf(" (approximate: the set was calibrated on %s, units of another kind)", cal)
}

// checkedClass names a class-conditional check's class.
func checkedClass(c *conformal.ClassCheck) string {
	if c.Name != "" {
		return fmt.Sprintf("class %q", c.Name)
	}
	return fmt.Sprintf("class %d", c.Label)
}

// eachClass says, for a class-conditional check, that its units were
// judged class by class.
func eachClass(e *conformal.Exchangeability) string {
	if e.Classes == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d classes, each against its own threshold)", e.Classes)
}

// ShiftText is a check's line: how many units of the split named lie
// outside (OutsideText), against what exchangeable ones give; for a
// class-conditional set, the least likely class too.
func ShiftText(e *conformal.Exchangeability, split string) string {
	s := fmt.Sprintf("%s outside; anchors exchangeable with the calibration: %s on average, as many or more with probability %.2g%s%s",
		OutsideText(e, split), expectedText(e), e.P, eachClass(e), otherUnits(e))
	if w := e.Worst; w != nil {
		s += fmt.Sprintf("; the least likely class alone, %s: %d of %d (%s), probability %.2g (its tail times the %d classes)",
			checkedClass(w), w.Outside, w.Units, Percent(float64(w.Outside)/float64(w.Units)), w.P, e.Classes)
	}
	return s
}

// hasHave is the verb for n things: "has" for one, "have" otherwise.
func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}
