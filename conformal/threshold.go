// Package conformal calibrates contrastive conformal sets: split-conformal
// thresholds with the paper's guarantee (Lemma 1), the calibration modes,
// and the fitted set with its file format.
//
// The guarantee: if the calibration anchors and a test anchor are
// exchangeable given everything used to choose the geometry, and each
// calibration anchor contributes the score of one positive, then a test
// anchor's positive falls inside the set with probability at least 1−α,
// marginally over calibration and test draws. This package imports no
// training code, so the guarantee can be audited here alone.
package conformal

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"sync"
)

// ErrAlpha reports a miscoverage level outside (0, 1).
var ErrAlpha = errors.New("conformal: alpha must lie strictly between 0 and 1")

// ErrTooFewCalibration reports that the conformal rank exceeds the number of
// calibration scores: the only valid threshold is +Inf, the whole space.
var ErrTooFewCalibration = errors.New("conformal: too few calibration scores for this alpha")

// TooFewError is the error returned with a +Inf threshold.
type TooFewError struct {
	N     int     // calibration scores
	Rank  int     // ⌈(1−α)(N+1)⌉, or PAC's rank, > N
	Alpha float64 // miscoverage level
	Delta float64 // PAC's δ; 0 for the marginal rank
}

// Error returns the reason with the package's prefix.
func (e *TooFewError) Error() string { return "conformal: " + e.Reason() }

// Reason is the error's message without the package prefix: what Set's
// Warnings says of a whole-space set.
func (e *TooFewError) Reason() string {
	if e.Delta > 0 {
		need := minPACCalibration(e.Alpha, e.Delta)
		return fmt.Sprintf("%s too few for alpha %v at delta %v: no rank r ≤ n has BinomCDF(r−1; n, 1−α) ≥ 1−δ, so the set is the whole space (threshold +Inf); %s",
			e.scores(), e.Alpha, e.Delta, needs(fmt.Sprintf("alpha %v with delta %v", e.Alpha, e.Delta), need))
	}
	return fmt.Sprintf("%s too few for alpha %v: the rank ⌈(1−α)(n+1)⌉ = %d exceeds n, so the set is the whole space (threshold +Inf); %s",
		e.scores(), e.Alpha, e.Rank, needs(fmt.Sprintf("alpha %v", e.Alpha), minCalibration(e.Alpha)))
}

// scores is "n calibration scores are", or "1 calibration score is".
func (e *TooFewError) scores() string {
	return countOf(e.N, "calibration score is", "calibration scores are")
}

// needs says how many calibration scores what needs: n, or, for 0, more
// than any set may have.
func needs(what string, n int) string {
	if n == 0 {
		return what + " needs more than 2⁵³ calibration scores, more than any set may have"
	}
	return fmt.Sprintf("%s needs at least %d", what, n)
}

// Need is the fewest calibration scores with a finite threshold at the
// error's α (and δ), or 0 when none may have so many.
func (e *TooFewError) Need() int {
	if e.Delta > 0 {
		return minPACCalibration(e.Alpha, e.Delta)
	}
	return minCalibration(e.Alpha)
}

// Is makes errors.Is(err, ErrTooFewCalibration) true.
func (e *TooFewError) Is(target error) bool { return target == ErrTooFewCalibration }

// MaxCalibration is the most calibration scores a set may have: 2⁵³, the
// integers a float64 holds exactly. Ranks and the arithmetic on them then
// stay exact and far inside int64, and a file claiming more is refused.
const MaxCalibration = 1 << 53

// minCalibration is the smallest n with Rank(n, alpha) ≤ n, or 0 when that
// is beyond MaxCalibration.
func minCalibration(alpha float64) int {
	if 1/alpha > MaxCalibration/2 {
		return 0
	}
	n := int(math.Ceil(1/alpha)) - 2
	if n < 1 {
		n = 1
	}
	for {
		if r, err := Rank(n, alpha); err != nil || r <= n {
			return n
		}
		n++
	}
}

