package kernel

import (
	"math"
	"testing"

	"github.com/ccsets/ccs/internal/race"
)

// TestExp32Bound checks the relative error against math.Exp on a grid of
// 10⁷ points over [ExpMin, ExpMax] plus the ends and zero. Scalar numbers,
// no goroutine: not under the race detector.
func TestExp32Bound(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	worst, at := 0.0, 0.0
	check := func(x float32) {
		want := math.Exp(float64(x))
		got := float64(Exp32(x))
		if e := math.Abs(got-want) / want; e > worst {
			worst, at = e, float64(x)
		}
	}
	const n = 10_000_000
	for i := 0; i <= n; i++ {
		check(float32(ExpMin + (ExpMax-ExpMin)*float64(i)/n))
	}
	for _, x := range []float32{ExpMin, ExpMax, 0, -0.5, 0.5, 1e-8, -1e-8} {
		check(x)
	}
	if worst > ExpMaxRelErr {
		t.Errorf("worst relative error %.3g at x = %v, bound %.3g", worst, at, ExpMaxRelErr)
	}
	t.Logf("worst relative error %.3g at x = %v", worst, at)
	if Exp32(-100) != 0 || !math.IsInf(float64(Exp32(100)), 1) || Exp32(float32(math.NaN())) == Exp32(float32(math.NaN())) {
		t.Error("out-of-range or NaN arguments")
	}
	if Exp32(float32(math.Inf(-1))) != 0 {
		t.Error("Exp32(−Inf) ≠ 0")
	}
}

var sink float32

func BenchmarkExp32(b *testing.B) {
	x, s := float32(-3), float32(0)
	for b.Loop() {
		s += Exp32(x)
		x += 1e-7
	}
	sink = s
}

func BenchmarkMathExp(b *testing.B) {
	x, s := -3.0, 0.0
	for b.Loop() {
		s += math.Exp(x)
		x += 1e-7
	}
	sink = float32(s)
}
