package geometry

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// blasMinDim is the dimension from which the single-norm computes a chunk of
// rows with matrix products (BLAS) instead of a loop per row: below it the
// calls cost more than they save (BENCHMARKS.md).
const blasMinDim = 16

// blasRows is how many rows one pair of matrix products handles at a time.
const blasRows = 1024

// normScratch holds a chunk's float64 copies of X, Y = X·Mᵀ and G = w·∂φ/∂Y.
type normScratch struct{ x, y, g []float64 }

var normPool = sync.Pool{New: func() any { return new(normScratch) }}

func (s *normScratch) size(n int) {
	if cap(s.x) < n {
		s.x, s.y, s.g = make([]float64, n), make([]float64, n), make([]float64, n)
	}
	s.x, s.y, s.g = s.x[:n], s.y[:n], s.g[:n]
}

// normBlas computes the scores of diffs and, with a non-nil dtheta, adds the
// weighted gradients, a block of rows at a time: Y = X·Mᵀ, then per row φ
// and G_i = w_i·∂φ/∂y_i, then ∂/∂M += Gᵀ·X. The products are gonum's BLAS
// (a build can link a faster one). Results agree with the per-row kernel to
// rounding.
func normBlas(n *Norm, dtheta, scores []float64, diffs []float32, weight func(int, float64) float64) {
	d := n.d
	rowsN := len(scores)
	s := normPool.Get().(*normScratch)
	defer normPool.Put(s)
	up := make([]float64, d)
	gy := make([]float64, d)
	m := blas64.General{Rows: d, Cols: d, Data: n.m, Stride: d}
	var dm blas64.General
	if dtheta != nil {
		dm = blas64.General{Rows: d, Cols: d, Data: dtheta[:d*d], Stride: d}
	}
	for lo := 0; lo < rowsN; lo += blasRows {
		hi := min(rowsN, lo+blasRows)
		r := hi - lo
		s.size(r * d)
		for i, v := range diffs[lo*d : hi*d] {
			s.x[i] = float64(v)
		}
		x := blas64.General{Rows: r, Cols: d, Data: s.x, Stride: d}
		y := blas64.General{Rows: r, Cols: d, Data: s.y, Stride: d}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, x, m, 0, y)
		if dtheta == nil {
			for i := range r {
				scores[lo+i], _, _ = pnorm(s.y[i*d:(i+1)*d], n.p, nil)
			}
			continue
		}
		var dp float64
		for i := range r {
			yi := s.y[i*d : (i+1)*d]
			gi := s.g[i*d : (i+1)*d]
			phi, sum, t := pnorm(yi, n.p, up)
			scores[lo+i] = phi
			w := weight(lo+i, phi) // every row's, in order; φ = 0 has no gradient
			if phi == 0 || w == 0 {
				clear(gi)
				continue
			}
			dphidy(gy, yi, up, sum, n.p)
			for k := range gi {
				gi[k] = w * gy[k]
			}
			dp += w * phi * (t/(n.p*sum) - math.Log(sum)/(n.p*n.p))
		}
		g := blas64.General{Rows: r, Cols: d, Data: s.g, Stride: d}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, g, x, 1, dm)
		dtheta[d*d] += dp
	}
}
