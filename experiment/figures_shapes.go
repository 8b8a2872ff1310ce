package experiment

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/figure"
)

// shapeGrid is the number of grid points per side of a slice.
const shapeGrid = 151

// shapeRows picks the sets the figure draws: the two baselines and one
// objective's single-norm and generalized ball (Neg,Vol when the table has
// it, else the first learned pair).
func shapeRows(sets []ShapeSet) []ShapeSet {
	var out []ShapeSet
	pick := func(ok func(string) bool) {
		for _, s := range sets {
			if ok(s.Method) && len(s.Set) > 0 {
				out = append(out, s)
				return
			}
		}
	}
	pick(func(m string) bool { return m == "Conformal Ball (ℓ2)" })
	pick(func(m string) bool { return m == "Mahalanobis Ellipsoid" })
	obj := "(Neg,Vol)"
	if !slices.ContainsFunc(sets, func(s ShapeSet) bool { return strings.HasSuffix(s.Method, obj) }) {
		obj = ""
		for _, s := range sets {
			if i := strings.Index(s.Method, " ("); i > 0 && (strings.HasPrefix(s.Method, "Single") || strings.HasPrefix(s.Method, "Generalized")) {
				obj = s.Method[i+1:]
				break
			}
		}
	}
	if obj != "" {
		pick(func(m string) bool { return m == "Single "+obj })
		pick(func(m string) bool { return m == "Generalized "+obj })
	}
	return out
}

// extent is how far set s reaches from the anchor along coordinate axis a
// (either way): φ grows along every ray from the anchor, so doubling then
// bisection finds where it crosses the threshold.
func extent(s *conformal.Set, a int) float64 {
	d := s.Geometry.Dim()
	far := 0.0
	for _, sign := range []float64{1, -1} {
		at := func(t float64) bool {
			x := make([]float32, d)
			x[a] = float32(sign * t)
			return s.Geometry.Scores(nil, x)[0] <= s.Threshold
		}
		lo, hi := 0.0, 1e-3
		for at(hi) && hi < 1e6 {
			lo, hi = hi, 2*hi
		}
		for range 40 {
			if m := (lo + hi) / 2; at(m) {
				lo = m
			} else {
				hi = m
			}
		}
		far = max(far, hi)
	}
	return far
}

