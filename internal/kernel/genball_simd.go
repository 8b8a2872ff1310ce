//go:build goexperiment.simd && amd64

package kernel

import (
	"math"
	"simd/archsimd"
)

// ExpRow writes c_j = log m_j + L_j and e_j = exp(p_j·c_j) (Exp32) for one
// row of prepared logarithms L and returns Σ_j e_j in float64: sixteen
// coordinates at a time with AVX-512 (expRow16), eight with AVX2 and FMA (the
// same float32 exp, Exp32's reduction and polynomial, lane by lane), else
// portable.
func ExpRow(logm, p, row, e, c []float32) float64 {
	d := len(row)
	if useAVX512 && d >= 16 {
		return expRow16(logm, p, row, e, c)
	}
	if !useAVX2 || d < 8 {
		return expRowPortable(logm, p, row, e, c)
	}
	var (
		minX  = archsimd.BroadcastFloat32x8(ExpMin)
		maxX  = archsimd.BroadcastFloat32x8(ExpMax)
		log2e = archsimd.BroadcastFloat32x8(1.44269504088896341)
		c1    = archsimd.BroadcastFloat32x8(-0.693359375)
		c2    = archsimd.BroadcastFloat32x8(2.12194440e-4)
		k0    = archsimd.BroadcastFloat32x8(1.9875691500e-4)
		k1    = archsimd.BroadcastFloat32x8(1.3981999507e-3)
		k2    = archsimd.BroadcastFloat32x8(8.3334519073e-3)
		k3    = archsimd.BroadcastFloat32x8(4.1665795894e-2)
		k4    = archsimd.BroadcastFloat32x8(1.6666665459e-1)
		k5    = archsimd.BroadcastFloat32x8(5.0000001201e-1)
		one   = archsimd.BroadcastFloat32x8(1)
		inf   = archsimd.BroadcastFloat32x8(float32(math.Inf(1)))
		bias  = archsimd.BroadcastInt32x8(127)
	)
	acc0, acc1 := zero64x4, zero64x4
	j := 0
	for ; j+8 <= d; j += 8 {
		cj := archsimd.LoadFloat32x8Slice(logm[j:]).Add(archsimd.LoadFloat32x8Slice(row[j:]))
		x := archsimd.LoadFloat32x8Slice(p[j:]).Mul(cj)
		inRange := x.GreaterEqual(minX) // below ExpMin the result is exactly 0
		finite := x.LessEqual(maxX)     // above ExpMax it is +Inf, as Exp32's
		x = x.Max(minX).Min(maxX)
		n := x.Mul(log2e).RoundToEven()
		r := n.MulAdd(c1, x) // x − n·0.693359375
		r = n.MulAdd(c2, r)  // − n·(−2.12194440e-4)
		q := k0.MulAdd(r, k1)
		q = q.MulAdd(r, k2)
		q = q.MulAdd(r, k3)
		q = q.MulAdd(r, k4)
		q = q.MulAdd(r, k5)
		q = q.Mul(r).MulAdd(r, r).Add(one) // q·r·r + r + 1
		pow2 := n.ConvertToInt32().Add(bias).ShiftAllLeft(23).AsFloat32x8()
		ej := q.Mul(pow2).Masked(inRange).Merge(inf, finite)
		ej.StoreSlice(e[j:])
		cj.StoreSlice(c[j:])
		acc0 = acc0.Add(ej.GetLo().ConvertToFloat64())
		acc1 = acc1.Add(ej.GetHi().ConvertToFloat64())
	}
	var lanes [4]float64
	acc0.Add(acc1).Store(&lanes)
	archsimd.ClearAVXUpperBits() // before the scalar code that follows (ClearUpper)
	phi := lanes[0] + lanes[1] + lanes[2] + lanes[3]
	if j < d {
		phi += expRowPortable(logm[j:], p[j:], row[j:], e[j:], c[j:])
	}
	return phi
}

// exp16 holds the constants of expRow16, broadcast once (in init, when
// the processor has AVX-512): broadcasting them on every row cost as much as
// the row itself (measured on the fast score).
var exp16 exp16Consts

type exp16Consts struct {
	minX, maxX, log2e, c1, c2, k0, k1, k2, k3, k4, k5, one, inf archsimd.Float32x16
}

