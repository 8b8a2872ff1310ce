package experiment

import (
	"context"
	"errors"
	"fmt"
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
)

func init() {
	Register(Kind{Name: "coverage-check", Heading: "Coverage over resplits (ccs coverage-check)", Order: 70,
		New: func() Result { return new(CoverageCheck) }})
}

// CoverageCheck is ccs coverage-check's result (kind "coverage-check"): a
// set's coverage over random calibration/test resplits of a bundle, the
// guarantee seen draw by draw.
type CoverageCheck struct {
	eval.ResplitResult
	// Classes are each class's coverage over the resplits (-per-class, and
	// always for a class-conditional set).
	Classes []eval.ClassResplit `json:"classes,omitempty"`
	// Labels are, in a bundle of several labels a row, each label's
	// coverage over the resplits (-per-class): of the held-out positives
	// that share it with their anchor (eval.ResplitsByLabel).
	Labels []eval.ClassResplit `json:"labels,omitempty"`
	// LabelNames, for string labels (ccs bundle's manifest), name the
	// classes, or the labels: label i is LabelNames[i].
	LabelNames []string `json:"label_names,omitempty"`
	// LabelBundle says the bundle's positives are its own anchors (ccs
	// bundle's label bundles): the resplits draw one positive per anchor,
	// not the disjoint pairs the set's calibration takes, so they are a
	// diagnostic there, not the guarantee's draws.
	LabelBundle bool `json:"label_bundle,omitempty"`
	// Stored is what the set file's own threshold covers of the whole
	// bundle (ccs evaluate's coverage). The resplits recalibrate the
	// geometry, so they say what its calibration gives, not what this
	// threshold does: a threshold gone wrong shows here only.
	Stored *StoredCoverage `json:"this_set,omitempty"`
	// Warnings are what a reader of the figures must know (BlocksResplits,
	// dividedBlocks).
	Warnings []string `json:"warnings,omitempty"`
}

// BlocksResplits is the warning of resplits of a split b whose rows are
// blocks' (ccs bundle -blocks: a patient's images, a recording's windows)
// but whose anchors record no block (bundled before Bundle.Blocks was
// kept): they halve it row by row, a block's rows on both sides of a
// halving, where the bundle kept each block whole in one split; the
// spread over them understates a split by blocks' draw-to-draw spread.
// "" for no blocks, or where b records its anchors' blocks (the resplits
// keep them together).
func BlocksResplits(name string, b *bundle.Bundle, blocks int) string {
	if blocks > 0 && b != nil && b.Blocks != nil {
		distinct := map[int64]bool{}
		for _, v := range b.Blocks {
			distinct[v] = true
		}
		if len(distinct) != blocks {
			return fmt.Sprintf("%s: its \"blocks\" array names %d blocks where its manifest says the split holds %d: the array was written otherwise (an index given for the blocks, every anchor one block?); the resplits keep the array's blocks together, so their spread is that of those blocks — bundle again", name, len(distinct), blocks)
		}
	}
	if blocks <= 0 || b != nil && b.Blocks != nil { // its anchors' blocks: the resplits keep them together
		return ""
	}
	return fmt.Sprintf("%s holds the rows of %d blocks (ccs bundle -blocks), each whole in its split, but records no anchor's block (bundled before ccs kept them), so the resplits halve it row by row, a block's rows on both sides: the spread over them (±, the 5th percentile, the share below 1−α) understates the draw-to-draw spread of calibration splits made by blocks, most where blocks are large (a medical-imaging user's patients: ± 1.01 against 1.45 halving by patient, a rare class's 5th percentile 81.6%% against 75.2%%); the mean is not affected. Bundle again with this ccs: its bundles keep each anchor's block (\"blocks\"), and the resplits keep a block together", name, blocks)
}

