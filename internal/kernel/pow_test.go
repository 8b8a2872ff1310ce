package kernel

import (
	"math"
	"testing"

	"github.com/ccsets/ccs/internal/race"
)

// TestLog2PolyBound checks Log2Poly against math.Log2 on 10⁷ points spread
// log-uniformly over the normal float32 range and on every float32 in
// [0.5, 2], where log2 y → 0. Scalar numbers, no goroutine: not under the
// race detector.
func TestLog2PolyBound(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	worst, at := 0.0, float32(0)
	check := func(y float32) {
		want := math.Log2(float64(y))
		err := math.Abs(float64(Log2Poly(y))-want) - math.Abs(want)*0x1p-23
		if math.IsNaN(err) {
			t.Fatalf("Log2Poly(%v) = %v", y, Log2Poly(y))
		}
		if err > worst {
			worst, at = err, y
		}
	}
	const n = 10_000_000
	for i := range n { // [2^-126, 2^128)
		if y := float32(math.Exp2(-126 + 254*float64(i)/n)); y <= math.MaxFloat32 {
			check(y)
		}
	}
	for y := float32(0.5); y <= 2; y = math.Nextafter32(y, 3) {
		check(y)
	}
	check(math.MaxFloat32)
	check(MinNormal32)
	if worst > Log2PolyErr {
		t.Errorf("worst error %.3g at y = %v, bound %.3g", worst, at, Log2PolyErr)
	}
	t.Logf("worst error %.3g at y = %v", worst, at)
}

// TestExp2PolyBound checks Exp2Poly's relative error against math.Exp2 on 10⁷
// points of [−126, 128) and 10⁶ around 0, and its ends. Scalar numbers, no
// goroutine: not under the race detector.
func TestExp2PolyBound(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	worst, at := 0.0, float32(0)
	check := func(a float32) {
		want := math.Exp2(float64(a))
		err := math.Abs(float64(Exp2Poly(a))-want) / want
		if math.IsNaN(err) {
			t.Fatalf("Exp2Poly(%v) = %v", a, Exp2Poly(a))
		}
		if err > worst {
			worst, at = err, a
		}
	}
	const n = 10_000_000
	for i := range n {
		if a := float32(-126 + 254*float64(i)/n); a < 128 {
			check(a)
		}
	}
	for i := range 1_000_000 { // finely around 0, where t = a − ⌊a⌋ jumps
		check(float32(-1e-3 + 2e-3*float64(i)/1e6))
	}
	if worst > Exp2PolyRelErr {
		t.Errorf("worst relative error %.3g at a = %v, bound %.3g", worst, at, Exp2PolyRelErr)
	}
	t.Logf("worst relative error %.3g at a = %v", worst, at)
	if Exp2Poly(-127) != 0 || !math.IsInf(float64(Exp2Poly(128)), 1) || Exp2Poly(0) != Exp2Poly(0) {
		t.Error("ends")
	}
	if v := Exp2Poly(float32(math.NaN())); v == v {
		t.Error("Exp2Poly(NaN) is not NaN")
	}
}

func BenchmarkPowPoly(b *testing.B) {
	y, s := float32(0.3), float32(0)
	for b.Loop() {
		s += Exp2Poly(1.5 * Log2Poly(y))
		y += 1e-7
	}
	sink = s
}
