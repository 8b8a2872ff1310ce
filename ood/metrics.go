// Package ood detects out-of-distribution inputs with contrastive conformal
// sets and with the baselines the paper compares against (docs/design.md §6).
//
// Every detector here returns anomaly scores: higher means more likely OOD.
// The metrics take the scores of an in-distribution (ID) sample and of an
// OOD sample.
package ood

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Convention says which class FPR95 treats as positive.
type Convention int

const (
	// IDPositive is the paper's text: the threshold keeps 95% of ID, and
	// FPR95 is the fraction of OOD accepted with it. The default.
	IDPositive Convention = iota
	// OODPositive is OpenOOD's (and the paper's code's): the threshold
	// flags 95% of OOD, and FPR95 is the fraction of ID flagged with it.
	OODPositive
)

// String names the convention as the -fpr flag spells it.
func (c Convention) String() string {
	if c == OODPositive {
		return "ood-positive"
	}
	return "id-positive"
}

// ParseConvention reads "id-positive" or "ood-positive".
func ParseConvention(s string) (Convention, error) {
	switch s {
	case "id-positive", "":
		return IDPositive, nil
	case "ood-positive":
		return OODPositive, nil
	}
	return 0, fmt.Errorf("FPR95 convention %q: want id-positive or ood-positive", s)
}

// Metrics are the paper's two OOD figures, as fractions in [0, 1].
type Metrics struct {
	AUROC float64 `json:"auroc"` // P(OOD scores above ID) + ½ P(tie)
	FPR95 float64 `json:"fpr95"`
}

// Evaluate computes AUROC and FPR95 of anomaly scores (higher = more OOD)
// for an ID and an OOD sample. Empty or non-finite scores are errors.
func Evaluate(id, ood []float64, conv Convention) (Metrics, error) {
	if err := checkScores(id, ood); err != nil {
		return Metrics{}, err
	}
	return Metrics{AUROC: AUROC(id, ood), FPR95: FPR95(id, ood, conv)}, nil
}

// checkScores refuses empty samples and non-finite scores.
func checkScores(id, ood []float64) error {
	for _, s := range []struct {
		name string
		x    []float64
	}{{"ID", id}, {"OOD", ood}} {
		if len(s.x) == 0 {
			return fmt.Errorf("ood: no %s scores", s.name)
		}
		for i, v := range s.x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("ood: %s score %d is %v", s.name, i, v)
			}
		}
	}
	return nil
}

// AUROC is the area under the ROC curve of anomaly scores: the fraction of
// (ID, OOD) pairs in which the OOD score is the higher, ties counted ½ (the
// Mann–Whitney statistic). It sorts once: O((n+m) log(n+m)). It does not
// depend on which class is called positive.
func AUROC(id, ood []float64) float64 {
	a, b := sorted(id), sorted(ood)
	// For each OOD score, count the ID scores below it and equal to it.
	var wins float64
	lo, hi := 0, 0 // a[:lo] < v, a[:hi] <= v
	for _, v := range b {
		for lo < len(a) && a[lo] < v {
			lo++
		}
		hi = max(hi, lo)
		for hi < len(a) && a[hi] <= v {
			hi++
		}
		wins += float64(lo) + 0.5*float64(hi-lo)
	}
	return wins / (float64(len(a)) * float64(len(b)))
}

// FPR95 is the false-positive rate at 95% true-positive rate. With
// IDPositive, ID inputs scoring at most t are accepted, t being the smallest
// ID score that accepts at least 95% of ID (the ⌈0.95·n⌉-th smallest), and
// the result is the fraction of OOD scores ≤ t. With OODPositive, inputs
// scoring at least t′ are flagged, t′ being the ⌈0.95·m⌉-th largest OOD
// score, and the result is the fraction of ID scores ≥ t′. Ties at the
// threshold count against the detector.
func FPR95(id, ood []float64, conv Convention) float64 {
	const tpr = 0.95
	if conv == OODPositive {
		b := sorted(ood)
		t := b[len(b)-rankAt(tpr, len(b))]
		return float64(count(id, func(v float64) bool { return v >= t })) / float64(len(id))
	}
	a := sorted(id)
	t := a[rankAt(tpr, len(a))-1]
	return float64(count(ood, func(v float64) bool { return v <= t })) / float64(len(ood))
}

