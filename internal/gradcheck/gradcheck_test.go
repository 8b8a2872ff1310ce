package gradcheck

import (
	"math"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestCheckAcceptsAndRejects(t *testing.T) {
	f := func(x []float64) float64 { return math.Sin(x[0]) * math.Exp(x[1]) }
	x := []float64{0.3, -0.7}
	right := []float64{math.Cos(x[0]) * math.Exp(x[1]), math.Sin(x[0]) * math.Exp(x[1])}
	r := &recorder{TB: t}
	Check(r, "right", f, right, x, Tol, 1)
	if r.failed {
		t.Error("a correct gradient was rejected")
	}
	wrong := []float64{right[0], right[1] * (1 + 1e-3)}
	r = &recorder{TB: t}
	Check(r, "wrong", f, wrong, x, Tol, 1)
	if !r.failed {
		t.Error("a gradient 0.1% off was accepted")
	}
}
