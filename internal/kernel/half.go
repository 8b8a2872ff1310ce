package kernel

import (
	"math"
)

// HalfBlock is the number of rows of a HalfRows block.
const HalfBlock = 16

// halfRel and halfAbs bound a HalfRows value's rounding: |s·x − h| ≤
// halfRel·|h| + halfAbs for each coordinate x and its half float h (round
// to nearest: half an ulp of h, at most 2⁻¹¹·|h| for a normal h and 2⁻²⁵
// among the subnormals), with room for the one rounding the kernels make
// in computing it (the constants the assembly uses).
const (
	halfRel = 0x1p-11 * (1 + 0x1p-8)
	halfAbs = 0x1p-25 * (1 + 0x1p-8)
)

// HalfRows is a copy of n rows of dimension d in IEEE half precision, made
// to be scanned at half of float32's bytes: every value scaled by one power
// of two (putting the largest |value| in [2¹⁰, 2¹¹), so that no value
// overflows and few are subnormal; at most 2¹²⁶, which float32 holds) and
// rounded to the nearest half float, in blocks of HalfBlock rows stored
// coordinate-major (block b's coordinate j at blocks[(b·d + j)·16 :]; the
// last block's missing rows are +Inf, and their bits in a mask mean
// nothing). blockErr[b] bounds ‖scale·x − h‖₂ over block b's rows: a
// block's own, so that rows of a far larger norm elsewhere do not loosen
// its bound. SqScreen and PowScreen scan it.
type HalfRows struct {
	N, D     int
	log2     int // the scale is 2^log2
	blocks   []uint16
	blockErr []float32
}

// scale is the power of two the values were multiplied by.
func (h *HalfRows) scale() float32 { return float32(math.Ldexp(1, h.log2)) }

// block is the window of blocks holding blocks b0 … b1−1.
func (h *HalfRows) block(b0, b1 int) []uint16 {
	return h.blocks[b0*HalfBlock*h.D : b1*HalfBlock*h.D]
}

// HalfBytes is the memory NewHalfRows takes for n rows of dimension d.
func HalfBytes(n, d int) int64 {
	nb := int64((n + HalfBlock - 1) / HalfBlock)
	return nb*HalfBlock*int64(d)*2 + nb*4
}

// NewHalfRows makes the half-precision copy of rows (n×d, finite), the
// blocks lo…hi−1 at a time through each (for a caller's workers: each
// block is written by exactly one call of fill).
func NewHalfRows(rows []float32, d int, each func(nb int, fill func(b0, b1 int))) *HalfRows {
	n := len(rows) / d
	nb := (n + HalfBlock - 1) / HalfBlock
	// The largest |value|: float32 bits without the sign order as the
	// values do (a compare of integers, no branch on the sign).
	tops := make([]uint32, nb)
	each(nb, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			var t uint32
			for _, v := range rows[b*HalfBlock*d : min(n, (b+1)*HalfBlock)*d] {
				t = max(t, math.Float32bits(v)&^(1<<31))
			}
			tops[b] = t
		}
	})
	top := float32(0)
	for _, t := range tops {
		top = max(top, math.Float32frombits(t))
	}
	e := 0
	if top > 0 {
		_, e = math.Frexp(float64(top)) // top ∈ [2^(e−1), 2^e)
	}
	// float32 holds 2¹²⁶; values below 2⁻¹¹⁵ then end up subnormal halves,
	// whose rounding the bounds carry.
	h := &HalfRows{N: n, D: d, log2: min(11-e, 126)}
	h.blocks = make([]uint16, nb*HalfBlock*d)
	scale := h.scale()
	errs := make([]float64, nb)
	each(nb, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			blk := h.block(b, b+1)
			for l := range HalfBlock {
				i := b*HalfBlock + l
				if i >= n {
					for j := range d {
						blk[j*HalfBlock+l] = 0x7c00 // +Inf
					}
					continue
				}
				var s float64
				for j, v := range rows[i*d : (i+1)*d] {
					// Exact (a power of two) but for an underflow below
					// 2⁻¹²⁶, which the bounds' 2⁻¹⁴⁹ terms carry.
					x := v * scale
					hv := toHalf(x)
					blk[j*HalfBlock+l] = hv
					r := float64(x) - float64(fromHalf(hv))
					s += r * r
				}
				errs[b] = max(errs[b], s)
			}
		}
	})
	h.blockErr = make([]float32, nb)
	for b, v := range errs {
		h.blockErr[b] = up32(math.Sqrt(v) * (1 + 1e-12))
	}
	return h
}