// rankAt is ⌈q·n⌉ in 1..n, computed without the floating-point surprise of
// 0.95·100 = 95.00000000000001.
func rankAt(q float64, n int) int {
	r := int(math.Ceil(q*float64(n) - 1e-9))
	return min(max(r, 1), n)
}

func sorted(x []float64) []float64 {
	s := slices.Clone(x)
	slices.SortFunc(s, cmp.Compare[float64])
	return s
}

func count(x []float64, f func(float64) bool) int {
	n := 0
	for _, v := range x {
		if f(v) {
			n++
		}
	}
	return n
}

// ROC returns the ROC curve of anomaly scores, OOD the positive class: for
// each threshold t from +∞ down through every distinct score, the share of
// ID scores ≥ t (false-positive rate) and of OOD scores ≥ t (true-positive
// rate). The curve runs from (0, 0) to (1, 1); its trapezoidal area is
// AUROC(id, ood). At most maxPoints points are returned (0: all): every
// point where there are no more, else the curve's corners (where its
// direction changes), which draw it exactly, and an evenly spaced subset
// of them where even those are more, so that a figure stays small.
// Empty samples and NaN or infinite scores are errors, as in Evaluate.
func ROC(id, ood []float64, maxPoints int) (fpr, tpr []float64, err error) {
	if err := checkScores(id, ood); err != nil {
		return nil, nil, err
	}
	a, b := sorted(id), sorted(ood)
	i, j := len(a), len(b) // a[i:], b[j:] are ≥ the current threshold
	fpr, tpr = []float64{0}, []float64{0}
	for i > 0 || j > 0 {
		t := math.Inf(-1)
		if i > 0 {
			t = a[i-1]
		}
		if j > 0 {
			t = max(t, b[j-1])
		}
		for i > 0 && a[i-1] >= t {
			i--
		}
		for j > 0 && b[j-1] >= t {
			j--
		}
		fpr = append(fpr, float64(len(a)-i)/float64(len(a)))
		tpr = append(tpr, float64(len(b)-j)/float64(len(b)))
	}
	if maxPoints <= 1 || len(fpr) <= maxPoints {
		return fpr, tpr, nil
	}
	// The curve's corners alone draw it exactly: a point between two
	// steps of one direction is dropped (a perfect separation, thinned by
	// index, drew a sloped start instead of its corner at (0, 1)).
	fpr, tpr = corners(fpr, tpr)
	if len(fpr) <= maxPoints {
		return fpr, tpr, nil
	}
	f, t := make([]float64, maxPoints), make([]float64, maxPoints)
	for k := range maxPoints {
		at := k * (len(fpr) - 1) / (maxPoints - 1)
		f[k], t[k] = fpr[at], tpr[at]
	}
	return f, t, nil
}

// corners keeps the ends of the curve (fpr, tpr) and its points where the
// direction changes, in place: a point between two collinear steps lies
// on the segment its neighbours draw. Collinear is a cross product of
// the steps within rounding of its terms (the rates are counts over the
// samples' sizes, each step's rounded apart).
func corners(fpr, tpr []float64) ([]float64, []float64) {
	n := 1
	for k := 1; k < len(fpr); k++ {
		if k < len(fpr)-1 {
			dx0, dy0 := fpr[k]-fpr[n-1], tpr[k]-tpr[n-1]
			dx1, dy1 := fpr[k+1]-fpr[k], tpr[k+1]-tpr[k]
			if math.Abs(dx0*dy1-dy0*dx1) <= 1e-12*(math.Abs(dx0*dy1)+math.Abs(dy0*dx1)) {
				continue // on the segment from the last kept point
			}
		}
		fpr[n], tpr[n] = fpr[k], tpr[k]
		n++
	}
	return fpr[:n], tpr[:n]
}
