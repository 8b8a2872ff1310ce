package geometry

var _ Prepared = (*Norm)(nil)

// Prepare copies diffs: the single-norm has no per-element transform. It
// implements Prepared so that training reaches its training kernels
// (ScoresPrepared, ScoreGradsPreparedFunc).
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

// ScoresPrepared is Scores for training: in a build with vector kernels
// (VectorKernels), the products and ‖y‖_p are computed in float32 (within
// PnormTrainTol of Scores, tested) — from d = 16 on with blas32 and a
// sixteen-lane ‖y‖_p along each row, below d = 16 sixteen rows at a time,
// one per lane; otherwise it is Scores. Calibration and evaluation use
// Scores.
func (n *Norm) ScoresPrepared(dst []float64, prepared []float32) []float64 {
	if !VectorKernels() {
		return n.Scores(dst, prepared)
	}
	dst, _ = rows(dst, prepared, n.d)
	if n.d < blasMinDim {
		normSmall32(n, nil, dst, prepared, nil)
	} else {
		normTrain32(n, nil, dst, prepared, nil)
	}
	return dst
}

// ScoreGradsPreparedFunc is ScoreGradsFunc for training, with ScoresPrepared's
// ‖y‖_p.
func (n *Norm) ScoreGradsPreparedFunc(dtheta, scores []float64, prepared []float32, weights Weights) []float64 {
	if !VectorKernels() {
		return n.ScoreGradsFunc(dtheta, scores, prepared, PerRow(weights))
	}
	if len(dtheta) != n.NumParams() {
		panic(errLength)
	}
	scores, _ = rows(scores, prepared, n.d)
	if n.d < blasMinDim {
		normSmall32(n, dtheta, scores, prepared, weights)
	} else {
		normTrain32(n, dtheta, scores, prepared, PerRow(weights))
	}
	return scores
}

// PnormTrainTol bounds the relative difference between the training kernels'
// scores and gradients and the exact ones where they differ (TestNormTrainKernels).
const PnormTrainTol = 1e-4
