package ood

import "math"

// ExchangeableTail is the probability that a conformal test at level
// alpha, calibrated on n scores, flags at least k of m inputs that are
// exchangeable with its calibration inputs: the upper tail of the
// beta-binomial law of the count. With ℓ = ⌊α(n+1)⌋, an input is flagged
// when its score exceeds the ℓ-th largest calibration score, which a new
// score does with probability F ~ Beta(ℓ, n+1−ℓ) over the calibration draw
// (continuous scores; ties flag fewer), and given F the count is
// Binomial(m, F). A small tail says the m inputs are not drawn as the
// calibration inputs were (a shift: another batch, donor or site), which
// neither the false-alarm guarantee nor a set's coverage guarantee covers.
// k ≤ 0 gives 1; ℓ = 0 (nothing can be flagged) gives 0 for k > 0.
func ExchangeableTail(k, m, n int, alpha float64) float64 {
	if k <= 0 {
		return 1
	}
	if k > m {
		return 0
	}
	l := int(math.Floor(alpha * float64(n+1)))
	if l <= 0 {
		return 0
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
