package kernel

import (
	"math"
	"testing"
)

// TestLog32Bound checks |Log32(y) − ln y| ≤ LogMaxErr·max(1, |ln y|) on 10⁷
// points spread log-uniformly over float32's positive range (subnormals
// included), on every float32 in [0.5, 2] near 1 where ln y → 0, and at the
// special values.
func TestLog32Bound(t *testing.T) {
	t.Parallel()
	worst, at := 0.0, float32(0)
	check := func(y float32) {
		want := math.Log(float64(y))
		err := math.Abs(float64(Log32(y))-want) / math.Max(1, math.Abs(want))
		if err > worst || math.IsNaN(err) {
			worst, at = err, y
		}
	}
	const n = 10_000_000
	lo, hi := math.Log(1e-45), math.Log(math.MaxFloat32)
	for i := 0; i <= n; i++ {
		if y := float32(math.Exp(lo + (hi-lo)*float64(i)/n)); y > 0 && y <= math.MaxFloat32 {
			check(y)
		}
	}
	for y := float32(0.5); y <= 2; y = math.Nextafter32(y, 3) {
		check(y)
	}
	for _, y := range []float32{1, math.SmallestNonzeroFloat32, 0x1p-126, math.MaxFloat32, math.Sqrt2, math.Nextafter32(math.Sqrt2, 2)} {
		check(y)
	}
	if worst > LogMaxErr {
		t.Errorf("worst error %.3g at y = %v, bound %.3g", worst, at, LogMaxErr)
	}
	t.Logf("worst scaled error %.3g at y = %v", worst, at)
	if !math.IsInf(float64(Log32(0)), -1) || !math.IsInf(float64(Log32(float32(math.Inf(1)))), 1) {
		t.Error("Log32(0) ≠ −Inf or Log32(+Inf) ≠ +Inf")
	}
	for _, y := range []float32{-1, float32(math.NaN()), float32(math.Inf(-1))} {
		if v := Log32(y); v == v {
			t.Errorf("Log32(%v) = %v, want NaN", y, v)
		}
	}
}

func BenchmarkLog32(b *testing.B) {
	y, s := float32(0.3), float32(0)
	for b.Loop() {
		s += Log32(y)
		y += 1e-7
	}
	sink = s
}

func BenchmarkMathLog(b *testing.B) {
	y, s := 0.3, 0.0
	for b.Loop() {
		s += math.Log(y)
		y += 1e-7
	}
	sink = float32(s)
}