// exp32x16 is Exp32 on sixteen lanes: its reduction and polynomial, 2^n by
// VSCALEFPS, exactly 0 below ExpMin (so that LogZero's products vanish) and
// +Inf above ExpMax.
func exp32x16(k *exp16Consts, x archsimd.Float32x16) archsimd.Float32x16 {
	inRange, finite := x.GreaterEqual(k.minX), x.LessEqual(k.maxX)
	x = x.Max(k.minX).Min(k.maxX)
	n := x.Mul(k.log2e).RoundToEvenScaled(0)
	r := n.MulAdd(k.c1, x) // x − n·0.693359375
	r = n.MulAdd(k.c2, r)  // − n·(−2.12194440e-4)
	q := k.k0.MulAdd(r, k.k1)
	q = q.MulAdd(r, k.k2)
	q = q.MulAdd(r, k.k3)
	q = q.MulAdd(r, k.k4)
	q = q.MulAdd(r, k.k5)
	e := q.Mul(r).MulAdd(r, r).Add(k.one).Scale(n) // (q·r·r + r + 1)·2^n
	return e.Masked(inRange).Merge(k.inf, finite)
}

func init() {
	if !useAVX512 {
		return
	}
	exp16.minX = archsimd.BroadcastFloat32x16(ExpMin)
	exp16.maxX = archsimd.BroadcastFloat32x16(ExpMax)
	exp16.inf = archsimd.BroadcastFloat32x16(float32(math.Inf(1)))
	exp16.log2e = archsimd.BroadcastFloat32x16(1.44269504088896341)
	exp16.c1 = archsimd.BroadcastFloat32x16(-0.693359375)
	exp16.c2 = archsimd.BroadcastFloat32x16(2.12194440e-4)
	exp16.k0 = archsimd.BroadcastFloat32x16(1.9875691500e-4)
	exp16.k1 = archsimd.BroadcastFloat32x16(1.3981999507e-3)
	exp16.k2 = archsimd.BroadcastFloat32x16(8.3334519073e-3)
	exp16.k3 = archsimd.BroadcastFloat32x16(4.1665795894e-2)
	exp16.k4 = archsimd.BroadcastFloat32x16(1.6666665459e-1)
	exp16.k5 = archsimd.BroadcastFloat32x16(5.0000001201e-1)
	exp16.one = archsimd.BroadcastFloat32x16(1)
	archsimd.ClearAVXUpperBits()
}

// expRow16 is ExpRow sixteen coordinates at a time with AVX-512
// (exp32x16); the row sum in float64. A tail shorter than 16 goes to the
// portable kernel.
func expRow16(logm, p, row, e, c []float32) float64 {
	d := len(row)
	k := &exp16
	acc := zero64
	j := 0
	for ; j+16 <= d; j += 16 {
		cj := archsimd.LoadFloat32x16Slice(logm[j:]).Add(archsimd.LoadFloat32x16Slice(row[j:]))
		ej := exp32x16(k, archsimd.LoadFloat32x16Slice(p[j:]).Mul(cj))
		ej.StoreSlice(e[j:])
		cj.StoreSlice(c[j:])
		acc = acc.Add(ej.GetLo().ConvertToFloat64()).Add(ej.GetHi().ConvertToFloat64())
	}
	var lanes [8]float64
	acc.Store(&lanes)
	archsimd.ClearAVXUpperBits()
	phi := lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7]
	if j < d {
		phi += expRowPortable(logm[j:], p[j:], row[j:], e[j:], c[j:])
	}
	return phi
}

// AddWeighted adds w·e_j to sumE_j and w·e_j·c_j to sumEC_j, eight
// coordinates at a time with AVX-512 (the same float64 products and sums as
// the portable form, so the same results to the bit where its multiply-adds
// are not fused).
func AddWeighted(sumE, sumEC []float64, w float64, e, c []float32) {
	d := len(e)
	if !useAVX512 || d < 8 {
		addWeightedPortable(sumE, sumEC, w, e, c)
		return
	}
	wv := archsimd.BroadcastFloat64x8(w)
	j := 0
	for ; j+8 <= d; j += 8 {
		we := archsimd.LoadFloat32x8Slice(e[j:]).ConvertToFloat64().Mul(wv)
		ce := archsimd.LoadFloat32x8Slice(c[j:]).ConvertToFloat64()
		archsimd.LoadFloat64x8Slice(sumE[j:]).Add(we).StoreSlice(sumE[j:])
		archsimd.LoadFloat64x8Slice(sumEC[j:]).Add(we.Mul(ce)).StoreSlice(sumEC[j:])
	}
	archsimd.ClearAVXUpperBits()
	if j < d {
		addWeightedPortable(sumE[j:], sumEC[j:], w, e[j:], c[j:])
	}
}

