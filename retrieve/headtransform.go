package retrieve

import (
	"fmt"
	"math"
	"slices"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// A transform is a collection prepared once for one set's geometry
// (Collection.Transform): a filter on its transformed rows rules items
// out, and the exact score decides the rest.
type transform interface {
	// matches reports whether g is still the geometry it was made for.
	matches(g geometry.Geometry) bool
	// filter is Collection.filter's for threshold q around anchor.
	filter(q float64, anchor []float32) (keep func(lo, hi int, keep []bool, scratch []float64), screen func(b0 int, masks []uint16), bounds func(r int, v float64) (lo, hi float64, ok bool))
}

var (
	_ transform = (*normTransform)(nil)
	_ transform = (*headTransform)(nil)
)

// headTransformable is nil where Transform applies to a set behind a head
// (head.Projected), or why not: a generalized ball behind any head, whose
// fast score bounds something; a single-norm of p ≥ 1 behind any head,
// transformed by the product M·W (Out × In).
func headTransformable(pr *head.Projected) error {
	switch in := pr.Inner.(type) {
	case *geometry.Norm:
		if in.P() < 1 {
			return fmt.Errorf("retrieve: transform: p = %v < 1 (a quasi-norm): the plain scan serves it", in.P())
		}
		return nil
	case *geometry.GenBall:
		if rel, _ := in.FastTolerance(); !(rel < 0.25) {
			return fmt.Errorf("retrieve: transform: the generalized ball's exponents are too large for its fast score to bound anything: the plain scan serves it")
		}
		return nil
	}
	return fmt.Errorf("retrieve: transform: a %T behind a head is not transformed: the plain scan serves it", pr.Inner)
}

// TransformBytesOf is the memory Transform takes for a set of geometry g
// on a collection of n items of g's dimension, at most: TransformBytes but
// behind a head, whose transform keeps an item's W·z or M·W·z (float32, of
// the head's output dimension), a bound of each item's, and from
// HalfMinRows items on their compact copy (8 bits for a generalized ball).
func TransformBytesOf(g geometry.Geometry, n int) int64 {
	inner, _ := geometry.Unshift(g)
	if pr, ok := inner.(*head.Projected); ok {
		if _, ok := pr.Inner.(*geometry.GenBall); ok {
			b := int64(n) * int64(pr.Head.Out+1) * 4
			if n >= HalfMinRows {
				b += ByteBytes(n, pr.Head.Out)
			}
			return b
		}
		return TransformBytes(n, pr.Head.Out) // M·W·z: Out a row
	}
	return TransformBytes(n, g.Dim())
}

// transformHead is Transform for a set behind a head.
func (c *Collection) transformHead(s *conformal.Set, pr *head.Projected, maxBytes int64) error {
	if err := headTransformable(pr); err != nil {
		return err
	}
	if need := TransformBytesOf(pr, c.N); maxBytes > 0 && need > maxBytes {
		return c.overLimit(need, maxBytes)
	}
	if c.Transformed(s) {
		return nil
	}
	var t transform
	switch in := pr.Inner.(type) {
	case *geometry.Norm:
		gen := in.Generation() // before M: a change after it is seen
		m, p, w := in.M(), in.P(), slices.Clone(pr.Head.W)
		out, d := pr.Head.Out, c.D
		mw := make([]float64, out*d)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: out, Cols: out, Data: m, Stride: out},
			blas64.General{Rows: out, Cols: d, Data: w, Stride: d}, 0, blas64.General{Rows: out, Cols: d, Data: mw, Stride: d})
		// c_l = Σ_k ‖column k of M‖_p·|W_kl| ≥ ‖column l of M·W‖_p, and
		// bounds what rounding W·x to float32 moves M·(W·x) by.
		cm, cols := columnNorms(m, out, out, p), make([]float64, d)
		var absH float64
		for k, ck := range cm {
			for l := range d {
				cols[l] += ck * math.Abs(w[k*d+l])
			}
			absH += ck
		}
		for l := range cols {
			cols[l] *= 1 + 1e-12
		}
		nt, err := newNormTransform(mw, out, p, s.Threshold, c, cols)
		if err != nil {
			return err
		}
		nt.uAZ = 5 * 0x1p-24 * (1 + 0x1p-18)
		nt.absH = absH * 0x1p-148
		nt.proj, nt.w, nt.norm, nt.gen = pr, w, in, gen
		t = nt
	case *geometry.GenBall:
		t = newHeadTransform(pr, in, c)
	}
	c.keepTransform(s.Geometry, t)
	return nil
}

