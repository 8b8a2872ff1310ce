//go:build !(goexperiment.simd && amd64)

package geometry

// normTrain32 and normSmall32 are not reached in this build (VectorKernels is
// false); the training kernels are the exact ones.
func normTrain32(n *Norm, dtheta, scores []float64, diffs []float32, weight func(int, float64) float64) {
	normBlas(n, dtheta, scores, diffs, weight)
}

func normSmall32(n *Norm, dtheta, scores []float64, diffs []float32, weights Weights) {
	if dtheta == nil {
		normScores(n, scores, diffs)
		return
	}
	normScoreGrads(n, dtheta, scores, diffs, PerRow(weights))
}