// shapesFigure draws seed 0's learned sets around one test anchor of the
// simulation: for each pair of coordinates, the slice through the anchor
// of the ℓ2 ball, the ellipsoid, the single-norm set and the generalized
// ball at their calibrated thresholds, with the anchor's positives and
// negatives projected onto the plane.
func shapesFigure(t *Table, stem string) (*figure.Figure, error) {
	sh := t.Shapes
	d := sh.D
	if d < 2 || len(sh.Anchor) != d {
		return nil, fmt.Errorf("figure: shapes of dimension %d with an anchor of %d coordinates", d, len(sh.Anchor))
	}
	rows := shapeRows(sh.Sets)
	sets := make([]*conformal.Set, len(rows))
	for i, r := range rows {
		s, err := conformal.ReadJSON(bytes.NewReader(r.Set))
		if err != nil {
			return nil, fmt.Errorf("figure: %s's set: %w", r.Method, err)
		}
		if s.Geometry.Dim() != d {
			return nil, fmt.Errorf("figure: %s's set has dimension %d, the anchor %d", r.Method, s.Geometry.Dim(), d)
		}
		sets[i] = s
	}
	// The window: the anchor ± 1.6 × the ℓ2 ball's radius (the first set
	// drawn; the median set's reach without it), in which the baselines
	// show whole; a learned set reaching further, along a direction where no
	// negatives lie, is cut at the window's edge.
	var reach []float64
	for _, s := range sets {
		e := 0.0
		for a := range d {
			e = max(e, extent(s, a))
		}
		reach = append(reach, e)
	}
	r := 1.0
	if len(reach) > 0 {
		r = reach[0]
		if rows[0].Method != "Conformal Ball (ℓ2)" {
			slices.Sort(reach)
			r = reach[len(reach)/2]
		}
	}
	if !(r > 0) || math.IsInf(r, 1) {
		r = 1
	}
	r *= 1.6
	var pairs [][2]int
	for a := 0; a < d && len(pairs) < 3; a++ {
		for b := a + 1; b < d && len(pairs) < 3; b++ {
			pairs = append(pairs, [2]int{a, b})
		}
	}
	var panels []*plot.Plot
	var entries []figure.Entry
	for pi, pr := range pairs {
		a, b := pr[0], pr[1]
		p := figure.Panel(fmt.Sprintf("Slice x%d–x%d through the anchor", a+1, b+1), fmt.Sprintf("x%d", a+1), fmt.Sprintf("x%d", b+1))
		za, zb := float64(sh.Anchor[a]), float64(sh.Anchor[b])
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = za-r, za+r, zb-r, zb+r
		proj := func(pts []float32) (x, y []float64) {
			for i := 0; i+d <= len(pts); i += d {
				u, v := float64(pts[i+a]), float64(pts[i+b])
				if math.Abs(u-za) <= r && math.Abs(v-zb) <= r {
					x, y = append(x, u), append(y, v)
				}
			}
			return x, y
		}
		nx, ny := proj(sh.Negatives)
		neg := figure.Points(p, nx, ny, figure.Translucent(figure.Color(6), 110), draw.CrossGlyph{}, vg.Points(1.8))
		px, py := proj(sh.Positives)
		pos := figure.Points(p, px, py, figure.Translucent(figure.Color(5), 110), draw.CircleGlyph{}, vg.Points(1.2))
		anchor := figure.Points(p, []float64{za}, []float64{zb}, figure.Color(0), draw.PyramidGlyph{}, vg.Points(4))
		// Each set's score over the grid, the other coordinates at the
		// anchor's: φ(Z − z) for z in the plane.
		xs, ys := make([]float64, shapeGrid), make([]float64, shapeGrid)
		for i := range shapeGrid {
			xs[i] = za - r + 2*r*float64(i)/float64(shapeGrid-1)
			ys[i] = zb - r + 2*r*float64(i)/float64(shapeGrid-1)
		}
		diffs := make([]float32, shapeGrid*shapeGrid*d)
		for row := range shapeGrid {
			for c := range shapeGrid {
				k := (row*shapeGrid + c) * d
				diffs[k+a] = float32(za - xs[c])
				diffs[k+b] = float32(zb - ys[row])
			}
		}
		for si, s := range sets {
			st := figure.Style([]int{0, 1, 5, 6}[si%4])
			st.Width = vg.Points(2)
			if math.IsInf(s.Threshold, 1) || math.IsNaN(s.Threshold) {
				continue
			}
			p.Add(&figure.Contour{XS: xs, YS: ys, Z: s.Geometry.Scores(nil, diffs), Level: s.Threshold, Style: st})
			if pi == 0 {
				entries = append(entries, figure.Entry{Name: rows[si].Method + " at its calibrated threshold", Thumbs: []plot.Thumbnailer{&plotter.Line{LineStyle: st}}})
			}
		}
		if pi == 0 {
			entries = append(entries, figure.Entry{Name: "the anchor", Thumbs: []plot.Thumbnailer{anchor}},
				figure.Entry{Name: "its positives (projected)", Thumbs: []plot.Thumbnailer{pos}}, figure.Entry{Name: "its negatives (projected)", Thumbs: []plot.Thumbnailer{neg}})
		}
		panels = append(panels, p)
	}
	return &figure.Figure{Name: stem + "-shapes", W: 9 * vg.Inch, H: 3.3*vg.Inch + figure.LegendHeight(len(entries), 2),
		Caption: fmt.Sprintf("%s, seed 0: the fitted sets around one test anchor, sliced through the anchor along each pair of coordinates (the third held at the anchor's), at their calibrated thresholds; the anchor's positives and negatives projected onto each plane. Each panel spans the same range on both axes, drawn to slightly different scales: a circle looks a little oval.", t.Title),
		Draw:    figure.Grid([][]*plot.Plot{panels}, entries, 2)}, nil
}
