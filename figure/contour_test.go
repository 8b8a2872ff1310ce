package figure_test

import (
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/ccsets/ccs/figure"
)

// grid returns n coordinates from lo to hi and f over their grid, row by
// row.
func grid(n int, lo, hi float64, f func(x, y float64) float64) (xs, ys, z []float64) {
	for i := range n {
		xs = append(xs, lo+(hi-lo)*float64(i)/float64(n-1))
	}
	ys = xs
	for _, y := range ys {
		for _, x := range xs {
			z = append(z, f(x, y))
		}
	}
	return xs, ys, z
}

// area is the shoelace area of a closed line.
func area(line [][2]float64) float64 {
	var s float64
	for i := 1; i < len(line); i++ {
		s += line[i-1][0]*line[i][1] - line[i][0]*line[i-1][1]
	}
	return math.Abs(s) / 2
}

// TestContourCircle: the unit circle of x² + y² is one closed line whose
// points lie on it within the grid's interpolation error and whose area is
// π's within it.
func TestContourCircle(t *testing.T) {
	xs, ys, z := grid(81, -2, 2, func(x, y float64) float64 { return x*x + y*y })
	lines := (&figure.Contour{XS: xs, YS: ys, Z: z, Level: 1}).Lines()
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1", len(lines))
	}
	l := lines[0]
	if l[0] != l[len(l)-1] {
		t.Errorf("not closed: %v … %v", l[0], l[len(l)-1])
	}
	h := 4.0 / 80
	for _, p := range l {
		if r := math.Hypot(p[0], p[1]); math.Abs(r-1) > h*h {
			t.Fatalf("point %v at radius %v", p, r)
		}
	}
	if a := area(l); math.Abs(a-math.Pi) > 0.01 {
		t.Errorf("area %v, want π", a)
	}
}

// TestContourPieces: two disjoint discs and a level set cut by the grid's
// edge; saddles; NaN cells and levels outside the values.
func TestContourPieces(t *testing.T) {
	two := func(x, y float64) float64 {
		return min(math.Hypot(x-1, y), math.Hypot(x+1, y+0.5))
	}
	xs, ys, z := grid(61, -2.5, 2.5, two)
	lines := (&figure.Contour{XS: xs, YS: ys, Z: z, Level: 0.5}).Lines()
	if len(lines) != 2 {
		t.Fatalf("two discs: %d lines", len(lines))
	}
	for _, l := range lines {
		if l[0] != l[len(l)-1] || math.Abs(area(l)-math.Pi/4) > 0.01 {
			t.Errorf("a disc's line: closed %v, area %v (want π/4)", l[0] == l[len(l)-1], area(l))
		}
	}
	// The unit circle about (2, 0) on [−2, 2]²: a half circle, open, its
	// ends on the grid's right edge.
	xs, ys, z = grid(41, -2, 2, func(x, y float64) float64 { return math.Hypot(x-2, y) })
	lines = (&figure.Contour{XS: xs, YS: ys, Z: z, Level: 1}).Lines()
	if len(lines) != 1 {
		t.Fatalf("half circle: %d lines", len(lines))
	}
	if l := lines[0]; l[0] == l[len(l)-1] || math.Abs(l[0][0]-2) > 1e-9 || math.Abs(l[len(l)-1][0]-2) > 1e-9 {
		t.Errorf("half circle: ends %v, %v (want open, on x = 2)", l[0], l[len(l)-1])
	}
	// A saddle x·y = 0.1 on a coarse grid: two branches (first and third
	// quadrants' hyperbola arms cut off), never crossing.
	xs, ys, z = grid(5, -1, 1, func(x, y float64) float64 { return -x * y })
	if lines := (&figure.Contour{XS: xs, YS: ys, Z: z, Level: -0.1}).Lines(); len(lines) != 2 {
		t.Errorf("saddle: %d lines, want 2", len(lines))
	}
	// Levels outside the values, a NaN grid, a short Z: no lines.
	xs, ys, z = grid(11, -1, 1, func(x, y float64) float64 { return x + y })
	for _, c := range []*figure.Contour{{XS: xs, YS: ys, Z: z, Level: 5}, {XS: xs, YS: ys, Z: z, Level: -5},
		{XS: xs, YS: ys, Z: make([]float64, 10), Level: 0}, {XS: xs[:1], YS: ys, Z: z[:11], Level: 0}} {
		if lines := c.Lines(); len(lines) != 0 {
			t.Errorf("level %v over %d values: %d lines", c.Level, len(c.Z), len(lines))
		}
	}
	nan := append([]float64(nil), z...)
	for i := range nan {
		if i%11 < 5 {
			nan[i] = math.NaN()
		}
	}
	lines = (&figure.Contour{XS: xs, YS: ys, Z: nan, Level: 0}).Lines()
	for _, l := range lines {
		for _, p := range l {
			if p[0] < xs[5]-1e-12 || math.IsNaN(p[0]) || math.IsNaN(p[1]) {
				t.Fatalf("a point %v in the NaN cells", p)
			}
		}
	}
	if len(lines) != 1 {
		t.Errorf("half NaN: %d lines, want 1", len(lines))
	}
}

// TestContourDeterministic: a level set of several pieces drawn ten times
// is the same SVG each time.
func TestContourDeterministic(t *testing.T) {
	xs, ys, z := grid(61, -3, 3, func(x, y float64) float64 {
		return min(math.Hypot(x-1.5, y), math.Hypot(x+1.5, y), math.Hypot(x, y-1.5), math.Hypot(x, y+1.5))
	})
	var first string
	for i := range 10 {
		p := figure.Panel("pieces", "x", "y")
		p.Add(&figure.Contour{XS: xs, YS: ys, Z: z, Level: 0.6, Style: figure.Style(1)})
		f := &figure.Figure{Name: "pieces", W: 3 * vg.Inch, H: 3 * vg.Inch, Draw: figure.Grid([][]*plot.Plot{{p}}, nil, 1)}
		svg, err := f.SVGString()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = svg
		} else if svg != first {
			t.Fatalf("drawing %d differs from the first", i)
		}
	}
}
