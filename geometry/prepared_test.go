package geometry

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/internal/kernel"
)

// TestPreparedMatchesExact: scores and gradients from prepared logarithms
// agree with the exact kernel within the float32 exp's bound (relative
// 1e-6, plus float32 rounding of log m + L: a few 1e-7 in the exponent),
// below d = 16 (sixteen rows at a time in the AVX-512 build) and above, with
// a partial last block. A row of weight 0 adds nothing to the gradient even
// where its terms overflow float32 (no 0·∞).
func TestPreparedMatchesExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(12, 12))
	for _, d := range []int{1, 3, 7, 15, 16, 17, 128} {
		p := make([]float64, d)
		for j := range p {
			p[j] = 0.1 + 9.9*rng.Float64() // the whole clamped range
		}
		g := randGenBall(rng, d, p)
		x := randDiffs32(rng, 200, d)
		x[5] = 0 // a zero coordinate
		w := make([]float64, 200)
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		prep := g.Prepare(nil, x)
		if prep[5] != LogZero {
			t.Fatalf("log|0| prepared as %v, want LogZero", prep[5])
		}
		exact := g.Scores(nil, x)
		fast := g.ScoresPrepared(nil, prep)
		for i := range exact {
			if rel := math.Abs(fast[i]-exact[i]) / exact[i]; rel > 5*kernel.ExpMaxRelErr || math.IsNaN(fast[i]) {
				t.Fatalf("d=%d row %d: prepared score %v, exact %v (relative %.3g)", d, i, fast[i], exact[i], rel)
			}
		}
		ge, gf := make([]float64, 2*d), make([]float64, 2*d)
		g.ScoreGrads(ge, nil, x, Fixed(w))
		g.ScoreGradsPrepared(gf, nil, prep, Fixed(w))
		scale := 0.0
		for _, v := range ge {
			scale = math.Max(scale, math.Abs(v))
		}
		for j := range ge {
			if math.Abs(gf[j]-ge[j]) > 5e-5*scale || math.IsNaN(gf[j]) {
				t.Errorf("d=%d: prepared gradient[%d] = %v, exact %v (scale %v)", d, j, gf[j], ge[j], scale)
			}
		}
		// Row 7 at weight 0, then with coordinates whose terms are +Inf in
		// float32: the same gradient to the bit.
		w[7] = 0
		wf := Fixed(w)
		g0, g1 := make([]float64, 2*d), make([]float64, 2*d)
		g.ScoreGradsPrepared(g0, nil, prep, wf)
		for j := range d {
			x[7*d+j] = 1e30
		}
		g.ScoreGradsPrepared(g1, nil, g.Prepare(nil, x), wf)
		for j := range g0 {
			if g0[j] != g1[j] {
				t.Errorf("d=%d: a row of weight 0 changed gradient[%d] from %v to %v", d, j, g0[j], g1[j])
			}
		}
	}
}
