package experiment

import (
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/ood"
)

// TestDetectInputChecks: training labels that are no class are refused
// (negative, or past the logits' classes), ID labels no training row has
// are warned of, a classifier of other shapes than the training
// features' is refused naming its file, and one whose W·x + b are not the
// logits is warned of.
func TestDetectInputChecks(t *testing.T) {
	const n, d, c = 300, 3, 2
	tr := &bundle.Bundle{N: n, D: d, C: c, Anchors: make([]float32, n*d), Logits: make([]float32, n*c), Labels: make([]int64, n)}
	w := []float64{1, 0, 2, 0, -1, 1}
	bias := []float64{0.5, -0.25}
	for i := range n {
		for j := range d {
			tr.Anchors[i*d+j] = float32((i*7+j*3)%11) - 5
		}
		for k := range c {
			z := bias[k]
			for j := range d {
				z += w[k*d+j] * float64(tr.Anchors[i*d+j])
			}
			tr.Logits[i*c+k] = float32(z)
		}
		tr.Labels[i] = int64(i % c)
	}
	if err := trainLabelsCheck(tr, "-train t.npz"); err != nil {
		t.Errorf("labels 0, 1 with 2 classes: %v", err)
	}
	tr.Labels[3], tr.Labels[4], tr.Labels[5] = -1, 2, 2
	err := trainLabelsCheck(tr, "-train t.npz")
	if err == nil || !strings.Contains(err.Error(), "-train t.npz: 3 of its 300 rows have labels outside 0…1, its logits' 2 classes (2 ×2, -1 ×1)") {
		t.Errorf("labels −1 and 2 with 2 classes: %v", err)
	}
	tr.C, tr.Logits = 0, nil
	if err := trainLabelsCheck(tr, "x"); err == nil || !strings.Contains(err.Error(), "1 of its 300 rows have negative labels (-1 ×1)") || strings.Contains(err.Error(), "logits[keep]") {
		t.Errorf("without logits, label −1: %v", err)
	}
	tr.Labels[3], tr.Labels[4], tr.Labels[5] = 1, 0, 1
	id := &bundle.Bundle{N: 4, D: d, Labels: []int64{0, 1, 7, 7}}
	if got := otherLabels(id, "id.npz", tr, "-train t.npz"); !strings.Contains(got, "id.npz: 2 of its 4 inputs have labels no row of -train t.npz has (7 ×2)") {
		t.Errorf("ID labels 7: %q", got)
	}
	id.Labels = []int64{0, 1, 1, 0}
	if got := otherLabels(id, "id.npz", tr, "t"); got != "" {
		t.Errorf("ID labels of the training classes: %q", got)
	}

	tr.C, tr.Logits = c, make([]float32, n*c)
	for i := range n { // the logits again
		for k := range c {
			z := bias[k]
			for j := range d {
				z += w[k*d+j] * float64(tr.Anchors[i*d+j])
			}
			tr.Logits[i*c+k] = float32(z)
		}
	}
	for _, tc := range []struct {
		cl         *ood.Classifier
		warn, fail string
	}{
		{&ood.Classifier{C: c, D: d, W: w, B: bias}, "", ""},
		{&ood.Classifier{C: c, D: d, W: []float64{0, 1, 0, 1, 0, 0}, B: bias}, "its W·x + b differ from -train t.npz's logits by", ""},
		{&ood.Classifier{C: 3, D: d, W: make([]float64, 9), B: make([]float64, 3)}, "", "-classifier c.npz: a classifier of 3 classes, and -train t.npz's logits have 2"},
		{&ood.Classifier{C: c, D: 4, W: make([]float64, 8), B: make([]float64, 2)}, "", "a classifier of 2×4, and -train t.npz's features have dimension 3"},
	} {
		got, err := classifierCheck(tc.cl, tr, "-classifier c.npz", "-train t.npz")
		switch {
		case tc.fail != "" && (err == nil || !strings.Contains(err.Error(), tc.fail)):
			t.Errorf("%d×%d: %v, want %q", tc.cl.C, tc.cl.D, err, tc.fail)
		case tc.fail == "" && err != nil:
			t.Errorf("%d×%d: %v", tc.cl.C, tc.cl.D, err)
		case tc.warn == "" && got != "" || !strings.Contains(got, tc.warn):
			t.Errorf("%d×%d: warning %q, want %q", tc.cl.C, tc.cl.D, got, tc.warn)
		}
	}
}

// TestClassifierTransposed: a square weight saved transposed is named so.
func TestClassifierTransposed(t *testing.T) {
	const n = 50
	w := []float64{1, 2, -1, 0.5}
	tr := &bundle.Bundle{N: n, D: 2, C: 2, Anchors: make([]float32, 2*n), Logits: make([]float32, 2*n)}
	for i := range n {
		x := []float64{float64(i%7) - 3, float64(i%5) - 2}
		tr.Anchors[2*i], tr.Anchors[2*i+1] = float32(x[0]), float32(x[1])
		for c := range 2 {
			tr.Logits[2*i+c] = float32(w[2*c]*x[0] + w[2*c+1]*x[1])
		}
	}
	if _, err := classifierCheck(&ood.Classifier{C: 2, D: 2, W: w, B: make([]float64, 2)}, tr, "c.npz", "t"); err != nil {
		t.Errorf("the classifier: %v", err)
	}
	wt := []float64{w[0], w[2], w[1], w[3]}
	if _, err := classifierCheck(&ood.Classifier{C: 2, D: 2, W: wt, B: make([]float64, 2)}, tr, "c.npz", "t"); err == nil || !strings.Contains(err.Error(), "c.npz: its weight is transposed") {
		t.Errorf("the classifier transposed: %v", err)
	}
}

// TestDetectNamesTwice: two OOD samples of one name are refused.
func TestDetectNamesTwice(t *testing.T) {
	b := &bundle.Bundle{N: 1, D: 1, Anchors: []float32{0}}
	_, _, err := DetectOOD(t.Context(), OODDetection{OOD: []*bundle.Bundle{b, b}, OODNames: []string{"a", "a"}})
	if err == nil || !strings.Contains(err.Error(), `two OOD samples named "a"`) {
		t.Errorf("%v, want a refusal", err)
	}
}
