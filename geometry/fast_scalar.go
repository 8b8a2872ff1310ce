//go:build !(goexperiment.simd && amd64)

package geometry

func fastRows(dst []float64, m, p, diffs []float32) {
	d := len(m)
	for i := range dst {
		dst[i] = fastRowScalar(m, p, diffs[i*d:(i+1)*d])
	}
}

// VectorKernels reports whether training runs on the float32 vector kernels
// (a GOEXPERIMENT=simd build on a processor with AVX-512): in this build it
// does not, and the single-norm trains on its exact kernels.
func VectorKernels() bool { return false }