// CheckAlpha returns an error wrapping ErrAlpha unless 0 < alpha < 1.
func CheckAlpha(alpha float64) error {
	if !(alpha > 0 && alpha < 1) {
		if a, ok := PercentAlpha(alpha); ok {
			return fmt.Errorf("%w, got %v (a percentage? %v)", ErrAlpha, alpha, a)
		}
		return fmt.Errorf("%w, got %v", ErrAlpha, alpha)
	}
	return nil
}

// PercentAlpha reads an α given as a percentage: for 1 < alpha < 100 the
// α it likely meant — coverage of alpha% (alpha ≥ 50: 95 → 0.05) or
// miscoverage of alpha% (5 → 0.05) — and true; otherwise false.
func PercentAlpha(alpha float64) (float64, bool) {
	switch {
	case !(alpha > 1 && alpha < 100):
		return 0, false
	case alpha >= 50:
		return (100 - alpha) / 100, true
	}
	return alpha / 100, true
}

// Rank is the conformal rank r = ⌈(1−α)(n+1)⌉, computed in exact integer
// arithmetic for 1 ≤ n ≤ MaxCalibration. α is taken as the decimal it
// prints as (0.45 is 45/100, not the binary double nearest to it), so
// α = 0.45 and n = 99 give r = 55 exactly, where floating point computes
// (1−0.45)·100 = 55.00000000000001 and rounds it up to 56.
func Rank(n int, alpha float64) (int, error) {
	if err := CheckAlpha(alpha); err != nil {
		return 0, err
	}
	if n < 1 || n > MaxCalibration {
		return 0, fmt.Errorf("conformal: rank of %d calibration scores: want 1 to 2⁵³", n)
	}
	a, ok := new(big.Rat).SetString(strconv.FormatFloat(alpha, 'g', -1, 64))
	if !ok {
		return 0, fmt.Errorf("conformal: rank: cannot read alpha %v as a decimal", alpha)
	}
	num, den := a.Num(), a.Denom() // α = num/den
	// (1−α)(n+1) = (den−num)(n+1)/den; ceil of p/q is (p+q−1)/q for p, q > 0.
	p := new(big.Int).Sub(den, num)
	p.Mul(p, big.NewInt(int64(n)+1))
	p.Add(p, new(big.Int).Sub(den, big.NewInt(1)))
	p.Quo(p, den)
	if !p.IsInt64() {
		return 0, fmt.Errorf("conformal: rank: overflow for n = %d", n)
	}
	return int(p.Int64()), nil
}

// Threshold returns q̂, the Rank(n, α)-th smallest of the n calibration
// scores, found by selection in expected O(n) time. scores may be reordered
// in place. When the rank exceeds n, it returns +Inf together with a
// *TooFewError (errors.Is(err, ErrTooFewCalibration)): the caller decides
// whether a whole-space set is acceptable, nothing is clamped silently. A NaN
// score is an error naming its index.
func Threshold(scores []float64, alpha float64) (float64, error) {
	r, err := Rank(len(scores), alpha)
	if err != nil {
		return math.NaN(), err
	}
	return selectRank(scores, r, alpha, 0)
}

// selectRank is the r-th smallest score, refusing NaN scores by index and
// returning +Inf with a *TooFewError when r exceeds n (δ > 0: PAC's rank).
func selectRank(scores []float64, r int, alpha, delta float64) (float64, error) {
	for i, s := range scores {
		if math.IsNaN(s) {
			return math.NaN(), fmt.Errorf("conformal: calibration score %d is NaN", i)
		}
	}
	if r > len(scores) {
		return math.Inf(1), &TooFewError{N: len(scores), Rank: r, Alpha: alpha, Delta: delta}
	}
	if len(scores) >= sampledMin {
		if v, ok := selectSampled(scores, r-1, false); ok {
			return v, nil // scores untouched
		}
	}
	return quickselect(scores, r-1), nil // (Select would try the same sample again)
}

