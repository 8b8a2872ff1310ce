package geometry

import (
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

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
	return decide(g, q, rel, abs, dst, scores, func(i int) []float32 { return diffs[i*d : (i+1)*d] })
}

// Undecided reports whether a fast score s, within rel·φ + abs of the
// exact score φ (FastTolerance), leaves φ ≤ q open: s within that bound of
// q, or not finite. Elsewhere s ≤ q decides as φ ≤ q does.
func Undecided(s, q, rel, abs float64) bool {
	return math.IsInf(s, 0) || math.IsNaN(s) || Near(s, q, rel, abs)
}

// Near is Undecided for a fast score s known to be finite: s within
// rel·max(s, q) + abs of q. A caller that weighs one score against many
// thresholds tests its finiteness once and calls Near for each.
func Near(s, q, rel, abs float64) bool { return math.Abs(s-q) <= rel*max(s, q)+abs }

// decide sets dst[i] to whether row i is inside {φ ≤ q}: from its fast
// score scores[i] (within rel·φ + abs of the exact one) where that lies
// beyond the bound of q, else from the exact score of row(i), written into
// scores (also where the fast score is not finite). rel = abs = 0 says the
// scores are exact: no row is rescored (a single-norm's single-row score
// can differ in its last bit from its block's).
func decide(g Geometry, q, rel, abs float64, dst []bool, scores []float64, row func(i int) []float32) []bool {
	if !(rel == 0 && abs == 0) {
		var near []int
		for i, s := range scores {
			if Undecided(s, q, rel, abs) {
				near = append(near, i)
			}
		}
		Rescore(g, scores, near, row)
	}
	for i, s := range scores {
		dst[i] = s <= q
	}
	return dst
}

// Rescore writes into scores[i], for each i of near, the exact score of
// row(i), the rows scored in one call of Scores: a row's exact score does
// not depend on the rows scored with it, and a single-norm's exact products
// take a few rows at a time, each of M's vectors read once for them (one
// call a row read all of M for each). row's slice may be reused between
// calls.
func Rescore(g Geometry, scores []float64, near []int, row func(i int) []float32) {
	if len(near) == 0 {
		return
	}
	rows := make([]float32, 0, len(near)*g.Dim())
	for _, i := range near {
		rows = append(rows, row(i)...)
	}
	for k, s := range g.Scores(nil, rows) {
		scores[near[k]] = s
	}
}

// MembersAround is Members on the differences anchor − point of the rows of
// points, made only for the rows it rescores exactly: for the ℓ2 ball and
// the generalized ball the fast kernels read the anchor and the points
// themselves (each difference rounded to float32 as Scores takes it) and
// the rows within the fast score's error bound of q, or not finite, are
// rescored exactly; other geometries, and a q that is not positive and
// finite, make the differences and call Members. dst and scores as
// Members's. No row stops early: a NaN or infinite coordinate anywhere in
// a row makes its score NaN or infinite, as the exact score has it, for a
// caller that refuses such points.
func MembersAround(g Geometry, q float64, anchor, points []float32, dst []bool, scores []float64) []bool {
	d := g.Dim()
	if len(anchor) != d {
		panic(errLength)
	}
	scores, n := rows(scores, points, d)
	if dst == nil {
		dst = make([]bool, n)
	}
	if len(dst) != n {
		panic(errLength)
	}
	var rel, abs float64
	switch gg := g.(type) {
	case Ball:
		if !(q > 0 && q*q < math.Inf(1)) {
			break
		}
		rel, _ = gg.FastTolerance()
		scoresAround(scores, anchor, points)
		return decideAround(g, q, rel, 0, anchor, points, dst, scores)
	case *GenBall:
		rel, abs = gg.FastTolerance()
		if !(rel < 0.5) || !(q >= 0 && q < math.Inf(1)) {
			break
		}
		m, p := gg.fast32()
		kernel.FastPowRowsAround(scores, m, p, anchor, points)
		return decideAround(g, q, rel, abs, anchor, points, dst, scores)
	}
	diffs := make([]float32, len(points))
	for i, v := range points {
		diffs[i] = anchor[i%d] - v
	}
	return Members(g, q, dst, scores, diffs)
}