// toHalf rounds f to the nearest IEEE half float (ties to even; beyond the
// largest, ±Inf; NaN stays NaN).
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	b &^= 1 << 31
	if b-0x38800000 < 0x477ff000-0x38800000 { // ≥ 2⁻¹⁴ and < 65520: a normal half
		m := b - 112<<23
		m += 0xfff + (m>>13)&1
		return sign | uint16(m>>13)
	}
	switch {
	case b > 0x7f800000:
		return sign | 0x7e00
	case b >= 0x477ff000: // ≥ 65520: rounds to Inf
		return sign | 0x7c00
	case b >= 0x33000000: // ≥ 2⁻²⁵: a subnormal half (or 2⁻¹⁴)
		e := b >> 23
		mant := b&0x7fffff | 0x800000
		shift := 126 - e
		r := mant >> shift
		rem, half := mant&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || rem == half && r&1 == 1 {
			r++
		}
		return sign | uint16(r)
	}
	return sign
}

// fromHalf is the float32 of the half float h (exact).
func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	if a := uint32(h & 0x7fff); a-0x400 < 0x7c00-0x400 { // normal
		return math.Float32frombits(sign | (a<<13 + 112<<23))
	}
	m := uint32(h & 0x3ff)
	if h&0x7c00 == 0x7c00 { // ±Inf, NaN
		return math.Float32frombits(sign | 0x7f800000 | m<<13)
	}
	v := float32(m) * 0x1p-24 // zero or subnormal
	if sign != 0 {
		v = -v
	}
	return v
}

// sqHalfMask sets bit l of masks[b] unless Σ_j (h − anchor_j)² > (r +
// errs[b])²·c for row l of block b of blocks (len(masks) blocks of
// HalfBlock rows; h the row's half floats; the sums in float32, four
// partial sums a row, within sqHalfErr(d) of the exact sum; the limit in
// float32). A NaN sum keeps its row. sqHalfParams gives r and c.
func sqHalfMask(masks []uint16, anchor []float32, blocks []uint16, errs []float32, r, c float32) {
	d := len(anchor)
	if len(blocks) != len(masks)*HalfBlock*d || len(errs) != len(masks) {
		panic("kernel: sqHalfMask: lengths differ")
	}
	if sqHalfV != nil {
		sqHalfV(masks, anchor, blocks, errs, r, c)
		return
	}
	for b := range masks {
		e := r + errs[b]
		limit := e * e * c
		blk := blocks[b*HalfBlock*d : (b+1)*HalfBlock*d]
		var m uint16
		for l := range HalfBlock {
			var s float32
			for j, a := range anchor {
				x := fromHalf(blk[j*HalfBlock+l]) - a
				s += x * x
			}
			if !(s > limit) {
				m |= 1 << l
			}
		}
		masks[b] = m
	}
}

// sqHalfErr bounds sqHalfMask's relative error: the computed sum S̃ of d
// terms is within sqHalfErr(d)·S of the exact sum S of the exact squared
// differences (each difference and square rounded once, then d/4 + 3
// additions a lane, or d with the portable kernels).
func sqHalfErr(d int) float64 { return float64(d+8) * 0x1p-23 }

// halfKeep is 1 − halfRel, rounded down (the assembly's constant).
const halfKeep = float32(1 - halfRel - 0x1p-24)

// powHalfConsts writes the constants powHalfMask takes for a generalized
// ball's exponents p and log2 m, its anchor a (already scaled by
// 2^log2Scale, the rows' scale) and the scale: a_j, A_j = p_j, B_j =
// 2²³·(p_j·(log2 m_j − log2Scale − 127) + 127) and T_j ≥ halfRel·|a_j| +
// halfAbs for each j — so that A_j·bits(y) + B_j is 2²³·(z + 127) for z =
// p_j·(log2 m_j − log2Scale + bits(y)·2⁻²³ − 127), and a half float h off
// its value x by at most halfRel·|h| + halfAbs ≤ halfRel·|h − a_j| + T_j
// leaves (1 − halfRel)·|h − a_j| − T_j ≤ |x − a_j|.
func powHalfConsts(dst []float32, a []float32, log2m, p []float64, log2Scale int) {
	for j := range a {
		dst[4*j] = a[j]
		dst[4*j+1] = float32(p[j])
		dst[4*j+2] = float32(0x1p23 * (p[j]*(log2m[j]-float64(log2Scale)-127) + 127))
		dst[4*j+3] = up32((halfRel*math.Abs(float64(a[j])) + halfAbs) * (1 + 0x1p-20))
	}
}

