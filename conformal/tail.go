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
// k ≤ 0 gives 1; l ≤ 0 (nothing can be flagged) gives 0 for k > 0.
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
		return min(1, side)
	}
	return max(0, 1-side)
}
