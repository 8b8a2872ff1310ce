package geometry

import (
	"math"

	"github.com/ccsets/ccs/internal/kernel"
)

// FastScorer is implemented by geometries with a fast approximate score of
// raw differences (float32 arithmetic, on vectors where the build and
// processor have them). Members uses it to decide membership exactly at a
// fraction of the exact score's cost.
type FastScorer interface {
	Geometry
	// ScoresFast writes approximate scores φ̃ of the rows of diffs:
	// |φ̃ − φ| ≤ rel·φ + abs with (rel, abs) = FastTolerance(). A row with a
	// NaN gives NaN; a row with a term beyond float32's range (e^88) +Inf.
	ScoresFast(dst []float64, diffs []float32) []float64
	// FastTolerance is the error bound of ScoresFast.
	FastTolerance() (rel, abs float64)
}

var _ FastScorer = (*GenBall)(nil)

// Members writes into dst whether each row of diffs is inside the set
// {φ ≤ q}, as the exact score decides. With a FastScorer it scores every row
// fast and rescores exactly only the rows whose fast score lies within the
// error bound of q (or is not finite), so the decisions are those of Scores.
// scores, when non-nil, receives the scores used (fast ones outside the
// band, exact ones inside it).
func Members(g Geometry, q float64, dst []bool, scores []float64, diffs []float32) []bool {
	return members(g, q, dst, scores, diffs, true)
}

// members is Members with the fast path on or off (the tests compare the two).
func members(g Geometry, q float64, dst []bool, scores []float64, diffs []float32, fast bool) []bool {
	scores, n := rows(scores, diffs, g.Dim())
	if dst == nil {
		dst = make([]bool, n)
	}
	if len(dst) != n {
		panic(errLength)
	}
	f, ok := g.(FastScorer)
	if !ok || !fast {
		for i, s := range g.Scores(scores, diffs) {
			dst[i] = s <= q
		}
		return dst
	}
	f.ScoresFast(scores, diffs)
	rel, abs := f.FastTolerance()
	d := g.Dim()
	var one [1]float64
	for i, s := range scores {
		if margin := rel*max(s, q) + abs; math.IsInf(s, 0) || math.IsNaN(s) || math.Abs(s-q) <= margin {
			s = g.Scores(one[:], diffs[i*d:(i+1)*d])[0]
			scores[i] = s
		}
		dst[i] = s <= q
	}
	return dst
}

// ScoresFast computes Σ_j 2^(p_j·log2(m_j·|x_j|)) in float32 (kernel.Log2Poly
// and kernel.Exp2Poly, on vectors where the processor has them), each row
// summed in float64. A row with an m_j·|x_j| outside float32's normal range
// (other than 0) or a NaN scores +Inf, for Members to rescore exactly.
// FastTolerance bounds the error.
func (g *GenBall) ScoresFast(dst []float64, diffs []float32) []float64 {
	d := len(g.m)
	dst, n := rows(dst, diffs, d)
	m, p := g.fast32()
	kernel.FastPowRows(dst[:n], m, p, diffs)
	return dst
}

// fast32 returns m and p in float32.
func (g *GenBall) fast32() (m, p []float32) {
	d := len(g.m)
	m, p = make([]float32, d), make([]float32, d)
	for j := range d {
		m[j], p[j] = float32(g.m[j]), float32(g.p[j])
	}
	return m, p
}

// FastTolerance bounds ScoresFast's error, term by term to first order. The
// argument a = p·log2(m·|x|) of each power of two is off by at most
// p·(Log2PolyErr + 129·2⁻²³ + 2·2⁻²⁴) (the polynomial, the rounding of
// |log2 y| ≤ 128, the roundings of m and m·|x|) plus |a|·2⁻²⁴ ≤ 150·2⁻²⁴ (the
// rounding of a; beyond ±150 a term is 0 or +Inf), which costs ln 2 times as
// much relative error in 2^a; Exp2Poly adds Exp2PolyRelErr; a float32 lane
// sums up to ⌈d/8⌉ terms (2⁻²⁴ each). Terms below 2⁻¹²⁶ are lost: abs. The
// bound is doubled for the second-order terms.
func (g *GenBall) FastTolerance() (rel, abs float64) {
	pmax := 0.0
	for _, p := range g.p {
		pmax = math.Max(pmax, p)
	}
	const u = 0x1p-24
	d := float64(len(g.m))
	rel = math.Ln2*(pmax*(kernel.Log2PolyErr+129*2*u+2*u)+150*u) + kernel.Exp2PolyRelErr + math.Ceil(d/8)*u
	return 2 * rel, d * kernel.MinNormal32
}
