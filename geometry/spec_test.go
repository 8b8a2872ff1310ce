package geometry

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestSpecRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	x := randDiffs32(rng, 10, 3)
	for _, g := range []Geometry{Ball{D: 3}, randEllipsoid(rng, 3), randNorm(rng, 3, 1.3), randGenBall(rng, 3, []float64{0.5, 2, 7})} {
		s, err := Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := Decode(s)
		if err != nil {
			t.Fatalf("%v: %v", g.Kind(), err)
		}
		if !slices.Equal(g.Scores(nil, x), g2.Scores(nil, x)) || g.LogVolume(2) != g2.LogVolume(2) {
			t.Errorf("%v: decoded geometry differs", g.Kind())
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{Spec{Kind: KindBall, Dim: 0}, "dim 0"},
		{Spec{Kind: KindBall, Dim: 2, P: 2}, `field "p" does not belong`},
		{Spec{Kind: KindGenBall, Dim: 2, Scales: []float64{1, 1}, Exponents: []float64{1, 1}, Sigma: []float64{1}}, `field "sigma"`},
		{Spec{Kind: KindGenBall, Dim: 3, Scales: []float64{1, 1}, Exponents: []float64{1, 1}}, "2 scales for dim 3"},
		{Spec{Kind: KindNorm, Dim: 2, Matrix: []float64{1, 0, 0, 1}}, "exponent p = 0"},
		{Spec{Kind: Kind(9), Dim: 2}, "unknown kind"},
	} {
		if _, err := Decode(c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.s, err, c.want)
		}
	}
}
