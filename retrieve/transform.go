package retrieve

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// TransformBytes is the memory Transform takes for a collection of n items
// of dimension d, at most: the transformed items (float32), each one's
// norm and, from HalfMinRows items on, their compact copy (HalfBytes for
// p = 2; for other p the 8-bit copy, ByteBytes, half of that).
func TransformBytes(n, d int) int64 {
	b := int64(n) * int64(d+1) * 4
	if n >= HalfMinRows {
		b += HalfBytes(n, d)
	}
	return b
}

// Transform prepares c for searches with the single-norm set s, whose score
// ‖M(a − z)‖_p = ‖M·a − M·z‖_p: it computes M·z of every item once (in
// float32 with the vector kernels where their rounding costs the filter
// little, in float64 otherwise; kept in float32, with a bound on each
// item's rounding: TransformBytes), so that a search costs O(d)
// per item instead of O(d²) — the fast p-th power kernel with its early
// exit on M·a − M·z, then an exact rescoring of the items it cannot rule
// out, so the hits are those of the plain scan. An ellipsoid is the
// single-norm of M = L⁻¹ (Σ = L·Lᵀ) and p = 2, whose items are ruled out
// once ‖M·a − M·z‖₂ passes κ·q (geometry.Ellipsoid.Whitening). A set
// behind a head (head.Projected, the InfoNCE rows), which scores every
// item through W, O(In·Out) an item, is transformed too: a single-norm
// by M·W (Out × In; a head that is not square takes the float64
// product); a generalized ball by W (W·z of every item, TransformBytesOf:
// the ball's fast score on W·a − W·z, its margin the roundings of W·a and
// W·z; headTransform). It refuses, with the reason, a set of another
// family (behind a head: an ℓ2 ball or an ellipsoid), a p below 1 (a
// quasi-norm: the
// error bound needs the triangle inequality), an ellipsoid without a
// bounded inverse, a dimension other than c's, or a transform larger than
// maxBytes (≤ 0: no limit). Transforming again for the same set does
// nothing; a set whose M or p has changed since is scanned plainly until
// it is transformed again, which replaces the stale transform. Safe for
// concurrent use with Search.
//
// The transform is kept by the set's geometry (the pointer, so a geometry
// that is not one is refused), not by the set: the transform depends on
// the geometry alone, and every set sharing it — a class-conditional
// set's ForClass sets, its OverAllClasses, a copy with another threshold
// — searches the one transform, and transforming for them again does
// nothing. (The threshold of the set first transformed for chooses only
// whether M·z is computed in float32, whose rounding every search's
// filter bounds.) A set loaded again has a geometry of its own, so it
// never searches a transform made for another geometry.
func (c *Collection) Transform(s *conformal.Set, maxBytes int64) error {
	inner, _ := geometry.Unshift(s.Geometry) // a shifted set's search moves its anchor (Centred)
	if inner.Dim() != c.D {
		return fmt.Errorf("retrieve: transform: the set has dimension %d, the collection %d", inner.Dim(), c.D)
	}
	if pr, ok := inner.(*head.Projected); ok {
		return c.transformHead(s, pr, maxBytes)
	}
	if need := TransformBytes(c.N, c.D); maxBytes > 0 && need > maxBytes {
		return c.overLimit(need, maxBytes)
	}
	if c.Transformed(s) {
		return nil // before an ellipsoid's whitening: a batch asks again each call
	}
	var (
		m             []float64
		p             float64
		kappa, lambda = 1.0, 1.0
	)
	var (
		norm *geometry.Norm
		gen  uint64
	)
	switch g := inner.(type) {
	case geometry.LinearNorm:
		if norm, _ = g.(*geometry.Norm); norm != nil {
			gen = norm.Generation() // before M: a change after it is seen
		}
		if m, p = g.M(), g.P(); p < 1 {
			return fmt.Errorf("retrieve: transform: p = %v < 1 (a quasi-norm): the plain scan serves it", p)
		}
	case *geometry.Ellipsoid:
		var ok bool
		if m, kappa, lambda, ok = g.Whitening(); !ok {
			return fmt.Errorf("retrieve: transform: the ellipsoid's Σ is too ill-conditioned for a bounded inverse: the plain scan serves it")
		}
		p = 2
	default:
		return fmt.Errorf("retrieve: transform: only a single-norm or ellipsoid set is transformed (or a single-norm or generalized ball behind a head), not %T", inner)
	}
	if reflect.TypeOf(s.Geometry).Kind() != reflect.Pointer {
		return fmt.Errorf("retrieve: transform: a transform is kept by its geometry's pointer, and %T is not one: the plain scan serves it", s.Geometry)
	}
	t, err := newNormTransform(m, c.D, p, kappa*s.Threshold, c, nil)
	if err != nil {
		return err
	}
	t.kappa, t.lambda, t.norm, t.gen = kappa, lambda, norm, gen
	if e, ok := inner.(*geometry.Ellipsoid); ok {
		t.ellipsoid = e
	}
	c.keepTransform(s.Geometry, t)
	return nil
}

