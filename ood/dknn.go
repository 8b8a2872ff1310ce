package ood

import (
	"cmp"
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

	mu             []float64
	prin, resid    *mat.Dense // D×D projectors
	ip, ir         *index
	mp, sp, mr, sr float64
}

// Name implements Detector.
func (*DKNN) Name() string { return "D-KNN" }

func (k *DKNN) defaults() {
	k.K, k.Var, k.Alpha = cmp.Or(k.K, 50), cmp.Or(k.Var, 0.95), cmp.Or(k.Alpha, 0.5)
}

// Fit implements Detector.
func (k *DKNN) Fit(train Sample) error {
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
	c := mat.NewDense(train.N, d, nil)
	for i := range train.N {
		for j := range d {
			c.Set(i, j, z[i*d+j]-k.mu[j])
		}
	}
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
	v := vecs.Slice(0, d, d-r, d)
	k.prin = mat.NewDense(d, d, nil)
	k.prin.Mul(v, v.T())
	k.resid = mat.NewDense(d, d, nil)
	for i := range d {
		k.resid.Set(i, i, 1)
	}
	k.resid.Sub(k.resid, k.prin)
	zp, zr := k.retract(c)
	k.ip, k.ir = newIndex(zp, d), newIndex(zr, d)
	k.mp, k.sp = meanStd(k.ip.kth(zp, k.K, true, k.Progress.report("D-KNN fit: principal space")))
	k.mr, k.sr = meanStd(k.ir.kth(zr, k.K, true, k.Progress.report("D-KNN fit: residual space")))
	return nil
}

// retract maps centred features into the principal and residual spaces.
func (k *DKNN) retract(c *mat.Dense) (zp, zr []float64) {
	n, d := c.Dims()
	out := [2][]float64{}
	for s, p := range []*mat.Dense{k.prin, k.resid} {
		var y mat.Dense
		y.Mul(c, p) // P is symmetric
		raw := make([]float64, 0, n*d)
		for i := range n {
			row := y.RawRowView(i)
			for j := range d {
				raw = append(raw, row[j]+k.mu[j])
			}
		}
		out[s] = normalized(raw, d)
	}
	return out[0], out[1]
}

// Score implements Detector.
func (k *DKNN) Score(x Sample) ([]float64, error) {
	if err := fitted("D-KNN", k.ip.dim(), x.D); err != nil {
		return nil, err
	}
	d := x.D
	z := normalized(x.Features, d)
	c := mat.NewDense(x.N, d, nil)
	for i := range x.N {
		for j := range d {
			c.Set(i, j, z[i*d+j]-k.mu[j])
		}
	}
	zp, zr := k.retract(c)
	sp := k.ip.kth(zp, k.K, false, k.Progress.report("D-KNN score: principal space"))
	sr := k.ir.kth(zr, k.K, false, k.Progress.report("D-KNN score: residual space"))
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
