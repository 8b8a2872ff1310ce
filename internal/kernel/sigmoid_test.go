package kernel

import (
	"math"
	"testing"
)

// TestSigmoids: Sigmoids at every level (float64 vectors with the vector
// kernels) agrees with the closed forms — σ(u) = 1/(1+e^{−u}) and
// σ'(u) = e^{−|u|}/(1+e^{−|u|})², times T, with math.Exp — within 1e-12
// relative (plus 1e-15·T absolute: the scalar T·σ·(1−σ) has no relative
// accuracy where σ rounds to 1), over
// u in [−200, 200], in blocks of every length from 1 to 40; a score of ±Inf
// or NaN gives what the scalar form gives.
func TestSigmoids(t *testing.T) { atLevels(t, testSigmoids) }

func testSigmoids(t *testing.T) {
	const T, t0 = 7.0, 0.3
	var phi []float64
	for u := -200.0; u <= 200; u += 0.0137 {
		phi = append(phi, u/T+t0)
	}
	phi = append(phi, t0, t0+1e-9, t0-1e-9)
	for n := 1; n <= 40; n++ {
		sig, der := make([]float64, len(phi)), make([]float64, len(phi))
		for lo := 0; lo < len(phi); lo += n {
			hi := min(len(phi), lo+n)
			Sigmoids(T, t0, phi[lo:hi], sig[lo:hi], der[lo:hi])
		}
		for k, v := range phi {
			u := T * (v - t0)
			z := math.Exp(-math.Abs(u))
			ws, wd := 1/(1+z), T*z/((1+z)*(1+z))
			if u < 0 {
				ws = z / (1 + z)
			}
			if math.Abs(sig[k]-ws) > 1e-12*ws || math.Abs(der[k]-wd) > 1e-12*wd+1e-15*T {
				t.Fatalf("block %d, u = %v: σ = %v, σ' = %v; want %v, %v", n, u, sig[k], der[k], ws, wd)
			}
		}
	}
	special := []float64{math.Inf(1), math.Inf(-1), math.NaN(), 1e300, -1e300, 0.5, 800/T + t0, -710/T + t0}
	sig, der := make([]float64, len(special)), make([]float64, len(special))
	ws, wd := make([]float64, len(special)), make([]float64, len(special))
	Sigmoids(T, t0, special, sig, der)
	sigmoidsPortable(T, t0, special, ws, wd)
	for k := range special {
		same := func(a, b float64) bool {
			return a == b || (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) <= 1e-12*math.Abs(b)
		}
		if !same(sig[k], ws[k]) || !same(der[k], wd[k]) {
			t.Errorf("φ = %v: σ = %v, σ' = %v; the scalar form gives %v, %v", special[k], sig[k], der[k], ws[k], wd[k])
		}
	}
}

// TestSigmoidsPortableTails: the portable form's shortcut beyond ±746
// gives Sigmoid's values to the bit (around the underflow of math.Exp and
// at ±Inf).
func TestSigmoidsPortableTails(t *testing.T) {
	const T = 7.0
	var phi []float64
	for u := 700.0; u <= 800; u += 0.37 {
		phi = append(phi, u/T, -u/T)
	}
	phi = append(phi, 746/T, -746/T, math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64)
	sig, der := make([]float64, len(phi)), make([]float64, len(phi))
	sigmoidsPortable(T, 0, phi, sig, der)
	for k, v := range phi {
		s := Sigmoid(T * v)
		if sig[k] != s || der[k] != T*s*(1-s) {
			t.Errorf("u = %v: σ = %v, σ' = %v; Sigmoid gives %v, %v", T*v, sig[k], der[k], s, T*s*(1-s))
		}
	}
}
