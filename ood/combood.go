package ood

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/ccsets/ccs/internal/parallel"
)

// COMBOOD (Rajasekaran et al., SDM 2024) combines a non-parametric and a
// parametric signal. As the CCS paper configures it (appendix: k = 50,
// C = 1, the maximum activations of the ReLU layers) and its authors
// implemented it (ccs_official, read, not copied):
//
//   - kc = −√D · log(max(r_K, 1e-8)), r_K the distance of the L2-normalised
//     feature to its K-th nearest normalised training feature;
//   - the activation summaries (ccs embed's "activations": each ReLU
//     layer's maximum) are Yeo-Johnson transformed, one λ per column fitted
//     by maximum likelihood on the training sample, and standardised; mc is
//     their Gaussian log-density with the training mean and covariance
//     Σ + C·I;
//   - anomaly = −(kc + mc).
//
// λ is found by golden-section search on [−10, 10] (scikit-learn's
// PowerTransformer uses Brent's method from the bracket (−2, 2)).
type COMBOOD struct {
	K int
	C float64
	// Progress, if not nil, hears how many inputs the KNN part of Score
	// has done.
	Progress Steps

	// share, where not nil, is the KNN index and searches shared with
	// a KNN detector (Baselines).
	share   *knnShare
	knn     KNN
	lambdas []float64
	shift   []float64 // standardisation: (y − shift)/scale
	scale   []float64
	mean    []float64
	prec    *mat.Dense // (Σ + C·I)⁻¹
	logNorm float64    // ½(L·log 2π + log det(Σ + C·I))
}

// Name implements Detector.
func (*COMBOOD) Name() string { return "COMBOOD" }

