package ood

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// TestDKNNAllComponents: when PCA keeps every component, the principal
// space is the normalised features themselves and the residual space a
// single point, so D-KNN is Alpha times the KNN distance standardised by
// the training points' own (leave-one-out) distances.
func TestDKNNAllComponents(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	const d, k = 3, 5
	train := Sample{N: 300, D: d, Features: randRows(rng, 300, d)}
	q := Sample{N: 40, D: d, Features: randRows(rng, 40, d)}
	dk := &DKNN{K: k, Var: 0.999999999}
	if err := dk.Fit(train); err != nil {
		t.Fatal(err)
	}
	got, err := dk.Score(q)
	if err != nil {
		t.Fatal(err)
	}
	z := normalized(train.Features, d)
	m, s := meanStd(newIndex(z, d).kth(z, k, true, nil))
	ref := &KNN{K: k}
	ref.Fit(train)
	want, _ := ref.Score(q)
	for i := range want {
		w := 0.5 * (want[i] - m) / (s + 1e-8)
		if math.Abs(got[i]-w) > 1e-9 {
			t.Fatalf("query %d: %v, standardised KNN / 2 = %v", i, got[i], w)
		}
	}
}

// TestDKNNProjectors: D-KNN's scores in the spaces' coordinates (r+1
// and D−r+1 of them) are those of its definition, the D-dimensional
// points normalise(P·(z−μ) + μ) and normalise((I−P)·(z−μ) + μ) searched
// by brute force, on features where PCA keeps some of the components and
// μ lies partly inside and partly outside the kept ones.
func TestDKNNProjectors(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 11))
	const d, k = 8, 6
	mk := func(n int, off float64) Sample { // three strong axes, the rest weak; off lifts them
		s := Sample{N: n, D: d, Features: make([]float64, n*d)}
		for i := range n {
			for j := range d {
				sd := 0.2
				if j < 3 {
					sd = 2
				}
				s.Features[i*d+j] = 1 + off*float64(j%2) + sd*rng.NormFloat64()
			}
		}
		return s
	}
	train, q := mk(300, 0), mk(60, 0.5)
	for _, v := range []float64{0.5, 0.9} { // all components: TestDKNNAllComponents
		dk := &DKNN{K: k, Var: v}
		if err := dk.Fit(train); err != nil {
			t.Fatal(err)
		}
		got, err := dk.Score(q)
		if err != nil {
			t.Fatal(err)
		}
		want, r := dknnByProjectors(train, q, k, v)
		if r == 0 || r == d {
			t.Fatalf("Var %v: %d components kept, want some but not all", v, r)
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
				t.Fatalf("Var %v (%d components): query %d: %v, by the projectors %v", v, r, i, got[i], want[i])
			}
		}
	}
}

// dknnByProjectors is D-KNN as its definition reads, D×D projectors and
// brute-force distances; it returns the scores and the components kept.
func dknnByProjectors(train, q Sample, k int, v float64) ([]float64, int) {
	d := train.D
	z := normalized(train.Features, d)
	mu := make([]float64, d)
	for i := range train.N {
		for j := range d {
			mu[j] += z[i*d+j] / float64(train.N)
		}
	}
	c := mat.NewDense(train.N, d, nil)
	for i := range train.N {
		for j := range d {
			c.Set(i, j, z[i*d+j]-mu[j])
		}
	}
	var cov mat.SymDense
	cov.SymOuterK(1/float64(train.N), c.T())
	var eig mat.EigenSym
	eig.Factorize(&cov, true)
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	total := floats.Sum(vals)
	r, cum := 0, 0.0
	for i := d - 1; i >= 0 && cum <= v*total; i-- {
		cum += vals[i]
		r++
	}
	vk := vecs.Slice(0, d, d-r, d)
	var p mat.Dense
	p.Mul(vk, vk.T())
	retract := func(s Sample) (zp, zr []float64) {
		x := normalized(s.Features, d)
		for i := range s.N {
			row := make([]float64, d)
			for j := range d {
				row[j] = x[i*d+j] - mu[j]
			}
			var y mat.VecDense
			y.MulVec(&p, mat.NewVecDense(d, row))
			for j := range d {
				zp = append(zp, y.AtVec(j)+mu[j])
				zr = append(zr, row[j]-y.AtVec(j)+mu[j])
			}
		}
		return normalized(zp, d), normalized(zr, d)
	}
	tp, tr := retract(train)
	qp, qr := retract(q)
	kth := func(ref, x []float64, self bool) []float64 {
		var out []float64
		for i := range len(x) / d {
			skip := -1
			if self {
				skip = i
			}
			out = append(out, bruteKth(ref, x[i*d:(i+1)*d], d, k, skip))
		}
		return out
	}
	mp, sp := meanStd(kth(tp, tp, true))
	mr, sr := meanStd(kth(tr, tr, true))
	sq, rq := kth(tp, qp, false), kth(tr, qr, false)
	out := make([]float64, q.N)
	for i := range out {
		out[i] = 0.5*(sq[i]-mp)/(sp+1e-8) + 0.5*(rq[i]-mr)/(sr+1e-8)
	}
	return out, r
}

