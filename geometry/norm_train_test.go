package geometry

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/internal/kernel"
)

// TestNormTrainKernels: the single-norm's training kernels (ScoresPrepared,
// ScoreGradsPrepared; float32 vector kernels at the AVX2 and AVX-512
// levels: along rows from d = 16, a vector of rows at a time below) agree with the
// exact ones within kernel.NormTrainTol — scores row by row, gradients relative to
// their norm — with a zero row, zero coordinates, a coordinate far below the
// others and a partial last block. With a diagonal M (so that y keeps x's
// extremes) also a u below float32's normal range and rows near float32's
// largest value, which the vector kernels hand to the exact ones.
func TestNormTrainKernels(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(51, 51))
	for _, d := range []int{1, 2, 3, 7, 15, 16, 21, 128} {
		for _, c := range []struct {
			p    float64
			diag bool
		}{{0.7, false}, {1.5, false}, {2, false}, {3.3, false}, {0.7, true}, {0.05, true}, {2, true}, {4, true}} {
			p := c.p
			m := make([]float64, d*d)
			for i := range m {
				if !c.diag {
					m[i] = rng.NormFloat64() / math.Sqrt(float64(d))
				}
			}
			for i := range d {
				m[i*d+i] += 1
				if c.diag {
					m[i*d+i] += rng.Float64()
				}
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
			if c.diag && d > 1 {
				x[3*d+1] = 1e-40 // subnormal: u below float32's normal range
				for l := range d {
					x[4*d+l] *= 1e37                                           // ∂φ/∂y overflows float32 for small p
					x[5*d+l] = float32(math.Copysign(3e38, float64(x[5*d+l]))) // y overflows float32
				}
			}
			if p := n.Prepare(nil, x); len(p) != len(x) || p[5] != x[5] {
				t.Fatal("Prepare is not a copy")
			}
			exact := n.Scores(nil, x)
			fast := n.ScoresPrepared(nil, x)
			for i := range exact {
				if math.Abs(fast[i]-exact[i]) > kernel.NormTrainTol*exact[i] {
					t.Fatalf("d=%d p=%v diag=%v row %d: training score %v, exact %v", d, p, c.diag, i, fast[i], exact[i])
				}
			}
			// Both kernels draw every row's weight once, in order.
			next := 0
			weight := func(i int, phi float64) float64 {
				if i != next {
					t.Fatalf("d=%d p=%v diag=%v: weight of row %d drawn after row %d's", d, p, c.diag, i, next-1)
				}
				next++
				return 1 + float64(i%7)/3
			}
			g1, g2 := make([]float64, n.NumParams()), make([]float64, n.NumParams())
			s1 := n.ScoreGrads(g1, nil, x, perRow(weight))
			if next != rows {
				t.Fatalf("d=%d p=%v diag=%v: ScoreGrads drew %d weights, want %d", d, p, c.diag, next, rows)
			}
			next = 0
			s2 := n.ScoreGradsPrepared(g2, nil, x, perRow(weight))
			if next != rows {
				t.Fatalf("d=%d p=%v diag=%v: ScoreGradsPrepared drew %d weights, want %d", d, p, c.diag, next, rows)
			}
			var diff, norm float64
			for i := range g1 {
				if math.IsNaN(g2[i]) || math.IsInf(g2[i], 0) {
					t.Fatalf("d=%d p=%v diag=%v: training gradient[%d] = %v", d, p, c.diag, i, g2[i])
				}
				diff += (g1[i] - g2[i]) * (g1[i] - g2[i])
				norm += g1[i] * g1[i]
			}
			if math.Sqrt(diff) > kernel.NormTrainTol*math.Sqrt(norm) {
				t.Fatalf("d=%d p=%v diag=%v: gradient differs by %.3g of its norm", d, p, c.diag, math.Sqrt(diff/norm))
			}
			for i := range s1 {
				if math.Abs(s1[i]-s2[i]) > kernel.NormTrainTol*s1[i] {
					t.Fatalf("d=%d p=%v row %d: ScoreGrads' scores %v, exact %v", d, p, i, s2[i], s1[i])
				}
			}
		}
	}
	t.Logf("%s", kernel.Describe())
}
