package conformal

import (
	"testing"

	"github.com/ccsets/ccs/internal/race"
)

// TestOffTheMaximum: the bisection finds what a scan of every m finds,
// over α, PAC's δ and class sizes around the rank's maximum. Numbers
// alone, no goroutine on the way: not under the race detector.
func TestOffTheMaximum(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	scan := func(alpha, delta float64, n int) int {
		mode := OnePerAnchor
		if delta > 0 {
			mode = PAC
		}
		for m := n + 1; m <= 4*n+100; m++ {
			if r, err := RankOf(mode, m, alpha, delta); err == nil && r < m {
				return m
			}
		}
		return 0
	}
	found := 0
	for _, alpha := range []float64{0.3, 0.1, 0.05, 0.02, 0.01} {
		for _, delta := range []float64{0, 0.2, 0.05} {
			for n := 1; n <= 160; n += 5 {
				want := scan(alpha, delta, n)
				if got := offTheMaximum(alpha, delta, n); got != want {
					t.Fatalf("α = %v, δ = %v, n = %d: %d, a scan finds %d", alpha, delta, n, got, want)
				}
				if want > 0 {
					found++
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no case lifts off the maximum: the test compares nothing")
	}
}
