//go:build !(goexperiment.simd && amd64)

package geometry

func fastRows(dst []float64, m, p, diffs []float32) {
	d := len(m)
	for i := range dst {
		dst[i] = fastRowScalar(m, p, diffs[i*d:(i+1)*d])
	}
}

// FastPays reports whether fast scores are worth using: in this build they
// are scalar float32 code no faster than math.Log and math.Exp (measured:
// 20.1 against 20.6 ns per element at d = 128), so Members scores exactly.
func FastPays() bool { return false }
