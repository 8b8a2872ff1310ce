package experiment

import (
	"fmt"
	"math"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/figure"
)

func init() {
	Register(Kind{Name: "compare", Heading: "Your data: the set families compared (ccs compare)", Order: 100,
		New: func() Result { return new(CompareResult) }})
}

// CompareResult is ccs compare's result (kind "compare"): the comparison
// of the set families on a user's bundles.
type CompareResult struct {
	Tables []*CompareTable `json:"tables,omitempty"`
}

// Add keeps a comparison.
func (r *CompareResult) Add(t Text) error {
	ct, ok := t.(*CompareTable)
	if !ok {
		return fmt.Errorf("experiment: a compare result takes comparisons, not %T", t)
	}
	r.Tables = append(r.Tables, ct)
	return nil
}

// Texts are the comparisons.
func (r *CompareResult) Texts() []Text { return texts(r.Tables) }

// Check refuses null comparisons.
func (r *CompareResult) Check() error { return noNulls("tables", r.Tables) }

// Figures are each comparison's: coverage against α with the
// finite-sample band and the inclusion–exclusion trade-off (the rows
// recalibrated at other levels), each class's coverage, and with an OOD
// sample the per-input test's ROC curves and score histograms.
func (r *CompareResult) Figures(stem string) ([]*figure.Figure, error) {
	var figs []*figure.Figure
	for _, t := range r.Tables {
		s := stem + "-" + figure.Slug(t.Title)
		view := &Table{Title: t.Title, Config: t.Config}
		for _, row := range t.Rows {
			view.Rows = append(view.Rows, row.Row)
		}
		note := ""
		if t.Calibration == conformal.PAC.String() {
			note = fmt.Sprintf(" PAC calibration (δ = %v): each threshold is of a higher rank than the marginal one, so the rows lie above the band by design — coverage ≥ 1 − α with probability ≥ 1 − δ over the calibration draw; the band is the marginal guarantee's.", t.Delta)
		}
		if f := coverageFigure(view, s, note); f != nil {
			figs = append(figs, f)
		}
		if f := tradeoffFigure(view, s); f != nil {
			figs = append(figs, f)
		}
		if f := classesFigure(t, s); f != nil {
			figs = append(figs, f)
		}
		ot := &OODTable{Title: "OOD detection, " + t.Title, Config: t.Config, Sets: []string{"ood"}, Runs: t.Seeds}
		for _, row := range t.Rows {
			if row.OODCurve == nil || row.OODAUROC == nil {
				continue
			}
			ot.Rows = append(ot.Rows, OODRow{Method: row.Method, AUROC: []eval.Summary{*row.OODAUROC}, FPR95: []eval.Summary{*row.OODFPR95},
				Curves: []ScoreCurve{*row.OODCurve}})
		}
		if len(ot.Rows) > 0 {
			if f := rocFigureOf(ot, s+"-ood", learnedRow, "learned rows", "baselines (the ℓ2 ball and the ellipsoid)"); f != nil {
				figs = append(figs, f)
			}
			if f := histogramsFigureOf(ot, s+"-ood", learnedRow, "learned row", "baseline (the ℓ2 ball or the ellipsoid)"); f != nil {
				figs = append(figs, f)
			}
		}
	}
	return figs, nil
}

// learnedRow tells compare's learned rows from its baselines, the vanilla
// conformal sets: every row of its OOD figures is a conformal set with the
// per-input test, none named as the OOD table's CCS rows are.
func learnedRow(method string) bool {
	return method != "Conformal Ball (ℓ2)" && method != "Mahalanobis Ellipsoid"
}

// maxClassLabels is how many class labels the per-class figure's axis
// shows at most: past it the labels would overlap, and every step-th is
// shown.
const maxClassLabels = 30

