package conformal

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"gonum.org/v1/gonum/mathext"
)

// exactPACLimit is the largest n whose PAC rank is computed in exact
// integer arithmetic; above it the binomial CDF is gonum's regularised
// incomplete beta (relative error about 1e-13, far below any δ used).
const exactPACLimit = 20000

// MinDelta is the smallest δ PAC calibration takes: below it the binomial
// tail is beyond float64's resolution near 1 and no n is practical.
const MinDelta = 1e-12

// MaxDelta bounds the δ a calibration or OOD test is given: δ is the
// chance, over the calibration draw, that the guarantee fails, not a
// confidence level, and from δ = 1/2 on the PAC rank falls to about the
// median of its binomial, below the marginal rank, so that the set (or
// test) is looser than without δ: an OOD test at δ = 0.9 flagged 5.7% of
// fresh in-distribution inputs at α_ood = 0.05, 4.9% without δ.
const MaxDelta = 0.5

// DeltaHint is what an error refusing a δ of MaxDelta or more says.
const DeltaHint = "δ is the chance, over the calibration draw, that the guarantee fails — not a confidence level: 0.05 or 0.1, not 0.9 or 0.95"

// CheckGivenDelta returns an error unless MinDelta ≤ δ < MaxDelta: what a
// caller's δ must be.
func CheckGivenDelta(delta float64) error {
	if !(delta >= MinDelta && delta < MaxDelta) {
		return fmt.Errorf("conformal: delta %v: want %v ≤ δ < %v (%s)", delta, MinDelta, MaxDelta, DeltaHint)
	}
	return nil
}

// CheckDelta returns an error unless MinDelta ≤ δ < 1: what a set file's
// δ may be, and PACRank's.
func CheckDelta(delta float64) error {
	if !(delta >= MinDelta && delta < 1) {
		return fmt.Errorf("conformal: delta must lie in [%v, 1), got %v", MinDelta, delta)
	}
	return nil
}

// PACRank is the training-conditional (PAC) rank: the smallest r in 1..n
// with BinomCDF(r − 1; n, 1 − α) ≥ 1 − δ, or n + 1 when none qualifies.
// The r-th smallest of n exchangeable calibration scores covers a fresh
// score with probability F(q̂_r) ~ Beta(r, n + 1 − r), and
// P(Beta(r, n + 1 − r) ≥ 1 − α) = BinomCDF(r − 1; n, 1 − α): with this r,
// with probability ≥ 1 − δ over the calibration draw the set's coverage is
// at least 1 − α (Vovk 2012, "Conditional validity of inductive conformal
// predictors"). α and δ are taken as the decimals they print as, and for
// n ≤ 20000 the CDF is summed in exact integer arithmetic.
func PACRank(n int, alpha, delta float64) (int, error) {
	if err := CheckAlpha(alpha); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if n < 1 || n > MaxCalibration {
		return 0, fmt.Errorf("conformal: PAC rank of %d calibration scores: want 1 to 2⁵³", n)
	}
	// Exact integers while they stay small: n and the decimals' digits
	// (α = 0.1234567890123456 would make each term thousands of digits
	// longer).
	if n <= exactPACLimit && decimalBits(alpha)+decimalBits(delta) <= 64 {
		return exactPACRank(n, alpha, delta)
	}
	return floatPACRank(n, alpha, delta), nil
}

// decimalBits is the size of x's decimal denominator in bits (64 for one
// that does not parse: the float path then).
func decimalBits(x float64) int {
	_, den, err := decimal("x", x)
	if err != nil {
		return 64
	}
	return den.BitLen()
}

// floatPACRank is PACRank through the regularised incomplete beta, on the
// upper tail: BinomCDF(r − 1; n, 1 − α) ≥ 1 − δ is P(Bin(n, 1 − α) ≥ r) =
// I_{1−α}(r, n − r + 1) ≤ δ, which keeps its precision for small δ (1 − δ
// would round). The tail decreases in r: bisect.
func floatPACRank(n int, alpha, delta float64) int {
	tail := func(r int) float64 { return mathext.RegIncBeta(float64(r), float64(n-r+1), 1-alpha) }
	if tail(n) > delta {
		return n + 1
	}
	lo, hi := 0, n // tail(lo) > δ ≥ tail(hi); tail(0) = 1
	for lo+1 < hi {
		m := (lo + hi) / 2
		if tail(m) <= delta {
			hi = m
		} else {
			lo = m
		}
	}
	return hi
}

// decimal reads x as the decimal it prints as: numerator and denominator.
func decimal(name string, x float64) (num, den *big.Int, err error) {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok {
		return nil, nil, fmt.Errorf("conformal: cannot read %s %v as a decimal", name, x)
	}
	return r.Num(), r.Denom(), nil
}

// exactPACRank sums the binomial probabilities as integers: with 1 − α =
// a/b and α = c/b, BinomCDF(k) ≥ 1 − δ (δ = e/f) exactly when
// f·Σ_{i≤k} C(n,i)·a^i·c^(n−i) ≥ (f − e)·b^n. Each term follows from the
// last by a multiplication and an exact division by small integers.
func exactPACRank(n int, alpha, delta float64) (int, error) {
	c, b, err := decimal("alpha", alpha)
	if err != nil {
		return 0, err
	}
	e, f, err := decimal("delta", delta)
	if err != nil {
		return 0, err
	}
	a := new(big.Int).Sub(b, c)
	target := new(big.Int).Exp(b, big.NewInt(int64(n)), nil)
	target.Mul(target, new(big.Int).Sub(f, e))
	// T_0 = c^n; T_{i+1} = T_i·(n−i)·a / ((i+1)·c) is C(n,i+1)·a^(i+1)·c^(n−i−1).
	term := new(big.Int).Exp(c, big.NewInt(int64(n)), nil)
	sum := new(big.Int)
	lhs := new(big.Int)
	for r := 1; r <= n; r++ {
		k := r - 1
		if k > 0 {
			term.Mul(term, big.NewInt(int64(n-k+1)))
			term.Mul(term, a)
			term.Quo(term, big.NewInt(int64(k)))
			term.Quo(term, c)
		}
		sum.Add(sum, term)
		if lhs.Mul(sum, f).Cmp(target) >= 0 {
			return r, nil
		}
	}
	return n + 1, nil
}

// minPACCalibration is the smallest n with PACRank(n, α, δ) ≤ n: the
// smallest n with (1 − α)^n ≤ δ, n = ⌈log δ / log(1 − α)⌉ up to rounding,
// checked exactly.
func minPACCalibration(alpha, delta float64) int {
	e := math.Ceil(math.Log(delta) / math.Log1p(-alpha))
	if e > MaxCalibration/2 {
		return 0 // needs tells
	}
	est := max(1, int(e))
	for n := max(1, est-2); n <= est+2; n++ {
		if r, err := PACRank(n, alpha, delta); err != nil || r <= n {
			return n
		}
	}
	return est // r = n first qualifies at (1 − α)^n ≤ δ: the estimate, up to rounding
}