// headTransform is a collection transformed for a generalized ball behind
// a head, φ(x) = Σ_k (m_k·|(W·x)_k|)^{p_k}: W·z of every item, computed
// once, so that a search scans the ball's fast score (the 8-bit screen
// first, from HalfMinRows items on) on W·a − W·z, O(Out) an item instead
// of O(In·Out), and scores exactly only what the filter cannot decide.
//
// The exact score takes y = fl32(W·fl32(a − z)) (the products in float64);
// the scan ỹ = fl32(fl32(W·a) − fl32(W·z)). Each differs from W·(a − z) by
// 2u·(|W|·(|a| + |z|))_k (u = 2⁻²⁴; the float64 products' In·2⁻⁵³ of the
// same added) and 2⁻¹⁴⁹s, so |y_k − ỹ_k| ≤ e = 4u'·(Amax + Zmax) + 2⁻¹⁴⁷
// with Amax = max_k (|W|·|a|)_k and Zmax ≥ max_k (|W|·|z|)_k of every item
// (‖z‖₂ times W's largest row norm, by Cauchy–Schwarz). A term of exponent
// p ≤ 1 moves by at most (m·e)^p (a concave power is subadditive); one of
// p > 1 by (1+ε)^{p−1} relatively and (1 + 1/ε)^{p−1}·(m·e)^p more (ε =
// 2⁻¹²). So the exact score S and the scan's S̃ are within a relative ρ =
// (1+ε)^{pmax−1} − 1 and an absolute E(e) of each other, both ways: an
// item with S ≤ q has S̃ ≤ q' = (1+ρ)·q + E, which the fast score's
// tolerance turns into its filter's limit (as geometry.GenBall.Filter
// does). Every kept item is either scored exactly or, counting, counted
// where its bounds place it inside.
type headTransform struct {
	proj      *head.Projected
	gb        *geometry.GenBall
	w, gm, gp []float64 // copies of W, m and p (matches compares them)
	in, out   int
	y         []float32 // W·z of each item, n×out, rounded once
	zmax      float64   // ≥ max_k (|W|·|z|)_k over the items
	m32, p32  []float32
	rel, abs  float64   // the fast score's tolerance
	rho       float64   // (1+ε)^{pmax−1} − 1
	cterm     []float64 // each coordinate's factor of (m_k·e)^{p_k}
	bytes     *kernel.ByteRows
}

// headEps is the ε of the convexity bound (a + b)^p ≤ (1+ε)^{p−1}·a^p +
// (1 + 1/ε)^{p−1}·b^p for p > 1.
const headEps = 0x1p-12

func newHeadTransform(pr *head.Projected, gb *geometry.GenBall, c *Collection) *headTransform {
	in, out := pr.Head.In, pr.Head.Out
	t := &headTransform{proj: pr, gb: gb, w: slices.Clone(pr.Head.W), gm: gb.Scales(), gp: gb.Exponents(), in: in, out: out,
		m32: make([]float32, out), p32: make([]float32, out), cterm: make([]float64, out)}
	t.rel, t.abs = gb.FastTolerance()
	pmax := 0.0
	for k := range out {
		m, p := t.gm[k], t.gp[k]
		t.m32[k], t.p32[k] = float32(m), float32(p)
		f := 1.0
		if p > 1 {
			f = math.Pow(1+1/headEps, p-1)
		}
		t.cterm[k] = f * math.Pow(m, p)
		pmax = max(pmax, p)
	}
	if pmax > 1 {
		t.rho = math.Pow(1+headEps, pmax-1) - 1
	}
	// W's largest row norm, rounded up: (|W|·|z|)_k ≤ ‖W_k‖₂·‖z‖₂.
	var rmax float64
	for k := range out {
		var s float64
		for _, v := range t.w[k*in : (k+1)*in] {
			s += v * v
		}
		rmax = max(rmax, math.Sqrt(s))
	}
	rmax *= 1 + 1e-12
	t.y = pr.Head.Transform(make([]float32, c.N*out), c.Rows)
	const rows = 2048
	maxes := make([]float64, parallel.Chunks(c.N, rows))
	parallel.For(c.N, rows, 0, func(ci, lo, hi int) {
		for i := lo; i < hi; i++ {
			var s float64
			for _, v := range c.Rows[i*in : (i+1)*in] {
				s += float64(v) * float64(v)
			}
			maxes[ci] = max(maxes[ci], math.Sqrt(s))
		}
	})
	t.zmax = slices.Max(maxes) * rmax * (1 + 1e-12)
	if c.N >= HalfMinRows {
		t.bytes = newBytes(t.y, out)
	}
	return t
}