// TestDKNNSeparates: points off the training manifold score higher.
func TestDKNNSeparates(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	const d = 6
	plane := func(n int, off float64) Sample { // ID: mostly the first two axes
		s := Sample{N: n, D: d, Features: make([]float64, n*d)}
		for i := range n {
			s.Features[i*d] = 3 + rng.NormFloat64()
			s.Features[i*d+1] = 3 + rng.NormFloat64()
			for j := 2; j < d; j++ {
				s.Features[i*d+j] = 0.05*rng.NormFloat64() + off
			}
		}
		return s
	}
	dk := &DKNN{K: 10}
	if err := dk.Fit(plane(500, 0)); err != nil {
		t.Fatal(err)
	}
	id, _ := dk.Score(plane(200, 0))
	ood, _ := dk.Score(plane(200, 2))
	if a := AUROC(id, ood); a < 0.95 {
		t.Errorf("AUROC %v for points lifted off the plane, want ≥ 0.95", a)
	}
}

func TestYeoJohnson(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{-3, -0.5, 0, 0.7, 12} {
		if yeoJohnson(x, 1) != x {
			t.Errorf("λ = 1 at %v: %v, want the identity", x, yeoJohnson(x, 1))
		}
		if x >= 0 && yeoJohnson(x, 0) != math.Log1p(x) {
			t.Errorf("λ = 0 at %v: want log1p", x)
		}
		if x < 0 && yeoJohnson(x, 2) != -math.Log1p(-x) {
			t.Errorf("λ = 2 at %v: want −log1p(−x)", x)
		}
	}
	// Data made by inverting the transform of normal draws at λ = 0.5: the
	// maximum-likelihood λ recovers it.
	rng := rand.New(rand.NewPCG(9, 9))
	const lam = 0.5
	x := make([]float64, 20000)
	for i := range x {
		y := 1 + rng.NormFloat64()
		if y >= 0 {
			x[i] = math.Pow(lam*y+1, 1/lam) - 1
		} else {
			x[i] = 1 - math.Pow(1-(2-lam)*y, 1/(2-lam))
		}
	}
	if got := yeoJohnsonFit(x); math.Abs(got-lam) > 0.05 {
		t.Errorf("fitted λ = %v, want ≈ %v", got, lam)
	}
}

