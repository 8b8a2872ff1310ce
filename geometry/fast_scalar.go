//go:build !(goexperiment.simd && amd64)

package geometry

func fastRows(dst []float64, m, p, diffs []float32) {
	d := len(m)
	for i := range dst {
		dst[i] = fastRowScalar(m, p, diffs[i*d:(i+1)*d])
	}
}

// FastPays reports whether Members and the training kernels use the fast
// float32 paths. In this build they do not: the decision was taken when the
// scalar fast score was no faster than math.Log and math.Exp (20.1 against
// 20.6 ns per element at d = 128). With kernel.Log2Poly and Exp2Poly it is
// 11.1 against 19.3 ns, and Members would decide 1.32·10⁶ instead of
// 8.2·10⁵ points per second (BENCHMARKS.md); switching it on is left to a
// change of its own.
func FastPays() bool { return false }
