package geometry

import (
	"math"

	"github.com/ccsets/ccs/internal/kernel"
)

// A Filterer rules rows out fast. For an anchor and a threshold q, Filter
// returns a function that sets keep[i] to false only for a row of rows
// (rows of the geometry's dimension) whose score around the anchor
// certainly exceeds q — a float32 bound with its rounding accounted for —
// so that the rows kept, scored exactly, are the hits of an exact scan; or
// nil when no useful bound exists. scratch holds one value per row.
// Geometries whose score is a sum of non-negative per-coordinate terms
// (the ℓ2 ball, the generalized ball) are Filterers: a row's partial sum
// stops it as soon as it passes the bound. Retrieval uses it.
type Filterer interface {
	Filter(anchor []float32, q float64) func(rows []float32, keep []bool, scratch []float64)
}

// A LinearNorm is a geometry whose score is ‖M·x‖_p (the single-norm
// family): rows mapped by M once can be scanned as a p-norm of M·a − M·z.
type LinearNorm interface {
	Geometry
	M() []float64 // d×d, row-major (a copy)
	P() float64
}

// Filter implements Filterer: the squared distance's float32 sum, which
// stops a row once it passes q² with a margin for its rounding.
func (b Ball) Filter(anchor []float32, q float64) func(rows []float32, keep []bool, scratch []float64) {
	// The exact score sums the same float32 differences' squares in
	// float64: above this the fast sum is certainly outside.
	limit := q * q * (1 + 1e-9) * (1 + kernel.SqRowsBoundErr(b.D))
	return func(rows []float32, keep []bool, sc []float64) {
		kernel.SqRowsBound(sc[:len(keep)], anchor, rows, limit)
		for i, v := range sc[:len(keep)] {
			// +Inf: a float32 square overflowed where float64 does not.
			keep[i] = !(v > limit) || math.IsInf(v, 1)
		}
	}
}

// Filter implements Filterer: the fast float32 score's partial sums
// (FastScore), bounded by its tolerance; nil when the exponents are so
// large that the fast score bounds nothing.
func (g *GenBall) Filter(anchor []float32, q float64) func(rows []float32, keep []bool, scratch []float64) {
	d := g.Dim()
	m, p := make([]float32, d), make([]float32, d)
	for j := range d {
		m[j], p[j] = float32(g.m[j]), float32(g.p[j])
	}
	rel, abs := g.FastTolerance()
	if !(rel < 0.5) {
		return nil
	}
	// Above (q + abs)/(1 − rel) a fast score is certainly outside (see
	// Members); partial sums are float32 lane sums: 1e-5 more.
	limit := (q + abs) / (1 - rel) * (1 + 1e-5)
	return func(rows []float32, keep []bool, sc []float64) {
		kernel.FastPowRowsBound(sc[:len(keep)], m, p, anchor, rows, limit)
		for i, v := range sc[:len(keep)] {
			keep[i] = !(v > limit) || math.IsInf(v, 1)
		}
	}
}

// A HalfScreener rules rows out from their half-precision copy
// (kernel.HalfRows), at half the bytes of the rows (the ℓ2 ball). For an
// anchor and a threshold q, ScreenHalf returns a function that writes one
// mask per block of the copy (kernel.HalfBlock rows) whose clear bits are
// rows whose score around the anchor certainly exceeds q — every rounding,
// the half floats' included, accounted for — or nil where no useful bound
// exists (an anchor far outside the copy's range, a bound that overflows).
// The function writes the masks of h's blocks b0 … b0+len(masks)−1. The
// rows it keeps go on to Filter and the exact score. Retrieval uses it.
type HalfScreener interface {
	ScreenHalf(anchor []float32, q float64, h *kernel.HalfRows) func(b0 int, masks []uint16)
}

// ScreenHalf implements HalfScreener: the scaled ‖h − a‖ against its bound
// (kernel.HalfRows.SqScreen). The exact score sums float32 differences,
// each within 2⁻²⁴ of the true one, so a row whose true distance exceeds
// q·(1 + 2⁻²²) scores above q.
func (b Ball) ScreenHalf(anchor []float32, q float64, h *kernel.HalfRows) func(b0 int, masks []uint16) {
	a, ok := h.ScaleAnchor(anchor)
	if !ok || h.D != b.D {
		return nil
	}
	return h.SqScreen(a, q*(1+0x1p-22))
}

// A ByteScreener rules rows out from their 8-bit copy (kernel.ByteRows),
// at a quarter of the rows' bytes and a fraction of the fast score's
// arithmetic: as HalfScreener, for the generalized ball, whose terms
// depend on a code alone, so that a query's bounds can be tabulated (on
// 10⁶ Gaussian rows of d = 128 with 0.1% inside, the tables keep 0.22% of
// rows, the half floats' arithmetic bound 0.7%).
type ByteScreener interface {
	ScreenBytes(anchor []float32, q float64, h *kernel.ByteRows) func(b0 int, masks []uint16)
}

// ScreenBytes implements ByteScreener: the cheap lower bound of the score
// from the codes (kernel.ByteRows.PowScreen). The exact score takes
// (m_j·|x_j|)^{p_j} of float32 differences x_j (each within 2⁻²⁴ of the
// true one) in float64, so it is at least (1 − (p_max + 1)·2⁻²³) times the
// true score.
func (g *GenBall) ScreenBytes(anchor []float32, q float64, h *kernel.ByteRows) func(b0 int, masks []uint16) {
	d := g.Dim()
	if h.D != d {
		return nil
	}
	log2m := make([]float64, d)
	var pmax float64
	for j := range d {
		log2m[j] = math.Log2(g.m[j])
		pmax = max(pmax, g.p[j])
	}
	if !(pmax < 1e6) {
		return nil
	}
	return h.PowScreen(anchor, log2m, g.p, q/(1-(pmax+1)*0x1p-23)+float64(d)*0x1p-1000)
}