// MembersAroundFor is the MembersAround to score a call of m rows in all
// with, block by block: MembersAround, or membersAroundExact where g's
// fast score is still to be prepared and the call too small to pay for it
// (fastWorth).
func MembersAroundFor(g Geometry, m int) func(g Geometry, q float64, anchor, points []float32, dst []bool, scores []float64) []bool {
	if fastWorth(g, m) {
		return MembersAround
	}
	return membersAroundExact
}

// membersAroundExact is MembersAround by the exact scores alone: the
// differences made and scored (Scores), no fast score prepared.
func membersAroundExact(g Geometry, q float64, anchor, points []float32, dst []bool, scores []float64) []bool {
	d := g.Dim()
	if len(anchor) != d {
		panic(errLength)
	}
	diffs := make([]float32, len(points))
	for i, v := range points {
		diffs[i] = anchor[i%d] - v
	}
	return members(g, q, dst, scores, diffs, false)
}

// fastWorth reports whether scoring m rows is worth g's fast score where
// it is still to be prepared: the ellipsoid's (L⁻¹ and its error bound,
// about (2/3)·d³ multiply-adds, as much as 4·d/3 rows' exact forward
// substitutions: 12.7 s for a few points at d = 3072), behind a shift
// too, is worth it from 2·d rows. The other fast scores cost nothing to
// prepare, or come with the geometry; so does one already made.
func fastWorth(g Geometry, m int) bool {
	if s, ok := g.(*Shifted); ok {
		g = s.Inner
	}
	e, ok := g.(*Ellipsoid)
	return !ok || e.fast.Load() != nil || m >= 2*e.d
}

