// Package gradcheck compares analytic gradients with central finite
// differences (gonum's diff/fd), for tests.
package gradcheck

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
)

// Tol is the relative tolerance the project holds every analytic gradient to.
const Tol = 1e-5

// Check reports through t every component where grad differs from the central
// finite-difference gradient of f at x by more than tol relative to
// max(|fd|, |grad|, floor). floor guards components whose true value is 0;
// pass 1 when the function is of order one.
func Check(t testing.TB, name string, f func([]float64) float64, grad, x []float64, tol, floor float64) {
	t.Helper()
	want := Numeric(f, x)
	if len(want) != len(grad) {
		t.Fatalf("%s: analytic gradient has %d components, want %d", name, len(grad), len(want))
	}
	worst, at := 0.0, -1
	for i := range want {
		den := math.Max(floor, math.Max(math.Abs(want[i]), math.Abs(grad[i])))
		e := math.Abs(want[i]-grad[i]) / den
		if math.IsNaN(e) || e > worst {
			worst, at = e, i
			if math.IsNaN(e) {
				break
			}
		}
	}
	if at >= 0 && (math.IsNaN(worst) || worst > tol) {
		t.Errorf("%s: gradient component %d: analytic %.10g, finite difference %.10g (relative error %.3g > %.3g)",
			name, at, grad[at], want[at], worst, tol)
	}
}

// Numeric is the central finite-difference gradient of f at x, with a step
// of 1e-6 relative to each coordinate's magnitude (at least 1e-6).
func Numeric(f func([]float64) float64, x []float64) []float64 {
	g := make([]float64, len(x))
	xx := append([]float64(nil), x...)
	for i := range x {
		h := 1e-6 * math.Max(1, math.Abs(x[i]))
		// fd.Derivative along coordinate i.
		g[i] = fd.Derivative(func(v float64) float64 {
			xx[i] = v
			r := f(xx)
			xx[i] = x[i]
			return r
		}, x[i], &fd.Settings{Formula: fd.Central, Step: h})
	}
	return g
}
