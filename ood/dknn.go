package ood

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// DKNN is dual-space KNN (D-KNN, Peng et al. 2026). The paper is not
// available on this machine; this is the definition as the CCS authors
// implemented it for their comparison (ccs_official, ood_baselines_utils.py,
// read, not copied), which docs/design.md §6 asks us to pin down:
//
//  1. Features are L2-normalised, z = x/‖x‖, and centred on the training
//     mean μ.
//  2. PCA of the centred training features keeps the fewest leading
//     components whose explained variance exceeds Var (0.95); P projects
//     onto them and I − P onto the rest.
//  3. Each feature is retracted into two spaces, z_p = normalise(P·(z−μ) + μ)
//     and z_r = normalise((I−P)·(z−μ) + μ).
//  4. In each space, s = distance to the K-th nearest training point (K = 50;
//     a training point leaves itself out), standardised by the mean and
//     (population) standard deviation of the training points' own s.
//  5. anomaly = Alpha·s̃_p + (1 − Alpha)·s̃_r, Alpha = 0.5.
type DKNN struct {
	K     int
	Var   float64
	Alpha float64
	// Progress, if not nil, hears how many training points Fit and how
	// many inputs Score have done, in each space.
	Progress Steps

	mu []float64
	// The two spaces in coordinates: the principal space's point
	// P·(z−μ) + μ is (Vᵀ(z−μ) + Vᵀμ, ‖Uᵀμ‖) in the orthonormal basis of
	// V's columns (the kept components) and μ's part outside them, the
	// residual space's (I−P)·(z−μ) + μ is (Uᵀ(z−μ) + Uᵀμ, ‖Vᵀμ‖) in U's
	// columns (the rest) and μ's part inside V. Both are exact rotations:
	// distances, and so the scores, are those of the D-dimensional
	// points, with r+1 and D−r+1 coordinates instead of D each.
	prin, resid    space
	ip, ir         *index
	mp, sp, mr, sr float64
}

// space is one of D-KNN's spaces in coordinates: a centred feature c
// maps to (c·basis + shift, extra), normalised.
type space struct {
	basis *mat.Dense // D×r; nil when r = 0
	shift []float64  // r
	extra float64
}

// coords maps the rows of c (centred features) into the space and
// normalises them. The product c·basis is written into the rows it
// returns (their first r columns) and they are normalised in place: at
// 60 000 training features and r = 88, a product and a normalised copy
// of their own held 2 × 43 MB more at once.
func (s space) coords(c *mat.Dense) []float64 {
	n, _ := c.Dims()
	r := len(s.shift)
	out := make([]float64, n*(r+1))
	if s.basis != nil {
		y := mat.NewDense(n, r+1, out).Slice(0, n, 0, r).(*mat.Dense)
		y.Mul(c, s.basis)
	}
	for i := range n {
		row := out[i*(r+1) : (i+1)*(r+1)]
		for j, v := range s.shift {
			row[j] += v
		}
		row[r] = s.extra
	}
	return normalize(out, r+1)
}

// centred returns the features of x normalised and centred on mu, in a
// matrix of their own (x's are not changed).
func centred(x Sample, mu []float64) *mat.Dense {
	z := normalized(x.Features, x.D)
	centre(z, mu)
	return mat.NewDense(x.N, x.D, z)
}

// centre subtracts mu from each row of z (rows of len(mu) values), in
// place.
func centre(z, mu []float64) {
	d := len(mu)
	for i := 0; i < len(z); i += d {
		for j, m := range mu {
			z[i+j] -= m
		}
	}
}

// spaces are D-KNN's principal space, spanned by v's columns (nil: none)
// and the direction of mu's part outside them, and its residual space,
// spanned by u's columns (nil: none; u and v together an orthonormal
// basis) and the direction of mu's part inside v's span.
func spaces(v, u *mat.Dense, mu []float64) (prin, resid space) {
	prin, resid = space{basis: v}, space{basis: u}
	if v != nil {
		prin.shift = project(mu, v)
	}
	if u != nil {
		resid.shift = project(mu, u)
	}
	prin.extra, resid.extra = math.Sqrt(dot(resid.shift, resid.shift)), math.Sqrt(dot(prin.shift, prin.shift))
	return prin, resid
}