// DividedBlockResplits is what a table's resplits column says of b (the
// test split, name naming it) when one of its blocks holds more anchors
// than a side of the column's halvings (half of b's anchors calibrating,
// the rest held out, eval's resplits): the cut divides that block in every
// resplit, its rows calibrating and held out together, so the column's
// shares below 1−α and spread understate those of calibration splits made
// by blocks. "" where b records no blocks, one block or one an anchor
// (a halving uniformly at random), or none so large.
func DividedBlockResplits(name string, b *bundle.Bundle) string {
	if b == nil || len(b.Blocks) != b.N || b.N < 2 {
		return ""
	}
	size := map[int64]int{}
	largest := 0
	for _, v := range b.Blocks {
		size[v]++
		largest = max(largest, size[v])
	}
	nCal := b.N / 2
	if len(size) < 2 || len(size) >= b.N || largest <= min(nCal, b.N-nCal) {
		return ""
	}
	return fmt.Sprintf("%s: a block holds %d of its %d anchors, more than a resplit's half (%d): the resplits column's halvings divide it every time, its rows calibrating and held out together — what halving by blocks is meant to keep apart — so its shares below 1−α understate those of calibration splits made by blocks (ccs coverage-check on this bundle says by how much: its divided_share)",
		name, largest, b.N, min(nCal, b.N-nCal))
}

// StoredCoverage is a set file's own threshold's coverage of a bundle's
// positives.
type StoredCoverage struct {
	Coverage  float64 `json:"coverage"` // a fraction
	Positives int     `json:"positives"`
	// Split names the split of the set's own this bundle is
	// ("calibration": the coverage is near 1−α by construction), if any.
	Split string `json:"split,omitempty"`
}

// CheckCoverage is ccs coverage-check's computation: set's geometry
// recalibrated (its α, mode and δ) on resplits random halvings of b —
// calFraction of its anchors calibrating, the rest held out — class by
// class with perClass (always for a class-conditional set), and the set's
// own threshold's coverage of all of b beside them. names are string
// labels' names (nil: none). The warnings name each class whose set is
// the whole space in every resplit, and a block that every resplit's cut
// divides (dividedBlocks; kept in the result's Warnings too). It stops
// with ctx's error when ctx is done (eval.ResplitsContext).
func CheckCoverage(ctx context.Context, set *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64, perClass bool, names []string) (*CoverageCheck, []string, error) {
	if !set.Calibrated() {
		return nil, nil, conformal.ErrNotCalibrated
	}
	if perClass && !set.ClassConditional() && b.Labels == nil && b.PositiveLabelStart == nil {
		return nil, nil, fmt.Errorf("per-class resplits: the test bundle has no labels (%s)", bundle.NoLabelsAdvice(b, "-per-class"))
	}
	var r eval.ResplitResult
	var classes, labels []eval.ClassResplit
	var err error
	switch {
	case perClass && b.Labels == nil && !set.ClassConditional(): // several labels a row
		r, labels, err = eval.ResplitsByLabelContext(ctx, set, b, resplits, calFraction, seed)
	case perClass || set.ClassConditional():
		r, classes, err = eval.ResplitsByClassContext(ctx, set, b, resplits, calFraction, seed)
	default:
		r, err = eval.ResplitsContext(ctx, set, b, resplits, calFraction, seed)
	}
	var split *eval.ClassFractionError
	if errors.As(err, &split) {
		return nil, nil, fmt.Errorf("%s: calibration fraction %v of its %d anchors leaves no calibration or no held-out anchor: each class is resplit on its own, and a fraction of at least %v (-cal-fraction; cal_fraction= in Python) leaves one of each in the smallest class (%d anchors)",
			className(names, split.Label), split.Fraction, split.Anchors, calFractionFor(0, split.Smallest), split.Smallest)
	}
	var few *conformal.TooFewError
	if errors.As(err, &few) && set.Calibration.Mode != conformal.Pooled {
		// The resplits' calibration anchors: a share of the bundle's.
		if need := few.Need(); need > 0 && need < b.N {
			f := calFractionFor(need, b.N)
			if f < 1 {
				return nil, nil, fmt.Errorf("%w: each resplit calibrates on a %v share of the bundle's %d anchors; a calibration fraction of %v (-cal-fraction; cal_fraction= in Python) gives it %d, or take a larger α", err, calFraction, b.N, f, int(f*float64(b.N)))
			}
		}
		return nil, nil, fmt.Errorf("%w: the bundle's %d anchors are too few at this α even all together: a larger test bundle, or a larger α", err, b.N)
	}
	if err != nil {
		return nil, nil, err
	}
	check := &CoverageCheck{ResplitResult: r, Classes: classes, Labels: labels, LabelBundle: conformal.DisjointPairs(b) != nil}
	if classes != nil || labels != nil {
		check.LabelNames = names
	}
	// Each class named where it is judged, as ccs evaluate -per-class's
	// classes are, so that a reader of the JSON needs no lookup.
	for _, cs := range [][]eval.ClassResplit{classes, labels} {
		for i, c := range cs {
			if c.Label >= 0 && c.Label < int64(len(names)) {
				cs[i].Name = names[c.Label]
			}
		}
	}
	var warnings []string
	level, larger := fmt.Sprintf("alpha %v", r.Alpha), "a larger alpha"
	if r.Delta > 0 {
		level, larger = fmt.Sprintf("alpha %v with delta %v", r.Alpha, r.Delta), "a larger alpha or delta"
	}
	// On a label bundle ccs calibrate counts a class's disjoint pairs of
	// anchors, not its anchors: these resplits draw one positive per
	// anchor, and need about half the anchors it does.
	pairs := ""
	if check.LabelBundle {
		pairs = "; these resplits draw one positive per anchor, where ccs calibrate on this label bundle counts the class's disjoint pairs of anchors (about half as many): it needs about twice the anchors"
	}
	need := (&conformal.TooFewError{Alpha: r.Alpha, Delta: r.Delta}).Need() // the calibration anchors a class's rank needs
	for _, c := range classes {
		if c.WholeSpace {
			hint := larger + ", or more of the class"
			all := c.NCal + c.NTest
			if f := calFractionFor(need, all); need > 0 && f < 1 {
				hint = fmt.Sprintf("-cal-fraction %v (cal_fraction= in Python) gives it about %d of its %d; or %s", f, int(f*float64(all)), all, hint)
			}
			warnings = append(warnings, fmt.Sprintf("%s: its %d calibration anchors per resplit are too few at %s (%d needed): its set is the whole space in every resplit, so its 100%% coverage says nothing (%s)%s",
				className(names, c.Label), c.NCal, level, need, hint, pairs))
		}
	}
	if w := dividedBlocks(b, check, set.ClassConditional()); w != "" {
		warnings, check.Warnings = append(warnings, w), append(check.Warnings, w)
	}
	// The resplits recalibrate the geometry: they say what its calibration
	// gives, not what this set's threshold does. That is ccs evaluate's
	// number, kept beside them so that a threshold gone wrong (a Σ that
	// saw its calibration rows) cannot hide behind a good resplit table.
	stored, err := eval.EvaluateContext(ctx, set, b)
	if err != nil {
		return nil, nil, err
	}
	check.Stored = &StoredCoverage{Coverage: stored.Coverage, Positives: stored.Positives, Split: set.OwnSplit(b)}
	return check, warnings, nil
}

