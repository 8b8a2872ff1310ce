package geometry

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNormTrainKernels: the single-norm's training kernels (ScoresPrepared,
// ScoreGradsPreparedFunc; float32 vector ‖y‖_p in a GOEXPERIMENT=simd build)
// agree with the exact ones within PnormTrainTol — scores row by row,
// gradients relative to their norm — with a zero row, zero coordinates and
// a coordinate far below the others, and rows shorter than the vector width.
func TestNormTrainKernels(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(51, 51))
	for _, d := range []int{3, 16, 21, 128} {
		for _, p := range []float64{0.7, 1.5, 2, 3.3} {
			m := make([]float64, d*d)
			for i := range m {
				m[i] = rng.NormFloat64() / math.Sqrt(float64(d))
			}
			for i := range d {
				m[i*d+i] += 1
			}
			n, err := NewNorm(d, m, p)
			if err != nil {
				t.Fatal(err)
			}
			const rows = 300
			x := randDiffs32(rng, rows, d)
			clear(x[:d])                         // a zero row
			x[d] = 0                             // a zero coordinate
			x[2*d+1] = float32(1e-30 * x[2*d+1]) // a tiny one
			if p := n.Prepare(nil, x); len(p) != len(x) || p[5] != x[5] {
				t.Fatal("Prepare is not a copy")
			}
			exact := n.Scores(nil, x)
			fast := n.ScoresPrepared(nil, x)
			for i := range exact {
				if math.Abs(fast[i]-exact[i]) > PnormTrainTol*exact[i] {
					t.Fatalf("d=%d p=%v row %d: training score %v, exact %v", d, p, i, fast[i], exact[i])
				}
			}
			weight := func(i int, phi float64) float64 { return 1 + float64(i%7)/3 }
			g1, g2 := make([]float64, n.NumParams()), make([]float64, n.NumParams())
			s1 := n.ScoreGradsFunc(g1, nil, x, weight)
			s2 := n.ScoreGradsPreparedFunc(g2, nil, x, weight)
			var diff, norm float64
			for i := range g1 {
				diff += (g1[i] - g2[i]) * (g1[i] - g2[i])
				norm += g1[i] * g1[i]
			}
			if math.Sqrt(diff) > PnormTrainTol*math.Sqrt(norm) {
				t.Fatalf("d=%d p=%v: gradient differs by %.3g of its norm", d, p, math.Sqrt(diff/norm))
			}
			for i := range s1 {
				if math.Abs(s1[i]-s2[i]) > PnormTrainTol*s1[i] {
					t.Fatalf("d=%d p=%v row %d: ScoreGrads' scores %v, exact %v", d, p, i, s2[i], s1[i])
				}
			}
		}
	}
	t.Logf("vector kernels: %v", FastPays())
}