// powHalfMask sets bit l of masks[b] unless the cheap bound of the
// generalized ball's score is above limit for row l of block b: per
// coordinate, y = (1 − halfRel)·|h − a_j| − T_j (≤ the distance to the
// row's true coordinate; powHalfConsts), then 2^z with z = p_j·(log2 m_j − k +
// log2 y) computed from y's bits (bits(y)·2⁻²³ − 127 ≤ log2 y) and back
// (the float of bits 2²³·(z + 127) is 2ⁿ·(1 + f) ≥ 2^z, at most 1.0615·2^z;
// one FMA, w = A_j·bits(y) + B_j, gives 2²³·(z + 127)), the bits taken as
// max(int(w), 2²³): z below −126 gives 2⁻¹²⁶ (the limit's slack carries
// it); summed in float32. consts is powHalfConsts's. z is not clamped
// above (one integer max where a float clamp to [2²³, 254·2²³] took two
// vector operations): from z = 128 the bits are those of +Inf (above any
// limit, as the term: 2^z > float32's largest), of a NaN (the row is kept)
// or, from w = 2³¹, 2⁻¹²⁶ (less than the term): each only keeps rows, so
// a row ruled out still scores above q. Every term is positive (or NaN),
// so a sum only grows: a row (the vector kernels: a pair of blocks) above
// limit part way is ruled out without its other coordinates.
func powHalfMask(masks []uint16, consts []float32, blocks []uint16, limit float32) {
	d := len(consts) / 4
	if len(consts) != 4*d || len(blocks) != len(masks)*HalfBlock*d {
		panic("kernel: powHalfMask: lengths differ")
	}
	if powHalfV != nil {
		powHalfV(masks, consts, blocks, limit)
		return
	}
	powMask(masks, consts, blocks, limit, fromHalf)
}

// powMask is powHalfMask's portable kernel on blocks of values whose
// float32 value is value(v) (half floats, or ByteRows' codes).
func powMask[V uint8 | uint16](masks []uint16, consts []float32, blocks []V, limit float32, value func(V) float32) {
	d := len(consts) / 4
	for b := range masks {
		blk := blocks[b*HalfBlock*d : (b+1)*HalfBlock*d]
		var m uint16
		for l := range HalfBlock {
			var s float32
			for j := range d {
				if j%16 == 0 && s > limit {
					break // the sum only grows (as the vector kernels' looks)
				}
				s += screenTerm(value(blk[j*HalfBlock+l]), consts[4*j:4*j+4])
			}
			if !(s > limit) {
				m |= 1 << l
			}
		}
		masks[b] = m
	}
}

// screenTerm is powHalfMask's term for the value h (a half float's, or a
// code's) and a coordinate's constants c (a_j, A_j, B_j, T_j).
func screenTerm(h float32, c []float32) float32 {
	y := float32(math.FMA(float64(abs32(h-c[0])), float64(halfKeep), -float64(c[3])))
	L := float32(int32(math.Float32bits(y)))
	w := float32(math.FMA(float64(L), float64(c[1]), float64(c[2])))
	return math.Float32frombits(uint32(max(truncInt32(w), 1<<23)))
}

// truncInt32 is w truncated to an int32, math.MinInt32 beyond int32's
// range and for a NaN: CVTTPS2DQ's result.
func truncInt32(w float32) int32 {
	if w > -0x1p31 && w < 0x1p31 {
		return int32(w)
	}
	return math.MinInt32
}

