package ood

import (
	"context"
	"math"
	"math/bits"
	"sync"

	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
)

// index is an exact nearest-neighbour index over n reference rows of
// dimension d (float64, row-major).
//
// A query's k-th nearest distance is found in two passes. The screen: the
// squared distances ‖q − r‖² = ‖q‖² + ‖r‖² − 2·q·r of a block of queries
// against a block of reference rows come from a float32 matrix product
// (kernel.Gemm), and a row is kept as a candidate only while its screened
// distance is within the screen's error bound of the k-th smallest kept so
// far (a blockwise partial selection: the candidates are cut back to the
// bound of their own k-th smallest whenever they grow, instead of a heap
// push per pair). The exact pass: the few candidates left are measured in
// float64 and the k-th smallest of those is the answer — the screen can
// only have dropped rows farther than it. Each query is computed by one
// goroutine in a fixed order, so the result does not depend on the number
// of goroutines (or on the kernels' level, up to float64 rounding).
//
// The screen works on the rows less their mean μ (distances do not change):
// its error bound grows with ‖q − μ‖² + ‖r − μ‖², which for rows far from
// the origin and near one another — a collapsed projection head's, all
// near one point of the sphere — is far smaller than ‖q‖² + ‖r‖², which
// kept nearly every row a candidate (CIDER's scores of an undertrained
// head took 2.5 ms an input against KNN's 0.08).
type index struct {
	ref []float64 // n×d, for the exact pass
	mu  []float64 // the rows' mean
	// refP is the rows less μ in float32, transposed a panel of 64 rows at
	// a time (d×64 each, the last padded with zeros): the product's B,
	// whose k steps then read consecutive memory (transposed whole, they
	// were 4n bytes apart: a page each).
	refP    []float32
	norms32 []float32 // ‖r − μ‖²
	maxNorm float64
	n, d    int
}

// panel is the rows of a panel of refP.
const panel = 64

func newIndex(ref []float64, d int) *index {
	n := len(ref) / d
	x := &index{ref: ref, mu: make([]float64, d), refP: make([]float32, parallel.Chunks(n, panel)*panel*d),
		norms32: make([]float32, n), n: n, d: d}
	for i := range n { // in row order: the same μ on any number of cores
		for l, v := range ref[i*d : (i+1)*d] {
			x.mu[l] += v
		}
	}
	for l := range x.mu {
		x.mu[l] /= float64(max(n, 1))
	}
	norms := make([]float64, n)
	parallel.For(n, 4096, 0, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			r := ref[i*d : (i+1)*d]
			p := x.refP[i/panel*panel*d+i%panel:]
			var nr float64
			for l, v := range r {
				c := v - x.mu[l]
				nr += c * c
				p[l*panel] = float32(c)
			}
			norms[i], x.norms32[i] = nr, float32(nr)
		}
	})
	for _, v := range norms {
		x.maxNorm = max(x.maxNorm, v)
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
	queryBlock = 96   // queries per task: 16 of Gemm's row groups
	refBlock   = 1024 // reference rows per screen: 16 panels
)

// screenHead is the rows of a query's first block that set its first
// bound.
const screenHead = 256

// screened is a reference row kept by the screen: its screened
// ‖r‖² − 2·q·r (the squared distance less ‖q‖²) and its row.
type screened struct {
	s   float32
	row int32
}