// keepTransform keeps t as c's transform for the geometry g, replacing a
// stale one.
func (c *Collection) keepTransform(g geometry.Geometry, t transform) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.transforms == nil {
		c.transforms = map[geometry.Geometry]transform{}
	}
	c.transforms[g] = t
}

// BatchTransformMin is the number of searches with one set from which a
// caller transforms the collection first (ccs retrieve's batches, ccs
// evaluate -db, compare's Size column): the transform (n·d² multiply-adds,
// in float32 with the vector kernels) cost as much as 5–10 plain scans of
// a single-norm or an ellipsoid on 2 cores (10⁶ × 128: 2.0–2.9 s against
// 0.37–0.47 s a query; 12 000 × 384: 0.07–0.12 s against an ellipsoid's
// 22–35 ms).
const BatchTransformMin = 8

// HeadTransformMin is BatchTransformMin for a set behind a head: its
// transform (W·z of every item, or M·W·z) costs about one plain scan,
// which computes W·x of every item too, so a second search repays it.
const HeadTransformMin = 2

// TransformMin is the number of searches with a set of geometry g from
// which a caller transforms the collection first: HeadTransformMin behind
// a head, BatchTransformMin otherwise.
func TransformMin(g geometry.Geometry) int {
	inner, _ := geometry.Unshift(g)
	if _, ok := inner.(*head.Projected); ok {
		return HeadTransformMin
	}
	return BatchTransformMin
}

// BatchTransformBytes bounds the memory those callers' transforms may
// take (Transform's maxBytes), as ccs serve's -transform-memory default.
const BatchTransformBytes = 4 << 30

// Transformable reports whether Transform applies to a set of geometry g
// (of a shifted set, to its inner geometry): a single-norm of p ≥ 1 or an
// ellipsoid.
func Transformable(g geometry.Geometry) bool {
	switch g, _ := geometry.Unshift(g); g := g.(type) {
	case geometry.LinearNorm:
		return g.P() >= 1
	case *geometry.Ellipsoid:
		return true
	case *head.Projected:
		return headTransformable(g) == nil
	}
	return false
}

// Transformed reports whether a search of c with s scans a transform of c
// (Transform): one made for s's geometry, by s or by another set sharing
// it (a class-conditional set's ForClass sets), which the geometry still
// matches.
func (c *Collection) Transformed(s *conformal.Set) bool {
	inner, _ := Centred(s, nil)
	return c.transformFor(s, inner) != nil
}

// transformFor is the transform that a search with s0 (scanning s, its
// Centred set) filters with, or nil.
func (c *Collection) transformFor(s0, s *conformal.Set) transform {
	if t := c.transformed(s0.Geometry); t != nil && t.matches(s.Geometry) {
		return t
	}
	return nil
}