// dividedBlocks is the warning of a halving by blocks (c.ByBlocks) of b
// in which a block holds more anchors than a side of the cut — of its
// class's, each class cut on its own where classCut (a class-conditional
// set): the cut divides it in every resplit, its rows calibrating and
// held out together, the leak that halving by blocks is meant to keep
// out. It names each such block's size and the share of the anchors that
// lay in divided blocks over the resplits (c.DividedShare). "" where no
// block is so large.
func dividedBlocks(b *bundle.Bundle, c *CoverageCheck, classCut bool) string {
	if !c.ByBlocks() || b.Blocks == nil || len(b.Blocks) != b.N || classCut && len(b.Labels) != b.N {
		return ""
	}
	type key struct{ label, block int64 }
	size := map[key]int{}
	for i, v := range b.Blocks {
		k := key{block: v}
		if classCut {
			k.label = b.Labels[i]
		}
		size[k]++
	}
	largest := map[int64]int{} // each class's largest block (all under 0 but where classCut)
	for k, n := range size {
		largest[k.label] = max(largest[k.label], n)
	}
	side := func(nCal, nTest int) string {
		if nCal <= nTest {
			return fmt.Sprintf("%d calibration anchors", nCal)
		}
		return fmt.Sprintf("%d held-out anchors", nTest)
	}
	var parts []string
	if l := largest[0]; !classCut && l > min(c.NCal, c.NTest) {
		parts = append(parts, fmt.Sprintf("a block holds %d of the %d anchors, more than a resplit's %s", l, c.NCal+c.NTest, side(c.NCal, c.NTest)))
	}
	for _, k := range c.Classes {
		if l := largest[k.Label]; classCut && k.NCal > 0 && l > min(k.NCal, k.NTest) {
			parts = append(parts, fmt.Sprintf("%s: a block holds %d of its %d anchors, more than a resplit's %s of the class", className(c.LabelNames, k.Label), l, k.NCal+k.NTest, side(k.NCal, k.NTest)))
		}
	}
	if parts == nil {
		return ""
	}
	return fmt.Sprintf("halved block by block, %s: the cut divides such a block in every resplit, its rows calibrating and held out together — what halving by blocks is meant to keep apart; on average %s of the anchors lay in a block a cut divided, and the spread over the resplits may understate the one a new group of blocks sees (a test bundle of more blocks, or smaller ones, keeps them whole)",
		strings.Join(parts, "; "), Percent(c.DividedShare))
}