// ExpRowsSmall is the generalized ball's prepared kernel for d < 16 with
// AVX-512, where a vector along a row would be mostly empty: sixteen rows at
// a time, one per lane.
// A block's prepared logarithms are transposed so that coordinate j of the
// sixteen rows is one vector; e_j = exp(p_j·(log m_j + L_j)) is exp32x16, each row's sum is taken in float64 in
// coordinate order as expRowPortable's, and Σ_i w_i·e_ij and
// Σ_i w_i·e_ij·c_ij (into sumE and sumEC, when not nil) are summed in
// float64 lanes. weights is called once per block. It reports false, doing
// nothing, where it does not apply.
func ExpRowsSmall(logm, p []float32, sumE, sumEC, scores []float64, logs []float32, weights func(lo int, phi, w []float64)) bool {
	d := len(logm)
	if !useAVX512 || d >= 16 {
		return false
	}
	n := len(scores)
	grads := sumE != nil
	k := &exp16
	lt := make([]float32, d*16) // the block, transposed
	tr := newTransposer(d)
	var eb, cb []float32 // e and c of the block, transposed
	var acc []float64    // Σ w·e and Σ w·e·c per coordinate and lane, at (2j+0|1)·16
	if grads {
		eb, cb, acc = make([]float32, d*16), make([]float32, d*16), make([]float64, 2*d*16)
	}
	zero := zero64
	var w, phi [16]float64
	for lo := 0; lo < n; lo += 16 {
		hi := min(n, lo+16)
		if hi-lo == 16 {
			tr.transpose(lt, logs[lo*d:hi*d])
		} else {
			for j := range lt {
				lt[j] = LogZero // the padding: e = 0
			}
			for i := lo; i < hi; i++ {
				for j, v := range logs[i*d : (i+1)*d] {
					lt[j*16+i-lo] = v
				}
			}
		}
		acc0, acc1 := zero64, zero64
		for j := range d {
			cj := archsimd.BroadcastFloat32x16(logm[j]).Add(archsimd.LoadFloat32x16Slice(lt[j*16:]))
			ej := exp32x16(k, archsimd.BroadcastFloat32x16(p[j]).Mul(cj))
			if grads {
				ej.StoreSlice(eb[j*16:])
				cj.StoreSlice(cb[j*16:])
			}
			acc0 = acc0.Add(ej.GetLo().ConvertToFloat64())
			acc1 = acc1.Add(ej.GetHi().ConvertToFloat64())
		}
		if hi-lo == 16 {
			acc0.StoreSlice(scores[lo:])
			acc1.StoreSlice(scores[lo+8:])
		} else {
			acc0.StoreSlice(phi[:])
			acc1.StoreSlice(phi[8:])
		}
		archsimd.ClearAVXUpperBits()
		if hi-lo < 16 {
			copy(scores[lo:hi], phi[:])
		}
		if !grads {
			continue
		}
		clear(w[hi-lo:])
		weights(lo, scores[lo:hi], w[:hi-lo])
		w0, w1 := archsimd.LoadFloat64x8Slice(w[:]), archsimd.LoadFloat64x8Slice(w[8:])
		// Rows of weight 0 add nothing, as in AddWeighted's caller (not
		// 0·∞ = NaN).
		m0, m1 := w0.NotEqual(zero), w1.NotEqual(zero)
		for j := range d {
			e := archsimd.LoadFloat32x16Slice(eb[j*16:])
			c := archsimd.LoadFloat32x16Slice(cb[j*16:])
			we0 := e.GetLo().ConvertToFloat64().Mul(w0).Masked(m0)
			we1 := e.GetHi().ConvertToFloat64().Mul(w1).Masked(m1)
			a := acc[2*j*16:]
			archsimd.LoadFloat64x8Slice(a).Add(we0).StoreSlice(a)
			archsimd.LoadFloat64x8Slice(a[8:]).Add(we1).StoreSlice(a[8:])
			a = acc[(2*j+1)*16:]
			archsimd.LoadFloat64x8Slice(a).Add(we0.Mul(c.GetLo().ConvertToFloat64()).Masked(m0)).StoreSlice(a)
			archsimd.LoadFloat64x8Slice(a[8:]).Add(we1.Mul(c.GetHi().ConvertToFloat64()).Masked(m1)).StoreSlice(a[8:])
		}
		archsimd.ClearAVXUpperBits()
	}
	for j := range sumE {
		for l := range 16 {
			sumE[j] += acc[2*j*16+l]
			sumEC[j] += acc[(2*j+1)*16+l]
		}
	}
	return true
}

