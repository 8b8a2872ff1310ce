package kernel

import "math"

// ExpMaxRelErr is the relative error bound of Exp32 against math.Exp, for
// arguments in [ExpMin, ExpMax], as TestExp32Bound checks on a fine grid.
const ExpMaxRelErr = 1e-6

// The range where Exp32 is accurate. Below ExpMin it returns 0, above ExpMax
// +Inf (float32's range ends there).
const (
	ExpMin = -87.0
	ExpMax = 88.0
)

// Exp32 returns e^x computed in float32 arithmetic: x = n·ln2 + r with
// |r| ≤ ln2/2 (ln2 split in two parts, Cody–Waite), e^r by Cephes' degree-7
// polynomial, and 2^n put into the exponent bits. Relative error ≤
// ExpMaxRelErr on [ExpMin, ExpMax]; 0 below, +Inf above, NaN for NaN.
func Exp32(x float32) float32 {
	switch {
	case x < ExpMin:
		return 0
	case x > ExpMax:
		return float32(math.Inf(1))
	case x != x:
		return x
	}
	const (
		log2e = 1.44269504088896341
		c1    = 0.693359375
		c2    = -2.12194440e-4
	)
	n := float32(math.RoundToEven(float64(x * log2e)))
	r := x - n*c1 - n*c2
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	p = p*r*r + r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}
