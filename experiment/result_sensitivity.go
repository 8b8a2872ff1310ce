package experiment

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ccsets/ccs/figure"
)

func init() {
	Register(Kind{Name: "sensitivity", Heading: "Sensitivity analysis", Order: 50,
		New: func() Result { return new(SensitivityResult) }})
}

// SensitivityResult is ccs reproduce sensitivity's result (kind
// "sensitivity").
type SensitivityResult struct {
	Sensitivity *SensitivityTable `json:"sensitivity,omitempty"`
}

// Add keeps the table.
func (r *SensitivityResult) Add(t Text) error {
	st, ok := t.(*SensitivityTable)
	if !ok {
		return fmt.Errorf("experiment: a sensitivity result takes a sensitivity table, not %T", t)
	}
	r.Sensitivity = st
	return nil
}

// Texts are the table, if any.
func (r *SensitivityResult) Texts() []Text {
	if r.Sensitivity == nil {
		return nil
	}
	return []Text{r.Sensitivity}
}

// Figures is the sensitivity figure (named sensitivity-DATA), when a sweep
// has points.
func (r *SensitivityResult) Figures(string) ([]*figure.Figure, error) {
	if r.Sensitivity == nil {
		return nil, nil
	}
	if f := sensitivityFigure(r.Sensitivity); f != nil {
		return []*figure.Figure{f}, nil
	}
	return nil, nil
}

// sensitivityFigure draws the sensitivity analysis: for each parameter a panel
// of coverage and exclusion (mean ± std over seeds as bands, the paper's
// points as squares, 1 − α dashed) above a panel of LogVol/d. Nil when no
// sweep has points.
func sensitivityFigure(t *SensitivityTable) *figure.Figure {
	var sweeps []SensitivitySweep
	for _, sw := range t.Sweeps {
		if len(sw.Points) > 0 {
			sweeps = append(sweeps, sw)
		}
	}
	if len(sweeps) == 0 {
		return nil
	}
	cov, exc, vol := figure.Color(5), figure.Color(6), figure.Color(3)
	cols := 3
	nrow := (len(sweeps) + cols - 1) / cols
	plots := make([][]*plot.Plot, 2*nrow)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	var entries []figure.Entry
	for i, sw := range sweeps {
		rate := figure.Panel("Sweeping "+sw.Label, sw.Label, "rate (%)")
		lv := figure.Panel("", sw.Label, "LogVol/d (nats)")
		var x, cm, cl, ch, em, el, eh, vm, vl, vh, target, px, pc, pe []float64
		for _, p := range sw.Points {
			x = append(x, p.Value)
			cm, cl, ch = append(cm, p.Coverage.Mean), append(cl, p.Coverage.Mean-p.Coverage.Std), append(ch, p.Coverage.Mean+p.Coverage.Std)
			em, el, eh = append(em, p.Exclusion.Mean), append(el, p.Exclusion.Mean-p.Exclusion.Std), append(eh, p.Exclusion.Mean+p.Exclusion.Std)
			vm, vl, vh = append(vm, p.LogVolPerDim.Mean), append(vl, p.LogVolPerDim.Mean-p.LogVolPerDim.Std), append(vh, p.LogVolPerDim.Mean+p.LogVolPerDim.Std)
			a := t.Base.Alpha
			if sw.Param == "alpha" {
				a = p.Value
			}
			target = append(target, 100*(1-a))
			if p.Paper != nil {
				px, pc, pe = append(px, p.Value), append(pc, p.Paper[0]), append(pe, p.Paper[1])
			}
		}
		for _, p := range []*plot.Plot{rate, lv} {
			if sw.Param == "tau" || sw.Param == "lambda" {
				p.X.Scale = plot.LogScale{}
			}
			figure.TicksAt(p, x) // ticks at the swept values
		}
		lv.Y.Tick.Marker = figure.FixedTicks{Decimals: 2}
		figure.Band(rate, x, cl, ch, figure.Translucent(cov, 60))
		figure.Band(rate, x, el, eh, figure.Translucent(exc, 60))
		figure.Band(lv, x, vl, vh, figure.Translucent(vol, 60))
		tl := figure.Line(rate, x, target, draw.LineStyle{Color: color.Gray{120}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
		cs := draw.LineStyle{Color: cov, Width: vg.Points(1.5)}
		es := draw.LineStyle{Color: exc, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
		vs := draw.LineStyle{Color: vol, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
		c1 := figure.Line(rate, x, cm, cs)
		c2 := figure.Points(rate, x, cm, cov, draw.CircleGlyph{}, vg.Points(2.5))
		e1 := figure.Line(rate, x, em, es)
		e2 := figure.Points(rate, x, em, exc, draw.SquareGlyph{}, vg.Points(2.5))
		v1 := figure.Line(lv, x, vm, vs)
		v2 := figure.Points(lv, x, vm, vol, draw.TriangleGlyph{}, vg.Points(2.5))
		pcs := figure.Points(rate, px, pc, cov, draw.BoxGlyph{}, vg.Points(3))
		pes := figure.Points(rate, px, pe, exc, draw.CrossGlyph{}, vg.Points(3.5))
		// The paper's axis (40–100%), widened when a rate falls lower.
		rate.Y.Min, rate.Y.Max = math.Min(40, 10*math.Floor(rate.Y.Min/10)), 100
		plots[2*(i/cols)][i%cols], plots[2*(i/cols)+1][i%cols] = rate, lv
		if i == 0 {
			entries = []figure.Entry{
				{Name: "coverage (mean ± std)", Thumbs: []plot.Thumbnailer{c1, c2}}, {Name: "exclusion (mean ± std)", Thumbs: []plot.Thumbnailer{e1, e2}},
				{Name: "LogVol/d (mean ± std)", Thumbs: []plot.Thumbnailer{v1, v2}}, {Name: "1 − α", Thumbs: []plot.Thumbnailer{tl}},
				{Name: "paper: coverage (CIFAR100)", Thumbs: []plot.Thumbnailer{pcs}}, {Name: "paper: exclusion (CIFAR100)", Thumbs: []plot.Thumbnailer{pes}},
			}
		}
	}
	seeds := sweeps[0].Points[0].Coverage.N
	return &figure.Figure{Name: "sensitivity-" + figure.Slug(t.Data), W: 9 * vg.Inch, H: vg.Length(nrow)*4.2*vg.Inch + figure.LegendHeight(len(entries), 3),
		Caption: fmt.Sprintf("%s: each parameter swept around the base point, the others held; coverage and exclusion of the test split (%%) above, LogVol/d (nats) below; mean ± std over %s. The paper's points are its figure's (CIFAR100 embeddings, another dataset): they are for the shape of the curves, not the values. %s.", t.Title, seedsText(seeds), t.Config),
		Draw:    figure.Grid(plots, entries, 3)}
}
