package hull

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// TestSquare: the hull of the square's corners (and inner points) has gauge
// max(|x|, |y|) about the centroid 0 — the ℓ∞ norm.
func TestSquare(t *testing.T) {
	t.Parallel()
	pts := []float64{-1, -1, 1, -1, 1, 1, -1, 1, 0.2, 0.1, -0.3, 0.4, 0.1, -0.1, 0.5, 0.5}
	// The centroid of these 8 points is not 0; centre them.
	var cx, cy float64
	for i := 0; i < len(pts); i += 2 {
		cx += pts[i] / 8
		cy += pts[i+1] / 8
	}
	h, err := New(pts, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		q := []float64{3*rng.Float64() - 1.5, 3*rng.Float64() - 1.5}
		got, err := h.Gauge(q)
		if err != nil {
			t.Fatal(err)
		}
		// Brute force: bisect t along the ray from the centroid, inside the
		// square |x|, |y| ≤ 1.
		inside := func(t float64) bool {
			x, y := cx+t*(q[0]-cx), cy+t*(q[1]-cy)
			return math.Abs(x) <= 1 && math.Abs(y) <= 1
		}
		lo, hi := 0.0, 100.0
		for range 100 {
			mid := (lo + hi) / 2
			if inside(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		if want := 1 / lo; math.Abs(got-want) > 1e-7*want {
			t.Fatalf("gauge of %v: %v, want %v", q, got, want)
		}
	}
	if g, _ := h.Gauge([]float64{1, 1}); math.Abs(g-1) > 1e-9 {
		t.Errorf("a vertex has gauge %v, want 1", g)
	}
	if g, _ := h.Gauge([]float64{cx, cy}); g != 0 {
		t.Errorf("the centroid has gauge %v, want 0", g)
	}
	s, err := h.Shrink(0.5)
	if err != nil {
		t.Fatal(err)
	}
	if s >= 1 || s <= 0 {
		t.Errorf("shrink to half the points: scale %v, want in (0, 1)", s)
	}
	if s, _ := h.Shrink(1); math.Abs(s-1) > 1e-9 {
		t.Errorf("shrink to all points: scale %v, want 1", s)
	}
	if _, err := New(pts[:4], 2, 2); err == nil {
		t.Error("a hull of 2 points in 2-D: no error")
	}
}

// TestCoverageOfHeldOut: with Gaussian points in 8-D, the hull of 25 points
// shrunk to 95% of them holds far fewer than 95% of 50 fresh points from the
// same distribution — the paper's point (≈ 49% on CIFAR100 features).
func TestCoverageOfHeldOut(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	const d, m, n = 8, 25, 50
	var in, total int
	for range 20 {
		pts := make([]float64, m*d)
		for i := range pts {
			pts[i] = rng.NormFloat64()
		}
		h, err := New(pts, m, d)
		if err != nil {
			t.Fatal(err)
		}
		s, err := h.Shrink(0.95)
		if err != nil {
			t.Fatal(err)
		}
		q := make([]float64, n*d)
		for i := range q {
			q[i] = rng.NormFloat64()
		}
		g, err := h.Gauges(q)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range g {
			if v <= s {
				in++
			}
			total++
		}
	}
	cov := float64(in) / float64(total)
	t.Logf("held-out coverage of the shrunk hull, Gaussian 8-D, 25 points: %.3f", cov)
	if cov > 0.5 {
		t.Errorf("held-out coverage %.3f: a hull of 25 points in 8-D should cover far less than 95%%", cov)
	}
}

// TestSimplexMatchesGonum: on random bounded programmes where gonum's
// simplex succeeds, ours finds the same optimum.
func TestSimplexMatchesGonum(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	compared := 0
	for range 300 {
		const r, n = 4, 9
		a := make([]float64, r*n)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		// b = A·x0 for some x0 ≥ 0: feasible; c > 0: bounded.
		x0 := make([]float64, n)
		for i := range x0 {
			x0[i] = rng.Float64()
		}
		b := make([]float64, r)
		for i := range r {
			for j := range n {
				b[i] += a[i*n+j] * x0[j]
			}
		}
		c := make([]float64, n)
		for i := range c {
			c[i] = 0.1 + rng.Float64()
		}
		want, _, err := lp.Simplex(c, mat.NewDense(r, n, a), b, 1e-10, nil)
		if err != nil {
			continue
		}
		x, got, err := simplex(a, r, n, b, c)
		if err != nil {
			t.Fatalf("our simplex: %v (gonum found %v)", err, want)
		}
		if math.Abs(got-want) > 1e-8*math.Max(1, math.Abs(want)) {
			t.Fatalf("optimum %v, gonum %v", got, want)
		}
		for i := range r {
			var s float64
			for j := range n {
				s += a[i*n+j] * x[j]
			}
			if math.Abs(s-b[i]) > 1e-8 {
				t.Fatalf("row %d: A·x = %v, b = %v", i, s, b[i])
			}
		}
		compared++
	}
	if compared < 200 {
		t.Errorf("only %d of 300 programmes compared", compared)
	}
}