// Name implements Detector.
func (*DKNN) Name() string { return "D-KNN" }

func (k *DKNN) defaults() {
	k.K, k.Var, k.Alpha = cmp.Or(k.K, 50), cmp.Or(k.Var, 0.95), cmp.Or(k.Alpha, 0.5)
}

// Fit implements Detector.
func (k *DKNN) Fit(train Sample) error { return k.FitContext(context.Background(), train) }

// FitContext implements ContextFitter: Fit, stopped with ctx's error
// during its searches of each training feature's neighbours (the long
// part: 60 000 features' took most of the fit), a block at a time.
func (k *DKNN) FitContext(ctx context.Context, train Sample) error {
	k.defaults()
	d := train.D
	if train.N <= k.K {
		return fmt.Errorf("D-KNN: %d training features for k = %d", train.N, k.K)
	}
	z := normalized(train.Features, d)
	k.mu = make([]float64, d)
	for i := range train.N {
		for j := range d {
			k.mu[j] += z[i*d+j] / float64(train.N)
		}
	}
	centre(z, k.mu) // in place: z is not needed again
	c := mat.NewDense(train.N, d, z)
	var cov mat.SymDense
	cov.SymOuterK(1/float64(train.N), c.T())
	var eig mat.EigenSym
	if !eig.Factorize(&cov, true) {
		return errors.New("D-KNN: the eigendecomposition failed")
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	var total float64
	for _, v := range vals {
		total += max(v, 0)
	}
	if !(total > 0) {
		return errors.New("D-KNN: the features do not vary")
	}
	r, cum := 0, 0.0 // leading components until the variance exceeds Var
	for i := d - 1; i >= 0 && cum <= k.Var*total; i-- {
		cum += max(vals[i], 0)
		r++
	}
	// V: the r leading eigenvectors (the last r columns), U: the rest.
	var v, u *mat.Dense
	if r > 0 {
		v = mat.DenseCopyOf(vecs.Slice(0, d, d-r, d))
	}
	if r < d {
		u = mat.DenseCopyOf(vecs.Slice(0, d, 0, d-r))
	}
	k.prin, k.resid = spaces(v, u, k.mu)
	zp, zr := k.prin.coords(c), k.resid.coords(c)
	k.ip, k.ir = newIndex(zp, r+1), newIndex(zr, d-r+1)
	sp, err := k.ip.kthContext(ctx, zp, k.K, true, k.Progress.report("D-KNN fit: principal space"))
	if err != nil {
		k.mu = nil // not fitted
		return err
	}
	sr, err := k.ir.kthContext(ctx, zr, k.K, true, k.Progress.report("D-KNN fit: residual space"))
	if err != nil {
		k.mu = nil
		return err
	}
	k.mp, k.sp = meanStd(sp)
	k.mr, k.sr = meanStd(sr)
	return nil
}

// Score implements Detector.
func (k *DKNN) Score(x Sample) ([]float64, error) { return k.ScoreContext(context.Background(), x) }

// ScoreContext implements ContextScorer: Score, stopped with ctx's error
// a block of inputs at a time.
func (k *DKNN) ScoreContext(ctx context.Context, x Sample) ([]float64, error) {
	if err := fitted("D-KNN", len(k.mu), x.D); err != nil {
		return nil, err
	}
	c := centred(x, k.mu)
	zp, zr := k.prin.coords(c), k.resid.coords(c)
	sp, err := k.ip.kthContext(ctx, zp, k.K, false, k.Progress.report("D-KNN score: principal space"))
	if err != nil {
		return nil, err
	}
	sr, err := k.ir.kthContext(ctx, zr, k.K, false, k.Progress.report("D-KNN score: residual space"))
	if err != nil {
		return nil, err
	}
	out := make([]float64, x.N)
	for i := range out {
		out[i] = k.Alpha*(sp[i]-k.mp)/(k.sp+1e-8) + (1-k.Alpha)*(sr[i]-k.mr)/(k.sr+1e-8)
	}
	return out, nil
}

func meanStd(x []float64) (m, s float64) {
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)))
}