// TestYeoJohnsonLogLik: the fit's log-likelihood, computed from log(1 +
// |x|) once and expm1 a value, is the definition's — yeoJohnson (a power a
// value) then −n/2·log σ² + (λ − 1)·Σ sign(x)·log(1 + |x|) — to 1e-12
// relatively, for λ across the search's range, its special values and
// both signs of x; the λ fitted on the two agree to 1e-6; and the fits
// of several columns in parallel are each column's alone.
func TestYeoJohnsonLogLik(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	x := make([]float64, 3000)
	for i := range x {
		x[i] = math.Exp(0.5*rng.NormFloat64()) - 0.8 // both signs, skewed
	}
	def := func(l float64) float64 {
		y := make([]float64, len(x))
		var jac float64
		for i, v := range x {
			y[i] = yeoJohnson(v, l)
			jac += math.Copysign(math.Log1p(math.Abs(v)), v)
		}
		_, s := meanStd(y)
		return -float64(len(x))/2*math.Log(s*s) + (l-1)*jac
	}
	lx, neg, jac := yeoJohnsonLogs(x)
	y := make([]float64, len(x))
	for _, l := range []float64{-10, -3.3, -1e-13, 0, 1e-13, 0.5, 1, 2 - 1e-13, 2, 2.7, 9.99} {
		got, want := yeoJohnsonLogLik(lx, neg, y, jac, l), def(l)
		if !(math.Abs(got-want) <= 1e-12*math.Abs(want)) {
			t.Errorf("λ = %v: log-likelihood %v, the definition's %v", l, got, want)
		}
	}
	// The definition's maximiser, by the same golden-section search.
	lo, hi := -10.0, 10.0
	for hi-lo > 1e-9 {
		a, b := hi-(math.Sqrt(5)-1)/2*(hi-lo), lo+(math.Sqrt(5)-1)/2*(hi-lo)
		if def(a) > def(b) {
			hi = b
		} else {
			lo = a
		}
	}
	if got := yeoJohnsonFit(x); math.Abs(got-(lo+hi)/2) > 1e-6 {
		t.Errorf("fitted λ %v, the definition's maximiser %v", got, (lo+hi)/2)
	}
	const L = 3
	cols := make([]float64, len(x)*L)
	for i := range cols {
		cols[i] = x[i/L] * float64(1+i%L)
	}
	// The columns fitted together: each as fitted alone, and the
	// standardised values COMBOOD.Fit keeps as its training sample's
	// are what transform gives, bit for bit.
	lam, shift, scale, y := yeoJohnsonFits(cols, len(x), L)
	c := &COMBOOD{lambdas: lam, shift: shift, scale: scale}
	want := c.transform(Sample{N: len(x), A: L, Activations: cols})
	for j := range L {
		col := make([]float64, len(x))
		for i := range col {
			col[i] = cols[i*L+j]
		}
		if l := yeoJohnsonFit(col); l != lam[j] {
			t.Errorf("column %d: λ %v fitted with the others, %v alone", j, lam[j], l)
		}
	}
	if !slices.Equal(y, want.RawMatrix().Data) {
		t.Error("the fit's standardised values differ from transform's")
	}
}

// TestCOMBOODParts: the score is −(kc + mc) with kc from KNN and mc the
// Gaussian log-density of the transformed activation, here one column.
func TestCOMBOODParts(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(10, 10))
	const d, n = 3, 400
	mk := func(n int, scale float64) Sample {
		s := Sample{N: n, D: d, Features: randRows(rng, n, d), A: 1, Activations: make([]float64, n)}
		for i := range s.Activations {
			s.Activations[i] = scale * math.Exp(0.3*rng.NormFloat64())
		}
		return s
	}
	train, q := mk(n, 2), mk(30, 5)
	c := &COMBOOD{K: 7, C: 1}
	if err := c.Fit(train); err != nil {
		t.Fatal(err)
	}
	got, err := c.Score(q)
	if err != nil {
		t.Fatal(err)
	}
	ref := &KNN{K: 7}
	ref.Fit(train)
	r, _ := ref.Score(q)
	y := make([]float64, n)
	for i, v := range train.Activations {
		y[i] = yeoJohnson(v, c.lambdas[0])
	}
	m, s := meanStd(y) // standardised: mean 0, variance n/(n−1) unbiased
	v := float64(n)/float64(n-1) + 1
	for i := range q.N {
		z := (yeoJohnson(q.Activations[i], c.lambdas[0]) - m) / s
		mc := -0.5*z*z/v - 0.5*math.Log(2*math.Pi*v)
		kc := -math.Sqrt(d) * math.Log(r[i])
		if w := -(kc + mc); math.Abs(got[i]-w) > 1e-9*(1+math.Abs(w)) {
			t.Fatalf("query %d: %v, −(kc + mc) = %v", i, got[i], w)
		}
	}
	if err := (&COMBOOD{}).Fit(Sample{N: 60, D: d, Features: randRows(rng, 60, d)}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("no activations: %v, want ErrUnavailable", err)
	}
}