// matches: the same set behind the same head, W, m and p unchanged (O(In·
// Out), as W·a is).
func (t *headTransform) matches(g geometry.Geometry) bool {
	pr, ok := g.(*head.Projected)
	if !ok || pr != t.proj || pr.Inner != geometry.Geometry(t.gb) || !slices.Equal(pr.Head.W, t.w) {
		return false
	}
	return slices.Equal(t.gb.Scales(), t.gm) && slices.Equal(t.gb.Exponents(), t.gp)
}

// filter: the fast score on W·a − W·z against q' (see headTransform), the
// 8-bit screen of the W·z first; bounds place a kept item's exact score
// from its fast sum v: S̃ within the fast tolerance (and the float32 lane
// sums' 2·10⁻⁵) of v, S within ρ and E of S̃. No filter where the margin
// is not finite (W·a beyond float32's range).
func (t *headTransform) filter(q float64, anchor []float32) (func(lo, hi int, keep []bool, scratch []float64), func(b0 int, masks []uint16), func(r int, v float64) (lo, hi float64, ok bool)) {
	in, out := t.in, t.out
	ya := make([]float32, out)
	var amax float64
	for k := range out {
		var v, a float64
		for l, x := range anchor {
			v += t.w[k*in+l] * float64(x)
			a += math.Abs(t.w[k*in+l] * float64(x))
		}
		ya[k], amax = float32(v), max(amax, a)
	}
	const u = 0x1p-24
	e := 4*(u*(1+0x1p-20)+float64(in)*0x1p-53)*(amax*(1+1e-12)+t.zmax) + 0x1p-147
	var bigE float64
	for k, f := range t.cterm {
		bigE += f * math.Pow(e, t.gp[k])
	}
	bigE *= 1 + 1e-9
	qq := ((1+t.rho)*q + bigE) * (1 + 1e-9)
	limit := (qq + t.abs) / (1 - t.rel) * (1 + 1e-5)
	if math.IsInf(limit, 0) || math.IsNaN(limit) || math.IsInf(float64(slices.Max(ya)), 0) || math.IsInf(float64(slices.Min(ya)), 0) {
		return nil, nil, nil
	}
	keep := func(lo, hi int, keep []bool, sc []float64) {
		kernel.FastPowRowsBound(sc, t.m32, t.p32, ya, t.y[lo*out:hi*out], limit)
		for i, v := range sc {
			keep[i] = !(v > limit) || math.IsInf(v, 1)
		}
	}
	bounds := func(_ int, v float64) (lo, hi float64, ok bool) {
		if !(v <= limit) {
			return 0, 0, false // +Inf: a term the fast kernel does not cover
		}
		sHi := (v*(1+2e-5) + t.abs) / (1 - t.rel)
		sLo := (v*(1-2e-5) - t.abs) / (1 + t.rel)
		hi = ((1+t.rho)*sHi + bigE) * (1 + 1e-9)
		lo = max(0, (sLo-bigE)/(1+t.rho)*(1-1e-9))
		return lo, hi, true
	}
	var screen func(b0 int, masks []uint16)
	if t.bytes != nil {
		screen = t.gb.ScreenBytes(ya, qq, t.bytes)
	}
	return keep, screen, bounds
}
