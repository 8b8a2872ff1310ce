//go:build goexperiment.simd && amd64

package geometry

import (
	"math"
	"simd/archsimd"

	"github.com/ccsets/ccs/internal/kernel"
)

// pnormTrain is pnorm with u_k^p = 2^(p·log2 u_k) computed sixteen lanes at a
// time in float32 (the generalized ball's fast-score polynomials), S' and T
// summed in float32 lanes then float64. Rows shorter than 16, p = 2, and rows
// with a u_k below float32's normal range (other than 0) take pnorm; a tail
// shorter than 16 is computed exactly.
func pnormTrain(y []float64, p float64, up []float64) (phi, s, t float64) {
	d := len(y)
	if !useAVX512 || d < 16 || p == 2 {
		return pnorm(y, p, up)
	}
	var a float64
	for _, v := range y {
		a = math.Max(a, math.Abs(v))
	}
	if a == 0 {
		clear(up)
		return 0, 0, 0
	}
	var (
		inv      = archsimd.BroadcastFloat64x8(1 / a)
		absMask  = archsimd.BroadcastInt32x16(0x7fffffff)
		mantMsk  = archsimd.BroadcastInt32x16(0x007fffff)
		oneBits  = archsimd.BroadcastInt32x16(0x3f800000)
		bias     = archsimd.BroadcastInt32x16(127)
		minBits  = archsimd.BroadcastInt32x16(0x00800000)
		normSpan = archsimd.BroadcastUint32x16(0x7f000000)
		zeroI    = archsimd.BroadcastInt32x16(0)
		one      = archsimd.BroadcastFloat32x16(1)
		ln2      = archsimd.BroadcastFloat32x16(math.Ln2)
		pv       = archsimd.BroadcastFloat32x16(float32(p))
		sAcc     = archsimd.BroadcastFloat32x16(0)
		tAcc     = sAcc
		special  uint16
		q6       = archsimd.BroadcastFloat32x16(kernel.Log2Q6)
		q5       = archsimd.BroadcastFloat32x16(kernel.Log2Q5)
		q4       = archsimd.BroadcastFloat32x16(kernel.Log2Q4)
		q3       = archsimd.BroadcastFloat32x16(kernel.Log2Q3)
		q2       = archsimd.BroadcastFloat32x16(kernel.Log2Q2)
		q1       = archsimd.BroadcastFloat32x16(kernel.Log2Q1)
		q0       = archsimd.BroadcastFloat32x16(kernel.Log2Q0)
		p5       = archsimd.BroadcastFloat32x16(kernel.Exp2P5)
		p4       = archsimd.BroadcastFloat32x16(kernel.Exp2P4)
		p3       = archsimd.BroadcastFloat32x16(kernel.Exp2P3)
		p2       = archsimd.BroadcastFloat32x16(kernel.Exp2P2)
		p1       = archsimd.BroadcastFloat32x16(kernel.Exp2P1)
		p0       = archsimd.BroadcastFloat32x16(kernel.Exp2P0)
	)
	j := 0
	for ; j+16 <= d; j += 16 {
		lo := archsimd.LoadFloat64x8Slice(y[j:]).Mul(inv).ConvertToFloat32()
		hi := archsimd.LoadFloat64x8Slice(y[j+8:]).Mul(inv).ConvertToFloat32()
		bits := archsimd.Float32x16{}.SetLo(lo).SetHi(hi).AsInt32x16().And(absMask)
		k := bits.ShiftAllRight(23).Sub(bias).ConvertToFloat32()
		f := bits.And(mantMsk).Or(oneBits).AsFloat32x16().Sub(one)
		q := q6.MulAdd(f, q5)
		q = q.MulAdd(f, q4)
		q = q.MulAdd(f, q3)
		q = q.MulAdd(f, q2)
		q = q.MulAdd(f, q1)
		q = q.MulAdd(f, q0)
		l2 := f.MulAdd(q, k) // log2 u
		e2 := pv.Mul(l2)
		fl := e2.FloorScaled(0)
		r := e2.Sub(fl)
		e := p5.MulAdd(r, p4)
		e = e.MulAdd(r, p3)
		e = e.MulAdd(r, p2)
		e = e.MulAdd(r, p1)
		e = e.MulAdd(r, p0)
		e = e.Scale(fl)
		normal := bits.Sub(minBits).AsUint32x16().Less(normSpan)
		special |= ^normal.ToBits() & ^bits.Equal(zeroI).ToBits()
		e = e.Masked(normal) // u = 0: u^p = 0 and u^p·log u = 0
		sAcc = sAcc.Add(e)
		tAcc = tAcc.Add(e.Mul(l2.Mul(ln2).Masked(normal)))
		if up != nil {
			e.GetLo().ConvertToFloat64().StoreSlice(up[j:])
			e.GetHi().ConvertToFloat64().StoreSlice(up[j+8:])
		}
	}
	var sl, tl [16]float32
	sAcc.Store(&sl)
	tAcc.Store(&tl)
	archsimd.ClearAVXUpperBits()
	if special != 0 {
		return pnorm(y, p, up)
	}
	for l := range sl {
		s += float64(sl[l])
		t += float64(tl[l])
	}
	for ; j < d; j++ {
		u := math.Abs(y[j]) / a
		var uk float64
		if u != 0 {
			lu := math.Log(u)
			uk = math.Exp(p * lu)
			t += uk * lu
		}
		s += uk
		if up != nil {
			up[j] = uk
		}
	}
	return a * math.Exp(math.Log(s)/p), s, t
}
