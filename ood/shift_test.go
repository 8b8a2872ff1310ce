package ood

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestExchangeableTail: the beta-binomial tail against exact small cases
// and a simulation of the conformal test itself (uniform scores: n
// calibration, m test, exchangeable), and its edges.
func TestExchangeableTail(t *testing.T) {
	t.Parallel()
	// m = 1: P(flag) = E[Beta(ℓ, n+1−ℓ)] = ℓ/(n+1), the test's exact level.
	for _, c := range []struct {
		n     int
		alpha float64
	}{{19, 0.05}, {99, 0.1}, {1509, 0.05}, {30, 0.2}} {
		l := math.Floor(c.alpha * float64(c.n+1))
		if got, want := ExchangeableTail(1, 1, c.n, c.alpha), l/float64(c.n+1); math.Abs(got-want) > 1e-12 {
			t.Errorf("n=%d α=%v: P(flag one) %v, want %v", c.n, c.alpha, got, want)
		}
	}
	for _, c := range []struct {
		name        string
		k, m, n     int
		alpha, want float64
	}{
		{"k 0", 0, 10, 99, 0.1, 1},
		{"k beyond m", 11, 10, 99, 0.1, 0},
		{"nothing can be flagged", 1, 10, 5, 0.1, 0},
		// n = 1, α = 0.5: ℓ = 1, F ~ Beta(1, 1), uniform: P(all m) = 1/(m+1).
		{"uniform F, all flagged", 4, 4, 1, 0.5, 0.2},
		{"uniform F, at least 3 of 4", 3, 4, 1, 0.5, 0.4},
	} {
		if got := ExchangeableTail(c.k, c.m, c.n, c.alpha); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Simulated: the count of flags among m exchangeable inputs.
	rng := rand.New(rand.NewPCG(7, 8))
	const n, m, draws, alpha = 199, 300, 20000, 0.05
	counts := make([]int, draws)
	cal := make([]float64, n)
	for r := range draws {
		for i := range cal {
			cal[i] = rng.Float64()
		}
		c, err := NewCalibration(cal)
		if err != nil {
			t.Fatal(err)
		}
		s := make([]float64, m)
		for i := range s {
			s[i] = rng.Float64()
		}
		counts[r] = int(math.Round(Test{Alpha: alpha}.Rate(c, s) * m))
	}
	slices.Sort(counts)
	for _, k := range []int{10, 15, 20, 25, 30} {
		i, _ := slices.BinarySearch(counts, k)
		emp := float64(draws-i) / draws
		got := ExchangeableTail(k, m, n, alpha)
		if se := math.Sqrt(got*(1-got)/draws) + 1e-4; math.Abs(emp-got) > 4*se {
			t.Errorf("P(≥ %d of %d): %v, simulated %v", k, m, got, emp)
		}
	}
}
