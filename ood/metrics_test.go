package ood

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAUROCVector is docs/design.md §6's test vector.
func TestAUROCVector(t *testing.T) {
	t.Parallel()
	if got := AUROC([]float64{0, 1, 2}, []float64{1, 2, 3}); math.Abs(got-7.0/9) > 1e-15 {
		t.Errorf("AUROC = %v, want 7/9", got)
	}
}

// TestAUROCBruteForce: AUROC is the fraction of correctly ordered ID/OOD
// pairs, ties ½, on random inputs with many ties.
func TestAUROCBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n, m := 1+rng.IntN(40), 1+rng.IntN(40)
		levels := 1 + rng.IntN(12) // few levels: many ties
		draw := func(k int, shift int) []float64 {
			x := make([]float64, k)
			for i := range x {
				x[i] = float64(rng.IntN(levels) + shift*rng.IntN(2))
			}
			return x
		}
		id, ood := draw(n, 0), draw(m, 3)
		var pairs float64
		for _, a := range id {
			for _, b := range ood {
				switch {
				case b > a:
					pairs++
				case b == a:
					pairs += 0.5
				}
			}
		}
		want := pairs / float64(n*m)
		if got := AUROC(id, ood); math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: AUROC %v, brute force %v (id %v ood %v)", trial, got, want, id, ood)
		}
	}
}

func TestFPR95(t *testing.T) {
	t.Parallel()
	id := make([]float64, 100) // 0..99: the threshold keeping 95% of ID is 94
	for i := range id {
		id[i] = float64(i)
	}
	ood := []float64{10, 94, 94.5, 200} // 10 and 94 are accepted
	for _, tc := range []struct {
		conv Convention
		want float64
	}{
		{IDPositive, 0.5},
		// OOD positive: the threshold flagging 95% of 4 OOD is the 4th
		// largest, 10; ID scores ≥ 10 are 90 of 100.
		{OODPositive, 0.9},
	} {
		if got := FPR95(id, ood, tc.conv); got != tc.want {
			t.Errorf("%v: FPR95 = %v, want %v", tc.conv, got, tc.want)
		}
	}
	// Perfect separation gives 0 both ways; reversed, 1.
	lo, hi := []float64{1, 2, 3}, []float64{4, 5, 6}
	for _, conv := range []Convention{IDPositive, OODPositive} {
		if FPR95(lo, hi, conv) != 0 || FPR95(hi, lo, conv) != 1 {
			t.Errorf("%v: separated %v, reversed %v", conv, FPR95(lo, hi, conv), FPR95(hi, lo, conv))
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id, ood []float64
		want    string
	}{
		{nil, []float64{1}, "no ID scores"},
		{[]float64{1}, []float64{math.NaN()}, "OOD score 0 is NaN"},
		{[]float64{math.Inf(1)}, []float64{1}, "ID score 0 is +Inf"},
	} {
		if _, err := Evaluate(tc.id, tc.ood, IDPositive); err == nil || err.Error() != "ood: "+tc.want {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	if _, err := ParseConvention("both"); err == nil {
		t.Error("ParseConvention accepted \"both\"")
	}
}

// TestROC: the full curve's trapezoidal area is AUROC, ties included; it
// runs from (0,0) to (1,1), never decreasing; a thinned curve keeps its
// ends and at most the asked number of points.
func TestROC(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	id, o := make([]float64, 300), make([]float64, 200)
	for i := range id {
		id[i] = math.Round(4 * rng.NormFloat64()) // ties on purpose
	}
	for i := range o {
		o[i] = math.Round(4*rng.NormFloat64() + 3)
	}
	fpr, tpr, err := ROC(id, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	area := 0.0
	for k := 1; k < len(fpr); k++ {
		if fpr[k] < fpr[k-1] || tpr[k] < tpr[k-1] {
			t.Fatalf("point %d decreases: (%v,%v) after (%v,%v)", k, fpr[k], tpr[k], fpr[k-1], tpr[k-1])
		}
		area += (fpr[k] - fpr[k-1]) * (tpr[k] + tpr[k-1]) / 2
	}
	if want := AUROC(id, o); math.Abs(area-want) > 1e-12 {
		t.Errorf("area %v, AUROC %v", area, want)
	}
	n := len(fpr)
	if fpr[0] != 0 || tpr[0] != 0 || fpr[n-1] != 1 || tpr[n-1] != 1 {
		t.Errorf("ends (%v,%v), (%v,%v)", fpr[0], tpr[0], fpr[n-1], tpr[n-1])
	}
	f, p, _ := ROC(id, o, 10)
	for _, bad := range [][]float64{nil, {1, math.NaN()}, {math.Inf(1)}} {
		if _, _, err := ROC(bad, o, 10); err == nil {
			t.Errorf("ID scores %v: no error", bad)
		}
	}
	if len(f) != 10 || len(p) != 10 || f[0] != 0 || f[9] != 1 || p[9] != 1 {
		t.Errorf("thinned: %v %v", f, p)
	}
	// A perfect separation of 1 000 scores each, thinned to 200 points:
	// its corners, (0, 0), (0, 1), (1, 1), exactly (by index, the third
	// point was (0.005, 1) and the second (0, 0.99)).
	sep, far := make([]float64, 1000), make([]float64, 1000)
	for i := range sep {
		sep[i], far[i] = float64(i), float64(2000+i)
	}
	f, p, _ = ROC(sep, far, 200)
	if !slices.Equal(f, []float64{0, 0, 1}) || !slices.Equal(p, []float64{0, 1, 1}) {
		t.Errorf("perfect separation thinned: %v %v", f, p)
	}
	// Scores in a few distinct values: the corners draw the whole curve,
	// its area the AUROC.
	for i := range sep {
		sep[i], far[i] = float64(i%7), float64(i%5+3)
	}
	f, p, _ = ROC(sep, far, 200)
	area = 0
	for k := 1; k < len(f); k++ {
		area += (f[k] - f[k-1]) * (p[k] + p[k-1]) / 2
	}
	if want := AUROC(sep, far); len(f) > 20 || math.Abs(area-want) > 1e-12 {
		t.Errorf("few values thinned: %d points, area %v, AUROC %v", len(f), area, want)
	}
}
