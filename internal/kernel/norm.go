package kernel

import (
	"math"
	"math/bits"
	"sync"
	"unsafe"
)

// NormTrainTol bounds the relative difference between NormTrain's scores and
// gradients and the exact ones (geometry's TestNormTrainKernels).
const NormTrainTol = 1e-4

// NormExact computes, in float64, the rows the single-norm's float32 kernel
// declines (a coordinate below float32's normal range, y near its largest
// value, a gradient that would overflow it).
type NormExact struct {
	// Scores writes the exact scores of the rows x into dst.
	Scores func(dst []float64, x []float32)
	// Grad adds w·∂φ/∂θ of the row x into dtheta.
	Grad func(dtheta []float64, x []float32, w float64)
}

// NormMatrix is M as the single-norm's float32 training kernel reads it:
// Mᵀ in float32, row-major. The zero value (what NewNormMatrix gives at the
// portable level) is for NormTrain's small-d kernel, which reads M itself.
type NormMatrix struct {
	d  int
	mt []float32
}

// NewNormMatrix prepares M (d×d, row-major) for NormTrain, in buf's
// storage when it has room; a geometry keeps it with M, so that every call
// does not convert and transpose d² values.
//
// It transposes tiles of 16×16, whose rows of Mᵀ stay in the L1 cache
// while they are written: a column of Mᵀ at a time wrote each row's cache
// line d times over (at d = 128, 64 KiB of Mᵀ, more than an L1). On a
// 2-vCPU AMD EPYC, BenchmarkNewNormMatrix 12.7 µs against 37–38, and
// Norm.SetParams after a training step at two threads 27–29 µs against
// 38–58 (the same at one thread, 26–28).
func NewNormMatrix(m []float64, d int, buf NormMatrix) NormMatrix {
	if lanes == 0 || d < normRowsMinDim {
		return NormMatrix{}
	}
	const tile = 16
	mt := grow32(buf.mt, d*d)
	for k0 := 0; k0 < d; k0 += tile {
		for l0 := 0; l0 < d; l0 += tile {
			for k := k0; k < min(d, k0+tile); k++ {
				row := m[k*d : (k+1)*d]
				for l := l0; l < min(d, l0+tile); l++ {
					mt[l*d+k] = float32(row[l])
				}
			}
		}
	}
	return NormMatrix{d: d, mt: mt}
}

// Ready reports whether m holds a matrix (from d = 16 on, with the vector
// kernels).
func (m NormMatrix) Ready() bool { return m.mt != nil }

// Products writes Y = X·Mᵀ (rows × d, row-major) for the d-dimensional
// rows of x, each element a float32 sum of d products (within GemmErr(d)
// of Σ_l |m_kl·x_l| of the exact product for M rounded to float32). It
// reports false, writing nothing, where m holds no matrix (below d = 16, or
// at the portable level).
func (m NormMatrix) Products(y, x []float32, rows int) bool {
	if m.mt == nil {
		return false
	}
	Gemm(rows, m.d, m.d, x, m.d, 1, m.mt, m.d, y, m.d)
	return true
}

// NormTrain is the single-norm's float32 training kernel, ‖M·x‖_p for each
// row of diffs into scores and, with a non-nil dtheta, Σ_i w_i·∂φ_i/∂θ added
// into it (θ: M row-major, then p), the weights drawn from weights a block
// of rows at a time: from d = 16 on the products by Gemm and ‖y‖_p a
// vector at a time along each row (normTrain32; mt is NewNormMatrix(m, d)),
// below d = 16 a vector's worth of rows at a time, one per lane
// (normSmall32). The rows are those of diffs, read in place (a block that
// straddles two spans is copied). Rows it cannot represent in float32 go to
// exact. At the portable level it reports false and does nothing.
func NormTrain(d int, m []float64, mt NormMatrix, p float64, dtheta, scores []float64, diffs Spans, weights func(lo int, phi, w []float64), exact NormExact) bool {
	if lanes == 0 {
		return false
	}
	if len(m) != d*d || diffs.Len() != len(scores)*d {
		panic("kernel: NormTrain: lengths differ")
	}
	if d < normRowsMinDim {
		normSmall32(d, m, p, dtheta, scores, diffs, weights, exact)
		return true
	}
	if mt.d != d {
		panic("kernel: NormTrain: M not prepared for the vector kernels (NewNormMatrix)")
	}
	normTrain32(d, mt.mt, p, dtheta, scores, diffs, weights, exact)
	return true
}

