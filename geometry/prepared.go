package geometry

import (
	"math"

	"github.com/ccsets/ccs/internal/kernel"
)

// Prepared is implemented by learnable geometries with a faster kernel on a
// per-element transform of the differences. With frozen embeddings a
// split's differences never change, so a trainer prepares them once and
// every iteration reads the prepared values (DESIGN §5).
type Prepared interface {
	Learnable
	// Prepare writes the transform of each element of diffs into dst
	// (same layout; allocated when nil).
	Prepare(dst, diffs []float32) []float32
	// ScoresPrepared computes the scores of prepared rows.
	ScoresPrepared(dst []float64, prep []float32) []float64
	// ScoreGradsPreparedFunc is ScoreGradsFunc on prepared rows, with the
	// weights drawn a block of rows at a time.
	ScoreGradsPreparedFunc(dtheta, scores []float64, prep []float32, weights Weights) []float64
}

// Weights writes the weights of a block of rows from their scores: w[k] is
// the weight of row lo+k, whose score is phi[k] (len(w) = len(phi) ≥ 1). A
// kernel calls it once for every row, in row order, a block at a time, so
// that the weights' own arithmetic (a sigmoid per row, say) can run on
// vectors too.
type Weights func(lo int, phi, w []float64)

// BlockWeights turns a per-row weight into Weights.
func BlockWeights(weight func(i int, score float64) float64) Weights {
	return func(lo int, phi, w []float64) {
		for k, s := range phi {
			w[k] = weight(lo+k, s)
		}
	}
}

// PerRow turns weights into ScoreGradsFunc's per-row form (blocks of one
// row). The function it returns is for one kernel call at a time.
func PerRow(weights Weights) func(int, float64) float64 {
	var phi, w [1]float64
	return func(i int, s float64) float64 {
		phi[0] = s
		weights(i, phi[:], w[:])
		return w[0]
	}
}

var _ Prepared = (*GenBall)(nil)

// LogZero stands for log|0| in prepared logarithms: finite, and so far below
// any argument in use that exp(p·(log m + LogZero)) is exactly 0 and its
// products vanish (no 0·∞ = NaN).
const LogZero = -1e30

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
	return g.preparedKernel(nil, dst, logs, nil)
}

// ScoreGradsPreparedFunc computes the scores from prepared logarithms and adds
// Σ_i w_i·∂φ_i/∂θ into dtheta, with w from weights (blocks of 16 rows up to
// d = 128, fewer above):
// ∂φ/∂m_j = e·p_j/m_j and ∂φ/∂p_j = e·(log m_j + L), e = exp(p_j(log m_j + L)).
func (g *GenBall) ScoreGradsPreparedFunc(dtheta, scores []float64, logs []float32, weights Weights) []float64 {
	if len(dtheta) != g.NumParams() {
		panic(errLength)
	}
	return g.preparedKernel(dtheta, scores, logs, weights)
}

func (g *GenBall) preparedKernel(dtheta, scores []float64, logs []float32, weights Weights) []float64 {
	d := len(g.m)
	scores, n := rows(scores, logs, d)
	logm, p := make([]float32, d), make([]float32, d)
	for j := range d {
		logm[j], p[j] = float32(math.Log(g.m[j])), float32(g.p[j])
	}
	// Rows go in blocks whose e and c stay in the L1 cache (16 rows up to
	// d = 128), so that weights gets a block at a time.
	blk := min(16, max(1, 2048/d))
	e, c := make([]float32, blk*d), make([]float32, blk*d)
	var sumE, sumEC []float64 // Σ_i w_i e_ij and Σ_i w_i e_ij c_ij
	if dtheta != nil {
		sumE, sumEC = make([]float64, d), make([]float64, d)
	}
	if preparedSmall(logm, p, sumE, sumEC, scores, logs, weights) {
		n = 0 // done, sixteen rows at a time
	}
	w := make([]float64, blk)
	for lo := 0; lo < n; lo += blk {
		hi := min(n, lo+blk)
		for i := lo; i < hi; i++ {
			r := (i - lo) * d
			scores[i] = preparedRow(logm, p, logs[i*d:(i+1)*d], e[r:r+d], c[r:r+d])
		}
		if dtheta == nil {
			continue
		}
		weights(lo, scores[lo:hi], w[:hi-lo])
		for i := lo; i < hi; i++ {
			if wi, r := w[i-lo], (i-lo)*d; wi != 0 {
				accumulateRow(sumE, sumEC, wi, e[r:r+d], c[r:r+d])
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

// accumulateRowScalar adds w·e_j to sumE_j and w·e_j·c_j to sumEC_j.
func accumulateRowScalar(sumE, sumEC []float64, w float64, e, c []float32) {
	for j := range e {
		we := w * float64(e[j])
		sumE[j] += we
		sumEC[j] += we * float64(c[j])
	}
}

// preparedRowScalar writes c_j = log m_j + L_j and e_j = exp(p_j·c_j) for one
// row and returns Σ_j e_j in float64.
func preparedRowScalar(logm, p, row, e, c []float32) float64 {
	var phi float64
	for j, l := range row {
		cj := logm[j] + l
		ej := kernel.Exp32(p[j] * cj)
		e[j], c[j] = ej, cj
		phi += float64(ej)
	}
	return phi
}