// transformed returns c's transform for the geometry g, or nil.
func (c *Collection) transformed(g geometry.Geometry) transform {
	if g == nil || reflect.TypeOf(g).Kind() != reflect.Pointer {
		return nil // not a key (a value that is not comparable would panic)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.transforms[g]
}

// normTransform is a collection transformed by a single-norm's M, or by an
// ellipsoid's whitening.
type normTransform struct {
	d, in     int       // M's rows (the transformed items' dimension) and columns (the collection's)
	m         []float64 // M, d×in row-major, as transformed (matches compares it for a LinearNorm other than *geometry.Norm)
	p         float64
	ellipsoid *geometry.Ellipsoid // the ellipsoid whose W = L⁻¹ is m (immutable), or nil
	// norm is the single-norm m was copied from, at its generation gen
	// (geometry.Norm.Generation), or nil (another LinearNorm, compared
	// by its M).
	norm *geometry.Norm
	gen  uint64
	// The ellipsoid's score is at least ‖m·x‖₂/kappa and at most
	// lambda·‖m·x‖₂ (geometry.Ellipsoid.Whitening); both 1 for a
	// single-norm.
	kappa, lambda float64
	z             []float32 // M·item of each item, n×d
	zn            []float32 // Σ_l |item_l|·c_l of each, rounded up: ≥ ‖|M|·|item|‖_p ≥ ‖M·item‖_p
	znMax         float64
	c             []float64 // c_l = ‖column l of M‖_p
	ones, ps      []float32 // the fast kernel's m = 1 and p
	rel, abs      float64   // its error bound (geometry.FastTolerance)
	// gz and absZ bound the error of a z computed in float32 (kernel
	// Gemm): within gz·Z + absZ of M·item in ‖·‖_p; 0 for z computed in
	// float64 and rounded once.
	gz, absZ float64
	// uAZ is the factor of A + Z in the margin: 4u for the roundings of
	// the transformed difference; a set behind a head (proj) rounds W·x
	// to float32 before M as well, within u·(A + Z) more (c then bounds
	// the columns of M·W through those of M: c_l = Σ_k ‖M_k‖_p·|W_kl|),
	// and absH more where W·x falls below float32's normal range.
	uAZ, absH float64
	// proj is the set behind a head whose M·W m is, with a copy of
	// W (matches compares it), or nil.
	proj  *head.Projected
	w     []float64
	half  *kernel.HalfRows // p = 2: z in half precision (nil below HalfMinRows items)
	bytes *kernel.ByteRows // other p: z in 8 bits (nil below HalfMinRows items)
}

// matches reports whether g is the geometry the collection was transformed
// for: the same ellipsoid, or a single-norm that still has the M and p
// (a set's geometry changed after Transform is scanned plainly). Every
// probe of a batch asks (CountWithin: thousands of anchors), so for a
// geometry.Norm it is O(1): the same Norm at the same generation; only
// another LinearNorm (none in this module: one a caller implements) has
// its M copied and compared, O(d²).
func (t *normTransform) matches(g geometry.Geometry) bool {
	if t.proj != nil {
		// A head's W compared (O(d²), as M·a is), its single-norm by
		// generation.
		pr, ok := g.(*head.Projected)
		if !ok || pr != t.proj || !slices.Equal(pr.Head.W, t.w) {
			return false
		}
		g = pr.Inner
	}
	switch {
	case t.ellipsoid != nil:
		return g == geometry.Geometry(t.ellipsoid)
	case t.norm != nil:
		return g == geometry.Geometry(t.norm) && t.norm.Generation() == t.gen
	}
	n, ok := g.(geometry.LinearNorm)
	return ok && n.P() == t.p && slices.Equal(n.M(), t.m)
}

func newNormTransform(m []float64, d int, p, q float64, c *Collection, cols []float64) (*normTransform, error) {
	in := c.D
	t := &normTransform{d: d, in: in, m: m, p: p, kappa: 1, lambda: 1, z: make([]float32, c.N*d), zn: make([]float32, c.N),
		ones: make([]float32, d), ps: make([]float32, d), uAZ: 4 * 0x1p-24}
	pv := make([]float64, d)
	for j := range d {
		t.ones[j], t.ps[j], pv[j] = 1, float32(p), p
	}
	ones := make([]float64, d)
	for j := range ones {
		ones[j] = 1
	}
	gb, err := geometry.NewGenBall(ones, pv)
	if err != nil {
		return nil, fmt.Errorf("retrieve: transform: %w", err)
	}
	t.rel, t.abs = gb.FastTolerance()
	if t.c = cols; cols == nil {
		t.c = columnNorms(m, d, in, p)
	}
	const rows = 2048
	maxes := make([]float64, parallel.Chunks(c.N, rows))
	parallel.For(c.N, rows, 0, func(ci, lo, hi int) {
		for i := lo; i < hi; i++ {
			// Minkowski: ‖|M|·|z|‖_p ≤ Σ_l |z_l|·‖column l‖_p, which also
			// bounds ‖M·z‖_p; rounded up, with room for the sum's rounding.
			var nrm float64
			for l, v := range c.Rows[i*in : (i+1)*in] {
				nrm += math.Abs(float64(v)) * t.c[l]
			}
			nrm *= 1 + 1e-12
			zn := float32(nrm)
			if float64(zn) < nrm {
				zn = math.Nextafter32(zn, float32(math.Inf(1)))
			}
			t.zn[i] = zn
			maxes[ci] = math.Max(maxes[ci], float64(zn))
		}
	})
	for _, v := range maxes {
		t.znMax = math.Max(t.znMax, v)
	}
	// With the vector kernels the products are float32 sums (kernel.Gemm:
	// the whole transform in a quarter to a half of the float64 product's
	// time), each coordinate within g·(|M|·|item|)_k (g = GemmErr(d)·(1 +
	// u) + u, M rounded to float32: every nonzero entry a normal float32)
	// plus d·2⁻¹⁴⁹ below float32's normal range: in ‖·‖_p, within g·Z +
	// d^{1/p}·d·2⁻¹⁴⁹, which the filter adds to its margin. That is taken
	// where it costs the filter little: g·Z + d^{1/p}·d·2⁻¹⁴⁹ ≤ 10⁻³·q for
	// the largest Z (items far from the origin next to a tight threshold
	// take the float64 product, rounded once, u·Z). A chunk whose products
	// leave float32's range is computed in float64. A rectangular M (a
	// single-norm behind a head of another output dimension) takes the
	// float64 product.
	var mt kernel.NormMatrix
	const u = 0x1p-24
	if d == in {
		mt = kernel.NewNormMatrix(t.m, d, kernel.NormMatrix{})
		if g, abs := kernel.GemmErr(d)*(1+u)+u, math.Pow(float64(d), 1/p)*float64(d)*0x1p-149; mt.Ready() && normal32(t.m) && g*t.znMax+abs <= 1e-3*q {
			t.gz, t.absZ = g, abs
		}
	}
	mg := blas64.General{Rows: d, Cols: in, Data: t.m, Stride: in}
	parallel.For(c.N, rows, 0, func(ci, lo, hi int) {
		n := hi - lo
		z := t.z[lo*d : hi*d]
		if t.gz > 0 && mt.Products(z, c.Rows[lo*in:hi*in], n) && bundle.FirstNonFinite(z) < 0 {
			return
		}
		x := make([]float64, n*in)
		for i, v := range c.Rows[lo*in : hi*in] {
			x[i] = float64(v)
		}
		y := make([]float64, n*d)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: n, Cols: in, Data: x, Stride: in}, mg, 0,
			blas64.General{Rows: n, Cols: d, Data: y, Stride: d})
		for i, v := range y {
			z[i] = float32(v)
		}
	})
	switch {
	case c.N < HalfMinRows:
	case p == 2:
		t.half = newHalf(t.z, d)
	default:
		t.bytes = newBytes(t.z, d)
	}
	return t, nil
}