// kthContext returns, for each query row, the Euclidean distance to its
// k-th nearest reference row (NaN when there are fewer than k). With self,
// the queries are the reference rows themselves and each row's own entry
// is left out. progress, when not nil, is told how many queries are done
// after each block of them (from one goroutine at a time). It stops with
// ctx's error when ctx is done: each block of queries looks before it
// scans.
func (x *index) kthContext(ctx context.Context, queries []float64, k int, self bool, progress func(done, total int)) ([]float64, error) {
	d := x.d
	m := len(queries) / d
	out := make([]float64, m)
	var mu sync.Mutex
	done := 0
	parallel.For(m, queryBlock, 0, func(_, lo, hi int) {
		if ctx.Err() != nil {
			return
		}
		nq := hi - lo
		q32 := make([]float32, nq*d)
		for i := range nq {
			q, c := queries[(lo+i)*d:(lo+i+1)*d], q32[i*d:(i+1)*d]
			for l, v := range q {
				c[l] = float32(v - x.mu[l])
			}
		}
		prod := make([]float32, nq*refBlock)
		masks := make([]uint16, (refBlock+7)/8)
		qs := make([]queryScan, nq)
		for i := range qs {
			q := queries[(lo+i)*d : (lo+i+1)*d]
			qs[i].start(x, q, k)
		}
		for r0 := 0; r0 < x.n; r0 += refBlock {
			nr := min(x.n, r0+refBlock) - r0
			for c := 0; c < nr; c += panel {
				kernel.Gemm(nq, min(panel, nr-c), d, q32, d, 1, x.refP[(r0+c)*d:], panel, prod[c:], nr)
			}
			for i := range qs {
				skip := -1
				if self {
					skip = lo + i - r0
				}
				qs[i].screen(prod[i*nr:(i+1)*nr], x.norms32[r0:r0+nr], r0, skip, masks)
			}
		}
		for i := range qs {
			out[lo+i] = qs[i].finish(x, queries[(lo+i)*d:(lo+i+1)*d])
		}
		if progress != nil {
			mu.Lock()
			done += nq
			progress(done, m)
			mu.Unlock()
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// queryScan is one query's screen: its candidates and their bound.
type queryScan struct {
	qn     float64 // ‖q − μ‖²
	k      int
	margin float32 // the screen's error bound on ‖r‖² − 2·q·r
	bound  float32 // keep rows with s ≤ bound (+Inf until k are kept)
	cands  []screened
	vals   []float32 // scratch for the selection
}

func (s *queryScan) start(x *index, q []float64, k int) {
	s.qn, s.k = 0, k
	for l, v := range q {
		c := v - x.mu[l]
		s.qn += c * c
	}
	// |screened − exact| ≤ 2·(γ_d + rounding the inputs and the sum to
	// float32)·‖q‖·‖r‖ ≤ (γ_d + 4u)·(‖q‖² + ‖r‖²); doubled for safety.
	s.margin = float32((2*kernel.GemmErr(x.d) + 16*0x1p-24) * (s.qn + x.maxNorm))
	s.bound = float32(math.Inf(1))
	s.cands = s.cands[:0]
}

// screen keeps the rows of a block whose s = ‖r‖² − 2·q·r (of the rows and
// query less μ) is within the bound (prod: q·r of the block's rows,
// norms: their ‖r‖², r0: the
// block's first row; skip: the block's row to leave out, or −1): the
// vector kernel marks them, a group of lanes at a time (masks: scratch).
func (s *queryScan) screen(prod, norms []float32, r0, skip int, masks []uint16) {
	if math.IsInf(float64(s.bound), 1) && len(prod) > screenHead && 2*s.k <= screenHead {
		// No bound yet (the first block): the head's rows set one, so
		// that the rest of the block is screened against it instead
		// of kept whole and selected among (a quarter of the selection).
		s.screen(prod[:screenHead], norms[:screenHead], r0, skip, masks)
		s.cut()
		s.screen(prod[screenHead:], norms[screenHead:], r0+screenHead, skip-screenHead, masks)
		return
	}
	w := kernel.ScreenMask(masks, prod, norms, s.bound)
	for g, m := range masks[:(len(prod)+w-1)/w] {
		for ; m != 0; m &= m - 1 {
			j := g*w + bits.TrailingZeros16(m)
			if j != skip {
				s.cands = append(s.cands, screened{s: norms[j] - 2*prod[j], row: int32(r0 + j)})
			}
		}
	}
	if len(s.cands) >= max(4*s.k, 256) {
		s.cut()
	}
}

// cut keeps the candidates within twice the margin of the k-th smallest
// screened value (any row beyond is farther, exactly, than k rows already
// kept) and lowers the bound to it.
func (s *queryScan) cut() {
	if len(s.cands) < s.k {
		return
	}
	s.vals = s.vals[:0]
	for _, c := range s.cands {
		s.vals = append(s.vals, c.s)
	}
	kth := select32(s.vals, s.k)
	b := kth + 2*s.margin
	if !(b < s.bound) {
		return
	}
	s.bound = b
	kept := s.cands[:0]
	for _, c := range s.cands {
		if c.s <= b {
			kept = append(kept, c)
		}
	}
	s.cands = kept
}

// finish measures the candidates exactly and returns the k-th smallest
// distance.
func (s *queryScan) finish(x *index, q []float64) float64 {
	s.cut()
	if len(s.cands) < s.k {
		return math.NaN() // fewer than k reference rows
	}
	d := x.d
	exact := make([]float64, len(s.cands))
	for i, c := range s.cands {
		exact[i] = sqDist4(q, x.ref[int(c.row)*d:(int(c.row)+1)*d])
	}
	return math.Sqrt(selectKth(exact, s.k))
}

// select32 returns the k-th smallest of v (1-based; reordering v):
// Hoare's selection with a median-of-three pivot.
func select32(v []float32, k int) float32 {
	lo, hi := 0, len(v)-1
	k--
	for hi > lo {
		mid := int(uint(lo+hi) >> 1)
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
		}
		p := v[mid]
		i, j := lo, hi
		for i <= j {
			for v[i] < p {
				i++
			}
			for v[j] > p {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}

// sqDist4 is ‖a − b‖² summed in four interleaved partial sums (a quarter
// of a plain sum's chain of dependent additions: the exact pass measures
// every query's k candidates with it), without the cancellation of
// ‖a‖² + ‖b‖² − 2·a·b for rows near one another.
func sqDist4(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
