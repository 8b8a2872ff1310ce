// Package fastfloat reads the decimal numbers text tables of embeddings
// are written in — "-0.12345678", "1.234567890123456789e-01" — several
// times faster than strconv.ParseFloat, and never differently: where a
// number is not one it reads exactly (a word, hex, inf, an exponent beyond
// ±22, a value near a float32 rounding boundary) it says so, and the
// caller parses it with strconv.
//
// The exact reading is Clinger's fast path (W. D. Clinger, "How to read
// floating point numbers accurately", PLDI 1990), which strconv also tries
// first: a decimal m·10^e with m ≤ 2^53 and |e| ≤ 22 is one correctly
// rounded float64 multiplication or division of two exact float64s. A
// number with more significant digits (NumPy's savetxt writes 19, Python's
// repr up to 17) lies strictly between m·10^e and (m+1)·10^e for its first
// digits m: where both ends round to the same float32, so does every number
// between them, the number itself included.
package fastfloat

import "math"

// maxLen is the longest number read here: strconv reads a longer one by
// its first 800 digits and caps its exponent, which this would not (and
// no table writes one).
const maxLen = 64

// pow10 holds the powers of ten float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimal splits s, written [+-]digits[.digits][(e|E)[+-]digits] (at
// least one digit before the exponent; ".5" and "5." too, as strconv reads
// them), into its sign, its first 19 significant digits m and the power of
// ten e that makes them its value, and whether nonzero digits were left
// out past those 19 (trunc). ok is false for anything else.
func decimal(s string) (neg bool, m uint64, e int, trunc, ok bool) {
	if len(s) > maxLen {
		return false, 0, 0, false, false
	}
	i := 0
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		i++
	}
	start := i
	for i < len(s) && s[i] == '0' { // leading zeros
		i++
	}
	nd := 0 // significant digits seen
	for ; i < len(s) && s[i]-'0' < 10; i++ {
		if nd < 19 {
			m = m*10 + uint64(s[i]-'0')
		} else {
			trunc = trunc || s[i] != '0'
			e++
		}
		nd++
	}
	digits := i > start
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		if nd == 0 { // 0.000123: zeros before the first significant digit
			for i < len(s) && s[i] == '0' {
				i++
			}
			e -= i - f
		}
		for ; i < len(s) && s[i]-'0' < 10; i++ {
			if nd < 19 {
				m = m*10 + uint64(s[i]-'0')
				e--
			} else {
				trunc = trunc || s[i] != '0'
			}
			nd++
		}
		digits = digits || i > f
	}
	if !digits {
		return false, 0, 0, false, false
	}
	if i == len(s) {
		return neg, m, e, trunc, true
	}
	if s[i] != 'e' && s[i] != 'E' {
		return false, 0, 0, false, false
	}
	i++
	eneg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		eneg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return false, 0, 0, false, false
	}
	x := 0
	for ; i < len(s); i++ {
		if s[i]-'0' >= 10 || x > 10000 { // no digit, or far beyond any float's range
			return false, 0, 0, false, false
		}
		x = x*10 + int(s[i]-'0')
	}
	if eneg {
		x = -x
	}
	return neg, m, e + x, trunc, true
}

// exact is m·10^e correctly rounded to float64, where Clinger's fast path
// gives it.
func exact(m uint64, e int) (float64, bool) {
	if m > 1<<53 {
		return 0, false
	}
	f := float64(m)
	switch {
	case e == 0:
		return f, true
	case e > 0 && e < len(pow10):
		return f * pow10[e], true
	case e < 0 && -e < len(pow10):
		return f / pow10[-e], true
	}
	return 0, false
}

// bounds gives, for a decimal whose digits were cut (or that has more of
// them than 2^53 holds), the two float64s that m·10^e and (m+1)·10^e round
// to, for m cut further to below 2^53: the number lies strictly between.
func bounds(m uint64, e int) (lo, hi float64, ok bool) {
	for m >= 1<<53 {
		m /= 10
		e++
	}
	lo, ok1 := exact(m, e)
	hi, ok2 := exact(m+1, e)
	return lo, hi, ok1 && ok2
}

// Float64 returns strconv.ParseFloat(s, 64)'s value where ok is true:
// where s is a decimal Clinger's fast path reads exactly.
func Float64(s string) (float64, bool) {
	neg, m, e, trunc, ok := decimal(s)
	if !ok || trunc {
		return 0, false
	}
	v, ok := exact(m, e)
	if neg {
		v = -v
	}
	return v, ok
}

// Narrow returns x, float32 of strconv.ParseFloat(s, 64) — the float32 the
// float64 s names is stored in, as a float64 array's is — and v, a float64
// that is that value or, where s has more digits than float64's exact
// reading takes, one within 2·10^-15 of it (relatively) on the same side of every integer
// (so v is an integer exactly where the value is). ok is false where s is
// not read so; x is then never 0 or infinite (|v| lies in [1e-22, 1e38)
// or is 0).
func Narrow(s string) (v float64, x float32, ok bool) {
	neg, m, e, trunc, ok := decimal(s)
	if !ok {
		return 0, 0, false
	}
	if !trunc && m <= 1<<53 {
		if v, ok = exact(m, e); !ok {
			return 0, 0, false
		}
	} else {
		lo, hi, ok := bounds(m, e)
		if !ok || float32(lo) != float32(hi) || math.Floor(lo) == lo || math.Floor(lo) != math.Floor(hi) {
			return 0, 0, false
		}
		v = lo
	}
	if neg {
		v = -v
	}
	return v, float32(v), true
}

// Float32 returns strconv.ParseFloat(s, 32)'s value where ok is true: the
// float32 nearest the decimal s itself (not the float32 of its float64).
func Float32(s string) (float32, bool) {
	neg, m, e, trunc, ok := decimal(s)
	if !ok {
		return 0, false
	}
	var x float32
	if !trunc && m <= 1<<53 {
		v, ok := exact(m, e)
		// Rounding twice, to float64 then float32, is rounding once unless
		// the float64 is a float32 rounding boundary the decimal is not.
		if !ok || midpoint(v) {
			return 0, false
		}
		x = float32(v)
	} else {
		lo, hi, ok := bounds(m, e)
		if !ok || midpoint(lo) || midpoint(hi) || float32(lo) != float32(hi) {
			return 0, false
		}
		x = float32(lo)
	}
	if neg {
		x = -x
	}
	return x, true
}

// midpoint says whether v, a float64 in float32's normal range or 0, lies
// halfway between two adjacent float32s: the 29 bits float32 drops are
// 1000…0.
func midpoint(v float64) bool {
	return math.Float64bits(v)&(1<<29-1) == 1<<28
}
