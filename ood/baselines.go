package ood

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/ccsets/ccs/bundle"
)

// Sample is what the baselines see of N inputs: the encoder's features,
// and, when it gives them, logits and activation summaries; labels only
// for a training sample (the supervised baselines need them).
type Sample struct {
	N, D        int
	Features    []float64 // N×D
	C           int
	Logits      []float64 // N×C, or nil
	A           int
	Activations []float64 // N×A, or nil
	Labels      []int64   // N, or nil
	// SeveralLabels says that the sample's rows carry several labels
	// each (a bundle of several labels a row: no one label an anchor),
	// which a detector of classes cannot fit on.
	SeveralLabels bool
}

// needsLabels is the reason a detector of classes (name) cannot fit on
// train, which has no one label a row.
func needsLabels(name string, train Sample) error {
	if train.SeveralLabels {
		return unavailable(name, "one training label a row (the training rows carry several)")
	}
	return unavailable(name, "training labels")
}

// SampleOf takes a bundle's anchors (their features, logits, activations
// and labels) as a sample.
func SampleOf(b *bundle.Bundle) Sample {
	return Sample{N: b.N, D: b.D, Features: widen(b.Anchors), C: b.C, Logits: widen(b.Logits),
		A: b.A, Activations: widen(b.Activations), Labels: b.Labels,
		SeveralLabels: b.SeveralLabels()}
}

