package clickhouse

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// TestBoxContainsSet: for every boxed geometry, points on the set's
// boundary in random directions (found by bisection along the ray) lie in
// the box, and some come close to its faces (the box is not slack).
func TestBoxContainsSet(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 9))
	const d, q = 6, 1.7
	for name, g := range testGeometries(t, rng, d) {
		dec, ok := g.(geometry.Decomposer).Decompose()
		if !ok || dec.T == nil {
			continue
		}
		b, err := box(&dec, q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tightest := 0.0
		x := make([]float32, d)
		for range 4000 {
			u := make([]float64, d)
			for j := range u {
				u[j] = rng.NormFloat64()
			}
			score := func(s float64) float64 {
				for j := range x {
					x[j] = float32(s * u[j])
				}
				return g.Scores(nil, x)[0]
			}
			lo, hi := 0.0, 1.0
			for score(hi) <= q {
				hi *= 2
			}
			for range 60 {
				if mid := (lo + hi) / 2; score(mid) <= q {
					lo = mid
				} else {
					hi = mid
				}
			}
			score(lo) // x: the last point inside
			for j, v := range x {
				r := math.Abs(float64(v)) / b[j]
				if r > 1 {
					t.Fatalf("%s: boundary point %v leaves the box %v at coordinate %d", name, x, b, j)
				}
				tightest = math.Max(tightest, r)
			}
		}
		if tightest < 0.5 {
			t.Errorf("%s: boundary points reach only %.2f of the box: the bound is slack", name, tightest)
		}
	}
}

// TestSQLConstantsExact: the constants are their floats' bytes.
func TestSQLConstantsExact(t *testing.T) {
	t.Parallel()
	if got := f64(1); got != "reinterpretAsFloat64(unhex('000000000000f03f'))" {
		t.Errorf("f64(1) = %s", got)
	}
	if got := f32s([]float32{1, 2}); got != "arrayMap(h -> reinterpretAsFloat32(unhex(h)), ['0000803f', '00000040'])" {
		t.Errorf("f32s = %s", got)
	}
	if got := f64s([]float64{0.1}); !strings.Contains(got, "'9a9999999999b93f'") {
		t.Errorf("f64s(0.1) = %s", got)
	}
}