// LabelBundleResplits is what a coverage check on a label bundle says of
// its resplits.
const LabelBundleResplits = "On this label bundle (positives that are other anchors) the resplits draw one positive per anchor, not the disjoint pairs of anchors the set's calibration takes: the anchors share items, so the band and the guarantee above are a diagnostic here, not the guarantee's own draws (docs/calibration.md)"

// calFractionFor is the calibration fraction, in hundredths, that gives
// a resplit of n anchors more than need of them.
func calFractionFor(need, n int) float64 {
	return math.Ceil(100*float64(need+1)/float64(max(n, 1))) / 100
}

// className is "class 3", or `class "cat"` for a string label's name.
func className(names []string, label int64) string {
	if label >= 0 && label < int64(len(names)) {
		return fmt.Sprintf("class %q", names[label])
	}
	return fmt.Sprint("class ", label)
}

// WriteClasses writes each class's coverage over the resplits as a table.
func (c *CoverageCheck) WriteClasses(w io.Writer) error {
	pct := Percent
	// A set of one threshold is recalibrated over all classes: no class
	// has calibration anchors of its own, and the column is left out.
	own := slices.ContainsFunc(c.Classes, func(k eval.ClassResplit) bool { return k.NCal > 0 })
	rows := [][]string{{"class", "calibration anchors", "held out", "coverage", "5th percentile", "resplits below 1 − α"}}
	for _, k := range c.Classes {
		row := []string{ClassName(c.LabelNames, k.Label), fmt.Sprint(k.NCal), fmt.Sprint(k.NTest), pct(k.Coverage.Mean) + " ± " + pct(k.Coverage.Std), pct(k.P05), pct(k.BelowShare)}
		if k.WholeSpace { // its 100% says nothing
			row[3], row[4], row[5] = "the whole space", "—", "—"
		}
		rows = append(rows, row)
	}
	if !own {
		rows[0][2] = "mean held out" // a marginal resplit draws the held-out anchors of every class at once
		for i, r := range rows {
			rows[i] = slices.Delete(r, 1, 2)
		}
	}
	var b strings.Builder
	writeGrid(&b, rows)
	switch {
	case c.ByBlocks() && c.Mode == conformal.Class.String():
		b.WriteString("\nEach class recalibrated on its own calibration anchors of each resplit, halved block by block: no class's coverage is guaranteed here, the anchors being exchangeable only block by block; the resplits estimate the spread of each class's coverage over new groups of blocks.\n")
		for _, n := range c.classNotes() {
			fmt.Fprintf(&b, "%s.\n", n)
		}
	case c.ByBlocks():
		b.WriteString("\nOne threshold for all classes (-calibration class gives each its own), halved block by block: no coverage is guaranteed here, over all classes or each, the anchors being exchangeable only block by block.\n")
	case c.Mode == conformal.Class.String() && c.Delta > 0:
		fmt.Fprintf(&b, "\nEach class recalibrated on its own calibration anchors of each resplit, PAC per class: at most δ = %.2f%% of calibration draws leave a class's true coverage below 1 − α (the last column: shares of held-out estimates, lifted above δ by their sampling error).\n", 100*c.Delta)
	case c.Mode == conformal.Class.String():
		b.WriteString("\nEach class recalibrated on its own calibration anchors of each resplit: each class's mean coverage is guaranteed ≥ 1 − α.\n")
		for _, n := range c.classNotes() {
			fmt.Fprintf(&b, "%s.\n", n)
		}
	default:
		b.WriteString("\nOne threshold for all classes: the coverage over all classes is guaranteed, not each class's (-calibration class gives each its own).\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// classNotes explain, for a class-conditional set, the class means the
// guarantee seems to contradict: a mean above what scores without ties
// give — ⌈(n+1)(1−α)⌉/(n+1), within the band, by more than two standard
// errors (a class of 10 calibration anchors: 90.91% in [90%, 99.09%]) —
// where the class's thresholds tie other calibration scores, and a mean
// below 1 − α, measured in the resplits' standard errors (their
// Monte-Carlo error: the guarantee is for the mean over all resplits,
// which these estimate) — but for a halving by blocks, which no
// guarantee holds to 1 − α (the anchors exchangeable only block by
// block): its shortfall is given in standard errors, not read as one.
func (c *CoverageCheck) classNotes() []string {
	var notes []string
	pct := Percent
	for _, k := range c.Classes {
		if k.WholeSpace {
			continue
		}
		name, m, se := className(c.LabelNames, k.Label), k.Coverage.Mean, k.Coverage.SE()
		untied := math.Ceil(float64(k.NCal+1)*(1-c.Alpha)-1e-9) / float64(k.NCal+1)
		// Ties lift a resplit's coverage by at most 1 − untied, in the
		// share of resplits that tie: a larger excess is not theirs.
		lift := k.TiedShare * (1 - untied)
		switch {
		case k.Band[1] > 0 && k.TiedShare > 0 && m > untied+2*se && m-untied <= lift+2*se:
			where := fmt.Sprintf("above its band [%s, %s] (n = %d), which holds for scores without ties", pct(k.Band[0]), pct(k.Band[1]), k.NCal)
			if m <= k.Band[1] {
				where = fmt.Sprintf("above the %s scores without ties give (n = %d; its band [%s, %s])", pct(untied), k.NCal, pct(k.Band[0]), pct(k.Band[1]))
			}
			notes = append(notes, fmt.Sprintf("%s: mean %s %s: %s of its resplits' thresholds tie other calibration scores of the class, and a set covers every score equal to its threshold at once",
				name, pct(m), where, pct(k.TiedShare)))
		case k.Band[1] > 0 && m > k.Band[1] && se > 0:
			z := (m - untied) / se
			ties := ""
			if k.TiedShare > 0 {
				ties = fmt.Sprintf("; ties in %s of its resplits can lift it by %s at most", pct(k.TiedShare), pct(lift))
			}
			notes = append(notes, fmt.Sprintf("%s: mean %s above its band [%s, %s] (n = %d), %.1f standard errors (%s each, over %d resplits) above the %s scores without ties give: %s%s",
				name, pct(m), pct(k.Band[0]), pct(k.Band[1]), k.NCal, z, pct(se), k.Coverage.N, pct(untied), mcError(z, len(c.Classes)), ties))
		case m < 1-c.Alpha && se > 0 && c.ByBlocks():
			z := (1 - c.Alpha - m) / se
			notes = append(notes, fmt.Sprintf("%s: mean %s, %.1f standard errors (%s each, over %d resplits) below 1 − α: no guarantee holds it there, the halving being by blocks", name, pct(m), z, pct(se), k.Coverage.N))
		case m < 1-c.Alpha && se > 0:
			z := (1 - c.Alpha - m) / se
			notes = append(notes, fmt.Sprintf("%s: mean %s, %.1f standard errors (%s each, over %d resplits) below 1 − α: %s", name, pct(m), z, pct(se), k.Coverage.N, mcError(z, len(c.Classes))))
		}
	}
	return notes
}

// mcError says whether a class mean z standard errors from what the
// guarantee gives is within the resplits' Monte-Carlo error: beyond from 3
// standard errors (among ten classes, one or more pass 2 by chance alone
// about as often as not).
func mcError(z float64, classes int) string {
	if z > 3 {
		return "beyond the resplits' Monte-Carlo error"
	}
	among := ""
	if classes > 1 {
		among = fmt.Sprintf("; of %d classes, some stand this far out by chance", classes)
	}
	return "within the resplits' Monte-Carlo error (more resplits, -resplits, narrow it" + among + ")"
}

// WholeSpaceText says which classes' sets are the whole space in every
// resplit and how many of the held-out anchors they hold, all covered in
// the mean over all classes; "" when none is.
func (c *CoverageCheck) WholeSpaceText() string {
	var names []string
	held := 0
	for _, k := range c.Classes {
		if k.WholeSpace {
			names = append(names, className(c.LabelNames, k.Label))
			held += k.NTest
		}
	}
	if names == nil {
		return ""
	}
	who, its := names[0], "its"
	if len(names) > 1 {
		who, its = fmt.Sprintf("%d classes", len(names)), "their"
		if len(names) <= 5 {
			who += " (" + strings.Join(names, ", ") + ")"
		}
	}
	return fmt.Sprintf("%s: the whole space in every resplit; %s %d of the %d held-out anchors, covered whole, count in the mean over all classes", who, its, held, c.NTest)
}

// WriteLabels writes each label's coverage over the resplits as a table
// (a bundle of several labels a row).
func (c *CoverageCheck) WriteLabels(w io.Writer) error {
	pct := Percent
	rows := [][]string{{"label", "held-out anchors", "resplits", "coverage", "5th percentile", "resplits below 1 − α"}}
	for _, k := range c.Labels {
		name := fmt.Sprint(k.Label)
		if k.Label >= 0 && k.Label < int64(len(c.LabelNames)) {
			name = c.LabelNames[k.Label]
		}
		rows = append(rows, []string{name, fmt.Sprint(k.NTest), fmt.Sprint(k.Coverage.N), pct(k.Coverage.Mean) + " ± " + pct(k.Coverage.Std), pct(k.P05), pct(k.BelowShare)})
	}
	var b strings.Builder
	writeGrid(&b, rows)
	guaranteed := "the coverage over all positives is guaranteed, not each label's"
	if c.ByBlocks() {
		guaranteed = "halved block by block, no coverage is guaranteed here, over all positives or each label's"
	}
	fmt.Fprintf(&b, "\nEach label's coverage of the held-out positives that share it with their anchor (a positive sharing several counts for each), over the resplits that hold out any (held-out anchors: those with such a positive, on average), the threshold recalibrated on each resplit: %s.\n", guaranteed)
	_, err := io.WriteString(w, b.String())
	return err
}

// Texts is the check as one table.
func (c *CoverageCheck) Texts() []Text { return []Text{c} }

// BlocksGuarantee is what a coverage check halved by blocks
// (eval.ResplitResult.ByBlocks) says in place of the calibration mode's
// guarantee, which is over draws of anchors exchangeable one by one.
const BlocksGuarantee = "none for a halving by blocks: the conformal guarantee is over calibration draws of exchangeable anchors, and these are exchangeable only block by block; the resplits estimate the spread of coverage a new group of blocks sees, and their mean may lie below 1 − α"

// guarantee says what the calibration mode promises of the distribution.
func (c *CoverageCheck) guarantee() string {
	switch {
	case c.Mode == conformal.Pooled.String():
		return "none: pooled calibration is approximate"
	case c.ByBlocks():
		return BlocksGuarantee
	}
	switch c.Mode {
	case conformal.PAC.String():
		return fmt.Sprintf("at most δ = %.2f%% of calibration draws cover less than 1 − α", 100*c.Delta)
	case conformal.Class.String():
		return "each class's mean over calibration draws is ≥ 1 − α"
	}
	if c.Band[1] == 0 { // a document without one
		return "the mean over calibration draws is ≥ 1 − α"
	}
	return fmt.Sprintf("the mean over calibration draws lies in [%.2f%%, %.2f%%]", 100*c.Band[0], 100*c.Band[1])
}

// Check refuses resplits' coverages that are not the resplits' (a file
// edited by hand): one per resplit, each a fraction.
func (c *CoverageCheck) Check() error {
	if len(c.Coverages) > 0 && len(c.Coverages) != c.Resplits {
		return fmt.Errorf("%d coverages for %d resplits", len(c.Coverages), c.Resplits)
	}
	sum := 0.0
	for i, v := range c.Coverages {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("coverages[%d] = %v, not a fraction", i, v)
		}
		sum += v
	}
	// A null read as 0 is a fraction: the mean the document states is not
	// then the coverages' (all nulls drew 200 resplits at 0% beside a
	// mean of 89.9%).
	if n := len(c.Coverages); n > 0 && !(math.Abs(sum/float64(n)-c.Coverage.Mean) <= 1e-9) {
		return fmt.Errorf("coverage.mean = %v, and the %d coverages average %v: a coverage null, or edited by hand?", c.Coverage.Mean, n, sum/float64(n))
	}
	if b := c.Band; b != [2]float64{} && !(0 <= b[0] && b[0] <= b[1] && b[1] <= 1) {
		return fmt.Errorf("band = [%v, %v], not an interval of fractions", b[0], b[1])
	}
	if c.Stored != nil && !(c.Stored.Coverage >= 0 && c.Stored.Coverage <= 1) {
		return fmt.Errorf("this_set.coverage = %v, not a fraction", c.Stored.Coverage)
	}
	return nil
}

// WriteText writes the distribution's summary as a table.
func (c *CoverageCheck) WriteText(w io.Writer) error {
	pct := Percent
	pm := func(s eval.Summary) string {
		if math.IsNaN(s.Mean) {
			return "n/a"
		}
		return pct(s.Mean) + " ± " + pct(s.Std)
	}
	var b strings.Builder
	blocks := ""
	switch {
	case c.ByBlocks():
		blocks = fmt.Sprintf(", halved block by block (%d blocks: each whole on one side but the one a cut divides; no band for the mean and no guarantee, the anchors being exchangeable only block by block)", c.Blocks)
	case c.Blocks == 1:
		blocks = ", halved block by block (1 block, all anchors: a halving of the anchors uniformly at random, as row by row)"
	case c.Blocks > 1:
		blocks = fmt.Sprintf(", halved block by block (%d blocks of one anchor each: a halving of the anchors uniformly at random, as row by row)", c.Blocks)
	}
	fmt.Fprintf(&b, "Coverage over resplits: %d resplits of the test bundle, %d calibration anchors and %d held out in each, α=%v, calibration %s%s\n\n",
		c.Resplits, c.NCal, c.NTest, c.Alpha, c.Mode, blocks)
	writeGrid(&b, [][]string{
		{"Coverage", "5th percentile", "Resplits below 1 − α", "Exclusion", "Guarantee"},
		{pm(c.Coverage), pct(c.P05), pct(c.BelowShare), pm(c.Exclusion), c.guarantee()},
	})
	fmt.Fprintf(&b, "\nCoverage and exclusion are means over the resplits ± one resplit's spread; the mean coverage's own standard error is %s.\n", pct(c.Coverage.SE()))
	if t := c.WholeSpaceText(); t != "" {
		fmt.Fprintf(&b, "\n%s.\n", t)
	}
	if c.LabelBundle {
		fmt.Fprintf(&b, "\n%s.\n", LabelBundleResplits)
	}
	if c.Stored != nil {
		fmt.Fprintf(&b, "\nThe set file's own threshold covers %s of the bundle's %d positives (ccs evaluate); the resplits above recalibrate its geometry.\n",
			pct(c.Stored.Coverage), c.Stored.Positives)
		if c.Stored.Split != "" {
			fmt.Fprintf(&b, "The bundle is the set's %s split: that coverage is no test of it.\n", c.Stored.Split)
		}
	}
	if c.Classes != nil {
		b.WriteString("\nEach class's coverage over the resplits:\n\n")
		if err := c.WriteClasses(&b); err != nil {
			return err
		}
	}
	if c.Labels != nil {
		b.WriteString("\nEach label's coverage over the resplits:\n\n")
		if err := c.WriteLabels(&b); err != nil {
			return err
		}
	}
	for _, warn := range c.Warnings {
		fmt.Fprintf(&b, "\nWARNING: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Figures is the distribution of coverage over the resplits
// (stem-distribution): a histogram, with 1 − α and, for one-per-anchor
// calibration, the band its mean lies in. None without the resplits'
// coverages.
func (c *CoverageCheck) Figures(stem string) ([]*figure.Figure, error) {
	if len(c.Coverages) == 0 {
		return nil, nil
	}
	cov := make([]float64, len(c.Coverages))
	for i, v := range c.Coverages {
		cov[i] = 100 * v
	}
	target := 100 * (1 - c.Alpha)
	marginal := c.Mode == conformal.OnePerAnchor.String() && c.Band[1] > 0
	lo, hi := slices.Min(cov), slices.Max(cov)
	lo, hi = min(lo, target), max(hi, target)
	if marginal {
		hi = max(hi, 100*c.Band[1])
	}
	if c.Stored != nil {
		lo, hi = min(lo, 100*c.Stored.Coverage), max(hi, 100*c.Stored.Coverage)
	}
	if !(hi > lo) {
		lo, hi = lo-0.5, hi+0.5
	}
	// About √resplits bins (5 to 40), one edge at 1 − α: the share below
	// it is the bins' on its left.
	w := (hi - lo) / float64(min(max(int(math.Ceil(math.Sqrt(float64(len(cov))))), 5), 40))
	lo = target - math.Ceil((target-lo)/w)*w
	bins := max(1, int(math.Ceil((hi-lo)/w-1e-9)))
	hi = lo + float64(bins)*w
	edges := make([]float64, bins+1)
	for i := range edges {
		edges[i] = lo + w*float64(i)
	}
	h := make([]float64, bins)
	for _, v := range cov {
		i := int((v - lo) / (hi - lo) * float64(bins))
		h[min(max(i, 0), bins-1)] += 1 / float64(len(cov))
	}
	top := 1.1 * slices.Max(h)
	p := figure.Panel(fmt.Sprintf("Coverage over %d resplits", c.Resplits), "coverage of the held-out positives (%)", "share of resplits per bin")
	p.Y.Min, p.Y.Max = 0, top
	var entries []figure.Entry
	if marginal {
		fill := figure.Translucent(figure.Color(3), 70)
		b := figure.Band(p, []float64{100 * c.Band[0], 100 * c.Band[1]}, []float64{0, 0}, []float64{top, top}, fill)
		entries = append(entries, figure.Entry{Name: fmt.Sprintf("band [1 − α, 1 − α + 1/(n+1)], n = %d: the mean's", c.NCal), Thumbs: []plot.Thumbnailer{b}})
	}
	x, y := figure.Steps(edges, h)
	zero := make([]float64, len(x))
	figure.Band(p, x, zero, y, figure.Translucent(figure.Color(5), 90))
	hl := figure.Line(p, x, y, draw.LineStyle{Color: figure.Color(5), Width: vg.Points(1.2)})
	tl := figure.Line(p, []float64{target, target}, []float64{0, top}, draw.LineStyle{Color: figure.Color(0), Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	ml := figure.Line(p, []float64{100 * c.Coverage.Mean, 100 * c.Coverage.Mean}, []float64{0, top}, draw.LineStyle{Color: figure.Color(6), Width: vg.Points(1.5)})
	entries = append([]figure.Entry{{Name: "resplits' coverage", Thumbs: []plot.Thumbnailer{hl}}, {Name: "1 − α", Thumbs: []plot.Thumbnailer{tl}},
		{Name: "their mean", Thumbs: []plot.Thumbnailer{ml}}}, entries...)
	stored := ""
	if c.Stored != nil {
		v := 100 * c.Stored.Coverage
		sl := figure.Line(p, []float64{v, v}, []float64{0, top}, draw.LineStyle{Color: figure.Color(4), Width: vg.Points(2), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2)}})
		entries = append(entries, figure.Entry{Name: "the file's own threshold, on the whole bundle", Thumbs: []plot.Thumbnailer{sl}})
		stored = fmt.Sprintf(" The set file's own threshold covers %.2f%% of the whole bundle's %d positives (dotted).", v, c.Stored.Positives)
	}
	cols := figure.LegendCols(len(entries))
	caption := fmt.Sprintf("Coverage of the held-out positives over %d random resplits of the test bundle (%d calibration anchors, %d held out in each), the set's geometry recalibrated on each at α = %v (calibration %s): %.2f%% of the resplits fall below 1 − α (dashed). The guarantee: %s.",
		c.Resplits, c.NCal, c.NTest, c.Alpha, c.Mode, 100*c.BelowShare, c.guarantee()) + stored
	return []*figure.Figure{{Name: stem + "-distribution", Caption: caption, W: 9 * vg.Inch, H: 3.6*vg.Inch + figure.LegendHeight(len(entries), cols),
		Draw: figure.Grid([][]*plot.Plot{{p}}, entries, cols)}}, nil
}
