package ood

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ccsets/ccs/bundle"
)

func TestMSPEnergyByHand(t *testing.T) {
	t.Parallel()
	x := Sample{N: 2, C: 2, Logits: []float64{0, math.Log(3), 5, 5}}
	msp, err := MSP{}.Score(x)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(msp[0]+0.75) > 1e-15 || math.Abs(msp[1]+0.5) > 1e-15 {
		t.Errorf("MSP = %v, want [-0.75 -0.5]", msp)
	}
	en, _ := Energy{}.Score(x)
	if math.Abs(en[0]+math.Log(4)) > 1e-15 || math.Abs(en[1]+5+math.Log(2)) > 1e-14 {
		t.Errorf("Energy = %v, want [-log 4, -5-log 2]", en)
	}
	en2, _ := Energy{T: 2}.Score(x) // −2·log(1 + √3)
	if math.Abs(en2[0]+2*math.Log(1+math.Sqrt(3))) > 1e-14 {
		t.Errorf("Energy T=2 = %v", en2[0])
	}
	for _, d := range []Detector{MSP{}, Energy{}} {
		if _, err := d.Score(Sample{N: 1, D: 2, Features: []float64{1, 2}}); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s without logits: %v, want ErrUnavailable", d.Name(), err)
		}
	}
}

// TestKNNByHand: k = 1 on a tiny set; features are normalised first, so
// (2, 0) is at distance 0 from the training point (1, 0).
func TestKNNByHand(t *testing.T) {
	t.Parallel()
	k := &KNN{K: 1}
	if err := k.Fit(Sample{N: 2, D: 2, Features: []float64{1, 0, 0, 3}}); err != nil {
		t.Fatal(err)
	}
	got, err := k.Score(Sample{N: 3, D: 2, Features: []float64{2, 0, 1, 1, -1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, math.Sqrt(2 - math.Sqrt(2)), 1.4142135623730951}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("query %d: %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := k.Score(Sample{N: 1, D: 3, Features: []float64{1, 2, 3}}); err == nil {
		t.Error("a 3-d query against a 2-d fit was scored")
	}
}

// TestKNNShared: Baselines' KNN and COMBOOD, which share the k-NN index
// and each sample's search, score as a KNN and a COMBOOD made alone, to
// the bit; the second to score a sample does not search it (its Progress
// hears no "KNN score" step), while a sample changed in place, or one
// scored with another k, is searched again; and after the KNN is fitted
// on other training features, the COMBOOD fitted before keeps its own
// index and its own scores, and the KNN its new ones.
func TestKNNShared(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(12, 12))
	const d, a = 5, 2
	sample := func(n int) Sample {
		s := Sample{N: n, D: d, Features: randRows(rng, n, d), A: a, Activations: make([]float64, n*a)}
		for i := range s.Activations {
			s.Activations[i] = math.Exp(0.3 * rng.NormFloat64())
		}
		return s
	}
	train, other, x := sample(300), sample(300), sample(40)
	var searches int
	steps := Steps(func(step string, done, total int) {
		if step == "KNN score" && done == total {
			searches++
		}
	})
	share := &knnShare{}
	knn := &KNN{K: 7, Progress: steps, share: share}
	comb := &COMBOOD{K: 7, C: 1, Progress: steps, share: share}
	aloneKNN, aloneComb := &KNN{K: 7}, &COMBOOD{K: 7, C: 1}
	for _, det := range []Detector{knn, comb, aloneKNN, aloneComb} {
		if err := det.Fit(train); err != nil {
			t.Fatal(err)
		}
	}
	if comb.knn.index != knn.index {
		t.Fatal("COMBOOD built an index of its own on KNN's training features")
	}
	score := func(det Detector, x Sample) []float64 {
		t.Helper()
		r, err := det.Score(x)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	check := func(what string, wantSearches int) {
		t.Helper()
		searches = 0
		if got, want := score(knn, x), score(aloneKNN, x); !slices.Equal(got, want) {
			t.Errorf("%s: KNN shared %v, alone %v", what, got, want)
		}
		if got, want := score(comb, x), score(aloneComb, x); !slices.Equal(got, want) {
			t.Errorf("%s: COMBOOD shared %v, alone %v", what, got, want)
		}
		if searches != wantSearches {
			t.Errorf("%s: %d searches, want %d", what, searches, wantSearches)
		}
	}
	check("first", 1)
	check("again", 0)
	x.Features[3] += 0.5
	check("changed in place", 1)
	r := score(knn, x)
	r[0] = -1 // the caller's copy
	check("after the caller wrote to its scores", 0)
	searches = 0
	k3 := &KNN{K: 3, Progress: steps, share: share}
	if err := k3.Fit(train); err != nil {
		t.Fatal(err)
	}
	want3 := &KNN{K: 3}
	want3.Fit(train)
	if got, want := score(k3, x), score(want3, x); !slices.Equal(got, want) || searches != 1 {
		t.Errorf("k = 3: %v (%d searches), alone %v", got, searches, want)
	}
	if err := knn.Fit(other); err != nil {
		t.Fatal(err)
	}
	if err := aloneKNN.Fit(other); err != nil {
		t.Fatal(err)
	}
	dets := Baselines(BaselineOptions{})
	if bk, bc := dets[3].(*KNN), dets[4].(*COMBOOD); bk.share == nil || bk.share != bc.share {
		t.Error("Baselines: KNN and COMBOOD do not share their searches")
	}
	check("KNN fitted on other features", 2) // the share is the KNN's: COMBOOD searches its own
}

// TestMahalanobisIdentity: when every class's scatter is the identity the
// detector is the squared Euclidean distance to the nearest class mean.
func TestMahalanobisIdentity(t *testing.T) {
	t.Parallel()
	const d = 3
	means := [][]float64{{0, 0, 0}, {10, 0, 0}, {0, 7, -4}}
	var train Sample
	train.D = d
	for c, mu := range means {
		for j := range d {
			for _, s := range []float64{-1, 1} { // μ ± √d·e_j: scatter I
				row := slices.Clone(mu)
				row[j] += s * math.Sqrt(d)
				train.Features = append(train.Features, row...)
				train.Labels = append(train.Labels, int64(c))
				train.N++
			}
		}
	}
	m := &Mahalanobis{}
	if err := m.Fit(train); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	q := Sample{N: 50, D: d, Features: randRows(rng, 50, d)}
	for i := range q.Features {
		q.Features[i] *= 6
	}
	got, err := m.Score(q)
	if err != nil {
		t.Fatal(err)
	}
	for i := range q.N {
		best := math.Inf(1)
		for _, mu := range means {
			var s float64
			for j := range d {
				s += (q.Features[i*d+j] - mu[j]) * (q.Features[i*d+j] - mu[j])
			}
			best = min(best, s)
		}
		if math.Abs(got[i]-best) > 1e-9*(1+best) {
			t.Fatalf("query %d: %v, squared distance to the nearest mean %v", i, got[i], best)
		}
	}
	if err := (&Mahalanobis{}).Fit(Sample{N: 1, D: 1, Features: []float64{1}}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("no labels: %v, want ErrUnavailable", err)
	}
}

// TestMahalanobisInverse: on random full-rank data, against Σ⁻¹ from an
// explicit inverse.
func TestMahalanobisInverse(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	const n, d = 200, 4
	train := Sample{N: n, D: d, Features: randRows(rng, n, d), Labels: make([]int64, n)}
	for i := range n {
		train.Labels[i] = int64(i % 2)
		train.Features[i*d] += 3 * float64(i%2)
		train.Features[i*d+1] *= 2
	}
	m := &Mahalanobis{}
	if err := m.Fit(train); err != nil {
		t.Fatal(err)
	}
	mu := [2][]float64{make([]float64, d), make([]float64, d)}
	for i := range n {
		for j := range d {
			mu[i%2][j] += train.Features[i*d+j] / (n / 2)
		}
	}
	cov := mat.NewSymDense(d, nil)
	for i := range n {
		for a := range d {
			for b := a; b < d; b++ {
				cov.SetSym(a, b, cov.At(a, b)+(train.Features[i*d+a]-mu[i%2][a])*(train.Features[i*d+b]-mu[i%2][b])/n)
			}
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(cov); err != nil {
		t.Fatal(err)
	}
	q := Sample{N: 20, D: d, Features: randRows(rng, 20, d)}
	got, _ := m.Score(q)
	for i := range q.N {
		best := math.Inf(1)
		for c := range 2 {
			diff := make([]float64, d)
			for j := range d {
				diff[j] = q.Features[i*d+j] - mu[c][j]
			}
			v := mat.NewVecDense(d, diff)
			best = min(best, mat.Inner(v, &inv, v))
		}
		if math.Abs(got[i]-best) > 1e-9*(1+best) {
			t.Fatalf("query %d: %v, explicit inverse %v", i, got[i], best)
		}
	}
}

// TestViMResidual: training features span two directions about the origin
// u = −pinv(W)·b; a test point off that plane by r has residual r, so its
// score is α·r − logsumexp(logits), α = Σ max logit / Σ residual.
func TestViMResidual(t *testing.T) {
	t.Parallel()
	const d = 4
	cl := &Classifier{C: 2, D: d, W: []float64{1, 0, 0, 0, 0, 1, 0, 0}, B: []float64{-1, 2}}
	u := []float64{1, -2, 0, 0} // W·u = −b, least norm
	// All sign patterns of (±5, ±4, ±0.1, ±0.05) about u: the second
	// moment is exactly diagonal, so the residual subspace is e3, e4.
	train := Sample{N: 16, D: d, C: 2}
	for s := range 16 {
		x := slices.Clone(u)
		for j, a := range []float64{5, 4, 0.1, 0.05} {
			if s>>j&1 == 1 {
				a = -a
			}
			x[j] += a
		}
		train.Features = append(train.Features, x...)
		train.Logits = append(train.Logits, x[0]-1, x[1]+2)
	}
	v := &ViM{Classifier: cl, Dim: 2}
	if err := v.Fit(train); err != nil {
		t.Fatal(err)
	}
	for j := range d {
		if math.Abs(v.origin[j]-u[j]) > 1e-12 {
			t.Fatalf("origin %v, want %v", v.origin, u)
		}
	}
	var sumMax, sumRes float64
	for i := range train.N {
		sumMax += max(train.Logits[2*i], train.Logits[2*i+1])
		sumRes += math.Hypot(train.Features[i*d+2], train.Features[i*d+3])
	}
	if a := sumMax / sumRes; math.Abs(v.alpha-a)/a > 1e-12 {
		t.Errorf("α = %v, want %v", v.alpha, a)
	}
	q := Sample{N: 2, D: d, C: 2, Features: []float64{3, 1, 0, 0, 3, 1, 0, 2}, Logits: []float64{0.5, 1, 0.5, 1}}
	got, err := v.Score(q)
	if err != nil {
		t.Fatal(err)
	}
	lse := logSumExp([]float64{0.5, 1})
	if math.Abs(got[0]+lse) > 1e-12 || math.Abs(got[1]-(2*v.alpha-lse)) > 1e-12*v.alpha {
		t.Errorf("scores %v, want [%v %v]", got, -lse, 2*v.alpha-lse)
	}
	if err := (&ViM{}).Fit(train); !errors.Is(err, ErrUnavailable) {
		t.Errorf("no classifier: %v, want ErrUnavailable", err)
	}
}

// TestNeedsLabels: a detector of classes, on a training sample without
// labels, says what it needs — one label a row where the rows carry
// several (a bundle of several labels a row), labels otherwise.
func TestNeedsLabels(t *testing.T) {
	train := Sample{N: 4, D: 2, Features: make([]float64, 8)}
	several := train
	several.SeveralLabels = true
	for _, c := range []struct {
		name  string
		det   Detector
		train Sample
		want  string
	}{
		{"Mahalanobis, no labels", &Mahalanobis{}, train, "Mahalanobis: " + ErrUnavailable.Error() + ": needs training labels"},
		{"Mahalanobis, several a row", &Mahalanobis{}, several, "Mahalanobis: " + ErrUnavailable.Error() + ": needs one training label a row (the training rows carry several)"},
		{"CIDER, no labels", &CIDER{}, train, "CIDER: " + ErrUnavailable.Error() + ": needs training labels"},
		{"CIDER, several a row", &CIDER{}, several, "CIDER: " + ErrUnavailable.Error() + ": needs one training label a row (the training rows carry several)"},
	} {
		err := c.det.Fit(c.train)
		if err == nil || err.Error() != c.want || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestReadClassifierRefusals: each mistake is named by the array that
// makes it — a transposed weight by the weight, not by the bias it no
// longer matches; other names by the names the file has.
func TestReadClassifierRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arr := func(shape ...int) bundle.Array {
		n := 1
		for _, s := range shape {
			n *= s
		}
		return bundle.Array{Shape: shape, F32: make([]float32, n)}
	}
	for _, c := range []struct {
		name   string
		arrays map[string]bundle.Array
		want   string
	}{
		{"ok", map[string]bundle.Array{"weight": arr(3, 5), "bias": arr(3)}, ""},
		{"transposed", map[string]bundle.Array{"weight": arr(5, 3), "bias": arr(3)}, "weight (5, 3) and bias (3,): the weight is transposed? want (C, D) = (3, 5)"},
		{"other names", map[string]bundle.Array{"W": arr(3, 5), "b": arr(3)}, `array "weight" is missing (have W, b)`},
		{"no bias: zeros", map[string]bundle.Array{"weight": arr(3, 5)}, ""},
		{"no weight", map[string]bundle.Array{"bias": arr(3)}, `array "weight" is missing (have bias)`},
		{"a bias of another length", map[string]bundle.Array{"weight": arr(3, 5), "bias": arr(4)}, "want a bias of the weight's 3 classes"},
		{"a vector weight", map[string]bundle.Array{"weight": arr(15), "bias": arr(3)}, `array "weight": float32 (15,), want floating-point (C, D)`},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".npz")
		if err := bundle.WriteNPZ(path, c.arrays); err != nil {
			t.Fatal(err)
		}
		cl, err := ReadClassifier(path)
		switch {
		case c.want == "" && (err != nil || cl.C != 3 || cl.D != 5):
			t.Errorf("%s: %v, %+v", c.name, err, cl)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