// decideAround is decide for MembersAround: the difference anchor − point
// made for a row only when it is rescored.
func decideAround(g Geometry, q, rel, abs float64, anchor, points []float32, dst []bool, scores []float64) []bool {
	d := len(anchor)
	diff := make([]float32, d)
	return decide(g, q, rel, abs, dst, scores, func(i int) []float32 {
		for j, v := range points[i*d : (i+1)*d] {
			diff[j] = anchor[j] - v
		}
		return diff
	})
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

var _ FastScorer = Ball{}

// ScoresFast is the ℓ2 norm of each row from its float32 sum of squares
// (kernel.SqRowsBound: float32 lanes, on vectors where the build has
// them), a NaN or infinite coordinate giving NaN or +Inf.
func (b Ball) ScoresFast(dst []float64, diffs []float32) []float64 {
	dst, _ = rows(dst, diffs, b.D)
	scoresAround(dst, make([]float32, b.D), diffs)
	return dst
}

// scoresAround is the ball's fast score of anchor − item for each row of
// items (0 − x is −x exactly: ScoresFast with a zero anchor).
func scoresAround(dst []float64, anchor, items []float32) {
	kernel.SqRowsBound(dst, anchor, items, math.Inf(1))
	for i, s := range dst {
		dst[i] = math.Sqrt(s)
	}
}

// FastTolerance bounds ScoresFast's error: the float32 sum of squares is
// within SqRowsBoundErr(d) of the float64 one, its root within as much.
func (b Ball) FastTolerance() (rel, abs float64) {
	return kernel.SqRowsBoundErr(b.D) + 1e-12, 0
}

var _ FastScorer = (*Norm)(nil)

// ScoresFast computes ‖M·x‖_p as Scores does — y = M·x, then the powers
// of u_k = |y_k|/max_k |y_k| ≤ 1, so that S = Σ u_k^p lies in [1, d] —
// with u_k rounded to float32, the powers by kernel.FastPowRows and the
// root max|y|·S^{1/p} by Log2Poly and Exp2Poly. Below d = 16, y is Scores'
// own (float64); from d = 16 on, where y's product is most of the cost, it
// is float32 (kernel.NormMatrix.Products) and its error is bounded through
// M's condition (normFast). Where that does not pay it is Scores, and
// FastTolerance is 0: below d = 16 for p = 2, whose exact score is a
// square root; from d = 16 on for an M beyond float32 or too ill-conditioned
// for a useful bound, p well below 1, or the portable kernels. A row with a
// u_k below float32's normal range (other than 0) or a NaN scores +Inf or
// NaN, for Members to rescore exactly.
func (n *Norm) ScoresFast(dst []float64, diffs []float32) []float64 {
	d, p := n.d, n.p
	if d >= blasMinDim {
		if f := n.fastLarge(); f.ok {
			return n.scoresFastLarge(f, dst, diffs)
		}
		return n.Scores(dst, diffs)
	}
	if p == 2 {
		return n.Scores(dst, diffs)
	}
	dst, nr := rows(dst, diffs, d)
	u := make([]float32, nr*d)
	amax := make([]float64, nr)
	y := make([]float64, d)
	for i := range nr {
		mulRows(y, n.m, diffs[i*d:(i+1)*d])
		amax[i] = unitRow(u[i*d:(i+1)*d], y)
	}
	ones, ps := make([]float32, d), make([]float32, d)
	for k := range d {
		ones[k], ps[k] = 1, float32(p)
	}
	kernel.FastPowRows(dst[:nr], ones, ps, u)
	normRoots(dst[:nr], amax, p)
	return dst
}

// unitRow writes u_k = |y_k|/a rounded to float32 for a = max_k |y_k| and
// returns a: NaN where y has a NaN, and u left alone where a is 0, NaN or
// infinite (normRoots decides those rows).
func unitRow[F float32 | float64](u []float32, y []F) float64 {
	var a float64
	for _, v := range y {
		if v != v {
			return math.NaN()
		}
		a = max(a, math.Abs(float64(v)))
	}
	if a == 0 || math.IsInf(a, 0) {
		return a
	}
	for k, v := range y {
		u[k] = float32(math.Abs(float64(v)) / a)
	}
	return a
}

// normRoots turns each row's fast power sum S (FastPowRows) into its score
// a·S^{1/p}, a the row's max|y_k|: 0 where a = 0, +Inf (rescored) where a
// or S is not finite.
func normRoots(dst, amax []float64, p float64) {
	for i, s := range dst {
		switch a := amax[i]; {
		case a == 0:
			dst[i] = 0
		case math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(s) || math.IsInf(s, 0):
			dst[i] = math.Inf(1) // rescored
		default:
			dst[i] = a * float64(kernel.Exp2Poly(kernel.Log2Poly(float32(s))/float32(p)))
		}
	}
}

// FastTolerance bounds ScoresFast's error against Scores. Below d = 16: the
// powers' sum is within r = rel_g + p·2⁻²³ + d·2⁻¹²⁶ + 10⁻¹⁴ of S (rel_g the
// fast powers' bound, FastTolerance of the generalized ball with m = 1 and
// these p; p·2⁻²³ the rounding of u_k to float32; S ≥ 1 makes the lost
// terms relative), so its root within (1 + r)^{1/p} − 1; Log2Poly,
// Exp2Poly and their roundings add ln 2·(Log2PolyErr + (log2 d + 3)·2⁻²³)/p
// + Exp2PolyRelErr. The bound is doubled for the second-order terms. From
// d = 16 on, normFast's. 0 where ScoresFast is Scores.
func (n *Norm) FastTolerance() (rel, abs float64) {
	d, p := n.d, n.p
	if d >= blasMinDim {
		if f := n.fastLarge(); f.ok {
			return f.rel, f.abs
		}
		return 0, 0
	}
	if p == 2 {
		return 0, 0
	}
	return 2 * powerTolerance(d, p), 0
}

// powerTolerance is the relative error of the powers and the root of
// ScoresFast given y (FastTolerance's, not doubled).
func powerTolerance(d int, p float64) float64 {
	relG, _ := UnitGenBall(d, p).FastTolerance()
	r := relG + p*0x1p-23 + float64(d)*kernel.MinNormal32 + 1e-14
	root := math.Pow(1+r, 1/p) - 1
	polys := math.Ln2*(kernel.Log2PolyErr+(math.Log2(float64(d))+3)*0x1p-23)/p + kernel.Exp2PolyRelErr
	return root + polys
}

// normFast is a single-norm's fast score from d = 16 on, once computed for
// its M and p: ŷ = X·M̂ᵀ in float32 (M̂ = M rounded to float32), then
// ScoresFast's powers and root of ŷ. Its error against the exact φ = ‖y‖_p:
//
//   - |M̂ − M| ≤ u·|M| (u = 2⁻²⁴; every nonzero entry of M is a normal
//     float32) and Gemm's sums are within γ = GemmErr(d) of Σ|m̂·x|, so
//     |ŷ − y| ≤ g·|M|·|x| with g = γ·(1 + u) + u, plus a₀ = d·2⁻¹⁴⁹ a
//     coordinate for products and sums below float32's normal range.
//   - ‖|M|·|x|‖_p ≤ C·φ, C = ‖|M|·|M⁻¹|‖ in the operator norm of ℓ_p
//     (|x| = |M⁻¹·y| ≤ |M⁻¹|·|y|): for p ≥ 1 bounded by
//     ‖A‖_1^{1/p}·‖A‖_∞^{1−1/p} (Riesz–Thorin), for p < 1 exactly the
//     largest column's ‖·‖_p. With Z the computed inverse and R = M·Z − I,
//     |M⁻¹| ≤ |Z|·(I − |R|)⁻¹, so C ≤ ‖|M|·|Z|‖/(1 − ‖R‖), for p < 1
//     ‖|M|·|Z|‖/(1 − ‖R‖^p)^{1/p}.
//   - For p ≥ 1, ‖ŷ‖_p is within g·C·φ + d^{1/p}·a₀ of φ (the triangle
//     inequality); for p < 1, ‖ŷ‖_p^p within (g·C)^p·φ^p + A of φ^p, A =
//     d·a₀^p (‖·‖_p^p is subadditive), so ‖ŷ‖_p is within ((1 + (g·C)^p)^{1/p}
//     − 1)·φ + A/p of φ, to first order in A.
//   - The powers and the root add powerTolerance's R relative to ‖ŷ‖_p,
//     and Scores' own float64 product and powers differ from φ by the same
//     terms with g = d·2⁻⁵⁰, plus 10⁻¹².
//
// The bound is doubled. ok is false where an entry of M is not a normal
// float32, ‖R‖ ≥ 1/2, the bound reaches 1/4 (the fast pass would rescore
// too much: p well below 1, or M ill-conditioned), or the kernels are
// portable.
type normFast struct {
	rel, abs float64
	ok       bool
	ones, ps []float32 // FastPowRows's m (all 1) and p
}

// fastLarge returns n's normFast, computed on first use for the current M.
func (n *Norm) fastLarge() *normFast { return lazy(&n.fast, n.newFast) }

// lazy is *p, made by newT and stored on first use (two goroutines may
// both make it: the same value).
func lazy[T any](p *atomic.Pointer[T], newT func() *T) *T {
	if v := p.Load(); v != nil {
		return v
	}
	v := newT()
	p.Store(v)
	return v
}

func (n *Norm) newFast() *normFast {
	d, p := n.d, n.p
	f := &normFast{}
	if !n.mt.Ready() {
		return f
	}
	if !normal32(n.m) {
		return f
	}
	m := mat.NewDense(d, d, n.m)
	var z mat.Dense
	if err := z.Inverse(m); err != nil {
		return f
	}
	var r mat.Dense
	r.Mul(m, &z)
	for k := range d {
		r.Set(k, k, r.At(k, k)-1)
	}
	// |M|·|Z|: ‖|M|·|M⁻¹|‖ bounds C (|M⁻¹·y| ≤ |M⁻¹|·|y|), often far below
	// ‖M‖·‖M⁻¹‖ (1 for a diagonal M).
	var mz mat.Dense
	mz.Mul(absDense(m), absDense(&z))
	fd := float64(d)
	const u = 0x1p-24
	g := kernel.GemmErr(d)*(1+u) + u
	a0 := fd * 0x1p-149
	// relOf is the relative error of ‖ŷ‖_p for products within g·|M|·|x|.
	var c, absY float64
	var relOf func(g float64) float64
	if p >= 1 {
		opNorm := func(a mat.Matrix) float64 {
			return math.Pow(mat.Norm(a, 1), 1/p) * math.Pow(mat.Norm(a, math.Inf(1)), 1-1/p)
		}
		res := opNorm(&r)
		if !(res < 0.5) {
			return f
		}
		c = opNorm(&mz) / (1 - res)
		relOf = func(g float64) float64 { return g * c }
		absY = math.Pow(fd, 1/p) * a0
	} else {
		colNorm := func(a *mat.Dense) float64 { // the largest column's ‖·‖_p
			var most float64
			for j := range d {
				var s float64
				for k := range d {
					s += math.Pow(math.Abs(a.At(k, j)), p)
				}
				most = max(most, math.Pow(s, 1/p))
			}
			return most
		}
		res := math.Pow(colNorm(&r), p)
		if !(res < 0.5) {
			return f
		}
		c = colNorm(&mz) / math.Pow(1-res, 1/p)
		relOf = func(g float64) float64 { return math.Pow(1+math.Pow(g*c, p), 1/p) - 1 }
		absY = fd * math.Pow(a0, p) / p
	}
	big := powerTolerance(d, p)
	rel := big + (1+big)*relOf(g) + relOf(fd*0x1p-50) + 1e-12
	if !(2*rel < 0.25) {
		return f
	}
	f.rel, f.abs, f.ok = 2*rel, 2*(1+big)*absY, true
	f.ones, f.ps = make([]float32, d), make([]float32, d)
	for k := range d {
		f.ones[k], f.ps[k] = 1, float32(p)
	}
	return f
}

// largeScratch is scoresFastLarge's block of ŷ and u.
type largeScratch struct{ y, u []float32 }

var largePool = sync.Pool{New: func() any { return new(largeScratch) }}

// largeRows is how many rows scoresFastLarge takes at a time.
const largeRows = 256

// scoresFastLarge is ScoresFast from d = 16 on (normFast).
func (n *Norm) scoresFastLarge(f *normFast, dst []float64, diffs []float32) []float64 {
	d := n.d
	dst, _ = rows(dst, diffs, d)
	var amax [largeRows]float64
	products(n.mt, d, diffs, func(lo, r int, y, u []float32) {
		for i := range r {
			amax[i] = unitRow(u[i*d:(i+1)*d], y[i*d:(i+1)*d])
		}
		kernel.FastPowRows(dst[lo:lo+r], f.ones, f.ps, u)
		normRoots(dst[lo:lo+r], amax[:r], n.p)
	})
	return dst
}

// products gives each block of up to largeRows rows of diffs (d values
// each), from row lo, to f with y = the block's rows times wᵀ (w's
// Products) and scratch u of the same size.
func products(w kernel.NormMatrix, d int, diffs []float32, f func(lo, r int, y, u []float32)) {
	nr := len(diffs) / d
	s := largePool.Get().(*largeScratch)
	defer largePool.Put(s)
	for lo := 0; lo < nr; lo += largeRows {
		r := min(nr-lo, largeRows)
		if cap(s.y) < r*d {
			s.y, s.u = make([]float32, largeRows*d), make([]float32, largeRows*d)
		}
		y, u := s.y[:r*d], s.u[:r*d]
		w.Products(y, diffs[lo*d:(lo+r)*d], r)
		f(lo, r, y, u)
	}
}

// normal32 reports whether every nonzero value of m rounds to a normal
// float32 (relative error 2⁻²⁴, the fast scores' bounds assume).
func normal32(m []float64) bool {
	for _, v := range m {
		if a := math.Abs(v); a != 0 && !(a >= kernel.MinNormal32 && a <= math.MaxFloat32) {
			return false
		}
	}
	return true
}

// absDense is |a|, entry by entry.
func absDense(a *mat.Dense) *mat.Dense {
	b := mat.DenseCopyOf(a)
	b.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, b)
	return b
}