// sqHalfParams is r and c for sqHalfMask that rule out only rows x with
// ‖a − x‖₂ > q, for h the HalfRows of the rows, its blockErr the errs and
// a' = Scale·a the anchor given to the mask: a row ruled out has ‖h − a'‖
// > Scale·q + blockErr[b] (room left for the three float32 roundings of
// the limit and the scaled anchor's underflow), and ‖Scale·x − h‖ ≤
// blockErr[b]. A bound that overflows float32 is +Inf: no row is ruled
// out.
func (h *HalfRows) sqHalfParams(q float64) (r, c float32) {
	r = up32(q*float64(h.scale())*(1+0x1p-20) + math.Sqrt(float64(h.D))*0x1p-149)
	return r, up32((1 + sqHalfErr(h.D)) * (1 + 0x1p-20))
}

// powHalfLimit is the limit for powHalfMask that rules out only rows x
// with Σ_j (m_j·|a_j − x_j|)^{p_j} > q, for h the HalfRows of the rows and
// consts powHalfConsts's for log2 m, p and h.log2 (see powHalfMask: the
// bound's 2ⁿ·(1 + f) is at most 1.0615 times 2^z, z is off by the
// roundings Δ of its operations and conversions, a
// coordinate whose y is below 2⁻¹²⁶ adds at most 1.0615·2^max(−126,
// p_j·(log2 m_j − k − 126) + Δ), and the float32 lane sum is within
// (d + 2)·2⁻²⁴); +Inf where the bound overflows float32.
func (h *HalfRows) powHalfLimit(q float64, log2m, p []float64) float32 {
	return h.powHalfLimits(log2m, p).of(q)
}

// halfLimits is powHalfLimit's parts that do not depend on q.
type halfLimits struct{ c, slack, f float64 }

// powHalfLimits is powHalfLimit for log2 m and p, for any q (of).
func (h *HalfRows) powHalfLimits(log2m, p []float64) halfLimits {
	return powLimits(float64(h.log2), log2m, p)
}

// powLimits is powHalfLimits for rows scaled by 2^k (ByteRows: k = 0, the
// steps in log2 m).
func powLimits(k float64, log2m, p []float64) halfLimits {
	var delta, pmax, slack float64
	for j := range p {
		// In units of z: bits(y) ≤ 2³¹ rounded to float32 (p·2⁻¹⁶), A_j
		// rounded (p·2⁻¹⁶), B_j rounded ((p·(|log2 m| + |k| + 127) + 127)·2⁻²⁴),
		// the FMA's rounding of w < 2³¹ (2⁻¹⁶); doubled.
		dj := p[j]*(2*0x1p-16+(math.Abs(log2m[j])+math.Abs(k)+127)*0x1p-24) + 127*0x1p-24 + 0x1p-16
		delta = max(delta, 2*dj)
		pmax = max(pmax, p[j])
	}
	for j := range p {
		slack += 1.0615 * math.Exp2(max(-126, p[j]*(log2m[j]-k-126)+delta))
	}
	return halfLimits{c: 1.0615 * math.Exp2(delta) * math.Pow(1+0x1p-22, pmax), slack: slack, f: 1 + float64(len(p)+2)*0x1p-23}
}

// of is the limit for q.
func (l halfLimits) of(q float64) float32 {
	return up32((l.c*q + l.slack) * l.f * (1 + 0x1p-22))
}

// ScaleAnchor is anchor scaled as h's rows are, or false where a
// coordinate would leave float32's comfortable range (|a| ≥ 2⁶⁰).
func (h *HalfRows) ScaleAnchor(anchor []float32) ([]float32, bool) {
	a := make([]float32, len(anchor))
	for j, v := range anchor {
		a[j] = v * h.scale()
		if !(math.Abs(float64(a[j])) < 0x1p60) {
			return nil, false
		}
	}
	return a, true
}

// SqScreen returns sqHalfMask for the scaled anchor a (ScaleAnchor) and
// the distance q, on h's blocks b0 … b0+len(masks)−1: it rules out only
// rows x with ‖a/Scale − x‖₂ > q. Nil where the bound overflows.
func (h *HalfRows) SqScreen(a []float32, q float64) func(b0 int, masks []uint16) {
	r, c := h.sqHalfParams(q)
	if math.IsInf(float64(r), 0) || math.IsInf(float64(c), 0) {
		return nil
	}
	return func(b0 int, masks []uint16) {
		b1 := b0 + len(masks)
		sqHalfMask(masks, a, h.block(b0, b1), h.blockErr[b0:b1], r, c)
	}
}