// overLimit is the error of a transform that needs need bytes, over
// maxBytes.
func (c *Collection) overLimit(need, maxBytes int64) error {
	return fmt.Errorf("retrieve: transform: needs %d MiB (%d items of dimension %d), over the limit of %d MiB",
		need>>20, c.N, c.D, maxBytes>>20)
}

// columnNorms is ‖column l of m‖_p (m d×in, row-major) for each l,
// rounded up.
func columnNorms(m []float64, d, in int, p float64) []float64 {
	c := make([]float64, in)
	for l := range in {
		var a float64
		for k := range d {
			a = math.Max(a, math.Abs(m[k*in+l]))
		}
		if a > 0 {
			var s float64
			for k := range d {
				s += math.Pow(math.Abs(m[k*in+l])/a, p)
			}
			c[l] = a * math.Pow(s, 1/p) * (1 + 1e-12)
		}
	}
	return c
}

// normal32 reports whether every nonzero value of m rounds to a normal
// float32 (relative error 2⁻²⁴).
func normal32(m []float64) bool {
	for _, v := range m {
		if a := math.Abs(v); a != 0 && !(a >= kernel.MinNormal32 && a <= math.MaxFloat32) {
			return false
		}
	}
	return true
}

// filter is Collection.filter for a transformed collection. The exact scan
// scores ‖M·fl32(a − z)‖_p; the kernel sums |ỹ_k|^p with ỹ = fl32(M·a) −
// fl32(M·z) in float32. Each of the three roundings and that of a − z is u =
// 2⁻²⁴ of |M|·|a| + |M|·|z| or of |ỹ| per coordinate, so by Minkowski (p ≥ 1)
// the two vectors differ by at most 2u·(A + Z) + u·‖ỹ‖_p, with A = Σ_l |a_l|·c_l
// ≥ ‖|M|·|a|‖_p and Z the item's zn (taken as 4u·(A + Z + φ̃)); and the fast
// kernel's φ̃ = S̃^{1/p} is within 2·rel·φ + (d·2⁻¹²⁶)^{1/p} of ‖ỹ‖_p. An item is
// out once φ̃ passes q by that margin: with the largest Z for the early exit
// on the partial sums, with the item's own afterwards. A z computed in
// float32 adds its own bound, gz·Z + absZ, to the margin; a set behind a
// head, whose exact score rounds W·x to float32 first, u·(A + Z) and absH
// more (uAZ = 5u, M·W for M and c bounding its columns through M's). Where
// the margin would not leave room (rel near 1: huge p) there is no filter.
//
// The screen on the compact copy of the M·z (nil where there is
// none) rules out an item once ‖fl32(M·a) − M·z‖_p, in exact arithmetic,
// passes cut(largest Z): then ‖ỹ‖_p, each coordinate rounded once, passes
// (q + 2u·(A + Z))/(1 − u), and the exact score passes q.
//
// The other way round, bounds(r, S̃) bounds the exact score of an item
// kept with the sums S̃: with the same bounds and e = 4u·(A + Z) + gz·Z +
// absZ, ‖M·fl32(a − z)‖_p is at most (φ̃ + (d·2⁻¹²⁶)^{1/p})·(1 + 4u)/(1 −
// 2·rel) + e and at least (φ̃ − (d·2⁻¹²⁶)^{1/p})·(1 − 4u)/(1 + 2·rel) − e;
// the set's score is within 10⁻⁹ of those (the float64 rounding of the
// exact score; the 2u·(A + Z) that e counts twice covers it too), and for
// an ellipsoid λ times the first and the second over κ
// (geometry.Ellipsoid.Whitening). An item whose upper bound is at most q
// is inside.
//
// For an ellipsoid, the filter rules items out on ‖M·x‖₂ against κ times
// the set's threshold q0.
func (t *normTransform) filter(q0 float64, anchor []float32) (func(lo, hi int, keep []bool, scratch []float64), func(b0 int, masks []uint16), func(r int, v float64) (lo, hi float64, ok bool)) {
	d, in, p := t.d, t.in, t.p
	q := q0 * t.kappa
	ya := make([]float32, d)
	var A float64
	for k := range d {
		var v float64
		for l := range in {
			v += t.m[k*in+l] * float64(anchor[l])
		}
		ya[k] = float32(v)
	}
	for l, v := range anchor {
		A += math.Abs(float64(v)) * t.c[l]
	}
	A *= 1 + 1e-12
	const u4 = 4 * 0x1p-24
	slack := 1 - u4 - 2*t.rel
	if !(slack > 0.5) {
		return nil, nil, nil
	}
	absPhi := math.Pow(float64(d)*kernel.MinNormal32, 1/p)
	// φ̃ above cut(Z) is out: φ − q ≥ φ̃ − margin(φ̃) − q > 0.
	cut := func(zn float64) float64 { return (q + t.uAZ*(A+zn) + t.gz*zn + t.absZ + t.absH + absPhi) / slack }
	limit := math.Pow(cut(t.znMax), p) * (1 + 1e-5) // on the partial sums S̃
	keep := func(lo, hi int, keep []bool, sc []float64) {
		kernel.FastPowRowsBound(sc, t.ones, t.ps, ya, t.z[lo*d:hi*d], limit)
		for i, v := range sc {
			switch {
			case math.IsInf(v, 1):
				keep[i] = true // a coordinate the fast kernel does not cover
			case v > limit:
				keep[i] = false
			default:
				keep[i] = !(math.Pow(v, 1/p) > cut(float64(t.zn[lo+i])))
			}
		}
	}
	bounds := func(r int, v float64) (lo, hi float64, ok bool) {
		// v is the item's S̃: +Inf where a coordinate is one the fast
		// kernel does not cover, which has no bounds.
		if !(v <= limit) {
			return 0, 0, false
		}
		phi, zn := math.Pow(v, 1/p), float64(t.zn[r])
		e := t.uAZ*(A+zn) + t.gz*zn + t.absZ + t.absH
		hi = ((phi+absPhi)*(1+u4)/(1-2*t.rel) + e) * t.lambda * (1 + 1e-9)
		lo = max(0, ((phi-absPhi)*(1-u4)/(1+2*t.rel)-e)/t.kappa*(1-1e-9))
		return lo, hi, true
	}
	return keep, t.screen(ya, cut(t.znMax)), bounds
}

// screen is the screen of the items whose ‖ya − M·z‖_p exceeds c, on the
// compact copy of the M·z (nil where there is none or the bound
// overflows).
func (t *normTransform) screen(ya []float32, c float64) func(b0 int, masks []uint16) {
	if h := t.half; h != nil {
		a, ok := h.ScaleAnchor(ya)
		if !ok {
			return nil
		}
		return h.SqScreen(a, c*(1+0x1p-22))
	}
	if t.bytes == nil {
		return nil
	}
	zeros, ps := make([]float64, t.d), make([]float64, t.d)
	for j := range ps {
		ps[j] = t.p
	}
	return t.bytes.PowScreen(ya, zeros, ps, math.Pow(c, t.p)*(1+0x1p-20))
}
