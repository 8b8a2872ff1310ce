package figure

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Contour is the level set {z = Level} of a grid of values, drawn as
// lines: a set's boundary where z is its score and Level its threshold.
// The lines are found by marching squares, joined through the grid edges
// they cross, and drawn in the order of the grid's cells, so that two
// drawings of one grid are the same bytes. (gonum/plot's Contour joins its
// segments through a map and draws them in the map's order: a level set of
// several pieces came out in a different order, and a closed line from a
// different start, from one drawing to the next.)
type Contour struct {
	XS, YS []float64 // the grid's coordinates, increasing
	// Z holds the values row by row: Z[r*len(XS)+c] at (XS[c], YS[r]).
	// A NaN value leaves its cells without lines.
	Z     []float64
	Level float64
	Style draw.LineStyle
}

// Lines returns the level set's polylines in data coordinates, each a run
// of points through the grid edges it crosses; a closed line ends where it
// began.
func (ct *Contour) Lines() [][][2]float64 {
	nx, ny := len(ct.XS), len(ct.YS)
	if nx < 2 || ny < 2 || len(ct.Z) != nx*ny {
		return nil
	}
	// An edge's id: 2·(r·nx + c) for the horizontal edge from (c, r) to
	// (c+1, r), plus one for the vertical edge from (c, r) to (c, r+1).
	type segment struct{ a, b int }
	var segs []segment
	at := map[int][]int{} // edge → the segments through it (one or two), in order
	add := func(a, b int) {
		at[a] = append(at[a], len(segs))
		at[b] = append(at[b], len(segs))
		segs = append(segs, segment{a, b})
	}
	z := func(c, r int) float64 { return ct.Z[r*nx+c] }
	for r := range ny - 1 {
		for c := range nx - 1 {
			v := [4]float64{z(c, r), z(c+1, r), z(c+1, r+1), z(c, r+1)}
			if math.IsNaN(v[0]) || math.IsNaN(v[1]) || math.IsNaN(v[2]) || math.IsNaN(v[3]) {
				continue
			}
			in := 0
			for k, x := range v {
				if x <= ct.Level {
					in |= 1 << k
				}
			}
			bottom, right := 2*(r*nx+c), 2*(r*nx+c+1)+1
			top, left := 2*((r+1)*nx+c), 2*(r*nx+c)+1
			switch in {
			case 1, 14:
				add(left, bottom)
			case 2, 13:
				add(bottom, right)
			case 3, 12:
				add(left, right)
			case 4, 11:
				add(right, top)
			case 6, 9:
				add(bottom, top)
			case 7, 8:
				add(left, top)
			case 5, 10: // a saddle: the cell's mean says whether its middle is inside
				if mid := (v[0] + v[1] + v[2] + v[3]) / 4; (mid <= ct.Level) == (in == 5) {
					add(left, top)
					add(bottom, right)
				} else {
					add(left, bottom)
					add(right, top)
				}
			}
		}
	}
	point := func(e int) [2]float64 {
		k := e / 2
		c, r := k%nx, k/nx
		c1, r1 := c+1, r
		if e%2 == 1 {
			c1, r1 = c, r+1
		}
		za, zb := z(c, r), z(c1, r1)
		t := 0.5
		if za != zb {
			t = (ct.Level - za) / (zb - za)
		}
		return [2]float64{ct.XS[c] + t*(ct.XS[c1]-ct.XS[c]), ct.YS[r] + t*(ct.YS[r1]-ct.YS[r])}
	}
	used := make([]bool, len(segs))
	// follow walks from edge e away from segment s, returning the edges
	// it passes through.
	follow := func(s, e int) []int {
		var path []int
		for {
			next := -1
			for _, o := range at[e] {
				if o != s && !used[o] {
					next = o
					break
				}
			}
			if next < 0 {
				return path
			}
			used[next] = true
			if segs[next].a == e {
				e = segs[next].b
			} else {
				e = segs[next].a
			}
			path = append(path, e)
			s = next
		}
	}
	var lines [][][2]float64
	for s, sg := range segs {
		if used[s] {
			continue
		}
		used[s] = true
		fwd := follow(s, sg.b)
		back := follow(s, sg.a)
		edges := make([]int, 0, len(back)+2+len(fwd))
		for i := len(back) - 1; i >= 0; i-- {
			edges = append(edges, back[i])
		}
		edges = append(edges, sg.a, sg.b)
		edges = append(edges, fwd...)
		line := make([][2]float64, len(edges))
		for i, e := range edges {
			line[i] = point(e)
		}
		lines = append(lines, line)
	}
	return lines
}

// Plot implements plot.Plotter.
func (ct *Contour) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, line := range ct.Lines() {
		pts := make([]vg.Point, len(line))
		for i, q := range line {
			pts[i] = vg.Point{X: trX(q[0]), Y: trY(q[1])}
		}
		c.StrokeLines(ct.Style, c.ClipLinesXY(pts)...)
	}
}

// DataRange implements plot.DataRanger: the grid's extent.
func (ct *Contour) DataRange() (xmin, xmax, ymin, ymax float64) {
	if len(ct.XS) == 0 || len(ct.YS) == 0 {
		return 0, 0, 0, 0
	}
	return ct.XS[0], ct.XS[len(ct.XS)-1], ct.YS[0], ct.YS[len(ct.YS)-1]
}
