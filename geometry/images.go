package geometry

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Images scores a single-norm geometry's differences a − z from the rows'
// images under M, ‖M·a − M·z‖_p, each row transformed once: a bundle
// whose positives and negatives are rows of the anchors (ccs bundle's
// from labels) has N rows and N·(K+KNeg) differences, and a difference
// costs d² products where its images cost d. The score differs from
// Scores' ‖M·fl32(a − z)‖_p by rounding alone, which Score bounds: a
// difference whose image score lies within that bound of a threshold is
// scored by Scores, so that every decision is Scores' (eval's evaluation
// of a single-norm set at d = 3 072 took 11 minutes through M).
type Images struct {
	n  *Norm
	rp float64 // ‖r‖_p, r_k = Σ_j |M_kj|: what a coordinate's error is scaled by
}

// NewImages prepares n's images, or returns nil where the bound does not
// hold: p < 1 (no norm: no triangle inequality).
func NewImages(n *Norm) *Images {
	if !(n.p >= 1) {
		return nil
	}
	d := n.d
	r := make([]float64, d)
	for k := range d {
		for _, v := range n.m[k*d : (k+1)*d] {
			r[k] += math.Abs(v)
		}
	}
	rp, _, _ := pnorm(r, n.p, nil, nil)
	return &Images{n: n, rp: rp}
}

// Transform returns the images of rows (rows of the geometry's
// dimension), M·x each, in float64, a row of d values each.
func (im *Images) Transform(rows []float32) []float64 {
	d := im.n.d
	nr := len(rows) / d
	y := make([]float64, nr*d)
	const block = 256 // rows widened to float64 at a time, not the whole
	x := make([]float64, min(nr, block)*d)
	for lo := 0; lo < nr; lo += block {
		hi := min(nr, lo+block)
		xb := x[:(hi-lo)*d]
		for i, v := range rows[lo*d : hi*d] {
			xb[i] = float64(v)
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: hi - lo, Cols: d, Data: xb, Stride: d},
			blas64.General{Rows: d, Cols: d, Data: im.n.m, Stride: d}, 0,
			blas64.General{Rows: hi - lo, Cols: d, Data: y[lo*d : hi*d], Stride: d})
	}
	return y
}

// Score returns ‖ya − yz‖_p, for ya and yz the images of a and z
// (Transform), and tol, a bound on its distance from Scores' score of
// a − z: the float32 difference's rounding (ε₃₂·‖a − z‖∞ a coordinate,
// through M: ε₃₂·‖a − z‖∞·‖r‖_p), both products' float64 rounding
// (γ_d·‖r‖_p times the rows' largest coordinates), and the p-norms' own
// (10⁻¹² of the score: theirs is a few ulps), doubled. y is scratch of
// the geometry's dimension, buf of four times it (or nil).
func (im *Images) Score(y, ya, yz []float64, a, z []float32, buf []float64) (score, tol float64) {
	var diff, big float64 // ‖a − z‖∞, max(‖a‖∞, ‖z‖∞)
	for k := range y {
		y[k] = ya[k] - yz[k]
		diff = max(diff, math.Abs(float64(a[k])-float64(z[k])))
		big = max(big, math.Abs(float64(a[k])), math.Abs(float64(z[k])))
	}
	score, _, _ = pnorm(y, im.n.p, nil, buf)
	const eps32, eps64 = 0x1p-24, 0x1p-53
	gamma := float64(im.n.d+2) * eps64 * 1.01
	tol = 2 * (eps32*diff*im.rp + gamma*im.rp*(3*big+diff) + 1e-12*(score+diff*im.rp))
	return score, tol
}
