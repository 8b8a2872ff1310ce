package ood

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/race"
)

// TestExchangeableTail: the beta-binomial tail against exact small cases
// and simulations of the conformal tests themselves (uniform scores: n
// calibration, m test, exchangeable), the marginal one and one with a δ
// above 1/e, whose flagged rank is above the marginal test's; and its
// edges. Numbers alone, no goroutine on the way: not under the race
// detector.
func TestExchangeableTail(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	// m = 1: P(flag) = E[Beta(ℓ, n+1−ℓ)] = ℓ/(n+1), the test's exact level.
	for _, c := range []struct {
		n     int
		alpha float64
	}{{19, 0.05}, {99, 0.1}, {1509, 0.05}, {30, 0.2}} {
		l := Test{Alpha: c.alpha}.FlaggedRank(c.n)
		if got, want := conformal.ExchangeableTail(1, 1, c.n, l), float64(l)/float64(c.n+1); math.Abs(got-want) > 1e-12 || l != int(math.Floor(c.alpha*float64(c.n+1))) {
			t.Errorf("n=%d α=%v: rank %d, P(flag one) %v, want %v", c.n, c.alpha, l, got, want)
		}
	}
	for _, c := range []struct {
		name    string
		k, m, n int
		l       int
		want    float64
	}{
		{"k 0", 0, 10, 99, 10, 1},
		{"k beyond m", 11, 10, 99, 10, 0},
		{"nothing can be flagged", 1, 10, 5, 0, 0},
		{"everything flagged", 3, 10, 5, 6, 1},
		// n = 1, ℓ = 1: F ~ Beta(1, 1), uniform: P(all m) = 1/(m+1).
		{"uniform F, all flagged", 4, 4, 1, 1, 0.2},
		{"uniform F, at least 3 of 4", 3, 4, 1, 1, 0.4},
	} {
		if got := conformal.ExchangeableTail(c.k, c.m, c.n, c.l); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Simulated: the count of flags among m exchangeable inputs, for the
	// marginal test (n = 199) and one with δ = 0.45 (n = 18: ⌊α(n+1)⌋ is
	// 0, yet rank 1's level 1 − δ^{1/n} = 0.043 is flagged).
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		test Test
		n    int
		ks   []int
	}{
		{Test{Alpha: 0.05}, 199, []int{10, 15, 20, 25, 30}},
		{Test{Alpha: 0.05, Delta: 0.45}, 18, []int{5, 15, 30, 60}},
	} {
		const m, draws = 300, 20000
		l := c.test.FlaggedRank(c.n)
		if c.test.Delta > 0 && l != 1 {
			t.Fatalf("δ = %v, n = %d: flagged rank %d, want 1", c.test.Delta, c.n, l)
		}
		counts := make([]int, draws)
		cal := make([]float64, c.n)
		for r := range draws {
			for i := range cal {
				cal[i] = rng.Float64()
			}
			cc, err := NewCalibration(cal)
			if err != nil {
				t.Fatal(err)
			}
			s := make([]float64, m)
			for i := range s {
				s[i] = rng.Float64()
			}
			counts[r] = int(math.Round(c.test.Rate(cc, s) * m))
		}
		slices.Sort(counts)
		for _, k := range c.ks {
			i, _ := slices.BinarySearch(counts, k)
			emp := float64(draws-i) / draws
			got := conformal.ExchangeableTail(k, m, c.n, l)
			if se := math.Sqrt(got*(1-got)/draws) + 1e-4; math.Abs(emp-got) > 4*se {
				t.Errorf("%+v: P(≥ %d of %d): %v, simulated %v", c.test, k, m, got, emp)
			}
		}
	}
}

// TestFlaggedRank: a score above the flagged rank's calibration score is
// flagged and one at the next rank is not, for the marginal test, the
// exact calibration-conditional one and the simultaneous one, across n
// and α (α = 0.29 at n = 99: ⌊α(n+1)⌋ in float64 is 28, the test flags
// rank 29).
func TestFlaggedRank(t *testing.T) {
	t.Parallel()
	for _, test := range []Test{{Alpha: 0.05}, {Alpha: 0.29}, {Alpha: 0.1, Delta: 0.1}, {Alpha: 0.05, Delta: 0.45}, {Alpha: 0.2, Delta: 0.1, Simultaneous: true}} {
		for _, n := range []int{1, 18, 38, 99, 500} {
			cal := make([]float64, n)
			for i := range cal {
				cal[i] = float64(i + 1) // the j-th largest is n+1−j
			}
			c, err := NewCalibration(cal)
			if err != nil {
				t.Fatal(err)
			}
			l := test.FlaggedRank(n)
			// Just above the j-th largest: rank j, p-value the j-th level.
			for j := 1; j <= n; j++ {
				flagged := test.Flags(test.PValues(c, []float64{float64(n+1-j) + 0.5}))[0]
				if flagged != (j <= l) {
					t.Fatalf("%+v, n = %d: rank %d flagged %v, flagged rank %d", test, n, j, flagged, l)
				}
			}
		}
	}
	if l := (Test{Alpha: 0.29}).FlaggedRank(99); l != 29 {
		t.Errorf("α = 0.29, n = 99: flagged rank %d, want 29", l)
	}
}
