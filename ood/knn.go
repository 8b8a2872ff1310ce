package ood

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/ccsets/ccs/internal/parallel"
)

// index is an exact nearest-neighbour index over n reference rows of
// dimension d (float64, row-major). Distances come from blocked matrix
// products, ‖q − r‖² = ‖q‖² + ‖r‖² − 2·q·r, over all cores; each query's
// result is computed by one goroutine in a fixed order, so it does not
// depend on the number of goroutines.
type index struct {
	ref   []float64
	norms []float64
	n, d  int
}

func newIndex(ref []float64, d int) *index {
	n := len(ref) / d
	x := &index{ref: ref, norms: make([]float64, n), n: n, d: d}
	for i := range n {
		x.norms[i] = dot(ref[i*d:(i+1)*d], ref[i*d:(i+1)*d])
	}
	return x
}

// dim is the indexed rows' dimension, 0 for no index.
func (x *index) dim() int {
	if x == nil {
		return 0
	}
	return x.d
}

const (
	queryBlock = 64   // queries per task
	refBlock   = 2048 // reference rows per matrix product
)

// kth returns, for each query row, the Euclidean distance to its k-th
// nearest reference row. With self, the queries are the reference rows
// themselves and each row's own entry is left out.
func (x *index) kth(queries []float64, k int, self bool) []float64 {
	d := x.d
	m := len(queries) / d
	out := make([]float64, m)
	parallel.For(m, queryBlock, 0, func(_, lo, hi int) {
		nq := hi - lo
		prod := make([]float64, nq*refBlock)
		heaps := make([][]float64, nq)
		qn := make([]float64, nq)
		for i := range nq {
			heaps[i] = make([]float64, 0, k)
			q := queries[(lo+i)*d : (lo+i+1)*d]
			qn[i] = dot(q, q)
		}
		for r0 := 0; r0 < x.n; r0 += refBlock {
			r1 := min(x.n, r0+refBlock)
			nr := r1 - r0
			blas64.Gemm(blas.NoTrans, blas.Trans, 1,
				blas64.General{Rows: nq, Cols: d, Stride: d, Data: queries[lo*d : hi*d]},
				blas64.General{Rows: nr, Cols: d, Stride: d, Data: x.ref[r0*d : r1*d]},
				0, blas64.General{Rows: nq, Cols: nr, Stride: nr, Data: prod[:nq*nr]})
			for i := range nq {
				row := prod[i*nr : (i+1)*nr]
				h := heaps[i]
				for j, p := range row {
					if self && r0+j == lo+i {
						continue
					}
					d2 := max(qn[i]+x.norms[r0+j]-2*p, 0)
					h = push(h, k, d2)
				}
				heaps[i] = h
			}
		}
		for i := range nq {
			if len(heaps[i]) < k {
				out[lo+i] = math.NaN() // fewer than k reference rows
				continue
			}
			out[lo+i] = math.Sqrt(heaps[i][0])
		}
	})
	return out
}

// push keeps the k smallest values seen in h, a max-heap (h[0] largest).
func push(h []float64, k int, v float64) []float64 {
	if len(h) < k {
		h = append(h, v)
		for i := len(h) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if h[p] >= h[i] {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		return h
	}
	if v >= h[0] {
		return h
	}
	h[0] = v
	for i := 0; ; { // sift down
		l, r, big := 2*i+1, 2*i+2, i
		if l < k && h[l] > h[big] {
			big = l
		}
		if r < k && h[r] > h[big] {
			big = r
		}
		if big == i {
			return h
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
