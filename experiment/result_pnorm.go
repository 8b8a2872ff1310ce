package experiment

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ccsets/ccs/figure"
)

func init() {
	Register(Kind{Name: "pnorm", Heading: "The effect of the p-norm", Order: 20,
		New: func() Result { return new(PNormResult) }})
}

// PNormResult is ccs reproduce pnorm's result (kind "pnorm").
type PNormResult struct {
	PNorm *PNormTable `json:"pnorm,omitempty"`
}

// Add keeps the table.
func (r *PNormResult) Add(t Text) error {
	pt, ok := t.(*PNormTable)
	if !ok {
		return fmt.Errorf("experiment: a pnorm result takes a p-norm table, not %T", t)
	}
	r.PNorm = pt
	return nil
}

// Texts are the table, if any.
func (r *PNormResult) Texts() []Text {
	if r.PNorm == nil {
		return nil
	}
	return []Text{r.PNorm}
}

// Figures is the p-norm figure, named "pnorm".
func (r *PNormResult) Figures(string) ([]*figure.Figure, error) {
	if r.PNorm == nil {
		return nil, nil
	}
	return []*figure.Figure{pnormFigure(r.PNorm)}, nil
}

// pnormFigure draws the p-norm table: at fixed coverage the exclusion and the
// log-volume against p, at the ℓ2 ball's volume the coverage and
// exclusion against p (no guarantee there).
func pnormFigure(t *PNormTable) *figure.Figure {
	var ps []float64
	get := func(f func(r PNormRow) float64) []float64 {
		var v []float64
		for _, r := range t.Rows {
			v = append(v, f(r))
		}
		return v
	}
	for _, r := range t.Rows {
		ps = append(ps, r.P)
	}
	exc := figure.Panel("Fixed coverage: exclusion", "p (exponent of the p-ball)", "exclusion of test negatives (%)")
	vol := figure.Panel("Fixed coverage: log-volume", "p (exponent of the p-ball)", "log-volume (nats)")
	fv := figure.Panel("Fixed volume (the ℓ2 ball's): rates", "p (exponent of the p-ball)", "rate (%)")
	s0, s1 := figure.Style(0), figure.Style(6)
	figure.Line(exc, ps, get(func(r PNormRow) float64 { return r.Exclusion.Mean }), s0)
	figure.Points(exc, ps, get(func(r PNormRow) float64 { return r.Exclusion.Mean }), s0.Color, draw.CircleGlyph{}, vg.Points(2.5))
	figure.Line(vol, ps, get(func(r PNormRow) float64 { return r.LogVol.Mean }), s0)
	figure.Points(vol, ps, get(func(r PNormRow) float64 { return r.LogVol.Mean }), s0.Color, draw.CircleGlyph{}, vg.Points(2.5))
	cl := figure.Line(fv, ps, get(func(r PNormRow) float64 { return r.VolCoverage.Mean }), s1)
	figure.Points(fv, ps, get(func(r PNormRow) float64 { return r.VolCoverage.Mean }), s1.Color, draw.CircleGlyph{}, vg.Points(2.5))
	el := figure.Line(fv, ps, get(func(r PNormRow) float64 { return r.VolExclusion.Mean }), s0)
	figure.Points(fv, ps, get(func(r PNormRow) float64 { return r.VolExclusion.Mean }), s0.Color, draw.CircleGlyph{}, vg.Points(2.5))
	var pp, pe, pv, pc, pve []float64
	for _, r := range t.Rows {
		if r.Paper != nil {
			pp = append(pp, r.P)
			pe, pv, pc, pve = append(pe, r.Paper.Exclusion), append(pv, r.Paper.LogVol), append(pc, r.Paper.VolCoverage), append(pve, r.Paper.VolExclusion)
		}
	}
	paper := draw.SquareGlyph{}
	ps1 := figure.Points(exc, pp, pe, figure.Color(1), paper, vg.Points(3))
	figure.Points(vol, pp, pv, figure.Color(1), paper, vg.Points(3))
	figure.Points(fv, pp, pc, figure.Color(1), paper, vg.Points(3))
	figure.Points(fv, pp, pve, figure.Color(1), paper, vg.Points(3))
	entries := []figure.Entry{{Name: "ours, mean over seeds (right: exclusion)", Thumbs: []plot.Thumbnailer{el}},
		{Name: "ours, right: coverage (no guarantee)", Thumbs: []plot.Thumbnailer{cl}},
		{Name: "the paper's table", Thumbs: []plot.Thumbnailer{ps1}}}
	return &figure.Figure{Name: "pnorm", W: 9 * vg.Inch, H: 3.2*vg.Inch + figure.LegendHeight(len(entries), 3),
		Caption: fmt.Sprintf("%s: %s. The fixed-volume threshold is not a conformal quantile: its coverage is whatever that volume gives.", t.Title, t.Config),
		Draw:    figure.Grid([][]*plot.Plot{{exc, vol, fv}}, entries, 3)}
}
