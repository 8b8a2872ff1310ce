package clickhouse

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
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
	geoms := testGeometries(t, rng, d)
	for _, name := range slices.Sorted(maps.Keys(geoms)) {
		g := geoms[name]
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
		// Random rays reach the box's faces only near the set's extreme
		// points (for p < 1, the images of the axes): 0.3 still tells a
		// bound that is not off by a factor.
		if tightest < 0.3 {
			t.Errorf("%s: boundary points reach only %.2f of the box: the bound is slack", name, tightest)
		}
	}
}

// TestSQLConstants: hexadecimal constants are their floats' bytes; a
// decimal constant records the bytes the engine must read back.
func TestSQLConstants(t *testing.T) {
	t.Parallel()
	h := &consts{hex: true}
	if got := h.f64(1); got != "reinterpretAsFloat64(unhex('000000000000f03f'))" {
		t.Errorf("f64(1) = %s", got)
	}
	if got := h.f32s([]float32{1, 2}); got != "arrayMap(h -> reinterpretAsFloat32(unhex(h)), ['0000803f', '00000040'])" {
		t.Errorf("f32s = %s", got)
	}
	if got := h.f64s([]float64{0.1}); !strings.Contains(got, "'9a9999999999b93f'") || len(h.exprs) != 0 {
		t.Errorf("f64s(0.1) = %s, %d checks", got, len(h.exprs))
	}
	d := &consts{}
	if got := d.f32s([]float32{0.1, 2}); got != "CAST([0.10000000149011612, 2] AS Array(Float32))" {
		t.Errorf("decimal f32s = %s", got)
	}
	if got := d.f64(1e-300); got != "toFloat64(1e-300)" {
		t.Errorf("decimal f64 = %s", got)
	}
	// Little-endian bytes, trailing zero bytes dropped (as the engine's
	// reinterpretAsString): 1.0 is 00 00 00 00 00 00 F0 3F, 0.5 is
	// 00 … E0 3F, 2^-1074 is 01 00 … 00.
	e := &consts{}
	e.f64s([]float64{1, 0.5, 0x1p-1074})
	if want := []string{"000000000000F03F", "000000000000E03F", "01"}; !slices.Equal(e.want[0], want) {
		t.Errorf("recorded %v, want %v", e.want[0], want)
	}
	if want := []string{"CDCCCC3D", "00000040"}; !slices.Equal(d.want[0], want) {
		t.Errorf("recorded %v, want %v", d.want[0], want)
	}
}
