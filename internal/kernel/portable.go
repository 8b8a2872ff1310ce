//go:build !(goexperiment.simd && amd64)

package kernel

// This build has the portable kernels only.

func level() string { return "portable Go kernels" }

// Vector reports whether training runs on the float32 vector kernels: in
// this build it does not.
func Vector() bool { return false }

// ExpRow writes c_j = log m_j + L_j and e_j = exp(p_j·c_j) (Exp32) for one
// row of prepared logarithms L and returns Σ_j e_j in float64.
func ExpRow(logm, p, row, e, c []float32) float64 { return expRowPortable(logm, p, row, e, c) }

// AddWeighted adds w·e_j to sumE_j and w·e_j·c_j to sumEC_j.
func AddWeighted(sumE, sumEC []float64, w float64, e, c []float32) {
	addWeightedPortable(sumE, sumEC, w, e, c)
}

// ExpRowsSmall is the generalized ball's prepared kernel sixteen rows at a
// time for d < 16, where the vector build has it; here it reports false and
// does nothing.
func ExpRowsSmall(logm, p []float32, sumE, sumEC, scores []float64, logs []float32, weights func(lo int, phi, w []float64)) bool {
	return false
}

// FastPowRows writes Σ_j 2^(p_j·log2(m_j·|x_j|)) of each row of diffs into
// dst (Log2Poly and Exp2Poly in float32, each row summed in float64); a row
// with an m_j·|x_j| outside float32's normal range (other than 0) or a NaN
// scores +Inf.
func FastPowRows(dst []float64, m, p, diffs []float32) { fastPowRowsPortable(dst, m, p, diffs) }

// Sigmoids writes sig_k = σ(T·(φ_k − t)) and der_k = T·σ·(1 − σ) for each
// score φ_k.
func Sigmoids(T, t float64, phi, sig, der []float64) { sigmoidsPortable(T, t, phi, sig, der) }

// NormTrain is the single-norm's float32 training kernel where the vector
// build has it; here it reports false and does nothing.
func NormTrain(d int, m []float64, p float64, dtheta, scores []float64, diffs []float32, weights func(lo int, phi, w []float64), exact NormExact) bool {
	return false
}
