package kernel

import "math"

// LogMaxErr bounds Log32's error: |Log32(y) − ln y| ≤ LogMaxErr·max(1, |ln y|)
// for normal positive float32 y, as TestLog32Bound checks.
const LogMaxErr = 2e-7

// The mantissa polynomial of Cephes' logf, for f = m − 1 with m in
// [√½, √2): ln m = f − f²/2 + f³·P(f).
const (
	logP0 = 7.0376836292e-2
	logP1 = -1.1514610310e-1
	logP2 = 1.1676998740e-1
	logP3 = -1.2420140846e-1
	logP4 = 1.4249322787e-1
	logP5 = -1.6668057665e-1
	logP6 = 2.0000714765e-1
	logP7 = -2.4999993993e-1
	logP8 = 3.3333331174e-1
	// ln 2 in two parts, as Exp32's.
	ln2Hi = 0.693359375
	ln2Lo = -2.12194440e-4
)

// Log32 returns ln y in float32 arithmetic: y = 2^k·m with m in [√½, √2)
// taken from the bits, then Cephes' logf polynomial. Error ≤
// LogMaxErr·max(1, |ln y|) for normal y > 0; −Inf for 0, NaN below 0 and for
// NaN, +Inf for +Inf. Subnormal y are scaled into the normal range first.
func Log32(y float32) float32 {
	switch {
	case y == 0:
		return float32(math.Inf(-1))
	case !(y > 0):
		return float32(math.NaN())
	case y > math.MaxFloat32:
		return y
	}
	var k int32
	if y < 0x1p-126 { // subnormal: scale by 2^23
		y *= 0x1p23
		k = -23
	}
	bits := math.Float32bits(y)
	k += int32(bits>>23) - 127
	m := math.Float32frombits(bits&0x007fffff | 0x3f800000) // [1, 2)
	if m > math.Sqrt2 {
		m *= 0.5
		k++
	}
	f := m - 1
	z := f * f
	p := float32(logP0)
	p = p*f + logP1
	p = p*f + logP2
	p = p*f + logP3
	p = p*f + logP4
	p = p*f + logP5
	p = p*f + logP6
	p = p*f + logP7
	p = p*f + logP8
	// float32(k) without CVTSI2SS, which only replaces the low lane of its
	// register and so waits for whatever last wrote it (the previous call's
	// arithmetic): 1.5·2²³ + k has k in its low mantissa bits.
	kf := math.Float32frombits(0x4b400000+uint32(k)) - 0x1.8p23
	r := p*f*z + kf*ln2Lo - 0.5*z
	return f + r + kf*ln2Hi
}