// classTicks are the per-class figure's x ticks: every class's label up
// to maxClassLabels classes; beyond, every step-th class labelled so that
// at most maxClassLabels are, and the others marked by a minor tick while
// there are at most 200.
func classTicks(classes []ClassCoverage, names []string) []plot.Tick {
	n := len(classes)
	step := (n + maxClassLabels - 1) / maxClassLabels
	var ticks []plot.Tick
	for j, c := range classes {
		switch {
		case j%step == 0:
			ticks = append(ticks, plot.Tick{Value: float64(j), Label: ClassName(names, c.Label)})
		case n <= 200:
			ticks = append(ticks, plot.Tick{Value: float64(j)})
		}
	}
	return ticks
}

// classesFigure draws each class's coverage of its test positives for each
// row (mean over seeds) against 1 − α; nil without labels.
func classesFigure(t *CompareTable, stem string) *figure.Figure {
	var rows []CompareRow
	for _, r := range t.Rows {
		if len(r.Classes) > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	target := 100 * (1 - t.Alpha)
	p := figure.Panel("Coverage of each class's test positives", "class", "coverage (%)")
	if t.ByLabel {
		p = figure.Panel("Coverage of the test positives that share each label", "label", "coverage (%)")
	}
	labels := rows[0].Classes
	n := float64(len(labels))
	lo := target
	var entries []figure.Entry
	for i, r := range rows {
		var x, y []float64
		for j, c := range r.Classes {
			x, y = append(x, float64(j)), append(y, c.Coverage.Mean)
			lo = math.Min(lo, c.Coverage.Mean)
		}
		st := figure.Style(i)
		l := figure.Line(p, x, y, st)
		pts := figure.Points(p, x, y, st.Color, draw.CircleGlyph{}, vg.Points(3))
		entries = append(entries, figure.Entry{Name: r.Method, Thumbs: []plot.Thumbnailer{l, pts}})
	}
	tl := figure.Line(p, []float64{-0.5, n - 0.5}, []float64{target, target}, draw.LineStyle{Color: figure.Color(7), Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	entries = append([]figure.Entry{{Name: "1 − α", Thumbs: []plot.Thumbnailer{tl}}}, entries...)
	ticks := classTicks(labels, t.LabelNames)
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.5, n-0.5
	// Names that would run into each other side by side (15 intents of
	// 20 characters on 9 inches) are set at 40°, and the panel grows to
	// hold them.
	var long, named int
	for _, tk := range ticks {
		if tk.Label != "" {
			long, named = max(long, utf8.RuneCountInString(tk.Label)), named+1
		}
	}
	var extra vg.Length
	if float64(named*long)*5.5 > 8.5*72 {
		const angle = 40 * math.Pi / 180
		p.X.Tick.Label.Rotation = angle
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		extra = vg.Length(float64(long) * 5.5 * math.Sin(angle))
	}
	p.Y.Min, p.Y.Max = math.Max(0, 5*math.Floor((lo-1)/5)), 100
	cols := figure.LegendCols(len(entries))
	promise := "Marginal calibration guarantees the coverage over all classes, not each class's: a class may fall below 1 − α unless the calibration is class-conditional (-calibration class)."
	if t.Calibration == conformal.Class.String() {
		promise = "The calibration is class-conditional: each class's threshold comes from its own calibration anchors, so each class's coverage is guaranteed at 1 − α (with δ, with probability 1 − δ), up to the spread of its own draw."
	}
	caption := fmt.Sprintf("Each test class's coverage of its positives, mean over %s, per row, against 1 − α = %.4g%% (dashed). %s", seedsText(t.Seeds), target, promise)
	if t.ByLabel {
		caption = fmt.Sprintf("Each test label's coverage of the positives that share it with their anchor (labels of %d positives or more, or all where none has that many; a positive sharing several labels counts for each), mean over %s, per row, against 1 − α = %.4g%% (dashed). The calibration guarantees the coverage over all positives, not label by label, and several labels a row give no class to calibrate by.", eval.MinLabelPositives, seedsText(t.Seeds), target)
	}
	return &figure.Figure{Name: stem + "-classes", Caption: caption, W: 9 * vg.Inch, H: 3.6*vg.Inch + extra + figure.LegendHeight(len(entries), cols),
		Draw: figure.Grid([][]*plot.Plot{{p}}, entries, cols)}
}