// FastPowRows writes Σ_j 2^(p_j·log2(m_j·|x_j|)) of each row of diffs into
// dst; a row with an m_j·|x_j| outside float32's normal range (other than
// 0) or a NaN scores +Inf. With AVX-512 sixteen coordinates at a time: log2 from the bits and kernel's Q polynomial, 2^a as
// P(a − ⌊a⌋)·2^⌊a⌋ with VSCALEFPS, the terms summed in sixteen float32 lanes.
// The last partial vector is loaded zero-padded; zero lanes add 0; a lane
// outside float32's normal range adds +Inf (the row is rescored exactly).
func FastPowRows(dst []float64, m, p, diffs []float32) {
	d := len(m)
	if !useAVX512 {
		fastPowRowsPortable(dst, m, p, diffs)
		return
	}
	// The constants as local values (a VPTERNLOGD cannot take a global
	// operand, which the compiler emits for the struct's fields).
	c := &pow16
	absMask, mantMsk, oneBits, bias, minBits, normSpan, zeroI, one, inf, q0, q1 := c.absMask, c.mantMsk, c.oneBits, c.bias, c.minBits, c.normSpan, c.zeroI, c.one, c.inf, c.q0, c.q1
	q2, q3, q4, q5, q6, p0, p1, p2, p3, p4, p5 := c.q2, c.q3, c.q4, c.q5, c.q6, c.p0, c.p1, c.p2, c.p3, c.p4, c.p5
	zero := zero32
	// Each row's sixteen lane sums go to a buffer and are summed in
	// float64 after VZEROUPPER: scalar SSE arithmetic between AVX-512
	// instructions pays the AVX–SSE transition on every row (measured).
	const rowsPer = 256
	lanes := make([]float32, 16*min(rowsPer, len(dst)))
	for i0 := 0; i0 < len(dst); i0 += rowsPer {
		i1 := min(len(dst), i0+rowsPer)
		for i := i0; i < i1; i++ {
			x := diffs[i*d : (i+1)*d]
			acc := zero
			term := func(xv, mv, pv archsimd.Float32x16) archsimd.Float32x16 {
				y := mv.Mul(xv.AsInt32x16().And(absMask).AsFloat32x16())
				bits := y.AsInt32x16()
				k := bits.ShiftAllRight(23).Sub(bias).ConvertToFloat32()
				f := bits.And(mantMsk).Or(oneBits).AsFloat32x16().Sub(one)
				q := q6.MulAdd(f, q5)
				q = q.MulAdd(f, q4)
				q = q.MulAdd(f, q3)
				q = q.MulAdd(f, q2)
				q = q.MulAdd(f, q1)
				q = q.MulAdd(f, q0)
				a := pv.Mul(f.MulAdd(q, k)) // p·(k + f·Q(f))
				fl := a.FloorScaled(0)
				t := a.Sub(fl)
				e := p5.MulAdd(t, p4)
				e = e.MulAdd(t, p3)
				e = e.MulAdd(t, p2)
				e = e.MulAdd(t, p1)
				e = e.MulAdd(t, p0)
				e = e.Scale(fl)
				// Normal y keep e; zero lanes (and padding) add 0; the rest
				// (subnormal, +Inf, NaN) +Inf.
				// (bits − 2²³ < 0x7f000000 unsigned: y in [2⁻¹²⁶, MaxFloat32].)
				e = e.Merge(inf, bits.Sub(minBits).AsUint32x16().Less(normSpan))
				return e.Masked(bits.NotEqual(zeroI))
			}
			j := 0
			for ; j+16 <= d; j += 16 {
				acc = acc.Add(term(archsimd.LoadFloat32x16Slice(x[j:]), archsimd.LoadFloat32x16Slice(m[j:]), archsimd.LoadFloat32x16Slice(p[j:])))
			}
			if j < d {
				acc = acc.Add(term(archsimd.LoadFloat32x16SlicePart(x[j:]), archsimd.LoadFloat32x16SlicePart(m[j:]), archsimd.LoadFloat32x16SlicePart(p[j:])))
			}
			acc.StoreSlice(lanes[16*(i-i0):])
		}
		archsimd.ClearAVXUpperBits()
		for i := i0; i < i1; i++ {
			var phi float64
			for _, v := range lanes[16*(i-i0) : 16*(i-i0+1)] {
				phi += float64(v)
			}
			dst[i] = phi
		}
	}
}

