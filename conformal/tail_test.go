package conformal

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestExchangeableSumTail: one group's tail is ExchangeableTail's (to 10⁻⁸
// relatively, down to 10⁻³⁰); two groups' is the double sum of their laws
// (each from ExchangeableTail's differences); three groups' agrees with a
// simulation of thresholds of uniform calibration scores and uniform
// inputs; and the edges.
func TestExchangeableSumTail(t *testing.T) {
	t.Parallel()
	for _, g := range []TailGroup{{40, 99, 10}, {300, 1999, 100}, {12, 5, 2}, {7, 5, 6}, {9, 5, 0}} {
		for _, k := range []int{0, 1, 3, 10, 25, 40, 60, 90, 300} {
			got, want := ExchangeableSumTail(k, []TailGroup{g}), ExchangeableTail(k, g.M, g.N, g.L)
			if math.Abs(got-want) > 1e-10 || (want < 1e-3 && want > 1e-30 && math.Abs(got-want) > 1e-8*want) { // far below 1e-30 it is not resolved
				t.Errorf("%+v, k = %d: %v, want %v", g, k, got, want)
			}
		}
	}
	law := func(g TailGroup) []float64 {
		p := make([]float64, g.M+1)
		for j := range p {
			p[j] = ExchangeableTail(j, g.M, g.N, g.L) - ExchangeableTail(j+1, g.M, g.N, g.L)
		}
		return p
	}
	a, b := TailGroup{30, 49, 5}, TailGroup{50, 19, 2}
	pa, pb := law(a), law(b)
	for _, k := range []int{1, 5, 10, 20, 35, 60} {
		want := 0.0
		for i, p := range pa {
			for j, q := range pb {
				if i+j >= k {
					want += p * q
				}
			}
		}
		if got := ExchangeableSumTail(k, []TailGroup{a, b}); math.Abs(got-want) > 1e-10 {
			t.Errorf("two groups, k = %d: %v, want %v", k, got, want)
		}
	}
	// Simulated: three groups' counts beyond each one's threshold.
	rng := rand.New(rand.NewPCG(9, 9))
	groups := []TailGroup{{40, 29, 3}, {100, 99, 10}, {20, 9, 1}}
	const draws = 20000
	sums := make([]int, draws)
	for r := range draws {
		for _, g := range groups {
			cal := make([]float64, g.N)
			for i := range cal {
				cal[i] = rng.Float64()
			}
			slices.Sort(cal)
			q := cal[g.N-g.L] // the L-th largest
			for range g.M {
				if rng.Float64() > q {
					sums[r]++
				}
			}
		}
	}
	slices.Sort(sums)
	for _, k := range []int{10, 20, 30, 40} {
		i, _ := slices.BinarySearch(sums, k)
		emp := float64(draws-i) / draws
		got := ExchangeableSumTail(k, groups)
		if se := math.Sqrt(got*(1-got)/draws) + 1e-4; math.Abs(emp-got) > 4*se {
			t.Errorf("three groups: P(sum ≥ %d) %v, simulated %v", k, got, emp)
		}
	}
	if got := ExchangeableSumTail(0, groups); got != 1 {
		t.Errorf("k = 0: %v", got)
	}
	if got := ExchangeableSumTail(200, groups); got != 0 {
		t.Errorf("k above every count: %v", got)
	}
}

// TestExchangeableSumTailFar: far in the tail, where the convolution drops
// its terms below 10⁻⁴⁰, the tail is still a valid p-value — at least the
// exact one (here every unit outside: the product of each group's
// ExchangeableTail), never 0 for a count the groups can reach — and 0 only
// beyond every count.
func TestExchangeableSumTailFar(t *testing.T) {
	t.Parallel()
	groups := []TailGroup{{75, 200, 20}, {80, 180, 18}, {70, 220, 22}, {75, 200, 20}, {71, 190, 19}}
	total, exact := 0, 1.0
	for _, g := range groups {
		total += g.M
		exact *= ExchangeableTail(g.M, g.M, g.N, g.L)
	}
	for _, k := range []int{total, total - 5, total - 40} {
		if got := ExchangeableSumTail(k, groups); got <= 0 || got < exact || got > 1e-30 {
			t.Errorf("k = %d of %d: %v, want a positive bound at least %v and below 1e-30", k, total, got, exact)
		}
	}
	if got := ExchangeableSumTail(total+1, groups); got != 0 {
		t.Errorf("k = %d, beyond every count: %v, want 0", total+1, got)
	}
}

// TestExchangeableTailUnderflow: a tail too small for a float64 (a shift
// seen in many units: 30% of 100 000 outside where 10% is the mean) is a
// tiny positive bound, never a p-value of 0.
func TestExchangeableTailUnderflow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ k, m, n, l int }{{30000, 100000, 9999, 1000}, {1000000, 1000000, 99, 10}} {
		if got := ExchangeableTail(c.k, c.m, c.n, c.l); got <= 0 || got > 1e-300 {
			t.Errorf("%+v: %v, want a bound in (0, 1e-300]", c, got)
		}
	}
}
