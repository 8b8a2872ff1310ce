package experiment

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ccsets/ccs/figure"
)

// curveRows are a table's rows with recalibrated points.
func curveRows(t *Table) []Row {
	var rs []Row
	for _, r := range t.Rows {
		if len(r.Curve) > 1 {
			rs = append(rs, r)
		}
	}
	return rs
}

// coverageFigure draws coverage against α for every row of t (each row's
// geometry recalibrated at each α): on the left the coverage with the 1−α
// line, on the right its distance to 1−α in points with the conformal
// guarantee's finite-sample band [0, 100/(n+1)] (the mean over seeds of a
// guaranteed set lies in it up to sampling error). note, when not "",
// ends the caption (what the band means for the table's calibration).
// Nil when the rows have no curves.
func coverageFigure(t *Table, stem, note string) *figure.Figure {
	rs := curveRows(t)
	if len(rs) == 0 {
		return nil
	}
	left := figure.Panel("Coverage against α", "α (miscoverage level)", "coverage of test positives (%)")
	right := figure.Panel("Coverage − (1 − α)", "α (miscoverage level)", "coverage − (1 − α) (percentage points)")
	// The band is drawn for the smallest n among the rows (the widest):
	// the ellipsoid calibrates on half the anchors, its Σ taking the other.
	nMin, nMax := rs[0].Curve[0].N, rs[0].Curve[0].N
	for _, r := range rs {
		nMin, nMax = min(nMin, r.Curve[0].N), max(nMax, r.Curve[0].N)
	}
	var alphas, target, zero, upper []float64
	for _, p := range rs[0].Curve {
		alphas = append(alphas, p.Alpha)
		target = append(target, 100*(1-p.Alpha))
		zero = append(zero, 0)
		upper = append(upper, 100/float64(nMin+1))
	}
	grey := color.Gray{150}
	bandFill := figure.Translucent(color.RGBA{0, 158, 115, 255}, 70)
	lo := make([]float64, len(target))
	hi := make([]float64, len(target))
	for i := range target {
		lo[i], hi[i] = target[i], target[i]+upper[i]
	}
	figure.Band(left, alphas, lo, hi, bandFill)
	figure.Band(right, alphas, zero, upper, bandFill)
	tl := figure.Line(left, alphas, target, draw.LineStyle{Color: grey, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	figure.Line(right, alphas, zero, draw.LineStyle{Color: grey, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	entries := []figure.Entry{{Name: "1 − α (the guarantee's floor)", Thumbs: []plot.Thumbnailer{tl}},
		{Name: "band [1 − α, 1 − α + 1/(n+1)]", Thumbs: []plot.Thumbnailer{&plotter.Polygon{Color: bandFill}}}}
	for i, r := range rs {
		var x, y, d []float64
		for _, p := range r.Curve {
			x, y, d = append(x, p.Alpha), append(y, p.Coverage.Mean), append(d, p.Coverage.Mean-100*(1-p.Alpha))
		}
		s := figure.Style(i)
		l := figure.Line(left, x, y, s)
		figure.Line(right, x, d, s)
		figure.Points(right, x, d, s.Color, draw.CircleGlyph{}, vg.Points(2))
		entries = append(entries, figure.Entry{Name: r.Method, Thumbs: []plot.Thumbnailer{l}})
	}
	figure.TicksAt(left, alphas)
	figure.TicksAt(right, alphas)
	seeds := rs[0].Coverage.N
	ns := fmt.Sprintf("n = %d calibration scores", nMin)
	if nMax != nMin {
		ns = fmt.Sprintf("n = %d to %d calibration scores (the band is drawn for %d, the widest)", nMin, nMax, nMin)
	}
	return &figure.Figure{Name: stem + "-coverage", W: 9 * vg.Inch, H: 4*vg.Inch + figure.LegendHeight(len(entries), figure.LegendCols(len(entries))),
		Caption: fmt.Sprintf("%s: coverage of the test positives against α, each row's geometry (fitted at the table's α) recalibrated at each α on %s; mean over %s. Right: the distance to 1 − α, with the finite-sample band [0, 100/(n+1)] of the split-conformal guarantee.%s", t.Title, ns, seedsText(seeds), note),
		Draw:    figure.Grid([][]*plot.Plot{{left, right}}, entries, figure.LegendCols(len(entries)))}
}

// tradeoffFigure draws exclusion against coverage for every row of t as α
// varies (each row's geometry recalibrated): the inclusion–exclusion
// trade-off. Nil when the rows have no curves.
func tradeoffFigure(t *Table, stem string) *figure.Figure {
	rs := curveRows(t)
	if len(rs) == 0 {
		return nil
	}
	p := figure.Panel("Exclusion against coverage as α varies", "coverage of test positives (%)", "exclusion of test negatives (%)")
	var entries []figure.Entry
	for i, r := range rs {
		var x, y []float64
		for _, c := range r.Curve {
			x, y = append(x, c.Coverage.Mean), append(y, c.Exclusion.Mean)
		}
		s := figure.Style(i)
		l := figure.Line(p, x, y, s)
		sc := figure.Points(p, x, y, s.Color, draw.CircleGlyph{}, vg.Points(2))
		entries = append(entries, figure.Entry{Name: r.Method, Thumbs: []plot.Thumbnailer{l, sc}})
	}
	var alphas []string
	for _, c := range rs[0].Curve {
		alphas = append(alphas, fmt.Sprint(c.Alpha))
	}
	return &figure.Figure{Name: stem + "-tradeoff", W: 9 * vg.Inch, H: 4.5*vg.Inch + figure.LegendHeight(len(entries), figure.LegendCols(len(entries))),
		Caption: fmt.Sprintf("%s: exclusion of the test negatives against coverage of the test positives, each row's geometry recalibrated at α = %s (right to left); mean over %s. Higher and further right is better.", t.Title, strings.Join(alphas, ", "), seedsText(rs[0].Coverage.N)),
		Draw:    figure.Grid([][]*plot.Plot{{p}}, entries, figure.LegendCols(len(entries)))}
}

// seedsText is "1 seed" or "N seeds", for a caption.
func seedsText(n int) string { return plural(n, "seed", "seeds") }