var _ FastScorer = (*Ellipsoid)(nil)

// ScoresFast computes ‖L⁻¹x‖₂ from d = 16 on as ŷ = W·x in float32
// (kernel.NormMatrix.Products, W = L⁻¹ computed once in float64 and rounded
// to float32) and √Σŷ_k² in float64, where the exact score solves L·y = x
// a row at a time; below d = 16, or where ellipsoidFast finds no useful
// bound, it is Scores and FastTolerance is 0. A row with a NaN scores NaN,
// one whose product leaves float32's range +Inf (Members rescores both).
func (e *Ellipsoid) ScoresFast(dst []float64, diffs []float32) []float64 {
	d := e.d
	f := e.fastScore()
	if !f.ok {
		return e.Scores(dst, diffs)
	}
	dst, _ = rows(dst, diffs, d)
	products(f.w, d, diffs, func(lo, r int, y, _ []float32) {
		for i := range r {
			dst[lo+i] = norm2(y[i*d : (i+1)*d])
		}
	})
	return dst
}

// FastTolerance bounds ScoresFast's error against Scores (ellipsoidFast);
// 0 where ScoresFast is Scores.
func (e *Ellipsoid) FastTolerance() (rel, abs float64) {
	f := e.fastScore()
	return f.rel, f.abs
}