// pow16 holds the constants of the sixteen-lane 2^(p·log2 y) kernels
// (FastPowRows, pnorm32), broadcast once at start-up when the processor has
// AVX-512: broadcasting them on every call cost as much as a short row.
var pow16 pow16Consts

type pow16Consts struct {
	absMask, mantMsk, oneBits, bias, minBits, zeroI archsimd.Int32x16
	normSpan                                        archsimd.Uint32x16
	one, inf, ln2, q0, q1, q2, q3, q4, q5, q6       archsimd.Float32x16
	p0, p1, p2, p3, p4, p5                          archsimd.Float32x16
}

func init() {
	if !useAVX512 {
		return
	}
	c := &pow16
	c.absMask = archsimd.BroadcastInt32x16(0x7fffffff)
	c.mantMsk = archsimd.BroadcastInt32x16(0x007fffff)
	c.oneBits = archsimd.BroadcastInt32x16(0x3f800000)
	c.bias = archsimd.BroadcastInt32x16(127)
	c.minBits = archsimd.BroadcastInt32x16(0x00800000)
	c.zeroI = archsimd.BroadcastInt32x16(0)
	c.normSpan = archsimd.BroadcastUint32x16(0x7f000000)
	c.one = archsimd.BroadcastFloat32x16(1)
	c.inf = archsimd.BroadcastFloat32x16(float32(math.Inf(1)))
	c.ln2 = archsimd.BroadcastFloat32x16(math.Ln2)
	for i, v := range []float32{Log2Q0, Log2Q1, Log2Q2, Log2Q3, Log2Q4, Log2Q5, Log2Q6} {
		*[]*archsimd.Float32x16{&c.q0, &c.q1, &c.q2, &c.q3, &c.q4, &c.q5, &c.q6}[i] = archsimd.BroadcastFloat32x16(v)
	}
	for i, v := range []float32{Exp2P0, Exp2P1, Exp2P2, Exp2P3, Exp2P4, Exp2P5} {
		*[]*archsimd.Float32x16{&c.p0, &c.p1, &c.p2, &c.p3, &c.p4, &c.p5}[i] = archsimd.BroadcastFloat32x16(v)
	}
	archsimd.ClearAVXUpperBits()
}

// log2x16 is log2 of the lanes whose bits are those of a positive normal
// float32 (Log2Poly's polynomial on the mantissa).
func log2x16(c *pow16Consts, bits archsimd.Int32x16) archsimd.Float32x16 {
	k := bits.ShiftAllRight(23).Sub(c.bias).ConvertToFloat32()
	// The mantissa with 1's exponent; Add, not Or, which the compiler would
	// fuse with the And into a VPTERNLOGD it cannot encode with a memory
	// operand (the bits are disjoint, so they are the same).
	f := bits.And(c.mantMsk).Add(c.oneBits).AsFloat32x16().Sub(c.one)
	q := c.q6.MulAdd(f, c.q5)
	q = q.MulAdd(f, c.q4)
	q = q.MulAdd(f, c.q3)
	q = q.MulAdd(f, c.q2)
	q = q.MulAdd(f, c.q1)
	q = q.MulAdd(f, c.q0)
	return f.MulAdd(q, k)
}

// exp2x16 is 2^a (Exp2Poly's polynomial, scaled by VSCALEFPS:
// exactly 0 far below, +Inf far above).
func exp2x16(c *pow16Consts, a archsimd.Float32x16) archsimd.Float32x16 {
	fl := a.FloorScaled(0)
	t := a.Sub(fl)
	e := c.p5.MulAdd(t, c.p4)
	e = e.MulAdd(t, c.p3)
	e = e.MulAdd(t, c.p2)
	e = e.MulAdd(t, c.p1)
	e = e.MulAdd(t, c.p0)
	return e.Scale(fl)
}
