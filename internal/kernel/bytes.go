package kernel

import (
	"math"
	"sync"

	"github.com/ccsets/ccs/internal/parallel"
)

// ByteRows is a copy of n rows of dimension d in 8 bits a value, made to
// be screened at a quarter of float32's bytes (half of HalfRows'): each
// coordinate j has an offset lo_j (its least value) and a step s_j (its
// range over 255), and a value x is stored as the code c = round((x −
// lo_j)/s_j) in 0 … 255, so that |x − (lo_j + c·s_j)| ≤ s_j·(1/2 + 2⁻⁴³)
// (byteErr: the float64 division's roundings). Blocks of HalfBlock rows
// are stored coordinate-major, as HalfRows' (block b's coordinate j at
// blocks[(b·d + j)·16 :]; the last block's missing rows are code 0, and
// their bits in a mask mean nothing). PowScreen scans it.
//
// A code keeps about as much of a standard normal coordinate as 8 bits
// can (a step of 0.035 over ±4.5). With each coordinate's bound the exact
// distance to its code's cell, 8-bit codes kept 0.16–0.19% of 2·10⁵
// Gaussian rows of d = 128 where 0.1% were inside (4-bit codes: 31–44%);
// PowScreen's tables keep 0.22% of such rows, its arithmetic bound
// (where the processor has no VBMI) 1.30% (the half floats' screen,
// 0.69%).
type ByteRows struct {
	N, D     int
	lo, step []float64
	log2Step []float64
	blocks   []uint8
}

// byteErr bounds |x − (lo_j + c·s_j)|/s_j: the rounding to a code (1/2)
// and that of computing (x − lo_j)/s_j in float64 (below 2⁻⁵¹·256).
const byteErr = 0.5 + 0x1p-43

// ByteRowsBytes is the memory NewByteRows takes for n rows of dimension d.
func ByteRowsBytes(n, d int) int64 {
	nb := int64((n + HalfBlock - 1) / HalfBlock)
	return nb*HalfBlock*int64(d) + 3*8*int64(d)
}

// NewByteRows makes the 8-bit copy of rows (n×d, finite), the blocks
// lo…hi−1 at a time through each (for a caller's workers: each block is
// written by exactly one call of fill, and calls may run at once).
func NewByteRows(rows []float32, d int, each func(nb int, fill func(b0, b1 int))) *ByteRows {
	n := len(rows) / d
	nb := (n + HalfBlock - 1) / HalfBlock
	h := &ByteRows{N: n, D: d, lo: make([]float64, d), step: make([]float64, d), log2Step: make([]float64, d)}
	hi := make([]float64, d)
	for j := range d {
		h.lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	// Each coordinate's range: per call, then merged (min and max do not
	// depend on the order).
	var mu sync.Mutex
	each(nb, func(b0, b1 int) {
		lo, up := make([]float32, d), make([]float32, d)
		for j := range d {
			lo[j], up[j] = float32(math.Inf(1)), float32(math.Inf(-1))
		}
		for i := b0 * HalfBlock; i < min(n, b1*HalfBlock); i++ {
			for j, v := range rows[i*d : (i+1)*d] {
				lo[j], up[j] = min(lo[j], v), max(up[j], v)
			}
		}
		mu.Lock()
		for j := range d {
			h.lo[j], hi[j] = min(h.lo[j], float64(lo[j])), max(hi[j], float64(up[j]))
		}
		mu.Unlock()
	})
	// A coordinate of one value (or none) has every code 0, exactly, with
	// the largest step of the others (or 1): a step far below the
	// anchors' distances would put u_j = (a_j − lo_j)/s_j out of float32's
	// comfortable range, and PowScreen would give up.
	var top float64
	for j := range d {
		h.step[j] = (hi[j] - h.lo[j]) / 255
		if h.step[j] > 0 {
			top = max(top, h.step[j])
		}
	}
	if top == 0 {
		top = 1
	}
	for j := range d {
		if !(h.step[j] > 0) {
			h.step[j] = top
			if !(hi[j] >= h.lo[j]) {
				h.lo[j] = 0
			}
		}
		h.log2Step[j] = math.Log2(h.step[j])
	}
	h.blocks = make([]uint8, nb*HalfBlock*d)
	each(nb, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			blk := h.blocks[b*HalfBlock*d : (b+1)*HalfBlock*d]
			for l := range min(HalfBlock, n-b*HalfBlock) {
				i := b*HalfBlock + l
				for j, v := range rows[i*d : (i+1)*d] {
					c := math.Round((float64(v) - h.lo[j]) / h.step[j])
					blk[j*HalfBlock+l] = uint8(max(0, min(255, c)))
				}
			}
		}
	})
	return h
}