// ellipsoidFast is an ellipsoid's fast score from d = 16 on. With W the
// computed L⁻¹, R = W·L − I (computed in float64, ρ its ℓ₂ operator norm
// bounded by √(‖R‖_1·‖R‖_∞) plus that product's own rounding) and
// C = ‖|W|·|L|‖₂ bounded the same way, for y = L⁻¹x:
//
//   - W·x − y = R·y, within ρ·‖y‖;
//   - the float32 product of W rounded to float32 is within g·|W|·|x| of
//     W·x (g = GemmErr(d)·(1 + u) + u, u = 2⁻²⁴; every nonzero entry of W
//     a normal float32), plus d·2⁻¹⁴⁹ a coordinate below float32's normal
//     range; |W|·|x| ≤ |W|·|L|·|y|, so the whole is within g·C·‖y‖ + √d·d·2⁻¹⁴⁹;
//   - √Σŷ² in float64 adds (d + 2)·2⁻⁵³, and the exact forward substitution
//     differs from ‖y‖ by at most γ_d·‖|L⁻¹|·|L|‖ ≤ d·2⁻⁵⁰·C/(1 − ρ) (its
//     computed y solves (L + ΔL)·y = x, |ΔL| ≤ γ_d·|L|) plus its own
//     norm's (d + 2)·2⁻⁵³.
//
// rel = g·C + ρ + d·2⁻⁵⁰·C/(1 − ρ) + (2d + 4)·2⁻⁵³ + 10⁻¹², first order,
// doubled; ok where it stays below 1/4, ρ < 1/2, and the vector kernels
// run.
type ellipsoidFast struct {
	w        kernel.NormMatrix
	rel, abs float64
	ok       bool
}

