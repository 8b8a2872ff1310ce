package conformal

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// TestMembersMatchesContains: Set.Members decides every point as Contains
// does, for a generalized ball (the fast path where the build has it) and the
// ℓ2 ball, over more rows than one parallel block.
func TestMembersMatchesContains(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 41))
	const n, d = 2500, 17
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j], p[j] = math.Exp(rng.NormFloat64()), 0.5+2*rng.Float64()
	}
	gb, err := geometry.NewGenBall(m, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []geometry.Geometry{gb, geometry.Ball{D: d}} {
		scores := g.Scores(nil, x)
		s := &Set{Geometry: g, Threshold: scores[0], Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor}}
		in := s.Members(nil, x)
		inside := 0
		for i := range n {
			if want := s.Contains(x[i*d : (i+1)*d]); in[i] != want {
				t.Fatalf("%v row %d: Members %v, Contains %v", g.Kind(), i, in[i], want)
			}
			if in[i] {
				inside++
			}
		}
		if inside == 0 || inside == n || !in[0] {
			t.Fatalf("%v: %d of %d inside (row 0 on the boundary: %v); the test decides nothing", g.Kind(), inside, n, in[0])
		}
	}
}
