package fastfloat

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestReview45MidpointDigits: float32 rounding boundaries and integers
// written with 18..40 significant digits (cut, rounded, nudged by one in
// the last digit), both signs: every reading agrees with strconv.
func TestReview45MidpointDigits(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 45))
	n := 0
	for range 300000 {
		var m float64
		switch r.IntN(3) {
		case 0: // a float32 midpoint
			m = math.Float64frombits(math.Float64bits(float64(float32(r.NormFloat64()*math.Pow(10, float64(r.IntN(30)-15))))) | 1<<28)
		case 1: // near an integer
			m = math.Round(r.NormFloat64()*math.Pow(10, float64(r.IntN(16)))) + float64(r.IntN(3)-1)*math.Pow(2, -float64(r.IntN(40)))
		default:
			m = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		}
		if m == 0 || math.IsInf(m, 0) {
			continue
		}
		f := new(big.Float).SetFloat64(m)
		digits := 18 + r.IntN(23)
		s := f.Text('e', digits-1)
		if r.IntN(2) == 0 { // nudge the last digit
			mant, exp, _ := cut(s)
			b, _ := new(big.Int).SetString(mant, 10)
			b.Add(b, big.NewInt(int64(r.IntN(3)-1)))
			s = b.String() + "e" + strconv.Itoa(exp)
		}
		if r.IntN(3) == 0 {
			s = f.Text('f', r.IntN(30)+1)
		}
		agree(t, s)
		n++
	}
	t.Logf("%d numbers", n)
}

// cut splits "d.ddde±x" into its digits (sign kept) and the exponent of
// the last digit.
func cut(s string) (string, int, bool) {
	var mant []byte
	i := 0
	for ; i < len(s) && s[i] != 'e'; i++ {
		if s[i] != '.' {
			mant = append(mant, s[i])
		}
	}
	x, _ := strconv.Atoi(s[i+1:])
	nd := len(mant)
	if mant[0] == '-' {
		nd--
	}
	return string(mant), x - (nd - 1), true
}