func widen(x []float32) []float64 {
	if x == nil {
		return nil
	}
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// ErrUnavailable is wrapped by a detector that cannot run on the data it was
// given (no logits, no labels, no classifier): a table reports the row as
// "not available" instead of failing.
var ErrUnavailable = errors.New("not available")

func unavailable(name, what string) error {
	return fmt.Errorf("%s: %w: needs %s", name, ErrUnavailable, what)
}

// Steps is told how far a detector's long step has come: step names it
// (e.g. "D-KNN fit: principal space"), done of total units. A detector
// calls it from one goroutine at a time; the command line draws it as a
// progress bar (libraries never print).
type Steps func(step string, done, total int)

// report calls p, when not nil, for step.
func (p Steps) report(step string) func(done, total int) {
	if p == nil {
		return nil
	}
	return func(done, total int) { p(step, done, total) }
}

// Detector is an OOD baseline: fitted on in-distribution training data,
// then giving anomaly scores (higher = more likely OOD).
type Detector interface {
	Name() string
	Fit(train Sample) error
	Score(x Sample) ([]float64, error)
}

// MSP is the maximum softmax probability (Hendrycks & Gimpel 2017):
// anomaly = −max_c softmax(logits)_c.
type MSP struct{}

// Name implements Detector.
func (MSP) Name() string { return "MSP" }

// Fit implements Detector; MSP has nothing to fit.
func (MSP) Fit(Sample) error { return nil }

// Score implements Detector.
func (MSP) Score(x Sample) ([]float64, error) {
	if x.Logits == nil {
		return nil, unavailable("MSP", "logits")
	}
	out := make([]float64, x.N)
	for i := range x.N {
		row := x.Logits[i*x.C : (i+1)*x.C]
		out[i] = -math.Exp(slices.Max(row) - logSumExp(row))
	}
	return out, nil
}

// Energy is the energy score (Liu et al. 2020) at temperature T (0 means
// 1): anomaly = −T·logsumexp(logits/T).
type Energy struct{ T float64 }

// Name implements Detector.
func (Energy) Name() string { return "Energy" }

// Fit implements Detector; Energy has nothing to fit.
func (Energy) Fit(Sample) error { return nil }

// Score implements Detector.
func (e Energy) Score(x Sample) ([]float64, error) {
	if x.Logits == nil {
		return nil, unavailable("Energy", "logits")
	}
	T := e.T
	if T == 0 {
		T = 1
	}
	out := make([]float64, x.N)
	row := make([]float64, x.C)
	for i := range x.N {
		for c, v := range x.Logits[i*x.C : (i+1)*x.C] {
			row[c] = v / T
		}
		out[i] = -T * logSumExp(row)
	}
	return out, nil
}

func logSumExp(x []float64) float64 {
	m := slices.Max(x)
	var s float64
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// KNN is the deep nearest-neighbour detector of Sun et al. (2022): features
// L2-normalised, anomaly = distance to the K-th nearest normalised training
// feature (K = 50 when 0), exact, over all training features.
type KNN struct {
	K int
	// Progress, if not nil, hears how many inputs Score has done.
	Progress Steps
	index    *index
	// share, where not nil, is the index and the searches this KNN
	// shares with a COMBOOD's (Baselines).
	share *knnShare
}

// Name implements Detector.
func (*KNN) Name() string { return "KNN" }

// Fit implements Detector.
func (k *KNN) Fit(train Sample) error {
	if k.K == 0 {
		k.K = 50
	}
	if train.N < k.K {
		return fmt.Errorf("KNN: %d training features for k = %d", train.N, k.K)
	}
	if k.share == nil {
		k.index = newIndex(normalized(train.Features, train.D), train.D)
		return nil
	}
	fp := fingerprint(train.Features, train.D)
	if k.index = k.share.fitted(fp); k.index == nil {
		k.index = newIndex(normalized(train.Features, train.D), train.D)
		k.share.fit(fp, k.index)
	}
	return nil
}

// Score implements Detector.
func (k *KNN) Score(x Sample) ([]float64, error) { return k.ScoreContext(context.Background(), x) }

// ScoreContext implements ContextScorer: Score, stopped with ctx's error
// a block of inputs at a time.
func (k *KNN) ScoreContext(ctx context.Context, x Sample) ([]float64, error) {
	if err := fitted("KNN", k.index.dim(), x.D); err != nil {
		return nil, err
	}
	var fp uint64
	if k.share != nil {
		fp = fingerprint(x.Features, x.D)
		if r := k.share.scored(k.index, fp, k.K); r != nil {
			return r, nil
		}
	}
	r, err := k.index.kthContext(ctx, normalized(x.Features, x.D), k.K, false, k.Progress.report("KNN score"))
	if err != nil {
		return nil, err
	}
	if k.share != nil {
		k.share.keep(k.index, fp, k.K, r)
	}
	return r, nil
}

// fitted checks that a detector was fitted (fitDim > 0) on features of the
// dimension it is asked to score.
func fitted(name string, fitDim, d int) error {
	if fitDim == 0 {
		return fmt.Errorf("%s: not fitted", name)
	}
	if fitDim != d {
		return fmt.Errorf("%s: fitted on dimension %d, scoring dimension %d", name, fitDim, d)
	}
	return nil
}

// normalized returns the rows of x (dimension d) scaled to unit length; a
// zero row stays zero.
func normalized(x []float64, d int) []float64 {
	return normalize(slices.Clone(x), d)
}

// normalize is normalized in place: it scales the rows of x and returns x.
func normalize(x []float64, d int) []float64 {
	for i := 0; i < len(x); i += d {
		row := x[i : i+d]
		if n := math.Sqrt(dot(row, row)); n > 0 {
			for j := range row {
				row[j] /= n
			}
		}
	}
	return x
}

// Mahalanobis is the detector of Lee et al. (2018) on the features: class
// means and one shared covariance from labelled training features; anomaly
// = min over classes of the squared Mahalanobis distance (the negative of
// their confidence max_c −d²_c). The covariance's pseudo-inverse drops
// eigenvalues below 1e-10 of the largest (dead ReLU units make it singular).
type Mahalanobis struct {
	means  [][]float64 // class means, already mapped by whiten
	whiten *mat.Dense  // D×r: x·whiten has the identity covariance on the kept subspace
	d      int
}

// Name implements Detector.
func (*Mahalanobis) Name() string { return "Mahalanobis" }

// Fit implements Detector.
func (m *Mahalanobis) Fit(train Sample) error {
	if train.Labels == nil {
		return needsLabels("Mahalanobis", train)
	}
	d := train.D
	classes := map[int64][]int{}
	for i, y := range train.Labels {
		classes[y] = append(classes[y], i)
	}
	keys := make([]int64, 0, len(classes))
	for y := range classes {
		keys = append(keys, y)
	}
	slices.Sort(keys)
	centred := mat.NewDense(train.N, d, nil)
	var means [][]float64
	for _, y := range keys {
		mu := make([]float64, d)
		for _, i := range classes[y] {
			for j := range d {
				mu[j] += train.Features[i*d+j]
			}
		}
		for j := range mu {
			mu[j] /= float64(len(classes[y]))
		}
		for _, i := range classes[y] {
			for j := range d {
				centred.Set(i, j, train.Features[i*d+j]-mu[j])
			}
		}
		means = append(means, mu)
	}
	w, err := whitening(centred, train.N)
	if err != nil {
		return fmt.Errorf("Mahalanobis: %w", err)
	}
	m.whiten, m.d = w, d
	m.means = nil
	for _, mu := range means {
		m.means = append(m.means, project(mu, w))
	}
	return nil
}

// whitening returns W (D×r) with Σ⁺ = W·Wᵀ for Σ = XᵀX/n, keeping the
// eigenvalues above 1e-10 of the largest.
func whitening(x *mat.Dense, n int) (*mat.Dense, error) {
	_, d := x.Dims()
	var cov mat.SymDense
	cov.SymOuterK(1/float64(n), x.T())
	var eig mat.EigenSym
	if !eig.Factorize(&cov, true) {
		return nil, errors.New("the covariance's eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := slices.Max(vals)
	if !(top > 0) {
		return nil, errors.New("the features do not vary")
	}
	var keep []int
	for i, v := range vals {
		if v > 1e-10*top {
			keep = append(keep, i)
		}
	}
	w := mat.NewDense(d, len(keep), nil)
	for c, i := range keep {
		s := 1 / math.Sqrt(vals[i])
		for j := range d {
			w.Set(j, c, vecs.At(j, i)*s)
		}
	}
	return w, nil
}

func project(x []float64, w *mat.Dense) []float64 {
	_, r := w.Dims()
	out := make([]float64, r)
	mat.NewVecDense(r, out).MulVec(w.T(), mat.NewVecDense(len(x), x))
	return out
}

// Score implements Detector.
func (m *Mahalanobis) Score(x Sample) ([]float64, error) {
	if err := fitted("Mahalanobis", m.d, x.D); err != nil {
		return nil, err
	}
	_, r := m.whiten.Dims()
	var z mat.Dense
	z.Mul(mat.NewDense(x.N, x.D, x.Features), m.whiten)
	out := make([]float64, x.N)
	for i := range x.N {
		row := z.RawRowView(i)
		best := math.Inf(1)
		for _, mu := range m.means {
			var s float64
			for j := range r {
				v := row[j] - mu[j]
				s += v * v
			}
			best = min(best, s)
		}
		out[i] = best
	}
	return out, nil
}

// Classifier is the encoder's last linear layer, logits = W·features + b
// (encoders/…-classifier.npz: "weight" (C, D), "bias" (C,)).
type Classifier struct {
	C, D int
	W    []float64 // C×D
	B    []float64 // C
}

// ReadClassifier reads a classifier file and checks its shapes: weight
// (C, D) and bias (C,), a bias of zeros where the file has none (an
// nn.Linear without one).
func ReadClassifier(path string) (*Classifier, error) {
	arr, err := bundle.ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	w, wok := arr["weight"]
	b, bok := arr["bias"]
	if wok && !bok && len(w.Shape) == 2 { // nn.Linear(…, bias=False): b = 0
		b = bundle.Array{Shape: []int{w.Shape[0]}, F32: make([]float32, w.Shape[0])}
	}
	switch {
	case !wok:
		return nil, fmt.Errorf("%s: array \"weight\" is missing (have %s): a classifier file holds weight (C, D) and bias (C,; none: 0), as PyTorch's nn.Linear names them (np.savez(path, weight=W, bias=b))",
			path, strings.Join(slices.Sorted(maps.Keys(arr)), ", "))
	case w.F32 == nil || len(w.Shape) != 2:
		return nil, fmt.Errorf("%s: array \"weight\": %s %s, want floating-point (C, D): C classes, D the features' dimension", path, w.Dtype, bundle.FormatShape(w.Shape))
	case b.F32 == nil || len(b.Shape) != 1:
		return nil, fmt.Errorf("%s: array \"bias\": %s %s, want floating-point (C,) = (%d,)", path, b.Dtype, bundle.FormatShape(b.Shape), w.Shape[0])
	case b.Shape[0] != w.Shape[0] && b.Shape[0] == w.Shape[1]:
		return nil, fmt.Errorf("%s: weight %s and bias %s: the weight is transposed? want (C, D) = %s, as nn.Linear's weight is: save W.T",
			path, bundle.FormatShape(w.Shape), bundle.FormatShape(b.Shape), bundle.FormatShape([]int{w.Shape[1], w.Shape[0]}))
	case b.Shape[0] != w.Shape[0]:
		return nil, fmt.Errorf("%s: weight %s and bias %s: want a bias of the weight's %d classes", path, bundle.FormatShape(w.Shape), bundle.FormatShape(b.Shape), w.Shape[0])
	}
	for _, a := range []struct {
		name string
		x    []float32
	}{{"weight", w.F32}, {"bias", b.F32}} {
		for i, v := range a.x {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%s: %s value %d is %v", path, a.name, i, v)
			}
		}
	}
	return &Classifier{C: w.Shape[0], D: w.Shape[1], W: widen(w.F32), B: widen(b.F32)}, nil
}

// ViM is Virtual-logit Matching (Wang et al. 2022). With the classifier
// (W, b), the origin is u = −pinv(W)·b; the principal subspace is spanned
// by the Dim leading eigenvectors of the training features' second moment
// about u (Dim = D/2 when 0, the paper's choice for D ≤ 512); the residual
// is the norm of x − u outside it, scaled by α = Σ max logit / Σ residual
// over the training features. anomaly = α·residual − logsumexp(logits).
type ViM struct {
	Classifier *Classifier
	Dim        int

	origin []float64
	resid  *mat.Dense // D×(D−Dim): the residual subspace
	alpha  float64
}

// Name implements Detector.
func (*ViM) Name() string { return "ViM" }

// Fit implements Detector.
func (v *ViM) Fit(train Sample) error {
	cl := v.Classifier
	switch {
	case cl == nil:
		return unavailable("ViM", "the classifier's W and b (ccs ood -classifier FILE.npz, classifier= in Python: weight (C, D) and bias (C,))")
	case train.Logits == nil:
		return unavailable("ViM", "logits")
	case cl.D != train.D || cl.C != train.C:
		return fmt.Errorf("ViM: classifier %d×%d, features %d and logits %d", cl.C, cl.D, train.D, train.C)
	}
	d := train.D
	dim := v.Dim
	if dim == 0 {
		dim = d / 2
	}
	if dim < 1 || dim >= d {
		return fmt.Errorf("ViM: principal dimension %d for features of dimension %d", dim, d)
	}
	// u = −Wᵀ(WWᵀ)⁻¹b, the least-norm solution of W·u = −b.
	var u mat.VecDense
	if err := u.SolveVec(mat.NewDense(cl.C, d, cl.W), mat.NewVecDense(cl.C, cl.B)); err != nil {
		return fmt.Errorf("ViM: pinv(W)·b: %w", err)
	}
	v.origin = make([]float64, d)
	for j := range d {
		v.origin[j] = -u.AtVec(j)
	}
	x := shifted(train, v.origin)
	var cov mat.SymDense
	cov.SymOuterK(1/float64(train.N), x.T())
	var eig mat.EigenSym
	if !eig.Factorize(&cov, true) {
		return errors.New("ViM: the eigendecomposition failed")
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs) // ascending eigenvalues: the residual is the first d − dim
	v.resid = mat.DenseCopyOf(vecs.Slice(0, d, 0, d-dim))
	res := v.residuals(x)
	var sumLogit, sumRes float64
	for i := range train.N {
		sumLogit += slices.Max(train.Logits[i*train.C : (i+1)*train.C])
		sumRes += res[i]
	}
	if !(sumRes > 0) {
		return errors.New("ViM: the training features have no residual")
	}
	v.alpha = sumLogit / sumRes
	return nil
}

func shifted(s Sample, origin []float64) *mat.Dense {
	x := mat.NewDense(s.N, s.D, slices.Clone(s.Features))
	for i := range s.N {
		row := x.RawRowView(i)
		for j := range row {
			row[j] -= origin[j]
		}
	}
	return x
}

func (v *ViM) residuals(x *mat.Dense) []float64 {
	var p mat.Dense
	p.Mul(x, v.resid)
	n, _ := x.Dims()
	out := make([]float64, n)
	for i := range n {
		row := p.RawRowView(i)
		out[i] = math.Sqrt(dot(row, row))
	}
	return out
}

// Score implements Detector.
func (v *ViM) Score(x Sample) ([]float64, error) {
	if err := fitted("ViM", len(v.origin), x.D); err != nil {
		return nil, err
	}
	if x.Logits == nil {
		return nil, unavailable("ViM", "logits")
	}
	res := v.residuals(shifted(x, v.origin))
	for i := range x.N {
		res[i] = v.alpha*res[i] - logSumExp(x.Logits[i*x.C:(i+1)*x.C])
	}
	return res, nil
}

// BaselineOptions configure the baselines Baselines returns; the zero
// value is the paper's appendix without ViM.
type BaselineOptions struct {
	// Classifier is the encoder's last layer, which ViM needs (nil: ViM is
	// "not available").
	Classifier *Classifier
	// Epochs are CIDER's training epochs (0: its default, 100), Seed its
	// seed, and Progress, if not nil, hears the end of each of its epochs.
	Epochs   int
	Seed     uint64
	Progress func(epoch, epochs int)
	// Steps, if not nil, hears the k-NN searches of KNN, COMBOOD and
	// D-KNN (their Progress): each fit's and score's inputs done.
	Steps Steps
}

// Baselines are the paper's eight OOD baselines in its tables' order, with
// the settings of its appendix. KNN and COMBOOD fitted on the same
// training features share KNN's index, and each sample's search: the
// second to score a sample takes the first's distances.
func Baselines(o BaselineOptions) []Detector {
	// KNN and COMBOOD's k-NN part: one index, one search a sample.
	share := &knnShare{}
	return []Detector{MSP{}, Energy{T: 1}, &Mahalanobis{}, &KNN{K: 50, Progress: o.Steps, share: share}, &COMBOOD{K: 50, C: 1, Progress: o.Steps, share: share},
		&DKNN{K: 50, Var: 0.95, Alpha: 0.5, Progress: o.Steps}, &CIDER{Epochs: o.Epochs, Seed: o.Seed, Progress: o.Progress, Steps: o.Steps}, &ViM{Classifier: o.Classifier}}
}

// A Seeded detector's fit depends on a seed (CIDER trains a projection
// head): fitted again under another seed, it is another detector.
type Seeded interface {
	Detector
	SetSeed(seed uint64)
}
