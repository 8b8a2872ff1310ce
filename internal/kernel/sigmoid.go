package kernel

import "math"

// Sigmoid is 1/(1+e^{−u}), computed without overflow in either tail.
func Sigmoid(u float64) float64 {
	if u >= 0 {
		return 1 / (1 + math.Exp(-u))
	}
	z := math.Exp(u)
	return z / (1 + z)
}

// sigmoidsPortable writes sig_k = σ(T·(φ_k − t)) and der_k = T·sig_k·(1 − sig_k),
// the Neg term's sigmoid and its derivative, for each score φ_k.
func sigmoidsPortable(T, t float64, phi, sig, der []float64) {
	for k, v := range phi {
		u := T * (v - t)
		switch {
		// Beyond ±746, e^{−|u|} is 0 in float64 (math.Exp underflows below
		// −745.13): σ is exactly 1 or 0 and σ' is 0, as Sigmoid gives them,
		// without the exponential (most far negatives of a batch are here).
		case u > 746:
			sig[k], der[k] = 1, 0
		case u < -746:
			sig[k], der[k] = 0, 0
		default:
			s := Sigmoid(u)
			sig[k], der[k] = s, T*s*(1-s)
		}
	}
}

// Sigmoids writes sig_k = σ(T·(φ_k − t)) and der_k = T·σ·(1 − σ) for each
// score φ_k. The vector kernels take a vector of float64 scores at a time:
// with z = e^{−|u|} (Cody–Waite reduction by ln 2, the Taylor polynomial of
// degree 12, 2ᵏ), σ(u) = (u ≥ 0 ? 1 : z)/(1+z) and σ'(u) = T·z/(1+z)², which
// keeps its relative accuracy in both tails (T·σ·(1−σ) loses it where σ
// rounds to 1). The last len(phi) mod (lanes/2) scores, and any whose |u| is
// above 708 or not finite, are computed by sigmoidsPortable, so a block's
// results do not depend on what follows it but may differ from the scalar
// form in the last bits. TestSigmoids bounds the difference from the closed
// forms.
func Sigmoids(T, t float64, phi, sig, der []float64) {
	n := len(phi) &^ (lanes/2 - 1)
	if sigmoidsV == nil || n == 0 {
		sigmoidsPortable(T, t, phi, sig, der)
		return
	}
	_, _ = sig[len(phi)-1], der[len(phi)-1]
	if sigmoidsV(T, t, phi[:n], sig, der) {
		for j, v := range phi[:n] {
			if u := T * (v - t); !(math.Abs(u) <= 708) {
				sigmoidsPortable(T, t, phi[j:j+1], sig[j:j+1], der[j:j+1])
			}
		}
	}
	sigmoidsPortable(T, t, phi[n:], sig[n:], der[n:])
}

// MulDiv writes c·x_i/n into dst for each value x_i of x, with the bits of
// Go's c * x[i] / n (a product, then a quotient, each rounded): on vectors
// of float64 where the build has them. dst must hold len(x) values.
func MulDiv(dst, x []float64, c, n float64) {
	dst = dst[:len(x)]
	m := 0
	if mulDivV != nil {
		m = len(x) &^ (lanes/2 - 1)
		mulDivV(dst[:m], x[:m], c, n)
	}
	for i := m; i < len(x); i++ {
		dst[i] = c * x[i] / n
	}
}
