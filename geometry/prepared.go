package geometry

import (
	"math"
	"sync"

	"github.com/ccsets/ccs/internal/kernel"
)

// Prepared is implemented by learnable geometries with a faster kernel on a
// per-element transform of the differences. With frozen embeddings a
// split's differences never change, so a trainer prepares them once and
// every iteration reads the prepared values (docs/design.md §9).
type Prepared interface {
	Learnable
	// Prepare writes the transform of each element of diffs into dst
	// (same layout; allocated when nil). The transform depends on the
	// geometry's type alone, never on its parameters, so geometries of one
	// type may share prepared rows (train.Rows).
	Prepare(dst, diffs []float32) []float32
	// ScoresPrepared computes the scores of prepared rows.
	ScoresPrepared(dst []float64, prep []float32) []float64
	// ScoreGradsPrepared is ScoreGrads on prepared rows.
	ScoreGradsPrepared(dtheta, scores []float64, prep []float32, w Weights) []float64
}

// Streamed is implemented by prepared geometries whose training kernels
// read a batch's prepared rows where they lie: spans of rows of a split
// prepared once (each span a whole number of rows; the rows are those of
// the first span, then the second's, and so on). The numbers are those of
// ScoresPrepared and ScoreGradsPrepared on the rows gathered into one
// slice, without the copy.
type Streamed interface {
	Prepared
	// ScoresSpans is ScoresPrepared on the rows of spans.
	ScoresSpans(dst []float64, spans [][]float32) []float64
	// ScoreGradsSpans is ScoreGradsPrepared on the rows of spans.
	ScoreGradsSpans(dtheta, scores []float64, spans [][]float32, w Weights) []float64
}

var (
	_ Streamed = (*GenBall)(nil)
	_ Streamed = (*Norm)(nil)
)

// LogZero stands for log|0| in prepared logarithms: finite, and so far below
// any argument in use that exp(p·(log m + LogZero)) is exactly 0 and its
// products vanish (no 0·∞ = NaN).
const LogZero = kernel.LogZero

// Prepare writes log|x| of each element (LogZero for 0) in float32.
func (g *GenBall) Prepare(dst, diffs []float32) []float32 {
	if dst == nil {
		dst = make([]float32, len(diffs))
	}
	if len(dst) != len(diffs) {
		panic(errLength)
	}
	for i, v := range diffs {
		if v == 0 {
			dst[i] = LogZero
		} else {
			dst[i] = float32(math.Log(math.Abs(float64(v))))
		}
	}
	return dst
}

// ScoresPrepared computes Σ_j exp(p_j·(log m_j + L_ij)) from prepared
// logarithms L: one float32 exp per element (kernel.Exp32, relative error
// ≤ 1e-6), summed in float64.
func (g *GenBall) ScoresPrepared(dst []float64, logs []float32) []float64 {
	return g.preparedKernel(nil, dst, kernel.Spans{logs}, nil)
}

// ScoresSpans is ScoresPrepared on the rows of spans, read in place.
func (g *GenBall) ScoresSpans(dst []float64, spans [][]float32) []float64 {
	return g.preparedKernel(nil, dst, spans, nil)
}

// ScoreGradsSpans is ScoreGradsPrepared on the rows of spans, read in
// place.
func (g *GenBall) ScoreGradsSpans(dtheta, scores []float64, spans [][]float32, w Weights) []float64 {
	if len(dtheta) != g.NumParams() {
		panic(errLength)
	}
	return g.preparedKernel(dtheta, scores, spans, orOnes(w))
}

// ScoreGradsPrepared computes the scores from prepared logarithms and adds
// Σ_i w_i·∂φ_i/∂θ into dtheta, the weights drawn weightBlock rows at a time:
// ∂φ/∂m_j = e·p_j/m_j and ∂φ/∂p_j = e·(log m_j + L), e = exp(p_j(log m_j + L)).
func (g *GenBall) ScoreGradsPrepared(dtheta, scores []float64, logs []float32, w Weights) []float64 {
	if len(dtheta) != g.NumParams() {
		panic(errLength)
	}
	return g.preparedKernel(dtheta, scores, kernel.Spans{logs}, orOnes(w))
}