// normRowsMinDim is the dimension from which a row fills a vector of
// sixteen lanes (and the products pay for Gemm).
const normRowsMinDim = 16

// normBlockRows is how many rows one pair of matrix products handles: the
// block's X, Y and G (d = 128: 128 KiB each) stay in the L2 cache between
// the forward product, the rows' norms and gradients, and the backward
// product.
const normBlockRows = 256

// pnorm32 is the sums of geometry's pnorm on a float32 row, given a =
// max|y_k|: S' = Σ u_k^p and T = Σ u_k^p·log u_k (u_k = |y_k|/a), with
// u_k^p = 2^(p·log2 u_k) a vector at a time (the generalized ball's
// fast-score polynomials), summed in float32 lanes then float64; a tail
// shorter than a vector is computed in float64. ‖y‖_p = a·S'^(1/p) is left
// to the caller (pnormFinish), a block of rows at a time: the logarithm
// and exponential of one row wait on its sums, those of a block's rows do
// not wait on each other. It reports false — the caller then takes the
// exact pnorm — for rows shorter than a vector and rows with a u_k below
// float32's normal range other than 0. p = 2 is no exception (as it is
// none for normSmall32): declined, every row of a training step at p = 2
// went to the exact kernel one at a time, and a training with p held at 2
// took 3.6 times as long.
func pnorm32(y []float32, a float32, p float64, up []float32) (s, t float64, ok bool) {
	d := len(y)
	if pnormRowV == nil || d < lanes {
		return 0, 0, false
	}
	if a == 0 {
		clear(up)
		return 0, 0, true
	}
	j := d &^ (lanes - 1)
	var upv []float32
	if up != nil {
		upv = up[:j]
	}
	s, t, special := pnormRowV(y[:j], 1/a, float32(p), upv)
	if special {
		return 0, 0, false
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
	return s, t, true
}

// pnormFinish returns ‖y‖_p = a·exp(log S' / p) and log S' from pnorm32's
// S' (0 and 0 for a = 0).
func pnormFinish(a float32, s, p float64) (phi, ls float64) {
	if a == 0 {
		return 0, 0
	}
	ls = math.Log(s)
	return float64(a) * math.Exp(ls/p), ls
}

// norm32Scratch holds a block's rows X (when they straddle spans), Y =
// X·Mᵀ, u^p, and the rows of G = w·∂φ/∂Y and X whose weights are not 0,
// packed, and the block's ∂/∂M, in float32.
type norm32Scratch struct{ x, y, up, g, xg, dm []float32 }

var norm32Pool = sync.Pool{New: func() any { return new(norm32Scratch) }}

func grow32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// normTrain32 is geometry's normBlas in float32, a block of normBlockRows
// rows at a time: Y = X·Mᵀ by Gemm on the float32 differences as they are
// (mt is Mᵀ), ‖y‖_p by pnorm32, the rows' w·∂φ/∂y by gradRow, and ∂/∂M =
// Gᵀ·X by Gemm over the rows whose gradient is not 0 (often most of a
// batch's negatives have weight 0), added into dtheta in float64. A row
// pnorm32 declines, with a max|y_k| of 2⁶⁴ or more, or whose w·∂φ/∂y_k·x_l
// reach 2¹⁰⁰ (the block's float32 product would overflow) is computed
// exactly in float64 (exact).
func normTrain32(d int, mt []float32, p float64, dtheta, scores []float64, diffs Spans, weights func(lo int, phi, w []float64), exact NormExact) {
	rowsN := len(scores)
	s := norm32Pool.Get().(*norm32Scratch)
	defer norm32Pool.Put(s)
	blk := min(16, max(1, 2048/d)) // rows per call of weights
	var (
		w   = make([]float64, blk)
		st  = make([][3]float64, blk) // each row's S', T and log S'
		amx = make([]float32, blk)    // each row's max|y_k|
		ex  = make([]bool, blk)       // rows computed exactly
	)
	cur := cursor{s: diffs}
	for lo := 0; lo < rowsN; lo += normBlockRows {
		hi := min(rowsN, lo+normBlockRows)
		r := hi - lo
		s.x, s.y = grow32(s.x, r*d), grow32(s.y, r*d)
		xb := cur.take(r, d, s.x) // the block's rows
		Gemm(r, d, d, xb, d, 1, mt, d, s.y, d)
		var ups []float32
		if dtheta != nil {
			s.up = grow32(s.up, blk*d)
			ups = s.up
			s.g, s.xg = grow32(s.g, r*d), grow32(s.xg, r*d)
		}
		kept := 0 // rows of G and X packed for the backward product
		var dp float64
		for b0 := 0; b0 < r; b0 += blk {
			b1 := min(r, b0+blk)
			for i := b0; i < b1; i++ {
				yi := s.y[i*d : (i+1)*d]
				var up []float32
				if ups != nil {
					up = ups[(i-b0)*d : (i-b0+1)*d]
				}
				a := MaxAbs(yi)
				sum, t, ok := pnorm32(yi, a, p, up)
				amx[i-b0], st[i-b0] = a, [3]float64{sum, t}
				ex[i-b0] = !ok || !(a < 0x1p64)
				if ex[i-b0] {
					// A u_k below float32's normal range, or y near its
					// largest value: the row exactly in float64.
					exact.Scores(scores[lo+i:lo+i+1], xb[i*d:(i+1)*d])
				}
			}
			// The rows' norms from their sums, in a loop of their own
			// (pnorm32).
			for i := b0; i < b1; i++ {
				if !ex[i-b0] {
					scores[lo+i], st[i-b0][2] = pnormFinish(amx[i-b0], st[i-b0][0], p)
				}
			}
			if dtheta == nil {
				continue
			}
			// Every row's weight, in order; φ = 0 has no gradient.
			weights(lo+b0, scores[lo+b0:lo+b1], w[:b1-b0])
			for i := b0; i < b1; i++ {
				xi := xb[i*d : (i+1)*d]
				phi, wi := scores[lo+i], w[i-b0]
				if phi == 0 || wi == 0 {
					continue
				}
				if ex[i-b0] {
					exact.Grad(dtheta, xi, wi)
					continue
				}
				sum, t, ls, a := st[i-b0][0], st[i-b0][1], st[i-b0][2], amx[i-b0]
				// ∂φ/∂y_k = sign(y_k)·(u_k^p/u_k)·S'^{(1−p)/p}, as geometry's dphidy,
				// with S'^{(1−p)/p} = S'^{1/p}/S' = (φ/a)/S' (an exponential a
				// row was 2% of the training's CPU).
				cw := float32(wi * (phi / float64(a)) / sum)
				xmax := MaxAbs(xi)
				// Entries whose products with x stay below 2⁻¹⁰⁰ are 0, and
				// are not computed: a subnormal operand or result costs a
				// microcode assist (in the gradient and in the block's
				// product: an epoch at d = 128 once took 21 s, 2.7 s without
				// them). Each adds at most 2⁻¹⁰⁰ to a gradient entry. With
				// |u_k^p/u_k| ≤ 1 (p ≥ 1), a row whose |c_w| is below that
				// has no entry left.
				tiny := float32(0x1p-100) / max(xmax, 0x1p-26)
				thr := float32(math.Inf(1)) // |up·a/y| below it: 0
				if cw != 0 {
					thr = tiny / abs32(cw)
				}
				dpi := wi * phi * (t/(p*sum) - ls/(p*p))
				if p >= 1 && !(thr <= 1) {
					dp += dpi
					continue
				}
				gi := s.g[kept*d : (kept+1)*d]
				if gmax := gradRow(gi, s.y[i*d:(i+1)*d], ups[(i-b0)*d:(i-b0+1)*d], a, cw, thr); !(gmax*xmax < 0x1p100) {
					// w·∂φ/∂y·x would overflow float32 in the block's product:
					// the row's gradient exactly, with the weight already drawn.
					exact.Grad(dtheta, xi, wi)
					continue
				}
				copy(s.xg[kept*d:(kept+1)*d], xi)
				kept++
				dp += dpi
			}
		}
		if dtheta == nil {
			continue
		}
		if kept > 0 {
			s.dm = grow32(s.dm, d*d)
			Gemm(d, d, kept, s.g, 1, d, s.xg, d, s.dm, d) // Gᵀ·X over the kept rows
			AddWiden(dtheta[:d*d], s.dm)
		}
		dtheta[d*d] += dp
	}
}

// AddWiden adds float64(x_i) into dst_i for each value of x (the bits of
// Go's dst[i] += float64(x[i]): the conversion is exact, the sum rounded
// once): on vectors of float64 where the build has them. dst must hold
// len(x) values. A single-norm block's float32 ∂/∂M goes into the float64
// gradient this way: a loop a value at a time took 4% of its training's CPU.
func AddWiden(dst []float64, x []float32) {
	dst = dst[:len(x)]
	m := 0
	if addWidenV != nil {
		m = len(x) &^ (lanes/2 - 1)
		addWidenV(dst[:m], x[:m])
	}
	for i := m; i < len(x); i++ {
		dst[i] += float64(x[i])
	}
}

// gradRow writes g_k = (up_k·a/y_k)·cw where y_k ≠ 0 and |up_k·a/y_k| ≥ thr
// and 0 elsewhere (∂φ/∂y_k of a single-norm row, weighted, the entries too
// small to matter left out) and returns the largest |g_k|: a vector at a
// time with the vector kernels, the tail in Go.
func gradRow(g, y, up []float32, a, cw, thr float32) float32 {
	d := len(y)
	_, _ = g[d-1], up[d-1]
	var gmax float32
	j := 0
	if gradRowV != nil {
		j = d &^ (lanes - 1)
		if j > 0 {
			gmax = gradRowV(g[:j], y[:j], up[:j], a, cw, thr)
		}
	}
	for ; j < d; j++ {
		var q float32
		if y[j] != 0 {
			q = up[j] * a / y[j]
		}
		if !(abs32(q) >= thr) {
			q = 0
		}
		g[j] = q * cw
		if v := abs32(g[j]); v > gmax {
			gmax = v
		}
	}
	return gmax
}

// normSmall32 is the single-norm's training kernel for d < 16, where a
// vector along a row would be mostly empty: a vector's worth of rows (W) at
// a time, one row per lane. normSmallFwd transposes the block (a gather per
// coordinate); y = M·x is d² multiply-adds of broadcast entries of M, and
// u_k^p = 2^(p·log2 u_k), S'^{1/p} and S'^{(1−p)/p} come from the
// fast-score polynomials. ∂φ/∂M is summed in float32 lanes (normSmallBwd)
// and added into dtheta in float64 every normSmallFlush rows; ∂φ/∂p in
// float64.
//
// The blocks go in groups (smallGroup): the forward passes of a group's
// blocks in one call (normSmallScore's where there is no gradient), then
// the group's weights in one call, then its backward passes in one call,
// in block order. The weights' own vector arithmetic (a sigmoid per row)
// then runs on long vectors, the calls' overhead is paid a group at a
// time, and the processor overlaps one block's long chain of dependent
// operations (log2, exp2, log2, exp2) with the next block's. What is
// summed, and in which order, is as block by block.
//
// A row with a u_k below float32's normal range (other than 0) or a NaN
// (y beyond float32's range), or whose w·∂φ/∂y_k·x_l reach 2¹⁰⁰, is computed
// exactly in float64 (exact). weights is called once per group.
func normSmall32(d int, m []float64, p float64, dtheta, scores []float64, diffs Spans, weights func(lo int, phi, w []float64), exact NormExact) {
	rowsN := len(scores)
	W := lanes
	G := smallGroup(d, W)
	// Per block of a group: the rows (where copied), xt, y, up and out
	// (max|y|, S'^{1/p}, S', T, log2 S', S'^{(1−p)/p}, w: a vector each).
	dw, ow := d*W, 7*W
	sc := smallPool.Get().(*smallScratch)
	defer sc.put()
	xts, ys, ups, pads := sc.f32(0, G*dw), sc.f32(1, G*dw), sc.f32(2, G*dw), sc.f32(3, G*dw)
	outs, m32 := sc.f32(4, G*ow), sc.f32(5, d*d)
	acc := sc.f32(6, d*d*W) // ∂φ/∂M_kl summed per lane, at (k·d+l)·W
	for i, v := range m {
		m32[i] = float32(v)
	}
	clear(acc)
	f64 := sc.f64(3 * G * W)
	// The group's scores from the kernel (0 for the rows it leaves to
	// exact), weights (0 past its rows) and w·∂φ/∂p, to its last block's end.
	phis, wts, dps := f64[:G*W], f64[G*W:2*G*W], f64[2*G*W:]
	blks, specials, overs := sc.blocks(G)
	pf, invP, cpE := float32(p), float32(1/p), float32((1-p)/p)
	flush := func() {
		for kl := range d * d {
			var sum float64
			for _, v := range acc[kl*W : (kl+1)*W] {
				sum += float64(v)
			}
			dtheta[kl] += sum
		}
		clear(acc)
	}
	cur := cursor{s: diffs}
	blocks := 0 // since the last flush
	tab := transposeTabs[d]
	fwd := normSmallFwdV
	if dtheta == nil {
		fwd = normSmallScoreV // nothing kept for a backward pass
	}
	for glo := 0; glo < rowsN; glo += G * W {
		ghi := min(rowsN, glo+G*W)
		nb := (ghi - glo + W - 1) / W
		cur.blocks(blks[:nb], ghi-glo, W, d, pads)
		last := ghi - glo - (nb-1)*W // the last block's rows
		if last < W {
			blks[nb-1] = padded(blks[nb-1], pads[(nb-1)*dw:nb*dw], 0) // zero rows
		}
		fwd(blks[:nb], d, m32, pf, invP, cpE, xts, ys, ups, outs, tab, phis, specials[:nb])
		copy(scores[glo:ghi], phis)
		if last < W {
			specials[nb-1] &= 1<<last - 1
		}
		for b, special := range specials[:nb] {
			for sp := special; sp != 0; sp &= sp - 1 {
				r := bits.TrailingZeros16(sp)
				exact.Scores(scores[glo+b*W+r:][:1], blks[b][r*d:(r+1)*d])
				phis[b*W+r] = 0 // no weight for the vector kernel
			}
		}
		if dtheta == nil {
			continue
		}
		gw := wts[:nb*W]
		weights(glo, scores[glo:ghi], gw[:ghi-glo])
		clear(gw[ghi-glo:])
		normSmallBwdV(xts, ys, ups, d, outs, acc, gw, phis[:nb*W], p, p*p, dps, overs[:nb])
		// ∂φ/∂p summed in a register, in row order; the rows the vector
		// kernels leave out (a u_k the polynomials do not cover, or a
		// w·∂φ/∂y·x that would overflow float32) exactly, with the weight
		// already drawn.
		sum := dtheta[d*d]
		for b := range nb {
			special, over := specials[b], overs[b]
			if special|over == 0 {
				for _, v := range dps[b*W : b*W+min(W, ghi-glo-b*W)] {
					sum += v
				}
				continue
			}
			for r := range min(W, ghi-glo-b*W) {
				if special>>r&1 == 0 && over>>r&1 == 0 {
					sum += dps[b*W+r]
					continue
				}
				if w := gw[b*W+r]; w != 0 && scores[glo+b*W+r] != 0 {
					dtheta[d*d] = sum
					exact.Grad(dtheta, blks[b][r*d:(r+1)*d], w)
					sum = dtheta[d*d]
				}
			}
		}
		dtheta[d*d] = sum
		// Every normSmallFlush/W blocks, a whole number of groups.
		if blocks += nb; blocks == normSmallFlush/W || ghi == rowsN {
			flush()
			blocks = 0
		}
	}
}

// smallScratch holds a small-d kernel's buffers between calls (most are
// a group's worth, a few KiB, and a training epoch makes thousands of
// calls).
type smallScratch struct {
	a        [7][]float32 // vector arrays, each of a multiple of W (they stay aligned as allocated)
	b        []float64
	blks     [][]float32
	specials []uint16
	overs    []uint16
}

var smallPool = sync.Pool{New: func() any { return new(smallScratch) }}

// f32 returns the i-th array with n float32s (not cleared), starting at
// a cache line.
func (s *smallScratch) f32(i, n int) []float32 {
	if cap(s.a[i]) < n {
		s.a[i] = aligned[float32](n)
	}
	return s.a[i][:n]
}

// f64 returns n float64s (not cleared), starting at a cache line.
func (s *smallScratch) f64(n int) []float64 {
	if cap(s.b) < n {
		s.b = aligned[float64](n)
	}
	return s.b[:n]
}

// aligned returns n zeros starting at a 64-byte boundary: the allocator
// aligns some size classes only to 16 bytes, and there every other
// 32-byte vector of a kernel's array would straddle two cache lines (with
// the small-d arrays in one allocation at 36-byte offsets, the backward
// kernel took 2.8× its time).
func aligned[E float32 | float64](n int) []E {
	var e E
	size := int(unsafe.Sizeof(e))
	b := make([]E, n+64/size-1)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) % 64 / uintptr(size))
	return b[off : off+n : off+n]
}

