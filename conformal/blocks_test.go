package conformal

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// TestScoresByBlocks: a row's exact score does not depend on the rows
// scored with it — every geometry, below and above d = 16 (the single-norm
// on BLAS there, at and past gonum's block of 64) — so that Scores may
// share a calibration split's rows out in blocks; and Scores gives the
// same numbers with 1 and 4 goroutines.
func TestScoresByBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, d := range []int{3, 17, 128} {
		m := make([]float64, d*d)
		sigma := make([]float64, d*d)
		for i := range m {
			m[i] = 0.3 * rng.NormFloat64() / math.Sqrt(float64(d))
		}
		for k := range d {
			m[k*d+k] += 1
			sigma[k*d+k] = 1 + rng.Float64()
		}
		norm, err := geometry.NewNorm(d, m, 1.5)
		if err != nil {
			t.Fatal(err)
		}
		norm2, err := geometry.NewNorm(d, m, 2)
		if err != nil {
			t.Fatal(err)
		}
		ell, err := geometry.NewEllipsoid(d, sigma)
		if err != nil {
			t.Fatal(err)
		}
		const n = 2500
		x := make([]float32, n*d)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		for _, g := range []geometry.Geometry{geometry.Ball{D: d}, geometry.UnitGenBall(d, 1.3), norm, norm2, ell} {
			whole := g.Scores(nil, x)
			for lo := 0; lo < n; {
				hi := min(n, lo+1+rng.IntN(700))
				for i, v := range g.Scores(nil, x[lo*d:hi*d]) {
					if math.Float64bits(v) != math.Float64bits(whole[lo+i]) {
						t.Fatalf("d=%d %T: row %d scores %v in a block of %d, %v among %d", d, g, lo+i, v, hi-lo, whole[lo+i], n)
					}
				}
				lo = hi
			}
			b := &bundle.Bundle{N: 1200, K: 2, D: d, Anchors: x[:1200*d], Positives: x[:2400*d]}
			for _, mode := range []Mode{OnePerAnchor, Pooled} {
				prev := runtime.GOMAXPROCS(1)
				one, err1 := Scores(g, b, mode, 4)
				runtime.GOMAXPROCS(4)
				four, err4 := Scores(g, b, mode, 4)
				runtime.GOMAXPROCS(prev)
				if err1 != nil || err4 != nil {
					t.Fatal(err1, err4)
				}
				for i := range one {
					if math.Float64bits(one[i]) != math.Float64bits(four[i]) {
						t.Fatalf("d=%d %T %v: score %d is %v with 1 goroutine, %v with 4", d, g, mode, i, one[i], four[i])
					}
				}
			}
		}
	}
}
