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
	compare(t, name, Numeric(f, x), grad, tol, floor)
}

func compare(t testing.TB, name string, want, grad []float64, tol, floor float64) {
	t.Helper()
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

// Grid is the spacing of float32 test inputs for CheckFloat32: values that
// are multiples of Grid and below 4 in magnitude, and those values plus or
// minus Step, are exact in float32.
const (
	Grid = 1.0 / (1 << 16)
	Step = 1.0 / (1 << 12)
)

// OnGrid rounds x to the nearest multiple of Grid.
func OnGrid(x float64) float32 { return float32(math.Round(x/Grid) * Grid) }

// CheckFloat32 is Check for a function of float32 inputs (embeddings): the
// central difference uses the step Step, which is exact for inputs made by
// OnGrid, so the comparison is not blurred by float32 rounding.
func CheckFloat32(t testing.TB, name string, f func([]float32) float64, grad []float64, x []float32, tol, floor float64) {
	t.Helper()
	xx := append([]float32(nil), x...)
	numeric := make([]float64, len(x))
	for i, v := range x {
		if float64(OnGrid(float64(v))) != float64(v) || math.Abs(float64(v)) >= 4 {
			t.Fatalf("%s: input %d = %v is not on the grid (use gradcheck.OnGrid)", name, i, v)
		}
		xx[i] = v + Step
		up := f(xx)
		xx[i] = v - Step
		down := f(xx)
		xx[i] = v
		numeric[i] = (up - down) / (2 * Step)
	}
	compare(t, name, numeric, grad, tol, floor)
}
