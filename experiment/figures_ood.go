package experiment

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ccsets/ccs/figure"
)

// isCCS reports whether an OOD row is one of the CCS scores (a method in
// one of its modes) rather than a baseline.
func isCCS(method string) bool {
	for _, m := range []string{", batch", ", reference", ", per input", "CCS ("} {
		if strings.Contains(method, m) {
			return true
		}
	}
	return false
}

// best returns the indices of t's rows with curves on set j, CCS rows
// (is(method) true: isCCS, or compare's learnedRow) or baselines, by
// decreasing mean AUROC on set j, at most n.
func best(t *OODTable, j int, ccs bool, n int, is func(string) bool) []int {
	var idx []int
	for i, r := range t.Rows {
		if r.Unavailable == "" && len(r.Curves) > j && len(r.AUROC) > j && is(r.Method) == ccs {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := t.Rows[a].AUROC[j].Mean, t.Rows[b].AUROC[j].Mean
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	return idx[:min(n, len(idx))]
}

// rocFigure draws, for each OOD set, the ROC curves (seed 0) of the three best
// CCS rows and the two best baselines by mean AUROC, whole above and with
// the false-positive rate up to 10% below (good detectors differ there).
// Nil when the table has no curves.
func rocFigure(t *OODTable, stem string) *figure.Figure {
	return rocFigureOf(t, stem, isCCS, "CCS rows", "baselines")
}

// rocFigureOf is rocFigure with the rule that tells a CCS row from a
// baseline, and what the caption calls each: compare's rows are all
// conformal sets with the per-input test, the learned ones its "CCS rows",
// the ℓ2 ball and the ellipsoid its baselines.
func rocFigureOf(t *OODTable, stem string, ccs func(string) bool, ccsName, baseName string) *figure.Figure {
	var whole, zoom []*plot.Plot
	var entries []figure.Entry
	named := map[string]bool{} // the rows in the legend
	drawn := [2]int{}          // the most CCS rows and baselines drawn in a panel
	for j, set := range t.Sets {
		c, b := best(t, j, true, 3, ccs), best(t, j, false, 2, ccs)
		drawn = [2]int{max(drawn[0], len(c)), max(drawn[1], len(b))}
		rows := append(c, b...)
		if len(rows) == 0 {
			continue
		}
		p := figure.Panel("ID vs "+set, "false-positive rate (share of ID flagged)", "true-positive rate (share of OOD flagged)")
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		z := figure.Panel("ID vs "+set+", false-positive rate ≤ 0.1", "false-positive rate (share of ID flagged)", "true-positive rate (share of OOD flagged)")
		z.X.Min, z.X.Max, z.Y.Max = 0, 0.1, 1
		figure.Line(p, []float64{0, 1}, []float64{0, 1}, draw.LineStyle{Color: color.Gray{170}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}})
		zmin := 1.0
		for _, i := range rows {
			r := t.Rows[i]
			c := r.Curves[j]
			// A row's colour is its place in the table, as in the other
			// figures of its rows (compare's coverage, trade-off, classes).
			ok := named[r.Method]
			named[r.Method] = true
			s := figure.Style(i)
			l := figure.Line(p, c.FPR, c.TPR, s)
			// The zoomed curve: its points up to 10%, and where it crosses 10%.
			var zx, zy []float64
			for m := range c.FPR {
				if c.FPR[m] > 0.1 {
					if m > 0 {
						f := (0.1 - c.FPR[m-1]) / (c.FPR[m] - c.FPR[m-1])
						zx, zy = append(zx, 0.1), append(zy, c.TPR[m-1]+f*(c.TPR[m]-c.TPR[m-1]))
					}
					break
				}
				zx, zy = append(zx, c.FPR[m]), append(zy, c.TPR[m])
			}
			for _, v := range zy[min(1, len(zy)):] {
				zmin = min(zmin, v)
			}
			figure.Line(z, zx, zy, s)
			if !ok {
				entries = append(entries, figure.Entry{Name: r.Method, Thumbs: []plot.Thumbnailer{l}})
			}
		}
		z.Y.Min = max(0, 0.1*float64(int(10*zmin))-0.05)
		whole, zoom = append(whole, p), append(zoom, z)
	}
	if len(whole) == 0 {
		return nil
	}
	cols := figure.LegendCols(len(entries))
	return &figure.Figure{Name: stem + "-roc", W: 9 * vg.Inch, H: 7*vg.Inch + figure.LegendHeight(len(entries), cols),
		Caption: fmt.Sprintf("%s: ROC curves%s (OOD the positive class) of %s against each OOD set; the diagonal is chance. Below, the same curves up to a false-positive rate of 10%%.", t.Title, onSeed0(t), drawnRows(t, ccs, drawn, ccsName, baseName)),
		Draw:    figure.Grid([][]*plot.Plot{whole, zoom}, entries, cols)}
}

// onSeed0 is " on seed 0" where the table has several seeds' runs (its
// curves are the first's), "" for one run.
func onSeed0(t *OODTable) string {
	if t.Runs > 1 {
		return " on seed 0"
	}
	return ""
}

// rowsOf is how many of t's rows with curves are CCS rows (ccs true) or
// baselines, by the rule is.
func rowsOf(t *OODTable, is func(string) bool, ccs bool) int {
	n := 0
	for _, r := range t.Rows {
		if r.Unavailable == "" && len(r.Curves) > 0 && is(r.Method) == ccs {
			n++
		}
	}
	return n
}

// drawnRows says which rows a ROC figure draws: the most CCS rows and
// baselines one panel holds (drawn), each "the N best … by mean AUROC"
// where the table has more, "the …" where these are all it has.
func drawnRows(t *OODTable, is func(string) bool, drawn [2]int, ccsName, baseName string) string {
	var parts []string
	for k, name := range []string{ccsName, baseName} {
		n, all := drawn[k], rowsOf(t, is, k == 0)
		switch {
		case n == 0:
		case n == 1 && n < all:
			parts = append(parts, "the best "+singular(name)+" by mean AUROC")
		case n < all:
			parts = append(parts, fmt.Sprintf("the %s best %s by mean AUROC", []string{"", "one", "two", "three"}[min(n, 3)], name))
		case n == 1:
			parts = append(parts, "the table's one "+singular(name))
		default:
			parts = append(parts, fmt.Sprintf("its %d %s", n, name))
		}
	}
	return strings.Join(parts, " and ")
}

// singular is a caption's plural name of rows in the singular: "rows"
// and "baselines", the first such word, lose their s.
func singular(name string) string {
	for _, w := range []string{"rows", "baselines"} {
		if i := strings.Index(name, w); i >= 0 {
			return name[:i] + strings.TrimSuffix(w, "s") + name[i+len(w):]
		}
	}
	return name
}

// histogramsFigure draws, for each OOD set, the seed-0 score histograms of the
// ID test inputs and of the OOD set for the best CCS row and the best
// baseline by mean AUROC. Nil when the table has no curves.
func histogramsFigure(t *OODTable, stem string) *figure.Figure {
	return histogramsFigureOf(t, stem, isCCS, "CCS row", "baseline")
}

// histogramsFigureOf is histogramsFigure with rocFigureOf's rule and names.
func histogramsFigureOf(t *OODTable, stem string, ccsRule func(string) bool, ccsName, baseName string) *figure.Figure {
	var plots [][]*plot.Plot
	idC, oodC := figure.Color(5), figure.Color(6)
	var entries []figure.Entry
	drawn := [2]bool{} // whether a CCS row and a baseline are drawn
	cols := 0
	for j, set := range t.Sets {
		var row []*plot.Plot
		for k, ccs := range []bool{true, false} { // k: 0 the CCS row, 1 the baseline
			b := best(t, j, ccs, 1, ccsRule)
			if len(b) == 0 {
				continue
			}
			drawn[k] = true
			r := t.Rows[b[0]]
			c := r.Curves[j]
			auroc := fmt.Sprintf("AUROC %.1f", r.AUROC[j].Mean)
			if t.Runs > 1 { // the curves are seed 0's, the AUROC every seed's mean
				auroc = fmt.Sprintf("mean AUROC %.1f over %d seeds", r.AUROC[j].Mean, t.Runs)
			}
			p := figure.Panel(fmt.Sprintf("%s, vs %s (%s)", r.Method, set, auroc), "score (higher: more OOD)", "share of inputs per bin")
			x, yi := figure.Steps(c.Edges, c.ID)
			_, yo := figure.Steps(c.Edges, c.OOD)
			p.Y.Min = 0
			top := 0.0 // a hand-edited curve may have no bins
			for _, v := range append(slices.Clone(yi), yo...) {
				top = max(top, v)
			}
			if top > 0 {
				p.Y.Max = 1.08 * top // the tallest bar clear of the frame
			}
			zero := make([]float64, len(x))
			figure.Band(p, x, zero, yi, figure.Translucent(idC, 90))
			figure.Band(p, x, zero, yo, figure.Translucent(oodC, 90))
			li := figure.Line(p, x, yi, draw.LineStyle{Color: idC, Width: vg.Points(1.2)})
			lo := figure.Line(p, x, yo, draw.LineStyle{Color: oodC, Width: vg.Points(1.2)})
			if entries == nil {
				entries = []figure.Entry{{Name: "ID test inputs", Thumbs: []plot.Thumbnailer{li}}, {Name: "OOD inputs", Thumbs: []plot.Thumbnailer{lo}}}
			}
			row = append(row, p)
		}
		if len(row) > 0 {
			plots = append(plots, row)
			cols = max(cols, len(row))
		}
	}
	if len(plots) == 0 {
		return nil
	}
	for i := range plots { // a panel left blank only where another set has two
		for len(plots[i]) < cols {
			plots[i] = append(plots[i], nil)
		}
	}
	which := fmt.Sprintf("the best %s (left) and the best %s (right) by mean AUROC", ccsName, baseName)
	switch {
	case !drawn[1]:
		which = fmt.Sprintf("the best %s by mean AUROC (no %s in the table)", ccsName, baseName)
		if rowsOf(t, ccsRule, true) == 1 {
			which = "the table's " + ccsName
		}
	case !drawn[0]:
		which = fmt.Sprintf("the best %s by mean AUROC (no %s in the table)", baseName, ccsName)
	}
	return &figure.Figure{Name: stem + "-histograms", W: 9 * vg.Inch, H: vg.Length(len(plots))*3.2*vg.Inch + figure.LegendHeight(2, 2),
		Caption: fmt.Sprintf("%s: score histograms%s, ID test inputs against each OOD set, for %s; the bins span the pooled scores' 0.5–99.5th percentiles, the end bins hold the rest.", t.Title, onSeed0(t), which),
		Draw:    figure.Grid(plots, entries, 2)}
}
