//go:build goexperiment.simd && amd64

package kernel

import (
	"math"
	"simd/archsimd"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// NormTrain is the single-norm's float32 training kernel, ‖M·x‖_p for each
// row of diffs into scores and, with a non-nil dtheta, Σ_i w_i·∂φ_i/∂θ added
// into it (θ: M row-major, then p), the weights drawn from weights a block
// of rows at a time: with AVX-512, from d = 16 on the products through
// blas32 and ‖y‖_p sixteen lanes along each row (normTrain32), below d = 16
// sixteen rows at a time, one per lane (normSmall32). Rows it cannot
// represent in float32 go to exact. Without AVX-512 it reports false and
// does nothing.
func NormTrain(d int, m []float64, p float64, dtheta, scores []float64, diffs []float32, weights func(lo int, phi, w []float64), exact NormExact) bool {
	if !useAVX512 {
		return false
	}
	if d < normRowsMinDim {
		normSmall32(d, m, p, dtheta, scores, diffs, weights, exact)
	} else {
		normTrain32(d, m, p, dtheta, scores, diffs, weights, exact)
	}
	return true
}

// normRowsMinDim is the dimension from which a row fills a vector of
// sixteen lanes (and the products pay for a BLAS call).
const normRowsMinDim = 16

// normBlasRows is how many rows one pair of matrix products handles.
const normBlasRows = 1024

// pnorm32 is geometry's pnorm on a float32 row, given a = max|y_k|, with u_k^p = 2^(p·log2 u_k) sixteen lanes
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

// normTrain32 is geometry's normBlas in float32: the products through
// blas32 (gonum's, or OpenBLAS with -tags openblas) on the float32
// differences as they are, ‖y‖_p by pnorm32, ∂/∂M of each block added into
// dtheta in float64. A row pnorm32 declines, with a max|y_k| of 2⁶⁴ or more,
// or whose w·∂φ/∂y_k·x_l reach 2¹⁰⁰ (the block's float32 product would
// overflow) is computed exactly in float64 (exact).
func normTrain32(d int, mf []float64, p float64, dtheta, scores []float64, diffs []float32, weights func(lo int, phi, w []float64), exact NormExact) {
	rowsN := len(scores)
	s := norm32Pool.Get().(*norm32Scratch)
	defer norm32Pool.Put(s)
	s.m = grow32(s.m, d*d)
	for i, v := range mf {
		s.m[i] = float32(v)
	}
	blk := min(16, max(1, 2048/d)) // rows per call of weights
	s.dm, s.up = grow32(s.dm, d*d), grow32(s.up, blk*d)
	var ups []float32
	if dtheta != nil {
		ups = s.up
	}
	var (
		w   = make([]float64, blk)
		st  = make([][2]float64, blk) // each row's S' and T
		amx = make([]float32, blk)    // each row's max|y_k|
		ex  = make([]bool, blk)       // rows computed exactly
	)
	m := blas32.General{Rows: d, Cols: d, Data: s.m, Stride: d}
	dm := blas32.General{Rows: d, Cols: d, Data: s.dm, Stride: d}
	for lo := 0; lo < rowsN; lo += normBlasRows {
		hi := min(rowsN, lo+normBlasRows)
		r := hi - lo
		s.y, s.g = grow32(s.y, r*d), grow32(s.g, r*d)
		x := blas32.General{Rows: r, Cols: d, Data: diffs[lo*d : hi*d], Stride: d}
		y := blas32.General{Rows: r, Cols: d, Data: s.y, Stride: d}
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, x, m, 0, y)
		var dp float64
		for b0 := 0; b0 < r; b0 += blk {
			b1 := min(r, b0+blk)
			for i := b0; i < b1; i++ {
				yi := s.y[i*d : (i+1)*d]
				var up []float32
				if ups != nil {
					up = ups[(i-b0)*d : (i-b0+1)*d]
				}
				var a float32 // max |y_k|
				for _, v := range yi {
					a = max(a, math.Float32frombits(math.Float32bits(v)&0x7fffffff))
				}
				phi, sum, t, ok := pnorm32(yi, a, p, up)
				amx[i-b0], st[i-b0] = a, [2]float64{sum, t}
				ex[i-b0] = !ok || !(a < 0x1p64)
				if ex[i-b0] {
					// A u_k below float32's normal range, or y near its
					// largest value: the row exactly in float64.
					exact.Scores(scores[lo+i:lo+i+1], diffs[(lo+i)*d:(lo+i+1)*d])
					continue
				}
				scores[lo+i] = phi
			}
			if dtheta == nil {
				continue
			}
			// Every row's weight, in order; φ = 0 has no gradient.
			weights(lo+b0, scores[lo+b0:lo+b1], w[:b1-b0])
			for i := b0; i < b1; i++ {
				yi, gi := s.y[i*d:(i+1)*d], s.g[i*d:(i+1)*d]
				xi := diffs[(lo+i)*d : (lo+i+1)*d]
				phi, wi := scores[lo+i], w[i-b0]
				if phi == 0 || wi == 0 {
					clear(gi)
					continue
				}
				if ex[i-b0] {
					clear(gi)
					exact.Grad(dtheta, xi, wi)
					continue
				}
				sum, t, a, up := st[i-b0][0], st[i-b0][1], amx[i-b0], ups[(i-b0)*d:(i-b0+1)*d]
				// ∂φ/∂y_k = sign(y_k)·(u_k^p/u_k)·S'^{(1−p)/p}, as geometry's dphidy.
				cw := float32(wi * math.Exp((1-p)/p*math.Log(sum)))
				var gmax, xmax float32
				for k, v := range yi {
					if v == 0 {
						gi[k] = 0
						continue
					}
					gi[k] = up[k] * a / v * cw // up/u·c with the sign of v
					gmax = max(gmax, math.Float32frombits(math.Float32bits(gi[k])&0x7fffffff))
				}
				for _, v := range xi {
					xmax = max(xmax, math.Float32frombits(math.Float32bits(v)&0x7fffffff))
				}
				if !(gmax*xmax < 0x1p100) {
					// w·∂φ/∂y·x would overflow float32 in the block's product:
					// the row's gradient exactly, with the weight already drawn.
					clear(gi)
					exact.Grad(dtheta, xi, wi)
					continue
				}
				dp += wi * phi * (t/(p*sum) - math.Log(sum)/(p*p))
			}
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

// normSmall32 is the single-norm's training kernel for d < 16, where a
// vector along a row would be mostly empty: sixteen rows at a time, one row
// per lane. A block's rows are transposed so that coordinate l of the
// sixteen rows is one vector; y = M·x is d² multiply-adds of broadcast
// entries of M, and u_k^p = 2^(p·log2 u_k), S'^{1/p} and S'^{(1−p)/p} come
// from the fast-score polynomials. ∂φ/∂M is summed in float32 lanes and
// added into dtheta in float64 every normSmallFlush rows; ∂φ/∂p in float64.
//
// A row with a u_k below float32's normal range (other than 0) or a NaN
// (y beyond float32's range), or whose w·∂φ/∂y_k·x_l reach 2¹⁰⁰, is computed
// exactly in float64 (exact). weights is called once per block of sixteen
// rows.
func normSmall32(d int, m []float64, p float64, dtheta, scores []float64, diffs []float32, weights func(lo int, phi, w []float64), exact NormExact) {
	rowsN := len(scores)
	var k normSmallKernel
	k.init(d, m, p)
	if dtheta != nil {
		k.acc = make([]float32, d*d*16)
	}
	var wts, dp [16]float64 // each row's weight and w·∂φ/∂p
	for lo := 0; lo < rowsN; lo += 16 {
		hi := min(rowsN, lo+16)
		k.load(diffs[lo*d:hi*d], hi-lo)
		special := k.forward()
		// Here, in the caller: inside forward the compiler may move vector
		// work after the VZEROUPPER (it did in backward, measured).
		archsimd.ClearAVXUpperBits()
		for r := range hi - lo {
			if special>>r&1 != 0 {
				i := lo + r
				exact.Scores(scores[i:i+1], diffs[i*d:(i+1)*d])
			} else {
				scores[lo+r] = float64(k.a[r]) * float64(k.pow[r])
			}
		}
		if dtheta == nil {
			continue
		}
		w := wts[:hi-lo]
		weights(lo, scores[lo:hi], w)
		for r := range 16 {
			k.w[r], dp[r] = 0, 0
			if r >= hi-lo || special>>r&1 != 0 || scores[lo+r] == 0 {
				continue
			}
			phi, s, t := scores[lo+r], float64(k.s[r]), float64(k.t[r])
			k.w[r] = float32(w[r])
			dp[r] = w[r] * phi * (t/(p*s) - float64(k.l2s[r])*math.Ln2/(p*p))
		}
		over := k.backward()
		archsimd.ClearAVXUpperBits()
		for r := range hi - lo {
			if special>>r&1 == 0 && over>>r&1 == 0 {
				dtheta[d*d] += dp[r]
				continue
			}
			// A row with a u_k the polynomials do not cover, or whose
			// w·∂φ/∂y·x would overflow float32 (it added nothing to the lane
			// sums): its gradient exactly, with the weight already drawn.
			if i, w := lo+r, w[r]; w != 0 && scores[i] != 0 {
				exact.Grad(dtheta, diffs[i*d:(i+1)*d], w)
			}
		}
		if (lo/16+1)%(normSmallFlush/16) == 0 || hi == rowsN {
			k.flush(dtheta)
		}
	}
}

// normSmallFlush is how many rows normSmall32 sums in float32 lanes before
// adding the sums into dtheta: each lane then sums at most 64 terms.
const normSmallFlush = 1024

// normSmallKernel is normSmall32's state: the block's rows transposed (xt:
// coordinate l of row r at l*16+r), y = M·x and u^p likewise, and the
// per-lane results the scalar code reads between the vector passes.
type normSmallKernel struct {
	d  int
	tr *transposer
	m  []float32 // M, row-major
	// p, 1/p and (1−p)/p in float32, converted before any vector code:
	// a scalar SSE conversion between AVX-512 instructions pays the
	// transition penalty (measured: a fifth of forward's time).
	p, invP, cpE float32
	xt, y, up    []float32
	acc          []float32 // ∂φ/∂M_kl summed per lane, at (k·d+l)·16
	a, pow, s    [16]float32
	t, l2s, cp   [16]float32 // T, log2 S', S'^{(1−p)/p}
	w            [16]float32
}

func (k *normSmallKernel) init(d int, m []float64, p float64) {
	k.d = d
	k.m = make([]float32, d*d)
	for i, v := range m {
		k.m[i] = float32(v)
	}
	k.xt, k.y, k.up = make([]float32, d*16), make([]float32, d*16), make([]float32, d*16)
	k.tr = newTransposer(d)
	k.p, k.invP, k.cpE = float32(p), float32(1/p), float32((1-p)/p)
}

// load transposes rows (r of them, the rest of the block zero) into xt.
func (k *normSmallKernel) load(x []float32, r int) {
	k.tr.transpose(k.xt, x[:r*k.d])
}

// forward computes the block's y, max|y| (a), u^p, S', T, log2 S', S'^{1/p}
// (pow) and S'^{(1−p)/p} (cp); it returns the lanes with a u below float32's
// normal range other than 0 (or a NaN), which the caller computes exactly.
// The caller clears the vector registers' upper halves after it returns.
func (k *normSmallKernel) forward() (special uint16) {
	d := k.d
	c := &pow16
	pv := archsimd.BroadcastFloat32x16(k.p)
	invP := archsimd.BroadcastFloat32x16(k.invP)
	cpE := archsimd.BroadcastFloat32x16(k.cpE)
	zero := zero32
	a := zero
	for kk := range d {
		yk := zero
		for l := range d {
			yk = archsimd.BroadcastFloat32x16(k.m[kk*d+l]).MulAdd(archsimd.LoadFloat32x16Slice(k.xt[l*16:]), yk)
		}
		yk.StoreSlice(k.y[kk*16:])
		a = a.Max(yk.AsInt32x16().And(c.absMask).AsFloat32x16())
	}
	a.Store(&k.a)
	live := a.NotEqual(zero) // a = 0: φ = 0 (and the padding)
	inv := c.one.Div(a).Masked(live)
	s, t := zero, zero
	for kk := range d {
		u := archsimd.LoadFloat32x16Slice(k.y[kk*16:]).Mul(inv)
		bits := u.AsInt32x16().And(c.absMask)
		l2 := log2x16(c, bits)
		// u = 1 (the largest |y_k|): u^p = 1 exactly, as the exact kernel
		// has it, so that S' = 1 exactly when the other u_k are 0.
		e := exp2x16(c, pv.Mul(l2)).Merge(c.one, bits.NotEqual(c.oneBits))
		normal := bits.Sub(c.minBits).AsUint32x16().Less(c.normSpan)
		special |= ^normal.ToBits() & ^bits.Equal(c.zeroI).ToBits()
		e = e.Masked(normal) // u = 0: u^p = 0, u^p·log u = 0
		e.StoreSlice(k.up[kk*16:])
		s = s.Add(e)
		t = t.Add(e.Mul(l2.Mul(c.ln2)).Masked(normal))
	}
	s = s.Merge(c.one, live) // S' ≥ 1 where a > 0
	s.Store(&k.s)
	t.Store(&k.t)
	l2s := log2x16(c, s.AsInt32x16())
	l2s.Store(&k.l2s)
	exp2x16(c, l2s.Mul(invP)).Store(&k.pow)
	exp2x16(c, l2s.Mul(cpE)).Store(&k.cp)
	return special & live.ToBits()
}

// backward adds w·∂φ/∂M_kl = w·∂φ/∂y_k·x_l into the lane sums, with
// ∂φ/∂y_k = sign(y_k)·(u_k^p/u_k)·S'^{(1−p)/p}; lanes of weight 0 add 0. It
// returns the lanes whose w·∂φ/∂y or products with x are not finite in
// float32, or large enough to overflow the lane sums, which it leaves out.
// The caller clears the vector registers' upper halves after it returns.
func (k *normSmallKernel) backward() (over uint16) {
	d := k.d
	c := &pow16
	zero := zero32
	wv := archsimd.LoadFloat32x16(&k.w)
	f := wv.Mul(archsimd.LoadFloat32x16(&k.cp)).Mul(archsimd.LoadFloat32x16(&k.a))
	nonzero := wv.NotEqual(zero)
	gmax, xmax := zero, zero // max_k |g_k|, max_l |x_l|
	for kk := range d {
		yk := archsimd.LoadFloat32x16Slice(k.y[kk*16:])
		g := f.Mul(archsimd.LoadFloat32x16Slice(k.up[kk*16:])).Div(yk).Masked(yk.NotEqual(zero).And(nonzero))
		gmax = gmax.Max(g.AsInt32x16().And(c.absMask).AsFloat32x16())
		xmax = xmax.Max(archsimd.LoadFloat32x16Slice(k.xt[kk*16:]).AsInt32x16().And(c.absMask).AsFloat32x16())
		g.StoreSlice(k.up[kk*16:]) // u^p is not needed any more
	}
	// Every product g_k·x_l below 2¹⁰⁰, so that the lane sums of
	// normSmallFlush/16 rows stay finite (a NaN fails the comparison too).
	finite := nonzero.And(gmax.Mul(xmax).Less(archsimd.BroadcastFloat32x16(0x1p100)))
	for kk := range d {
		g := archsimd.LoadFloat32x16Slice(k.up[kk*16:]).Masked(finite)
		for l := range d {
			o := (kk*d + l) * 16
			acc := archsimd.LoadFloat32x16Slice(k.acc[o:])
			g.MulAdd(archsimd.LoadFloat32x16Slice(k.xt[l*16:]), acc).StoreSlice(k.acc[o:])
		}
	}
	return nonzero.ToBits() &^ finite.ToBits()
}

// flush adds the lane sums into dtheta in float64 and clears them.
func (k *normSmallKernel) flush(dtheta []float64) {
	for kl := range k.d * k.d {
		var sum float64
		for _, v := range k.acc[kl*16 : (kl+1)*16] {
			sum += float64(v)
		}
		dtheta[kl] += sum
	}
	clear(k.acc)
}

// transposer turns sixteen rows of d < 16 float32 (16·d contiguous values)
// into d vectors, vector l holding coordinate l of each row: lane r of
// vector l is value r·d+l, found in source vector (r·d+l)/16. Each output is
// built from pairs of source vectors with VPERMI2PS (ConcatPermute) and
// merged lane by lane. Scalar stores followed by a vector load of the same
// bytes cannot be forwarded and stall (measured: 0.2 µs per block); these
// are vector loads and stores only.
type transposer struct {
	d     int
	idx   []uint32 // (l·pairs + q)·16: lane r's index into source pair q
	masks []uint16 // l·pairs + q: the lanes pair q supplies
	pairs int
}

func newTransposer(d int) *transposer {
	t := &transposer{d: d, pairs: (d + 1) / 2}
	t.idx = make([]uint32, d*t.pairs*16)
	t.masks = make([]uint16, d*t.pairs)
	for l := range d {
		for r := range 16 {
			v := r*d + l // position in the block
			q := v / 32  // source pair
			t.idx[(l*t.pairs+q)*16+r] = uint32(v % 32)
			t.masks[l*t.pairs+q] |= 1 << r
		}
	}
	return t
}

// transpose writes the transposed block of rows (len(rows) ≤ 16·d; missing
// rows are zero) into dst (16·d).
func (t *transposer) transpose(dst, rows []float32) {
	d := t.d
	var src [16]archsimd.Float32x16
	for s := range d {
		lo := min(len(rows), s*16)
		src[s] = archsimd.LoadFloat32x16SlicePart(rows[lo:min(len(rows), lo+16)])
	}
	src[d] = zero32 // the pair partner of the last source when d is odd
	for l := range d {
		out := zero32
		for q := range t.pairs {
			o := l*t.pairs + q
			idx := archsimd.LoadUint32x16Slice(t.idx[o*16:])
			v := src[2*q].ConcatPermute(src[2*q+1], idx)
			out = v.Merge(out, archsimd.Mask32x16FromBits(t.masks[o]))
		}
		out.StoreSlice(dst[l*16:])
	}
}