// PowScreen returns the generalized ball's screen of h's blocks b0 …
// b0+len(masks)−1 about anchor (unscaled), for log2 m, p and the score q:
// it rules out only rows x with Σ_j (m_j·|a_j − x_j|)^{p_j} > q (the
// bound of powHalfMask, on codes: per coordinate, |x_j − a_j| ≥ s_j·(|c −
// u_j| − 1/2 − …) for u_j = (a_j − lo_j)/s_j). Nil where the anchor or the
// bound leaves float32's range.
//
// Where the processor has AVX512BW and AVX512VBMI (at the AVX-512 level)
// the screen looks each term up in a table made for the query
// (lutScreen); elsewhere it computes a looser bound from the codes
// (powScreen).
func (h *ByteRows) PowScreen(anchor []float32, log2m, p []float64, q float64) func(b0 int, masks []uint16) {
	if lutByteV != nil {
		if s := h.lutScreen(anchor, log2m, p, q); s != nil {
			return s
		}
	}
	return h.powScreen(anchor, log2m, p, q)
}

// powScreen is PowScreen by arithmetic on the codes: the bound of
// powHalfMask, in the codes' units.
func (h *ByteRows) powScreen(anchor []float32, log2m, p []float64, q float64) func(b0 int, masks []uint16) {
	d := h.D
	if len(anchor) != d || len(log2m) != d || len(p) != d {
		return nil
	}
	u := make([]float32, d)
	lm := make([]float64, d)
	var zmax float64
	for j, a := range anchor {
		v := (float64(a) - h.lo[j]) / h.step[j]
		if !(math.Abs(v) < 0x1p60) {
			return nil
		}
		u[j], lm[j] = float32(v), log2m[j]+h.log2Step[j]
		// |c − u_j| < 2⁸ + |u_j| ≤ 2⁹ + 2|u_j|, with room for roundings.
		zmax = max(zmax, p[j]*(lm[j]+math.Log2(0x1p9+2*math.Abs(v))))
	}
	if !(zmax < 1e4) {
		return nil
	}
	// Scale every term and q by 2^−shift where a term could reach 2¹²¹
	// (as PowScreens.At: powHalfMask keeps rows with a term of 2¹²⁸).
	shift := 0
	if s := math.Ceil(zmax - 120); s > 0 {
		for j := range lm {
			lm[j] -= s / p[j]
		}
		shift = int(s)
		qs := math.Ldexp(q, -shift)
		if math.Ldexp(qs, shift) != q {
			return nil // q underflows
		}
		q = qs
	}
	consts := make([]float32, 4*d)
	powByteConsts(consts, u, lm, p)
	// log2 s_j's own rounding (≈ 2⁻⁵² of it) is far inside the doubled
	// rounding of B_j powLimits allows for.
	limit := powLimits(0, lm, p).of(q)
	if math.IsInf(float64(limit), 0) {
		return nil
	}
	return func(b0 int, masks []uint16) {
		powByteMask(masks, consts, h.blocks[b0*HalfBlock*d:(b0+len(masks))*HalfBlock*d], limit)
	}
}

// powByteConsts writes powByteMask's constants: powHalfConsts's for the
// anchor u in codes' units and log2 m'_j = log2 m_j + log2 s_j (the scale
// 2⁰), but T_j ≥ byteErr + 2⁻²³·|u_j| (the code's rounding and u_j's own:
// its float64 division and its rounding to float32), so that y = (1 −
// halfRel)·|c − u_j| − T_j ≤ |x − a_j|/s_j.
func powByteConsts(dst, u []float32, log2m, p []float64) {
	powHalfConsts(dst, u, log2m, p, 0)
	for j := range u {
		dst[4*j+3] = up32((byteErr + 0x1p-23*math.Abs(float64(u[j]))) * (1 + 0x1p-20))
	}
}

// powByteMask is powHalfMask on a ByteRows' codes: row l of block b is
// ruled out where the sum over j of the term of y = (1 − halfRel)·|c −
// a_j| − T_j is above limit.
func powByteMask(masks []uint16, consts []float32, blocks []uint8, limit float32) {
	d := len(consts) / 4
	if len(consts) != 4*d || len(blocks) != len(masks)*HalfBlock*d {
		panic("kernel: powByteMask: lengths differ")
	}
	if powByteV != nil {
		powByteV(masks, consts, blocks, limit)
		return
	}
	powMask(masks, consts, blocks, limit, func(c uint8) float32 { return float32(c) })
}

