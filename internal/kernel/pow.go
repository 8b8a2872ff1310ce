package kernel

import "math"

// Error bounds of Log2Poly and Exp2Poly, as TestLog2PolyBound and
// TestExp2PolyBound check (the fits themselves reach 9.2e-7 and 2.4e-7;
// testdata/fitpow.py).
const (
	// Log2PolyErr bounds |Log2Poly(y) − log2 y| − |log2 y|·2⁻²³ for normal
	// positive float32 y (the second term is the rounding of the result).
	Log2PolyErr = 1.2e-6
	// Exp2PolyRelErr bounds |Exp2Poly(a) − 2^a| / 2^a for a in [−126, 128).
	Exp2PolyRelErr = 5e-7
)

// The polynomials, fitted by testdata/fitpow.py: log2(1+f) ≈ f·Q(f) and
// 2^t ≈ P(t) on [0, 1). The vector kernel of the generalized ball uses the
// same constants.
const (
	Log2Q0 = 1.4426765441894531
	Log2Q1 = -0.720753014087677
	Log2Q2 = 0.474651575088501
	Log2Q3 = -0.3292442262172699
	Log2Q4 = 0.19945797324180603
	Log2Q5 = -0.08348825573921204
	Log2Q6 = 0.016700226813554764

	Exp2P0 = 0.9999998211860657
	Exp2P1 = 0.6931546926498413
	Exp2P2 = 0.24014484882354736
	Exp2P3 = 0.05584478750824928
	Exp2P4 = 0.00897328369319439
	Exp2P5 = 0.0018823161954060197
)

// MinNormal32 is the smallest normal float32, 2⁻¹²⁶.
const MinNormal32 = 0x1p-126

// Log2Poly returns log2 y for normal positive float32 y: y = 2^k·(1+f) from
// the bits, then k + f·Q(f). It does not check its argument (0, subnormals,
// +Inf and NaN give meaningless finite values): callers test y against
// [MinNormal32, MaxFloat32] first.
func Log2Poly(y float32) float32 {
	bits := math.Float32bits(y)
	// float32(k) for the biased exponent e = k + 127, without CVTSI2SS
	// (which waits for the last writer of its register): 1.5·2²³ + e has e
	// in its low mantissa bits.
	k := math.Float32frombits(0x4b400000+bits>>23) - (0x1.8p23 + 127)
	f := math.Float32frombits(bits&0x007fffff|0x3f800000) - 1
	q := float32(Log2Q6)
	q = q*f + Log2Q5
	q = q*f + Log2Q4
	q = q*f + Log2Q3
	q = q*f + Log2Q2
	q = q*f + Log2Q1
	q = q*f + Log2Q0
	return k + f*q
}

// Exp2Poly returns 2^a: 2^⌊a⌋·P(a − ⌊a⌋). Below −126 it returns 0 (the vector
// kernel's VSCALEFPS gives subnormals there: both are within 2⁻¹²⁶ of
// 2^a), from 128 on +Inf; NaN gives NaN.
func Exp2Poly(a float32) float32 {
	switch {
	case a < -126:
		return 0
	case a >= 128:
		return float32(math.Inf(1))
	case a != a:
		return a
	}
	fl := float32(math.Floor(float64(a)))
	t := a - fl
	p := float32(Exp2P5)
	p = p*t + Exp2P4
	p = p*t + Exp2P3
	p = p*t + Exp2P2
	p = p*t + Exp2P1
	p = p*t + Exp2P0
	return p * math.Float32frombits(uint32(int32(fl)+127)<<23)
}
