package figure

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ccsets/ccs/experiment"
)

// curveRows are a table's rows with recalibrated points.
func curveRows(t *experiment.Table) []experiment.Row {
	var rs []experiment.Row
	for _, r := range t.Rows {
		if len(r.Curve) > 1 {
			rs = append(rs, r)
		}
	}
	return rs
}

// legendCols is the number of legend columns for n entries.
func legendCols(n int) int { return min(max(1, (n+3)/4), 4) }

// Coverage draws coverage against α for every row of t (each row's
// geometry recalibrated at each α): on the left the coverage with the 1−α
// line, on the right its distance to 1−α in points with the conformal
// guarantee's finite-sample band [0, 100/(n+1)] (the mean over seeds of a
// guaranteed set lies in it up to sampling error). Nil when the rows have
// no curves.
func Coverage(t *experiment.Table, stem string) *Figure {
	rs := curveRows(t)
	if len(rs) == 0 {
		return nil
	}
	left := newPlot("Coverage against α", "α (miscoverage level)", "coverage of test positives (%)")
	right := newPlot("Coverage − (1 − α)", "α (miscoverage level)", "coverage − (1 − α) (percentage points)")
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
	bandFill := translucent(color.RGBA{0, 158, 115, 255}, 70)
	lo := make([]float64, len(target))
	hi := make([]float64, len(target))
	for i := range target {
		lo[i], hi[i] = target[i], target[i]+upper[i]
	}
	band(left, alphas, lo, hi, bandFill)
	band(right, alphas, zero, upper, bandFill)
	tl := line(left, alphas, target, draw.LineStyle{Color: grey, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	line(right, alphas, zero, draw.LineStyle{Color: grey, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	entries := []entry{{"1 − α (the guarantee's floor)", []plot.Thumbnailer{tl}},
		{"band [1 − α, 1 − α + 1/(n+1)]", []plot.Thumbnailer{&plotter.Polygon{Color: bandFill}}}}
	for i, r := range rs {
		var x, y, d []float64
		for _, p := range r.Curve {
			x, y, d = append(x, p.Alpha), append(y, p.Coverage.Mean), append(d, p.Coverage.Mean-100*(1-p.Alpha))
		}
		s := style(i)
		l := line(left, x, y, s)
		line(right, x, d, s)
		points(right, x, d, s.Color, draw.CircleGlyph{}, vg.Points(2))
		entries = append(entries, entry{r.Method, []plot.Thumbnailer{l}})
	}
	alphaTicks(left, alphas)
	alphaTicks(right, alphas)
	seeds := rs[0].Coverage.N
	ns := fmt.Sprintf("n = %d calibration scores", nMin)
	if nMax != nMin {
		ns = fmt.Sprintf("n = %d to %d calibration scores (the band is drawn for %d, the widest)", nMin, nMax, nMin)
	}
	return &Figure{Name: stem + "-coverage", W: 9 * vg.Inch, H: 4*vg.Inch + legendHeight(len(entries), legendCols(len(entries))),
		Caption: fmt.Sprintf("%s: coverage of the test positives against α, each row's geometry (fitted at the table's α) recalibrated at each α on %s; mean over %d seeds. Right: the distance to 1 − α, with the finite-sample band [0, 100/(n+1)] of the split-conformal guarantee.", t.Title, ns, seeds),
		draw:    grid([][]*plot.Plot{{left, right}}, entries, legendCols(len(entries)))}
}

// alphaTicks puts p's x ticks at the values the curves were drawn at,
// labelling a tick only when it is at least 5% of the axis from the last
// labelled one (0.01 and 0.02 would print over each other).
func alphaTicks(p *plot.Plot, values []float64) {
	if len(values) == 0 {
		return
	}
	pos := func(v float64) float64 { return v }
	if _, ok := p.X.Scale.(plot.LogScale); ok {
		pos = math.Log
	}
	lo, hi := pos(slices.Min(values)), pos(slices.Max(values))
	var ticks []plot.Tick
	last := math.Inf(-1)
	for _, v := range values {
		t := plot.Tick{Value: v}
		if pos(v)-last >= 0.05*(hi-lo) {
			t.Label, last = strconv.FormatFloat(v, 'g', -1, 64), pos(v)
		}
		ticks = append(ticks, t)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
}

// fixedTicks are gonum's default ticks labelled with a fixed number of
// decimals (the default labels can repeat a value on a narrow range).
type fixedTicks struct{ decimals int }

func (f fixedTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', f.decimals, 64)
		}
	}
	return ts
}

// Tradeoff draws exclusion against coverage for every row of t as α
// varies (each row's geometry recalibrated): the inclusion–exclusion
// trade-off. Nil when the rows have no curves.
func Tradeoff(t *experiment.Table, stem string) *Figure {
	rs := curveRows(t)
	if len(rs) == 0 {
		return nil
	}
	p := newPlot("Exclusion against coverage as α varies", "coverage of test positives (%)", "exclusion of test negatives (%)")
	var entries []entry
	for i, r := range rs {
		var x, y []float64
		for _, c := range r.Curve {
			x, y = append(x, c.Coverage.Mean), append(y, c.Exclusion.Mean)
		}
		s := style(i)
		l := line(p, x, y, s)
		sc := points(p, x, y, s.Color, draw.CircleGlyph{}, vg.Points(2))
		entries = append(entries, entry{r.Method, []plot.Thumbnailer{l, sc}})
	}
	var alphas []string
	for _, c := range rs[0].Curve {
		alphas = append(alphas, fmt.Sprint(c.Alpha))
	}
	return &Figure{Name: stem + "-tradeoff", W: 9 * vg.Inch, H: 4.5*vg.Inch + legendHeight(len(entries), legendCols(len(entries))),
		Caption: fmt.Sprintf("%s: exclusion of the test negatives against coverage of the test positives, each row's geometry recalibrated at α = %v (right to left); mean over %d seeds. Higher and further right is better.", t.Title, alphas, rs[0].Coverage.N),
		draw:    grid([][]*plot.Plot{{p}}, entries, legendCols(len(entries)))}
}

// PNorm draws the p-norm table: at fixed coverage the exclusion and the
// log-volume against p, at the ℓ2 ball's volume the coverage and
// exclusion against p (no guarantee there).
func PNorm(t *experiment.PNormTable) *Figure {
	var ps []float64
	get := func(f func(r experiment.PNormRow) float64) []float64 {
		var v []float64
		for _, r := range t.Rows {
			v = append(v, f(r))
		}
		return v
	}
	for _, r := range t.Rows {
		ps = append(ps, r.P)
	}
	exc := newPlot("Fixed coverage: exclusion", "p (exponent of the p-ball)", "exclusion of test negatives (%)")
	vol := newPlot("Fixed coverage: log-volume", "p (exponent of the p-ball)", "log-volume (nats)")
	fv := newPlot("Fixed volume (the ℓ2 ball's): rates", "p (exponent of the p-ball)", "rate (%)")
	s0, s1 := style(0), style(6)
	line(exc, ps, get(func(r experiment.PNormRow) float64 { return r.Exclusion.Mean }), s0)
	points(exc, ps, get(func(r experiment.PNormRow) float64 { return r.Exclusion.Mean }), s0.Color, draw.CircleGlyph{}, vg.Points(2.5))
	line(vol, ps, get(func(r experiment.PNormRow) float64 { return r.LogVol.Mean }), s0)
	points(vol, ps, get(func(r experiment.PNormRow) float64 { return r.LogVol.Mean }), s0.Color, draw.CircleGlyph{}, vg.Points(2.5))
	cl := line(fv, ps, get(func(r experiment.PNormRow) float64 { return r.VolCoverage.Mean }), s1)
	points(fv, ps, get(func(r experiment.PNormRow) float64 { return r.VolCoverage.Mean }), s1.Color, draw.CircleGlyph{}, vg.Points(2.5))
	el := line(fv, ps, get(func(r experiment.PNormRow) float64 { return r.VolExclusion.Mean }), s0)
	points(fv, ps, get(func(r experiment.PNormRow) float64 { return r.VolExclusion.Mean }), s0.Color, draw.CircleGlyph{}, vg.Points(2.5))
	var pp, pe, pv, pc, pve []float64
	for _, r := range t.Rows {
		if r.Paper != nil {
			pp = append(pp, r.P)
			pe, pv, pc, pve = append(pe, r.Paper.Exclusion), append(pv, r.Paper.LogVol), append(pc, r.Paper.VolCoverage), append(pve, r.Paper.VolExclusion)
		}
	}
	paper := draw.SquareGlyph{}
	ps1 := points(exc, pp, pe, palette[1], paper, vg.Points(3))
	points(vol, pp, pv, palette[1], paper, vg.Points(3))
	points(fv, pp, pc, palette[1], paper, vg.Points(3))
	points(fv, pp, pve, palette[1], paper, vg.Points(3))
	entries := []entry{{"ours, mean over seeds (right: exclusion)", []plot.Thumbnailer{el}},
		{"ours, right: coverage (no guarantee)", []plot.Thumbnailer{cl}},
		{"the paper's table (p = 2 and 0.5)", []plot.Thumbnailer{ps1}}}
	return &Figure{Name: "pnorm", W: 9 * vg.Inch, H: 3.2*vg.Inch + legendHeight(len(entries), 3),
		Caption: fmt.Sprintf("%s: %s. The fixed-volume threshold is not a conformal quantile: its coverage is whatever that volume gives.", t.Title, t.Config),
		draw:    grid([][]*plot.Plot{{exc, vol, fv}}, entries, 3)}
}

// Sensitivity draws the sensitivity analysis: for each parameter a panel
// of coverage and exclusion (mean ± std over seeds as bands, the paper's
// points as squares, 1 − α dashed) above a panel of LogVol/d. Nil when no
// sweep has points.
func Sensitivity(t *experiment.SensitivityTable) *Figure {
	var sweeps []experiment.SensitivitySweep
	for _, sw := range t.Sweeps {
		if len(sw.Points) > 0 {
			sweeps = append(sweeps, sw)
		}
	}
	if len(sweeps) == 0 {
		return nil
	}
	cov, exc, vol := palette[5], palette[6], palette[3]
	cols := 3
	nrow := (len(sweeps) + cols - 1) / cols
	plots := make([][]*plot.Plot, 2*nrow)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	var entries []entry
	for i, sw := range sweeps {
		rate := newPlot("Sweeping "+sw.Label, sw.Label, "rate (%)")
		lv := newPlot("", sw.Label, "LogVol/d (nats)")
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
			alphaTicks(p, x) // ticks at the swept values
		}
		lv.Y.Tick.Marker = fixedTicks{2}
		band(rate, x, cl, ch, translucent(cov, 60))
		band(rate, x, el, eh, translucent(exc, 60))
		band(lv, x, vl, vh, translucent(vol, 60))
		tl := line(rate, x, target, draw.LineStyle{Color: color.Gray{120}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
		cs := draw.LineStyle{Color: cov, Width: vg.Points(1.5)}
		es := draw.LineStyle{Color: exc, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
		vs := draw.LineStyle{Color: vol, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
		c1 := line(rate, x, cm, cs)
		c2 := points(rate, x, cm, cov, draw.CircleGlyph{}, vg.Points(2.5))
		e1 := line(rate, x, em, es)
		e2 := points(rate, x, em, exc, draw.SquareGlyph{}, vg.Points(2.5))
		v1 := line(lv, x, vm, vs)
		v2 := points(lv, x, vm, vol, draw.TriangleGlyph{}, vg.Points(2.5))
		pcs := points(rate, px, pc, cov, draw.BoxGlyph{}, vg.Points(3))
		pes := points(rate, px, pe, exc, draw.CrossGlyph{}, vg.Points(3.5))
		// The paper's axis (40–100%), widened when a rate falls lower.
		rate.Y.Min, rate.Y.Max = math.Min(40, 10*math.Floor(rate.Y.Min/10)), 100
		plots[2*(i/cols)][i%cols], plots[2*(i/cols)+1][i%cols] = rate, lv
		if i == 0 {
			entries = []entry{
				{"coverage (mean ± std)", []plot.Thumbnailer{c1, c2}}, {"exclusion (mean ± std)", []plot.Thumbnailer{e1, e2}},
				{"LogVol/d (mean ± std)", []plot.Thumbnailer{v1, v2}}, {"1 − α", []plot.Thumbnailer{tl}},
				{"paper: coverage (CIFAR100)", []plot.Thumbnailer{pcs}}, {"paper: exclusion (CIFAR100)", []plot.Thumbnailer{pes}},
			}
		}
	}
	seeds := sweeps[0].Points[0].Coverage.N
	return &Figure{Name: "sensitivity-" + slug(t.Data), W: 9 * vg.Inch, H: vg.Length(nrow)*4.2*vg.Inch + legendHeight(len(entries), 3),
		Caption: fmt.Sprintf("%s: each parameter swept around the base point, the others held; coverage and exclusion of the test split (%%) above, LogVol/d (nats) below; mean ± std over %d seeds. The paper's points are its figure's (CIFAR100 embeddings, another dataset): they are for the shape of the curves, not the values. %s.", t.Title, seeds, t.Config),
		draw:    grid(plots, entries, 3)}
}
