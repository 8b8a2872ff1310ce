package kernel

import "math"

// The generalized ball's kernels, φ = Σ_j (m_j·|x_j|)^{p_j}: their portable
// forms, which the vector forms are tested against.

// expRowPortable writes c_j = log m_j + L_j and e_j = exp(p_j·c_j) for one
// row of prepared logarithms L and returns Σ_j e_j in float64.
func expRowPortable(logm, p, row, e, c []float32) float64 {
	var phi float64
	for j, l := range row {
		cj := logm[j] + l
		ej := Exp32(p[j] * cj)
		e[j], c[j] = ej, cj
		phi += float64(ej)
	}
	return phi
}

// addWeightedPortable adds w·e_j to sumE_j and w·e_j·c_j to sumEC_j.
func addWeightedPortable(sumE, sumEC []float64, w float64, e, c []float32) {
	for j := range e {
		we := w * float64(e[j])
		sumE[j] += we
		sumEC[j] += we * float64(c[j])
	}
}

// fastPowRow is the portable fast score of one row,
// Σ_j 2^(p_j·log2(m_j·|x_j|)) by Log2Poly and Exp2Poly in float32, summed in
// float64; +Inf when an m_j·|x_j| is neither 0 nor a normal float32 (or is
// NaN), for the caller to rescore exactly.
func fastPowRow(m, p, x []float32) float64 {
	var phi float64
	for j, v := range x {
		y := m[j] * math.Float32frombits(math.Float32bits(v)&0x7fffffff)
		switch {
		case y == 0:
		case y >= MinNormal32 && y <= math.MaxFloat32:
			phi += float64(Exp2Poly(p[j] * Log2Poly(y)))
		default: // subnormal, +Inf or NaN: for the exact score
			phi = math.Inf(1)
		}
	}
	return phi
}

// fastPowRowsPortable is FastPowRows row by row.
func fastPowRowsPortable(dst []float64, m, p, diffs []float32) {
	d := len(m)
	for i := range dst {
		dst[i] = fastPowRow(m, p, diffs[i*d:(i+1)*d])
	}
}
