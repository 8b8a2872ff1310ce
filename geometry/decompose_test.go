package geometry

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDecompose: every family's score is Outer(Σ_j term_j((T·x)_j)) of its
// decomposition, within rounding, and Inner inverts Outer.
func TestDecompose(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(61, 61))
	const d = 7
	for _, g := range []Decomposer{Ball{D: d}, randEllipsoid(rng, d), randNorm(rng, d, 2), randNorm(rng, d, 0.7), randNorm(rng, d, 3.5),
		randGenBall(rng, d, []float64{0.5, 1, 2, 3, 0.3, 7, 1.5})} {
		dec, ok := g.Decompose()
		if !ok || dec.In != d {
			t.Fatalf("%v: decomposition %+v, %v", g.Kind(), dec, ok)
		}
		x := randDiffs32(rng, 50, d)
		x[3] = 0 // a zero coordinate
		want := g.Scores(nil, x)
		y := make([]float64, dec.Out)
		for i := range want {
			dec.Apply(y, x[i*d:(i+1)*d])
			var s float64
			for j, v := range y {
				s += dec.Term(j, v)
			}
			if got := dec.Outer(s); math.Abs(got-want[i]) > 1e-12*want[i]+1e-300 {
				t.Fatalf("%v row %d: decomposed score %v, Scores %v", g.Kind(), i, got, want[i])
			}
			if back := dec.Inner(dec.Outer(s)); math.Abs(back-s) > 1e-12*s {
				t.Fatalf("%v: Inner(Outer(%v)) = %v", g.Kind(), s, back)
			}
		}
	}
}
