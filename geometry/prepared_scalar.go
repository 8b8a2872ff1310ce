//go:build !(goexperiment.simd && amd64)

package geometry

// preparedRow is the scalar kernel; a build with GOEXPERIMENT=simd on amd64
// uses AVX2 instead (prepared_simd.go).
func preparedRow(logm, p, row, e, c []float32) float64 {
	return preparedRowScalar(logm, p, row, e, c)
}

// SIMD reports whether the prepared kernels use vector instructions.
const SIMD = false

// accumulateRow is the scalar accumulation; a GOEXPERIMENT=simd build uses
// AVX-512 instead.
func accumulateRow(sumE, sumEC []float64, w float64, e, c []float32) {
	accumulateRowScalar(sumE, sumEC, w, e, c)
}

// preparedSmall has no scalar form: preparedKernel's row loop does its work.
func preparedSmall(logm, p []float32, sumE, sumEC, scores []float64, logs []float32, weights Weights) bool {
	return false
}