// PowScreen returns powHalfMask for the scaled anchor a (ScaleAnchor),
// log2 m, p and the score q, on h's blocks b0 … b0+len(masks)−1: it rules
// out only rows x with Σ_j (m_j·|a_j/Scale − x_j|)^{p_j} > q. Nil where the
// bound overflows.
//
// powHalfMask keeps the rows with a term of 2¹²⁸ or more (scaled): so
// that rows far out are still ruled out where a large p makes such terms
// (p = 10, m_j·|a_j − x_j| = 7000), PowScreen scales every term and q by
// 2⁻ˢ (m_j by 2^{−s/p_j}), s the least that keeps the largest term a
// coordinate's half floats allow below 2¹²¹.
func (h *HalfRows) PowScreen(a []float32, log2m, p []float64, q float64) func(b0 int, masks []uint16) {
	sc := new(PowScreener)
	if !h.PowScreens(log2m, p).At(sc, a) {
		return nil
	}
	limit, ok := sc.limit(q)
	if !ok {
		return nil
	}
	return func(b0 int, masks []uint16) { sc.masks(b0, masks, limit) }
}

// A PowScreener is PowScreen for one anchor and a score given at each
// call (Masks): its constants are made once (PowScreens, then At).
type PowScreener struct {
	base   *PowScreens
	consts []float32
	shift  int // the terms' and q's scale is 2^−shift
	lim    halfLimits
}

// PowScreens is PowScreen's constants for log2 m and p that do not depend
// on the anchor, shared by the PowScreeners At makes.
type PowScreens struct {
	h        *HalfRows
	log2m, p []float64
	lim      halfLimits // without a shift
}

// PowScreens prepares PowScreen for log2 m and p (kept: the caller must
// not change them), for any anchor (At) and score.
func (h *HalfRows) PowScreens(log2m, p []float64) *PowScreens {
	return &PowScreens{h: h, log2m: log2m, p: p, lim: h.powHalfLimits(log2m, p)}
}

// At makes sc (its memory reused) PowScreen's screen about the scaled
// anchor a (ScaleAnchor), for any score; false where the anchor's terms
// would overflow.
func (ps *PowScreens) At(sc *PowScreener, a []float32) bool {
	h, log2m, p := ps.h, ps.log2m, ps.p
	// |h| ≤ 2¹¹ (the scale), so |h − a_j| < 2¹² + 2|a_j| with room for
	// its roundings; z is in the rows' scaled units, as powHalfConsts's B.
	var zmax float64
	for j := range a {
		zmax = max(zmax, p[j]*(log2m[j]-float64(h.log2)+math.Log2(0x1p12+2*math.Abs(float64(a[j])))))
	}
	if !(zmax < 1e4) {
		return false
	}
	sc.base, sc.shift, sc.lim = ps, 0, ps.lim
	if s := math.Ceil(zmax - 120); s > 0 {
		shifted := make([]float64, len(log2m))
		for j := range log2m {
			shifted[j] = log2m[j] - s/p[j]
		}
		log2m, sc.shift = shifted, int(s)
		sc.lim = h.powHalfLimits(log2m, p)
	}
	if len(sc.consts) != 4*h.D {
		sc.consts = make([]float32, 4*h.D)
	}
	powHalfConsts(sc.consts, a, log2m, p, h.log2)
	return true
}

// limit is powHalfMask's limit for the score q, or false where q
// underflows in the terms' scale or the bound overflows.
func (sc *PowScreener) limit(q float64) (float32, bool) {
	if sc.shift > 0 {
		qs := math.Ldexp(q, -sc.shift)
		if math.Ldexp(qs, sc.shift) != q {
			return 0, false // q underflows
		}
		q = qs
	}
	limit := sc.lim.of(q)
	return limit, !math.IsInf(float64(limit), 0)
}

// masks is powHalfMask's masks on blocks b0 … b0+len(masks)−1 for limit.
func (sc *PowScreener) masks(b0 int, masks []uint16, limit float32) {
	powHalfMask(masks, sc.consts, sc.base.h.block(b0, b0+len(masks)), limit)
}

// Masks is PowScreen(a, log2m, p, q)'s masks on blocks b0 … b0+len(masks)−1;
// false, and masks unset, where PowScreen would be nil.
func (sc *PowScreener) Masks(b0 int, masks []uint16, q float64) bool {
	limit, ok := sc.limit(q)
	if ok {
		sc.masks(b0, masks, limit)
	}
	return ok
}
