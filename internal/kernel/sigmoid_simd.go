//go:build goexperiment.simd && amd64

package kernel

import (
	"math"
	"simd/archsimd"
)

// sig8 holds Sigmoids' constants, broadcast once at start-up when the
// processor has AVX-512 (broadcasting them per call cost more than a block).
var sig8 struct {
	one, zero, inf, log2e, ln2hi, ln2lo, lowX archsimd.Float64x8
	absM                                      archsimd.Int64x8
	c                                         [13]archsimd.Float64x8 // 1/k!, k = 12 … 0
}

func init() {
	if !useAVX512 {
		return
	}
	c := &sig8
	c.one = archsimd.BroadcastFloat64x8(1)
	c.zero = archsimd.BroadcastFloat64x8(0)
	c.inf = archsimd.BroadcastFloat64x8(math.Inf(1))
	c.log2e = archsimd.BroadcastFloat64x8(math.Log2E)
	c.ln2hi = archsimd.BroadcastFloat64x8(-6.93147180369123816490e-01) // fdlibm's split of ln 2, negated
	c.ln2lo = archsimd.BroadcastFloat64x8(-1.90821492927058770002e-10)
	c.lowX = archsimd.BroadcastFloat64x8(-746) // e^−746 rounds to 0
	c.absM = archsimd.BroadcastInt64x8(math.MaxInt64)
	// e^r to within 2.3e-16 relative for |r| ≤ ln2/2: the first omitted
	// Taylor term, r¹³/13!, is below 1.7e-16.
	f := 1.0 // 12!
	for k := 2; k <= 12; k++ {
		f *= float64(k)
	}
	for k := 12; k >= 0; k-- {
		c.c[12-k] = archsimd.BroadcastFloat64x8(1 / f)
		if k > 0 {
			f /= float64(k)
		}
	}
	archsimd.ClearAVXUpperBits()
}

// Sigmoids writes sig_k = σ(T·(φ_k − t)) and der_k = T·σ·(1 − σ) for each
// score φ_k: sigmoidsPortable's, eight scores at a time in float64 where the
// processor has AVX-512: with z = e^{−|u|} (Cody–Waite reduction by ln 2,
// the Taylor polynomial of degree 12, VSCALEFPD), σ(u) = (u ≥ 0 ? 1 : z)/(1+z)
// and σ'(u) = T·z/(1+z)², which keeps its relative accuracy in both tails
// (T·σ·(1−σ) loses it where σ rounds to 1). The last len(phi) mod 8
// scores, and any whose u is not finite, are computed by sigmoidsPortable, so
// a block's results do not depend on what follows it but may differ from
// the scalar form in the last bits. TestSigmoids bounds the difference from
// the closed forms.
func Sigmoids(T, t float64, phi, sig, der []float64) {
	n8 := len(phi) &^ 7
	if !useAVX512 || n8 == 0 {
		sigmoidsPortable(T, t, phi, sig, der)
		return
	}
	c := &sig8
	tv, t0 := archsimd.BroadcastFloat64x8(T), archsimd.BroadcastFloat64x8(t)
	bad := false
	for lo := 0; lo < n8; lo += 8 {
		u := tv.Mul(archsimd.LoadFloat64x8Slice(phi[lo:]).Sub(t0)) // T·(φ − t), as the scalar form
		au := u.AsInt64x8().And(c.absM).AsFloat64x8()
		if au.Less(c.inf).ToBits() != 0xff { // ±Inf, NaN
			bad = true
		}
		x := c.zero.Sub(au).Max(c.lowX)
		k := x.Mul(c.log2e).RoundToEvenScaled(0)
		r := k.MulAdd(c.ln2hi, x)
		r = k.MulAdd(c.ln2lo, r)
		e := c.c[0]
		for _, ck := range c.c[1:] {
			e = e.MulAdd(r, ck)
		}
		z := e.Scale(k) // e^{−|u|}
		inv := c.one.Div(c.one.Add(z))
		z.Merge(c.one, u.Less(c.zero)).Mul(inv).StoreSlice(sig[lo:]) // u ≥ 0: 1/(1+z)
		tv.Mul(z).Mul(inv).Mul(inv).StoreSlice(der[lo:])
	}
	archsimd.ClearAVXUpperBits()
	if bad {
		for j, v := range phi[:n8] {
			if u := T * (v - t); math.IsInf(u, 0) || math.IsNaN(u) {
				sigmoidsPortable(T, t, phi[j:j+1], sig[j:j+1], der[j:j+1])
			}
		}
	}
	sigmoidsPortable(T, t, phi[n8:], sig[n8:], der[n8:])
}
