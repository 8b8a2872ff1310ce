package geometry

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNormBlasMatchesRows: the BLAS path (d ≥ blasMinDim, float32 input) and
// the per-row kernel (the float64 instantiation, which never takes it) give
// the same scores and gradients to rounding, across a block boundary.
func TestNormBlasMatchesRows(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 13))
	for _, d := range []int{blasMinDim, 40} {
		for _, p := range []float64{0.6, 2, 3.3} {
			n := randNormScaled(rng, d, p, 0.2)
			rowsN := blasRows + 77
			x32 := randDiffs32(rng, rowsN, d)
			x64 := make([]float64, len(x32))
			for i, v := range x32 {
				x64[i] = float64(v)
			}
			w := make([]float64, rowsN)
			for i := range w {
				w[i] = rng.NormFloat64()
			}
			gb, gr := make([]float64, n.NumParams()), make([]float64, n.NumParams())
			sb := n.ScoreGrads(gb, nil, x32, Fixed(w))
			sr := normScoreGrads(n, gr, nil, x64, Fixed(w))
			plain := n.Scores(nil, x32)
			for i := range sr {
				if math.Abs(sb[i]-sr[i]) > 1e-12*sr[i] || math.Abs(plain[i]-sr[i]) > 1e-12*sr[i] {
					t.Fatalf("d=%d p=%v row %d: BLAS score %v / %v, per-row %v", d, p, i, sb[i], plain[i], sr[i])
				}
			}
			for i := range gr {
				if math.Abs(gb[i]-gr[i]) > 1e-9*math.Max(1, math.Abs(gr[i])) {
					t.Fatalf("d=%d p=%v: BLAS gradient[%d] %v, per-row %v", d, p, i, gb[i], gr[i])
				}
			}
		}
	}
}

// TestNormScoresBlockFree: from d = 16 on (BLAS), a row's exact score does
// not depend on the rows scored with it — alone, in blocks of any size, or
// among 1 500 — at dimensions below, at and above gonum's block of 64 and
// its limit for sharing a product out (192).
func TestNormScoresBlockFree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(47, 47))
	for _, d := range []int{17, 64, 65, 128, 200} {
		m := make([]float64, d*d)
		for i := range m {
			m[i] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
		for k := range d {
			m[k*d+k] += 1
		}
		g, err := NewNorm(d, m, 1.5)
		if err != nil {
			t.Fatal(err)
		}
		const n = 1500
		x := randDiffs32(rng, n, d)
		whole := g.Scores(nil, x)
		for lo := 0; lo < n; {
			hi := min(n, lo+1+rng.IntN(300))
			if rng.IntN(4) == 0 {
				hi = lo + 1
			}
			for i, v := range g.Scores(nil, x[lo*d:hi*d]) {
				if math.Float64bits(v) != math.Float64bits(whole[lo+i]) {
					t.Fatalf("d=%d: row %d scores %v in a block of %d, %v among %d", d, lo+i, v, hi-lo, whole[lo+i], n)
				}
			}
			lo = hi
		}
	}
}
