package geometry

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/ccsets/ccs/internal/kernel"
)

// blasMinDim is the dimension from which the single-norm computes a chunk of
// rows with matrix products (BLAS) instead of a loop per row: below it the
// calls cost more than they save (BENCHMARKS.md).
const blasMinDim = 16

// blasRows is how many rows one pair of matrix products handles at a time.
const blasRows = 1024

// normScratch holds a chunk's float64 copies of X, Y = X·Mᵀ and G = w·∂φ/∂Y.
type normScratch struct {
	x, y, g []float64
	buf     []float64 // pnorm's scratch, 4·d values
}

var normPool = sync.Pool{New: func() any { return new(normScratch) }}

func (s *normScratch) size(n int) {
	if cap(s.x) < n {
		s.x, s.y, s.g = make([]float64, n), make([]float64, n), make([]float64, n)
	}
	s.x, s.y, s.g = s.x[:n], s.y[:n], s.g[:n]
}

// productsMT writes Y = X·Mᵀ (X r×d, M d×d) into y with BLAS, a block of
// blasK columns of X (rows of M) at a time, each added into Y: every entry
// is then its sum of blasK-long dot products whatever r. gonum's Dgemm sums
// the whole inner dimension in one dot product for a product too small to
// share out (r ≤ 64 at d ≤ 192) and in blocks of 64 otherwise, so a row's
// exact score depended, in its last bit, on how many rows were scored with
// it (TestNormScoresBlockFree).
//
// With mt (Mᵀ, d×d row-major), the products are kernel.DotMTRows's, a few
// rows at a time on vectors, each vector of Mᵀ read once for them (and the
// outputs past its lanes, blas64.Dot's over the same blocks): the same bits
// as Dgemm's, without its per-entry calls. A row at a time (up to 256 rows;
// Dgemm beyond, shared out over the cores), Mᵀ was read once a row — at
// d = 768, 4.7 MB — and 4 096 rows at d = 128 took 28–31 ms on 2 cores
// through Dgemm against 9–10 ms on one through DotMTRows (an AMD EPYC).
func productsMT(y []float64, x, m blas64.General, mt []float64) {
	d := m.Rows
	if mt != nil && kernel.Vector() {
		done := 0 // outputs of each row on vectors
		if x.Stride == d {
			done = kernel.DotMTRows(y[:x.Rows*d], x.Data[:x.Rows*d], mt, d)
		}
		for i := range x.Rows {
			xi, yi := x.Data[i*x.Stride:i*x.Stride+d], y[i*d:(i+1)*d]
			if x.Stride != d {
				done = kernel.DotMT(yi, xi, mt)
			}
			for j := done; j < d; j++ {
				yi[j] = dotBlocks(xi, m.Data[j*m.Stride:j*m.Stride+d])
			}
		}
		return
	}
	out := blas64.General{Rows: x.Rows, Cols: d, Data: y, Stride: d}
	for k0 := 0; k0 < d; k0 += blasK {
		k1 := min(d, k0+blasK)
		beta := 1.0
		if k0 == 0 {
			beta = 0
		}
		xk := blas64.General{Rows: x.Rows, Cols: k1 - k0, Data: x.Data[k0:], Stride: x.Stride}
		mk := blas64.General{Rows: d, Cols: k1 - k0, Data: m.Data[k0:], Stride: m.Stride}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, xk, mk, beta, out)
	}
}

// blasK is productsMT's block of the inner dimension: gonum's own block.
const blasK = 64

// dotBlocks is the entry Dgemm's products of blasK columns at a time give
// for rows x and m_j: 0 plus each block's dot product (gonum's DotUnitary,
// through blas64.Dot) in turn.
func dotBlocks(x, mj []float64) float64 {
	var c float64
	for k0 := 0; k0 < len(x); k0 += blasK {
		k1 := min(len(x), k0+blasK)
		c += blas64.Dot(blas64.Vector{N: k1 - k0, Inc: 1, Data: x[k0:k1]}, blas64.Vector{N: k1 - k0, Inc: 1, Data: mj[k0:k1]})
	}
	return c
}

// normBlas computes the scores of diffs and, with a non-nil dtheta, adds the
// weighted gradients, a block of rows at a time: Y = X·Mᵀ, then per row φ
// and G_i = w_i·∂φ/∂y_i, then ∂/∂M += Gᵀ·X. The products are gonum's BLAS
// (a build can link a faster one). Results agree with the per-row kernel to
// rounding.
func normBlas(n *Norm, dtheta, scores []float64, diffs []float32, weights Weights) {
	d := n.d
	rowsN := len(scores)
	s := normPool.Get().(*normScratch)
	defer normPool.Put(s)
	blk := weightBlock(d)
	up := make([]float64, d)
	s.buf = slices.Grow(s.buf[:0], 4*d)[:4*d]
	buf, mt := s.buf, n.transposed()
	var dp, w [16]float64 // (weightBlock ≤ 16)
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
		productsMT(s.y, x, m, mt)
		if dtheta == nil {
			for i := range r {
				scores[lo+i], _, _ = pnorm(s.y[i*d:(i+1)*d], n.p, nil, buf)
			}
			continue
		}
		var dpSum float64
		for b0 := 0; b0 < r; b0 += blk {
			b1 := min(r, b0+blk)
			// Each row: φ, ∂φ/∂y into G (the weight comes after) and the
			// part of ∂φ/∂p that is not φ's factor.
			for i := b0; i < b1; i++ {
				yi, gi := s.y[i*d:(i+1)*d], s.g[i*d:(i+1)*d]
				phi, sum, t := pnorm(yi, n.p, up, buf)
				scores[lo+i] = phi
				if phi != 0 {
					dphidy(gi, yi, up, sum, n.p)
					dp[i-b0] = t/(n.p*sum) - math.Log(sum)/(n.p*n.p)
				}
			}
			// Every row's weight, in order; φ = 0 has no gradient.
			weights(lo+b0, scores[lo+b0:lo+b1], w[:b1-b0])
			for i := b0; i < b1; i++ {
				gi := s.g[i*d : (i+1)*d]
				phi, wi := scores[lo+i], w[i-b0]
				if phi == 0 || wi == 0 {
					clear(gi)
					continue
				}
				for k := range gi {
					gi[k] = wi * gi[k]
				}
				dpSum += wi * phi * dp[i-b0]
			}
		}
		g := blas64.General{Rows: r, Cols: d, Data: s.g, Stride: d}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, g, x, 1, dm)
		dtheta[d*d] += dpSum
	}
}
