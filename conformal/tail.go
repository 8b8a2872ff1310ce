package conformal

import "math"

// ExchangeableTail is the probability that a conformal test calibrated
// on n scores, which flags an input whose score exceeds the l-th largest
// calibration score, flags at least k of m inputs that are exchangeable
// with its calibration inputs — a per-input OOD test's flags (l is
// ood.Test.FlaggedRank), or the units a set leaves outside (l is
// N+1−Rank: the threshold is the Rank-th smallest of N): the upper tail of the
// beta-binomial law of the count. A new score exceeds the l-th largest of
// n with probability F ~ Beta(l, n+1−l) over the calibration draw
// (continuous scores; ties flag fewer), and given F the count is
// Binomial(m, F). A small tail says the m inputs are not drawn as the
// calibration inputs were (a shift: another batch, donor or site), which
// neither the false-alarm guarantee nor a set's coverage guarantee covers.
// k ≤ 0 gives 1; l ≤ 0 (nothing can be flagged) gives 0 for k > 0. A
// tail below the float64 range is given as 10⁻³⁰⁰, a bound above it (a
// valid p-value, never 0 for a count that can occur).
func ExchangeableTail(k, m, n, l int) float64 {
	if k <= 0 {
		return 1
	}
	if k > m || l <= 0 {
		return 0
	}
	if l > n {
		return 1 // every input is flagged
	}
	a, b := float64(l), float64(n+1-l)
	lbeta := func(x, y float64) float64 {
		gx, _ := math.Lgamma(x)
		gy, _ := math.Lgamma(y)
		gxy, _ := math.Lgamma(x + y)
		return gx + gy - gxy
	}
	lchoose := func(m, j int) float64 {
		gm, _ := math.Lgamma(float64(m + 1))
		gj, _ := math.Lgamma(float64(j + 1))
		gr, _ := math.Lgamma(float64(m - j + 1))
		return gm - gj - gr
	}
	base := lbeta(a, b)
	logPMF := func(j int) float64 {
		return lchoose(m, j) + lbeta(float64(j)+a, float64(m-j)+b) - base
	}
	// Sum the smaller side, in log space from its largest term.
	mean := float64(m) * a / (a + b)
	lo, hi, upper := k, m, true
	if float64(k) <= mean {
		lo, hi, upper = 0, k-1, false
	}
	top := math.Inf(-1)
	for j := lo; j <= hi; j++ {
		top = max(top, logPMF(j))
	}
	sum := 0.0
	for j := lo; j <= hi; j++ {
		sum += math.Exp(logPMF(j) - top)
	}
	side := math.Exp(top) * sum
	if upper {
		// Below the float64 range, the m+1 terms each under its least
		// value bound the tail far below 10⁻³⁰⁰: say that, not 0.
		if side == 0 {
			return underflowTail
		}
		return min(1, side)
	}
	return max(0, 1-side)
}

// underflowTail is what ExchangeableTail gives for a tail whose terms
// all underflow: each below 5·10⁻³²⁴, m+1 of them sum far below it.
const underflowTail = 1e-300

// A TailGroup is one group of a sum of exchangeable counts
// (ExchangeableSumTail): M inputs judged against the L-th largest of the
// group's own N calibration scores.
type TailGroup struct{ M, N, L int }

// tailFloor is the probability below which ExchangeableSumTail drops a
// group's or the running sum's terms, adding their mass to the tail it
// returns: exact to about that times the number of terms, and never
// below the exact tail.
const tailFloor = 1e-40

// ExchangeableSumTail is the probability that the counts of groups — each
// a conformal test (or a set's threshold) calibrated on the group's own N
// scores, judging M inputs exchangeable with them, as
// ExchangeableTail's — sum to at least k: the upper tail of a sum of
// independent beta-binomial counts (a class-conditional set's classes,
// calibrated on disjoint units), by convolution. Terms below 10⁻⁴⁰ are
// dropped and their mass added to the tail, so a tail far below that is
// not resolved but bounded: the result is never below the exact tail (a
// valid p-value), and 0 only where no count reaches k. k ≤ 0 gives 1.
func ExchangeableSumTail(k int, groups []TailGroup) float64 {
	if k <= 0 {
		return 1
	}
	most := 0 // the largest count the groups can reach
	for _, g := range groups {
		if g.M > 0 && g.L > 0 {
			most += g.M
		}
	}
	if k > most {
		return 0
	}
	// dist[i] is P(sum = off + i); dropped is the mass of the terms
	// dropped below tailFloor.
	off, dist, dropped := 0, []float64{1}, 0.0
	for _, g := range groups {
		lo, pmf, cut := betaBinomial(g.M, g.N, g.L)
		dropped += cut
		next := make([]float64, len(dist)+len(pmf)-1)
		for i, p := range dist {
			if p == 0 {
				continue
			}
			for j, q := range pmf {
				next[i+j] += p * q
			}
		}
		off += lo
		a, kept, cut := trimFloor(next) // the negligible ends
		dropped += cut
		off, dist = off+a, kept
	}
	tail := 0.0
	for i := len(dist) - 1; i >= 0 && off+i >= k; i-- {
		tail += dist[i]
	}
	return min(1, tail+dropped)
}

// betaBinomial is the law of the count of m exchangeable inputs beyond
// the l-th largest of n calibration scores, from count lo on: pmf[i] is
// P(count = lo + i), its terms below tailFloor at either end dropped
// (their mass, cut).
func betaBinomial(m, n, l int) (lo int, pmf []float64, cut float64) {
	switch {
	case m <= 0 || l <= 0:
		return 0, []float64{1}, 0 // nothing can be beyond
	case l > n:
		return m, []float64{1}, 0 // everything is
	}
	a, b := float64(l), float64(n+1-l)
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	base := lg(a) + lg(b) - lg(a+b) - lg(float64(m+1))
	p := make([]float64, m+1)
	for j := range p {
		x, y := float64(j)+a, float64(m-j)+b
		p[j] = math.Exp(-lg(float64(j+1)) - lg(float64(m-j+1)) + lg(x) + lg(y) - lg(x+y) - base)
	}
	s, kept, cut := trimFloor(p)
	return s, kept, cut
}

// trimFloor drops p's terms below tailFloor at either end: it returns the
// first kept index, the kept terms and the mass dropped.
func trimFloor(p []float64) (start int, kept []float64, cut float64) {
	s, e := 0, len(p)
	for s < e && p[s] < tailFloor {
		cut += p[s]
		s++
	}
	for e > s && p[e-1] < tailFloor {
		e--
		cut += p[e]
	}
	return s, p[s:e], cut
}
