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
		s := Sigmoid(T * (v - t))
		sig[k], der[k] = s, T*s*(1-s)
	}
}
