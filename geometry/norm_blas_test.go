package geometry

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
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

// TestProductsMTVectors: productsMT with Mᵀ (kernel.DotMT on vectors, the
// outputs past its lanes by blas64.Dot) gives Dgemm's bits, at dimensions
// around the lanes and gonum's block of 64, for 1 to 256 rows, with
// values of every magnitude, zeros, an infinity and a NaN.
func TestProductsMTVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	for _, d := range []int{16, 17, 20, 31, 63, 64, 65, 67, 100, 128, 129, 200} {
		m := make([]float64, d*d)
		for i := range m {
			m[i] = rng.NormFloat64() * math.Exp(4*rng.NormFloat64())
		}
		g, err := NewNorm(d, m, 1.5)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []int{1, 3, 64, 256, 1024} {
			xs := make([]float64, r*d)
			for i := range xs {
				switch rng.IntN(50) {
				case 0:
					xs[i] = 0
				case 1:
					xs[i] = math.Inf(1)
				case 2:
					xs[i] = math.NaN()
				default:
					xs[i] = rng.NormFloat64() * math.Exp(6*rng.NormFloat64())
				}
			}
			x := blas64.General{Rows: r, Cols: d, Data: xs, Stride: d}
			mg := blas64.General{Rows: d, Cols: d, Data: g.m, Stride: d}
			want, got := make([]float64, r*d), make([]float64, r*d)
			productsMT(want, x, mg, nil)
			productsMT(got, x, mg, g.transposed())
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("d=%d r=%d: entry %d is %v (%#x), Dgemm's %v (%#x)", d, r, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
				}
			}
		}
	}
}