// preparedScratch is a call's buffers: a block's e and c, its weights,
// and the gradient's sums. Calls take them from a pool: training calls the
// kernel for every chunk of 256 rows, and allocating them was 4% of an
// epoch.
type preparedScratch struct {
	e, c           []float32
	w, sumE, sumEC []float64
}

var preparedPool = sync.Pool{New: func() any { return new(preparedScratch) }}

// grown sets *b to a slice of n values, reusing its storage when it can.
func grown[T any](b *[]T, n int) []T {
	if cap(*b) < n {
		*b = make([]T, n)
	}
	*b = (*b)[:n]
	return *b
}

// prefetchAhead is how many rows ahead preparedKernel prefetches (8 rows of
// d = 128: a page).
const prefetchAhead = 8

func (g *GenBall) preparedKernel(dtheta, scores []float64, logs kernel.Spans, weights Weights) []float64 {
	d := len(g.m)
	nv := logs.Len()
	if nv%d != 0 {
		panic(errRows)
	}
	scores = sameLen(scores, nv/d)
	n := len(scores)
	logm, p := g.logm32, g.p32
	// Rows go in blocks whose e and c stay in the L1 cache, so that
	// weights gets a block at a time.
	blk := weightBlock(d)
	sc := preparedPool.Get().(*preparedScratch)
	defer preparedPool.Put(sc)
	e, c, w := grown(&sc.e, blk*d), grown(&sc.c, blk*d), grown(&sc.w, blk)
	var sumE, sumEC []float64 // Σ_i w_i e_ij and Σ_i w_i e_ij c_ij
	if dtheta != nil {
		sumE, sumEC = grown(&sc.sumE, d), grown(&sc.sumEC, d)
		clear(sumE)
		clear(sumEC)
	}
	if kernel.ExpRowsSmall(logm, p, sumE, sumEC, scores, logs, weights) {
		n = 0 // done, sixteen rows at a time
	}
	span, off := 0, 0 // the next row: logs[span][off:off+d]
	// The row prefetchAhead rows on, asked for before it is read: the rows
	// lie in spans apart, and the hardware prefetchers stop at each page.
	aSpan, aOff := 0, 0
	for i := 0; i < min(n, prefetchAhead); i++ {
		for aOff == len(logs[aSpan]) {
			aSpan, aOff = aSpan+1, 0
		}
		kernel.Prefetch(logs[aSpan][aOff : aOff+d])
		aOff += d
	}
	for lo := 0; lo < n; lo += blk {
		hi := min(n, lo+blk)
		for i := lo; i < hi; i++ {
			for off == len(logs[span]) {
				span, off = span+1, 0
			}
			if i+prefetchAhead < n {
				for aOff == len(logs[aSpan]) {
					aSpan, aOff = aSpan+1, 0
				}
				kernel.Prefetch(logs[aSpan][aOff : aOff+d])
				aOff += d
			}
			r := (i - lo) * d
			scores[i] = kernel.ExpRow(logm, p, logs[span][off:off+d], e[r:r+d], c[r:r+d])
			off += d
		}
		if dtheta == nil {
			continue
		}
		weights(lo, scores[lo:hi], w[:hi-lo])
		for i := lo; i < hi; i++ {
			if wi, r := w[i-lo], (i-lo)*d; wi != 0 {
				kernel.AddWeighted(sumE, sumEC, wi, e[r:r+d], c[r:r+d])
			}
		}
	}
	if dtheta != nil {
		for j := range d {
			dtheta[j] += sumE[j] * g.p[j] / g.m[j]
			dtheta[d+j] += sumEC[j]
		}
	}
	return scores
}