// Select returns the r-th smallest (1-based) element of x, reordering x in
// place so that no element before position r−1 is larger and none after it
// smaller (NaN, comparing false, counts as equal to anything). Above
// sampledMin elements it first brackets the rank between two values of an
// evenly spaced sample, counts the parts below, within and above it in one
// pass and moves x into them in another (selectSampled); then,
// or directly, quickselect with a three-way partition (many equal values
// cost nothing extra) and pivots from a fixed pseudo-random sequence. The
// result and the work are deterministic. It panics if r is outside [1,
// len(x)].
func Select(x []float64, r int) float64 {
	if r < 1 || r > len(x) {
		panic("ccs/conformal: rank out of range")
	}
	if len(x) >= sampledMin {
		if v, ok := selectSampled(x, r-1, true); ok {
			return v
		}
	}
	return quickselect(x, r-1)
}

// sampledMin is the length from which Select samples first: below it the
// quickselect's few passes cost less than the sample's two selections.
const sampledMin = 2048

// bufPool holds selectSampled's buffers.
var bufPool = sync.Pool{New: func() any { return new([]float64) }}

// selectSampled is Select's first stage for the 0-based rank k: the values
// of rank k·m/n ∓ 2√m in an evenly spaced sample of m = 2√n elements
// bracket x's k-th value [p1, p2] but for data far from exchangeable; one
// pass counts the elements below p1 and above p2, and where the bracket
// holds, quickselect finishes among those within it (a few √n): with
// partition, a second pass writes x as [below | within | above] and the
// quickselect runs there; without, x is left as it is and the ones within
// are copied out. It reports false, leaving x as it was in content, where
// the bracket misses the rank or holds NaN.
func selectSampled(x []float64, k int, partition bool) (float64, bool) {
	n := len(x)
	m := 2 * int(math.Sqrt(float64(n)))
	sample := make([]float64, m)
	for i := range sample {
		sample[i] = x[int(int64(i)*int64(n)/int64(m))]
	}
	gap := 2 * int(math.Sqrt(float64(m)))
	ks := int(int64(k) * int64(m) / int64(n))
	p1 := quickselect(sample, max(0, ks-gap))
	p2 := quickselect(sample, min(m-1, ks+gap))
	if p1 != p1 || p2 != p2 {
		return 0, false
	}
	var below, above int
	for _, v := range x {
		below += b2i(v < p1)
		above += b2i(v > p2)
	}
	if !(below <= k && k < n-above) {
		return 0, false
	}
	if !partition {
		within := make([]float64, 0, n-above-below)
		for _, v := range x {
			if !(v < p1) && !(v > p2) {
				within = append(within, v)
			}
		}
		return quickselect(within, k-below), true
	}
	bp := bufPool.Get().(*[]float64)
	defer bufPool.Put(bp)
	if cap(*bp) < n {
		*bp = make([]float64, n)
	}
	buf := (*bp)[:n]
	pos := [3]int{0, below, n - above}
	for _, v := range x {
		c := b2i(!(v < p1)) + b2i(v > p2) // 0 below, 1 within (or NaN), 2 above
		buf[pos[c]] = v
		pos[c]++
	}
	copy(x, buf)
	return quickselect(x[below:n-above], k-below), true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// quickselect is Select's quickselect for the 0-based rank k.
func quickselect(x []float64, k int) float64 {
	lo, hi := 0, len(x) // search x[lo:hi]
	state := uint64(0x9e3779b97f4a7c15)
	for hi-lo > 1 {
		state ^= state << 13 // xorshift64
		state ^= state >> 7
		state ^= state << 17
		pivot := x[lo+int(state%uint64(hi-lo))]
		// Partition x[lo:hi] into < pivot, == pivot, > pivot.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := x[i]; {
			case v < pivot:
				x[lt], x[i] = x[i], x[lt]
				lt++
				i++
			case v > pivot:
				gt--
				x[gt], x[i] = x[i], x[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return pivot
		}
	}
	return x[k]
}
