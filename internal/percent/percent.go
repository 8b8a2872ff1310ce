// Package percent writes fractions as percentages that never round a
// rate short of 100% up to it, nor one above 0% down to it.
package percent

import (
	"strconv"
	"strings"
)

// Format writes a fraction x as a percent with digits decimals, or up to
// two more where digits would round it to 100% or 0% that it is not (one
// negative of 20 000 inside the sets is an exclusion of 99.995%, which
// "100.00%" hid), and as ">99.99…%" or "<0.00…1%" where those still
// would.
func Format(x float64, digits int) string {
	v := 100 * x
	for p := digits; p <= digits+2; p++ {
		s := strconv.FormatFloat(v, 'f', p, 64)
		if (v >= 100 || s != strconv.FormatFloat(100, 'f', p, 64)) && (v <= 0 || strings.Trim(s, "0.") != "") {
			return s + "%"
		}
	}
	p := digits + 2
	if v > 50 {
		return ">" + strconv.FormatFloat(100-pow10(-p), 'f', p, 64) + "%"
	}
	return "<" + strconv.FormatFloat(pow10(-p), 'f', p, 64) + "%"
}

// pow10 is 10ⁿ.
func pow10(n int) float64 {
	v := 1.0
	for ; n < 0; n++ {
		v /= 10
	}
	for ; n > 0; n-- {
		v *= 10
	}
	return v
}
