package experiment

import (
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/ood"
)

// TestClassAlarms: the classes whose inputs the per-input test flags at
// over twice α_ood are named, worst first, with their names; a class
// under 20 inputs, one flagged at α_ood, and unlabelled inputs are not.
func TestClassAlarms(t *testing.T) {
	cal := make([]float64, 999)
	for i := range cal {
		cal[i] = float64(i)
	}
	var labels []int64
	var id []float64
	add := func(label int64, n int, score float64) {
		for range n {
			labels, id = append(labels, label), append(id, score)
		}
	}
	add(0, 100, 10)   // never flagged
	add(1, 40, 2000)  // always
	add(2, 10, 2000)  // always, but too few to say
	add(3, 30, 960)   // p = 40/1000: flagged at 0.05, 100%
	add(4, 50, 500.5) // p ≈ 0.5: never
	d := OODDetection{Set: &conformal.Set{Geometry: geometry.Ball{D: 1}}, IDName: "test.npz",
		ID: &bundle.Bundle{N: len(labels), Labels: labels}, Test: ood.Test{Alpha: 0.05},
		LabelNames: []string{"a", "b", "c", "d", "e"}}
	w, err := classAlarms(d, cal, id)
	if err != nil {
		t.Fatal(err)
	}
	want := `test.npz: the per-input test flagged 100.0% of class 1 ("b")'s 40 inputs, 100.0% of class 3 ("d")'s 30 inputs, against α_ood = 0.05 over all`
	if len(w) != 1 || !strings.HasPrefix(w[0], want) || strings.Contains(w[0], `"c"`) {
		t.Errorf("warnings %q, want one starting %q", w, want)
	}
	d.ID.Labels = nil
	if w, err := classAlarms(d, cal, id); err != nil || w != nil {
		t.Errorf("unlabelled: %q, %v", w, err)
	}
}