// put clears the block slices (rows a caller owns) and returns s to the
// pool.
func (s *smallScratch) put() {
	clear(s.blks)
	smallPool.Put(s)
}

// blocks returns g block slices and two arrays of g uint16s.
func (s *smallScratch) blocks(g int) ([][]float32, []uint16, []uint16) {
	if cap(s.blks) < g {
		s.blks, s.specials, s.overs = make([][]float32, g), make([]uint16, g), make([]uint16, g)
	}
	return s.blks[:g], s.specials[:g], s.overs[:g]
}

// smallGroup is how many blocks of W rows the small-d kernels handle
// between two calls of their weights: 128 rows, fewer where one of a
// group's per-block arrays (d·W float32s a block) would pass 4 KiB; a
// power of two, so that normSmallFlush's rows are whole groups.
func smallGroup(d, W int) int {
	g := max(1, min(smallGroupRows/W, 1024/(d*W)))
	return 1 << (bits.Len(uint(g)) - 1)
}

// smallGroupRows is the rows of a group of blocks (smallGroup) where d is
// small.
var smallGroupRows = 128

// normSmallFlush is how many rows normSmall32 sums in float32 lanes before
// adding the sums into dtheta: each lane then sums at most 64 (AVX-512) or
// 128 (AVX2) terms.
const normSmallFlush = 1024
