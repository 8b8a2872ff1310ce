//go:build goexperiment.simd && amd64

package geometry

import (
	"math"
	"simd/archsimd"

	"github.com/ccsets/ccs/internal/kernel"
)

var useAVX512 = archsimd.X86.AVX512()

// Zero vectors, loaded from memory. The compiler makes a broadcast 0 with
// the legacy-SSE XORPS, and may schedule it after AVX-512 instructions,
// where it pays the AVX–SSE transition penalty (measured: 0.5 µs per
// sixteen-row block in normSmall32's backward pass).
var (
	zero32   archsimd.Float32x16
	zero64   archsimd.Float64x8
	zero64x4 archsimd.Float64x4
)

// VectorKernels reports whether training runs on the float32 vector kernels:
// in this build, when the processor has AVX-512.
func VectorKernels() bool { return useAVX512 }

// fastRows is fastRowScalar on each row, sixteen coordinates at a time with
// AVX-512: log2 from the bits and kernel's Q polynomial, 2^a as
// P(a − ⌊a⌋)·2^⌊a⌋ with VSCALEFPS, the terms summed in sixteen float32 lanes.
// The last partial vector is loaded zero-padded; zero lanes add 0; a lane
// outside float32's normal range adds +Inf (the row is rescored exactly).
func fastRows(dst []float64, m, p, diffs []float32) {
	d := len(m)
	if !useAVX512 {
		for i := range dst {
			dst[i] = fastRowScalar(m, p, diffs[i*d:(i+1)*d])
		}
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
// (fastRows, pnorm32), broadcast once at start-up when the processor has
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
	for i, v := range []float32{kernel.Log2Q0, kernel.Log2Q1, kernel.Log2Q2, kernel.Log2Q3, kernel.Log2Q4, kernel.Log2Q5, kernel.Log2Q6} {
		*[]*archsimd.Float32x16{&c.q0, &c.q1, &c.q2, &c.q3, &c.q4, &c.q5, &c.q6}[i] = archsimd.BroadcastFloat32x16(v)
	}
	for i, v := range []float32{kernel.Exp2P0, kernel.Exp2P1, kernel.Exp2P2, kernel.Exp2P3, kernel.Exp2P4, kernel.Exp2P5} {
		*[]*archsimd.Float32x16{&c.p0, &c.p1, &c.p2, &c.p3, &c.p4, &c.p5}[i] = archsimd.BroadcastFloat32x16(v)
	}
}

// log2x16 is log2 of the lanes whose bits are those of a positive normal
// float32 (kernel.Log2Poly's polynomial on the mantissa).
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

// exp2x16 is 2^a (kernel.Exp2Poly's polynomial, scaled by VSCALEFPS:
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