// Fit implements Detector.
func (c *COMBOOD) Fit(train Sample) error {
	if c.K == 0 {
		c.K = 50
	}
	if c.C == 0 {
		c.C = 1
	}
	if train.Activations == nil {
		return unavailable("COMBOOD", "activation summaries (each ReLU layer's maximum: ccs embed's activations output, or ccs bundle -activations)")
	}
	c.knn = KNN{K: c.K, Progress: c.Progress, share: c.share}
	if err := c.knn.Fit(train); err != nil {
		return fmt.Errorf("COMBOOD: %w", err)
	}
	L, n := train.A, train.N
	var ys []float64
	c.lambdas, c.shift, c.scale, ys = yeoJohnsonFits(train.Activations, n, L)
	y := mat.NewDense(n, L, ys) // c.transform(train), each value transformed once
	c.mean = make([]float64, L)
	for i := range n {
		for j := range L {
			c.mean[j] += y.At(i, j) / float64(n)
		}
	}
	if n < 2 {
		return errors.New("COMBOOD: fewer than 2 training samples")
	}
	cov := mat.NewSymDense(L, nil)
	for a := range L {
		for b := a; b < L; b++ {
			var s float64
			for i := range n {
				s += (y.At(i, a) - c.mean[a]) * (y.At(i, b) - c.mean[b])
			}
			v := s / float64(n-1) // numpy.cov's divisor
			if a == b {
				v += c.C
			}
			cov.SetSym(a, b, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return errors.New("COMBOOD: Σ + C·I is not positive definite")
	}
	c.prec = mat.NewDense(L, L, nil)
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return fmt.Errorf("COMBOOD: %w", err)
	}
	c.prec.Copy(&inv)
	c.logNorm = 0.5 * (float64(L)*math.Log(2*math.Pi) + ch.LogDet())
	return nil
}

// transform applies the fitted Yeo-Johnson maps and standardisation.
func (c *COMBOOD) transform(x Sample) *mat.Dense {
	L := x.A
	y := mat.NewDense(x.N, L, nil)
	for i := range x.N {
		for j := range L {
			y.Set(i, j, (yeoJohnson(x.Activations[i*L+j], c.lambdas[j])-c.shift[j])/c.scale[j])
		}
	}
	return y
}

// Score implements Detector.
func (c *COMBOOD) Score(x Sample) ([]float64, error) { return c.ScoreContext(context.Background(), x) }

// ScoreContext implements ContextScorer: Score, its k-NN search stopped
// with ctx's error a block of inputs at a time.
func (c *COMBOOD) ScoreContext(ctx context.Context, x Sample) ([]float64, error) {
	if c.prec == nil {
		return nil, errors.New("COMBOOD: not fitted")
	}
	if x.Activations == nil {
		return nil, unavailable("COMBOOD", "activation summaries")
	}
	if x.A != len(c.lambdas) {
		return nil, fmt.Errorf("COMBOOD: fitted on %d activation summaries, scoring %d", len(c.lambdas), x.A)
	}
	r, err := c.knn.ScoreContext(ctx, x)
	if err != nil {
		return nil, fmt.Errorf("COMBOOD: %w", err)
	}
	y := c.transform(x)
	L := x.A
	diff := make([]float64, L)
	out := make([]float64, x.N)
	for i := range x.N {
		for j := range L {
			diff[j] = y.At(i, j) - c.mean[j]
		}
		v := mat.NewVecDense(L, diff)
		mc := -0.5*mat.Inner(v, c.prec, v) - c.logNorm
		kc := -math.Sqrt(float64(x.D)) * math.Log(max(r[i], 1e-8))
		out[i] = -(kc + mc)
	}
	return out, nil
}

// yeoJohnson is the Yeo-Johnson power transform of x with parameter λ.
func yeoJohnson(x, l float64) float64 {
	const eps = 1e-12
	if x >= 0 {
		if math.Abs(l) < eps {
			return math.Log1p(x)
		}
		return (math.Pow(x+1, l) - 1) / l
	}
	if math.Abs(l-2) < eps {
		return -math.Log1p(-x)
	}
	return -(math.Pow(1-x, 2-l) - 1) / (2 - l)
}

// yeoJohnsonFits fits each column of the (n, L) activation summaries x:
// its λ (yeoJohnsonFit), and the mean and standard deviation of the
// column transformed, for standardising it (1 for a constant column, as
// scikit-learn's); y is x transformed and standardised, (n, L), what
// COMBOOD.transform gives of x. The columns are fitted in parallel, each
// alone.
func yeoJohnsonFits(x []float64, n, L int) (lambdas, shift, scale, y []float64) {
	lambdas, shift, scale, y = make([]float64, L), make([]float64, L), make([]float64, L), make([]float64, n*L)
	parallel.Tasks(L, 0, func(j int) {
		col := make([]float64, n)
		for i := range n {
			col[i] = x[i*L+j]
		}
		lambdas[j] = yeoJohnsonFit(col)
		for i := range n {
			col[i] = yeoJohnson(col[i], lambdas[j])
		}
		m, s := meanStd(col)
		if !(s > 0) {
			s = 1 // a constant column, as scikit-learn treats it
		}
		shift[j], scale[j] = m, s
		for i, v := range col {
			y[i*L+j] = (v - m) / s
		}
	})
	return lambdas, shift, scale, y
}

// yeoJohnsonLogLik is the profile log-likelihood of λ for the sample x:
// −n/2·log σ²(λ) + (λ − 1)·Σ sign(x)·log(1 + |x|), of x given as
// lx = log(1 + |x|) with x's sign in neg (yeoJohnsonLogs), y scratch of
// len(lx). The transform is expm1(λ·lx)/λ for x ≥ 0, −expm1((2 − λ)·lx)/
// (2 − λ) below: yeoJohnson's values without a power a value (math.Pow's
// logarithm is lx, the same for every λ).
func yeoJohnsonLogLik(lx []float64, neg []bool, y []float64, jac, l float64) float64 {
	const eps = 1e-12
	for i, v := range lx {
		switch {
		case !neg[i] && math.Abs(l) < eps:
			y[i] = v
		case !neg[i]:
			y[i] = math.Expm1(l*v) / l
		case math.Abs(l-2) < eps:
			y[i] = -v
		default:
			y[i] = -math.Expm1((2-l)*v) / (2 - l)
		}
	}
	_, s := meanStd(y)
	return -float64(len(lx))/2*math.Log(s*s) + (l-1)*jac
}

// yeoJohnsonLogs are log(1 + |x|) of each x, whether it is negative, and
// the log-likelihood's Jacobian sum Σ sign(x)·log(1 + |x|), which does
// not depend on λ.
func yeoJohnsonLogs(x []float64) (lx []float64, neg []bool, jac float64) {
	lx, neg = make([]float64, len(x)), make([]bool, len(x))
	for i, v := range x {
		lx[i], neg[i] = math.Log1p(math.Abs(v)), v < 0
		jac += math.Copysign(lx[i], v)
	}
	return lx, neg, jac
}

// yeoJohnsonFit maximises the log-likelihood over λ ∈ [−10, 10] by
// golden-section search (the profile likelihood is unimodal in practice).
func yeoJohnsonFit(x []float64) float64 {
	lx, neg, jac := yeoJohnsonLogs(x)
	y := make([]float64, len(x))
	ll := func(l float64) float64 { return yeoJohnsonLogLik(lx, neg, y, jac, l) }
	lo, hi := -10.0, 10.0
	g := (math.Sqrt(5) - 1) / 2
	a, b := hi-g*(hi-lo), lo+g*(hi-lo)
	fa, fb := ll(a), ll(b)
	for hi-lo > 1e-9 {
		if fa > fb || math.IsNaN(fb) {
			hi, b, fb = b, a, fa
			a = hi - g*(hi-lo)
			fa = ll(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + g*(hi-lo)
			fb = ll(b)
		}
	}
	return (lo + hi) / 2
}