// fastScore returns e's ellipsoidFast, computed on first use.
func (e *Ellipsoid) fastScore() *ellipsoidFast { return lazy(&e.fast, e.newFast) }

func (e *Ellipsoid) newFast() *ellipsoidFast {
	d := e.d
	f := &ellipsoidFast{}
	if d < blasMinDim || !kernel.Vector() {
		return f
	}
	wh, ok := e.whiten()
	if !ok {
		return f
	}
	fd := float64(d)
	const u = 0x1p-24
	g := kernel.GemmErr(d)*(1+u) + u
	rel := g*wh.c + wh.rho + fd*0x1p-50*wh.c/(1-wh.rho) + (2*fd+4)*0x1p-53 + 1e-12
	if !(2*rel < 0.25) {
		return f
	}
	f.w = kernel.NewNormMatrix(wh.w.RawMatrix().Data, d, kernel.NormMatrix{})
	if !f.w.Ready() {
		return f
	}
	f.rel, f.abs, f.ok = 2*rel, 2*math.Sqrt(fd)*fd*0x1p-149, true
	return f
}

// whitening is an ellipsoid's W = L⁻¹ as computed in float64, with ρ ≥
// ‖W·L − I‖₂ (√(‖R‖_1·‖R‖_∞) of the computed R = W·L − I plus that
// product's own rounding) and c ≥ ‖|W|·|L|‖₂, bounded the same way.
type whitening struct {
	w      *mat.Dense
	rho, c float64
}