// lutScreen is PowScreen by table: for each coordinate j and code c, a
// table holds b_j(c) = ⌊min(2¹⁶ − 1, t·R/q)⌋ for a t no larger than
// (m_j·|x − a_j|)^{p_j} at any x whose code is c (the distance from a_j to
// the code's cell, less the roundings, to the power p_j, all in float64),
// and a row is ruled out where Σ_j b_j(c_j) > R = lutLimit, which implies
// that its score is above q. The sums lose less than d·q/R to the floors
// (0.2% of q at d = 128), and one term of 2¹⁶ − 1 is above q. Nil where
// q, a p_j or the anchor is not usable.
func (h *ByteRows) lutScreen(anchor []float32, log2m, p []float64, q float64) func(b0 int, masks []uint16) {
	tab := h.lutTables(anchor, log2m, p, q)
	if tab == nil {
		return nil
	}
	d, R := h.D, uint64(lutLimit)
	return func(b0 int, masks []uint16) {
		blocks := h.blocks[b0*HalfBlock*d : (b0+len(masks))*HalfBlock*d]
		n := 0
		if lutByteV != nil {
			n = len(masks) &^ 7
			lutByteV(masks[:n], tab, blocks[:n*HalfBlock*d], R)
		}
		lutMask(masks[n:], tab, blocks[n*HalfBlock*d:], R)
	}
}

// lutTables is lutScreen's tables: the low byte of b_j(c) at tab[512·j +
// c], the high at tab[512·j + 256 + c]; or nil.
func (h *ByteRows) lutTables(anchor []float32, log2m, p []float64, q float64) []uint8 {
	d := h.D
	if len(anchor) != d || len(log2m) != d || len(p) != d || !(q > 0 && q <= math.MaxFloat64) {
		return nil
	}
	for j := range d {
		a := float64(anchor[j])
		if !(p[j] > 0 && p[j] <= 1e6) || math.IsInf(a, 0) || math.IsNaN(a) || math.IsInf(log2m[j], 0) || math.IsNaN(log2m[j]) {
			return nil
		}
	}
	tab := make([]uint8, 512*d)
	lr := math.Log(lutLimit) - math.Log(q)
	// Each coordinate's table on its own (the same bits in any order), a
	// few coordinates a chunk on every core.
	parallel.For(d, 8, 0, func(_, j0, j1 int) {
		var v, lg [256]float64
		for j := j0; j < j1; j++ {
			a, lo, s, pj := float64(anchor[j]), h.lo[j], h.step[j], p[j]
			// |x − a| ≥ |lo + c·s − a| − s·byteErr for x of code c;
			// the float64 sum and difference are within 2⁻⁵²(|lo| +
			// 255·s + |a|) of the exact ones.
			slack := s*byteErr + 0x1p-50*(math.Abs(lo)+256*s+math.Abs(a))
			for c := range v {
				x := math.Abs(lo+float64(c)*s-a)*(1-0x1p-50) - slack
				if x < 0 {
					x = 0
				}
				v[c] = x
			}
			Log64(lg[:], v[:])
			// L = ln(t·R/q), less a margin far above the roundings of
			// its sum and of Log and Exp (each within an ulp): L − A −
			// B·|ln v| (ln v = −Inf: L = −Inf, t = 0).
			lm := log2m[j] * math.Ln2
			A, B := 0x1p-40*(math.Abs(lr)+pj*math.Abs(lm)+1), 0x1p-40*pj
			c0 := lr + pj*lm
			for c, l := range lg {
				v[c] = c0 + pj*l - A - B*math.Abs(l)
			}
			Exp64(lg[:], v[:])
			lo8, hi8 := tab[j*512:j*512+256], tab[j*512+256:j*512+512]
			for c, t := range lg {
				b := uint16(min(t, 0xffff)) // the floor; t ≥ 0, never NaN
				lo8[c], hi8[c] = uint8(b), uint8(b>>8)
			}
		}
	})
	return tab
}

// lutLimit is the table screen's R: the largest sum of 16 bits the
// vector kernel's saturating sums can tell from 2¹⁶ − 1, whatever d.
const lutLimit = 65024

// lutMask is lutByteV, portable: bit l of masks[b] is set unless the sum
// of the entries tab[512·j + c] + 256·tab[512·j + 256 + c] over the codes
// c of row l of block b is above limit.
func lutMask(masks []uint16, tab, blocks []uint8, limit uint64) {
	d := len(tab) / 512
	if len(tab) != 512*d || len(blocks) != len(masks)*HalfBlock*d {
		panic("kernel: lutMask: lengths differ")
	}
	for b := range masks {
		var sums [HalfBlock]uint64
		blk := blocks[b*HalfBlock*d : (b+1)*HalfBlock*d]
		for j := range d {
			lo, hi := tab[j*512:j*512+256], tab[j*512+256:j*512+512]
			for l, c := range blk[j*HalfBlock : (j+1)*HalfBlock] {
				sums[l] += uint64(lo[c]) | uint64(hi[c])<<8
			}
		}
		var m uint16
		for l, s := range sums {
			if s <= limit {
				m |= 1 << l
			}
		}
		masks[b] = m
	}
}
