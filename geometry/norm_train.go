package geometry

import "github.com/ccsets/ccs/internal/kernel"

var _ Prepared = (*Norm)(nil)

// Prepare copies diffs: the single-norm has no per-element transform. It
// implements Prepared so that training reaches its training kernels
// (ScoresPrepared, ScoreGradsPrepared).
func (n *Norm) Prepare(dst, diffs []float32) []float32 {
	if dst == nil {
		dst = make([]float32, len(diffs))
	}
	if len(dst) != len(diffs) {
		panic(errLength)
	}
	copy(dst, diffs)
	return dst
}

// ScoresPrepared is Scores for training: where the processor has the vector
// kernels, the products and ‖y‖_p are computed in float32 (within 1e-4 of
// Scores, relative; TestNormTrainKernels); otherwise it is Scores.
// Calibration and evaluation use Scores.
func (n *Norm) ScoresPrepared(dst []float64, prepared []float32) []float64 {
	return n.ScoresSpans(dst, [][]float32{prepared})
}

// ScoresSpans is ScoresPrepared on the rows of spans, read in place (the
// portable level copies them together for Scores).
func (n *Norm) ScoresSpans(dst []float64, spans [][]float32) []float64 {
	dst = n.spanRows(dst, spans)
	if kernel.NormTrain(n.d, n.m, n.mt, n.p, nil, dst, spans, nil, n.exact()) {
		return dst
	}
	return n.Scores(dst, kernel.Spans(spans).Joined())
}

// spanRows checks that spans hold whole rows and that dst has one slot per
// row, allocating it when nil.
func (n *Norm) spanRows(dst []float64, spans [][]float32) []float64 {
	nv := kernel.Spans(spans).Len()
	if nv%n.d != 0 {
		panic(errRows)
	}
	return sameLen(dst, nv/n.d)
}

// ScoreGradsPrepared is ScoreGrads for training, with ScoresPrepared's
// ‖y‖_p.
func (n *Norm) ScoreGradsPrepared(dtheta, scores []float64, prepared []float32, w Weights) []float64 {
	return n.ScoreGradsSpans(dtheta, scores, [][]float32{prepared}, w)
}

// ScoreGradsSpans is ScoreGradsPrepared on the rows of spans, read in
// place (the portable level copies them together for ScoreGrads).
func (n *Norm) ScoreGradsSpans(dtheta, scores []float64, spans [][]float32, w Weights) []float64 {
	if len(dtheta) != n.NumParams() {
		panic(errLength)
	}
	scores = n.spanRows(scores, spans)
	w = orOnes(w)
	if kernel.NormTrain(n.d, n.m, n.mt, n.p, dtheta, scores, spans, w, n.exact()) {
		return scores
	}
	return n.ScoreGrads(dtheta, scores, kernel.Spans(spans).Joined(), w)
}

// exact is what the float32 training kernel hands the rows it cannot
// represent to.
func (n *Norm) exact() kernel.NormExact {
	return kernel.NormExact{
		Scores: func(dst []float64, x []float32) { normScores(n, dst, x) },
		Grad: func(dtheta []float64, x []float32, w float64) {
			normScoreGrads(n, dtheta, make([]float64, 1), x, Fixed([]float64{w}))
		},
	}
}
