//go:build goexperiment.simd && amd64

package geometry

import (
	"math"
	"simd/archsimd"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// pnorm32 is pnorm on a float32 row, given a = max|y_k|, with u_k^p = 2^(p·log2 u_k) sixteen lanes
// at a time (the generalized ball's fast-score polynomials), S' and T summed
// in float32 lanes then float64; a tail shorter than 16 is computed in
// float64. It reports false — the caller then takes the exact pnorm — for
// p = 2, rows shorter than 16 and rows with a u_k below float32's normal
// range other than 0.
func pnorm32(y []float32, a float32, p float64, up []float32) (phi, s, t float64, ok bool) {
	d := len(y)
	if !useAVX512 || d < 16 || p == 2 {
		return 0, 0, 0, false
	}
	if a == 0 {
		clear(up)
		return 0, 0, 0, true
	}
	c := &pow16
	inv := archsimd.BroadcastFloat32x16(1 / a)
	pv := archsimd.BroadcastFloat32x16(float32(p))
	sAcc := zero32
	tAcc := sAcc
	var special uint16
	j := 0
	for ; j+16 <= d; j += 16 {
		u := archsimd.LoadFloat32x16Slice(y[j:]).Mul(inv)
		bits := u.AsInt32x16().And(c.absMask)
		l2 := log2x16(c, bits) // log2 u
		e := exp2x16(c, pv.Mul(l2))
		normal := bits.Sub(c.minBits).AsUint32x16().Less(c.normSpan)
		special |= ^normal.ToBits() & ^bits.Equal(c.zeroI).ToBits()
		e = e.Masked(normal) // u = 0: u^p = 0 and u^p·log u = 0
		sAcc = sAcc.Add(e)
		tAcc = tAcc.Add(e.Mul(l2.Mul(c.ln2).Masked(normal)))
		if up != nil {
			e.StoreSlice(up[j:])
		}
	}
	var sl, tl [16]float32
	sAcc.Store(&sl)
	tAcc.Store(&tl)
	archsimd.ClearAVXUpperBits()
	if special != 0 {
		return 0, 0, 0, false
	}
	for l := range sl {
		s += float64(sl[l])
		t += float64(tl[l])
	}
	for ; j < d; j++ {
		u := float64(y[j]) / float64(a)
		var uk float64
		if u != 0 {
			lu := math.Log(math.Abs(u))
			uk = math.Exp(p * lu)
			t += uk * lu
		}
		s += uk
		if up != nil {
			up[j] = float32(uk)
		}
	}
	return float64(a) * math.Exp(math.Log(s)/p), s, t, true
}

// norm32Scratch holds a block's Y = X·Mᵀ and G = w·∂φ/∂Y in float32, M in
// float32 and the block's ∂/∂M.
type norm32Scratch struct{ y, g, m, dm, up []float32 }

var norm32Pool = sync.Pool{New: func() any { return new(norm32Scratch) }}

func grow32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// normTrain32 is normBlas in float32: the products through blas32 (gonum's,
// or OpenBLAS with -tags openblas) on the float32 differences as they are,
// ‖y‖_p by pnorm32, ∂/∂M of each block added into dtheta in float64. A row
// pnorm32 declines, with a max|y_k| of 2⁶⁴ or more, or whose w·∂φ/∂y_k·x_l
// reach 2¹⁰⁰ (the block's float32 product would overflow) is computed
// exactly in float64.
func normTrain32(n *Norm, dtheta, scores []float64, diffs []float32, weight func(int, float64) float64) {
	d := n.d
	rowsN := len(scores)
	s := norm32Pool.Get().(*norm32Scratch)
	defer norm32Pool.Put(s)
	s.m = grow32(s.m, d*d)
	for i, v := range n.m {
		s.m[i] = float32(v)
	}
	s.dm, s.up = grow32(s.dm, d*d), grow32(s.up, d)
	m := blas32.General{Rows: d, Cols: d, Data: s.m, Stride: d}
	dm := blas32.General{Rows: d, Cols: d, Data: s.dm, Stride: d}
	for lo := 0; lo < rowsN; lo += blasRows {
		hi := min(rowsN, lo+blasRows)
		r := hi - lo
		s.y, s.g = grow32(s.y, r*d), grow32(s.g, r*d)
		x := blas32.General{Rows: r, Cols: d, Data: diffs[lo*d : hi*d], Stride: d}
		y := blas32.General{Rows: r, Cols: d, Data: s.y, Stride: d}
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, x, m, 0, y)
		var dp float64
		for i := range r {
			yi, gi := s.y[i*d:(i+1)*d], s.g[i*d:(i+1)*d]
			var up []float32
			if dtheta != nil {
				up = s.up
			}
			var a float32 // max |y_k|
			for _, v := range yi {
				a = max(a, math.Float32frombits(math.Float32bits(v)&0x7fffffff))
			}
			xi := diffs[(lo+i)*d : (lo+i+1)*d]
			phi, sum, t, ok := pnorm32(yi, a, n.p, up)
			if !ok || !(a < 0x1p64) {
				// A u_k below float32's normal range, or y near its
				// largest value: the row exactly in float64.
				clear(gi)
				if dtheta == nil {
					normScores(n, scores[lo+i:lo+i+1], xi)
				} else {
					normScoreGrads(n, dtheta, scores[lo+i:lo+i+1], xi, func(_ int, phi float64) float64 { return weight(lo+i, phi) })
				}
				continue
			}
			scores[lo+i] = phi
			if dtheta == nil {
				continue
			}
			w := weight(lo+i, phi) // every row's, in order; φ = 0 has no gradient
			if phi == 0 || w == 0 {
				clear(gi)
				continue
			}
			// ∂φ/∂y_k = sign(y_k)·(u_k^p/u_k)·S'^{(1−p)/p}, as dphidy.
			cw := float32(w * math.Exp((1-n.p)/n.p*math.Log(sum)))
			var gmax, xmax float32
			for k, v := range yi {
				if v == 0 {
					gi[k] = 0
					continue
				}
				gi[k] = s.up[k] * a / v * cw // up/u·c with the sign of v
				gmax = max(gmax, math.Float32frombits(math.Float32bits(gi[k])&0x7fffffff))
			}
			for _, v := range xi {
				xmax = max(xmax, math.Float32frombits(math.Float32bits(v)&0x7fffffff))
			}
			if !(gmax*xmax < 0x1p100) {
				// w·∂φ/∂y·x would overflow float32 in the block's product:
				// the row's gradient exactly, with the weight already drawn.
				clear(gi)
				normScoreGrads(n, dtheta, make([]float64, 1), xi, func(int, float64) float64 { return w })
				continue
			}
			dp += w * phi * (t/(n.p*sum) - math.Log(sum)/(n.p*n.p))
		}
		if dtheta == nil {
			continue
		}
		g := blas32.General{Rows: r, Cols: d, Data: s.g, Stride: d}
		blas32.Gemm(blas.Trans, blas.NoTrans, 1, g, x, 0, dm)
		for k, v := range s.dm {
			dtheta[k] += float64(v)
		}
		dtheta[d*d] += dp
	}
}