// whiten computes e's whitening; ok is false where the inverse fails, has
// an entry that is not a normal float32, or ρ ≥ 1/2.
func (e *Ellipsoid) whiten() (wh whitening, ok bool) {
	d := e.d
	l := mat.NewTriDense(d, mat.Lower, nil)
	for i := range d {
		for j := 0; j <= i; j++ {
			l.SetTri(i, j, e.chol[i*d+j])
		}
	}
	var wt mat.TriDense
	if err := wt.InverseTri(l); err != nil {
		return wh, false
	}
	w := mat.DenseCopyOf(&wt)
	if !normal32(w.RawMatrix().Data) {
		return wh, false
	}
	ld := mat.DenseCopyOf(l)
	var r mat.Dense
	r.Mul(w, ld)
	for k := range d {
		r.Set(k, k, r.At(k, k)-1)
	}
	var wl mat.Dense
	wl.Mul(absDense(w), absDense(ld))
	op2 := func(a mat.Matrix) float64 { return math.Sqrt(mat.Norm(a, 1) * mat.Norm(a, math.Inf(1))) }
	c := op2(&wl)
	rho := op2(&r) + float64(d)*0x1p-50*c
	if !(rho < 0.5) {
		return wh, false
	}
	return whitening{w: w, rho: rho, c: c}, true
}

// Whitening returns W = L⁻¹ (d×d, row-major; Σ = L·Lᵀ) and κ, λ ≥ 1 such
// that the score Scores computes of any x, rounding and all, is at least
// ‖W·x‖₂/κ and at most λ·‖W·x‖₂ in exact arithmetic — so a search that
// rules a row out once ‖W·a − W·z‖₂ passes κ·q, with a margin for its own
// rounding, agrees with the exact scan (retrieve.Collection.Transform),
// and a count that takes a row as inside once ‖W·a − W·z‖₂ is below q/λ,
// less that margin, counts as the exact scan does. With y = L⁻¹x, ‖W·x‖₂ =
// ‖(I + R)·y‖₂ is within ρ·‖y‖₂ of ‖y‖₂, and the forward substitution's
// score within δ·‖y‖₂, δ = d·2⁻⁵⁰·c/(1 − ρ) + (d + 2)·2⁻⁵³ (ellipsoidFast):
// κ = (1 + ρ)/(1 − δ) and λ = (1 + δ)/(1 − ρ), rounded up. ok is false
// where W has no such bound (whiten).
func (e *Ellipsoid) Whitening() (w []float64, kappa, lambda float64, ok bool) {
	wh, ok := e.whiten()
	if !ok {
		return nil, 0, 0, false
	}
	fd := float64(e.d)
	delta := fd*0x1p-50*wh.c/(1-wh.rho) + (fd+2)*0x1p-53
	if !(delta < 0.5) {
		return nil, 0, 0, false
	}
	return append([]float64(nil), wh.w.RawMatrix().Data...), (1 + wh.rho) / (1 - delta) * (1 + 1e-12), (1 + delta) / (1 - wh.rho) * (1 + 1e-12), true
}
