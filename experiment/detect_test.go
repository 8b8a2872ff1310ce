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
// over twice α_ood, beyond chance, are named, worst first, with their
// names, a class of 10 inputs, all flagged, too; one flagged at α_ood,
// one flagged at twice α_ood by chance, one beyond chance alone but not
// over the classes checked (Bonferroni), one of 2 inputs, both flagged
// (which chance gives too often), and unlabelled inputs are not.
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
	add(2, 10, 2000)  // always: few, but beyond chance
	add(3, 30, 960)   // p = 40/1000: flagged at 0.05, 100%
	add(4, 50, 500.5) // p ≈ 0.5: never
	add(5, 21, 10)    // 3 of 24 flagged (12.5%): over twice α_ood, but chance
	add(5, 3, 2000)
	add(6, 14, 10) // 6 of 20 flagged: a tail of 4.1e-4 alone, 2.4e-3 over the 6 classes checked
	add(6, 6, 2000)
	add(7, 2, 2000) // both flagged: a tail of 3.3e-3 at best, never counted (Tarone)
	d := OODDetection{Set: &conformal.Set{Geometry: geometry.Ball{D: 1}}, IDName: "test.npz",
		ID: &bundle.Bundle{N: len(labels), Labels: labels}, Test: ood.Test{Alpha: 0.05},
		LabelNames: []string{"a", "b", "c", "d", "e", "f", "g", "h"}}
	w, err := classAlarms(d, cal, id)
	if err != nil {
		t.Fatal(err)
	}
	want := `test.npz: the per-input test flagged 100.0% of class 1 ("b")'s 40 inputs, 100.0% of class 2 ("c")'s 10 inputs, 100.0% of class 3 ("d")'s 30 inputs, beyond chance, against α_ood = 0.05 over all`
	if len(w) != 1 || !strings.HasPrefix(w[0], want) || strings.Contains(w[0], `"f"`) || strings.Contains(w[0], `"g"`) || strings.Contains(w[0], `"h"`) {
		t.Errorf("warnings %q, want one starting %q", w, want)
	}
	d.ID.Labels = nil
	if w, err := classAlarms(d, cal, id); err != nil || w != nil {
		t.Errorf("unlabelled: %q, %v", w, err)
	}
}

// TestShiftAlarm: in-distribution inputs flagged more often than inputs
// exchangeable with the OOD calibration's could be (a batch shift) are
// warned of, with the tail probability; a rate within chance of α_ood,
// however above it, and one below it are not.
func TestShiftAlarm(t *testing.T) {
	cal := make([]float64, 999)
	for i := range cal {
		cal[i] = float64(i)
	}
	// Scores above 950 get p ≤ 50/1000: flagged at α_ood = 0.05.
	inputs := func(n, flagged int) []float64 {
		id := make([]float64, n)
		for i := range id {
			id[i] = float64(i % 900)
			if i < flagged {
				id[i] = 2000
			}
		}
		return id
	}
	d := OODDetection{Set: &conformal.Set{Geometry: geometry.Ball{D: 1}}, IDName: "donor-b.npz", Test: ood.Test{Alpha: 0.05}}
	for _, c := range []struct {
		name       string
		n, flagged int
		want       string
	}{
		{"at α_ood", 20000, 1000, ""},
		{"above it within chance", 20000, 1100, ""},
		{"below it", 20000, 200, ""},
		{"a shift", 20000, 1600, "donor-b.npz: the per-input test flagged 8.0% of these 20000 in-distribution inputs, above α_ood = 0.05 by more than chance allows: inputs drawn as its 999 calibration inputs were would be flagged that often with probability "},
		{"a shift with δ", 20000, 1600, "a shift: another batch, donor, site or time"},
		{"rows of blocks", 20000, 1600, "(docs/ood.md). But these inputs are the rows of 6 blocks (ccs bundle -blocks), not independent inputs, and the probability counts them as independent: it understates chance"},
	} {
		if c.name == "a shift with δ" {
			d.Test.Delta = 0.1
		}
		if c.name == "rows of blocks" {
			d.IDBlocks = 6
		}
		w, err := shiftAlarm(d, cal, inputs(c.n, c.flagged))
		switch {
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && w != nil:
			t.Errorf("%s: warned %q", c.name, w)
		case c.want != "" && (len(w) != 1 || !strings.Contains(w[0], c.want)):
			t.Errorf("%s: %q, want %q", c.name, w, c.want)
		}
	}
}

// TestBaselineShiftAlarm: the baselines' conformal tests get the set's
// check — a baseline that flags more in-distribution inputs than chance
// allows is named in one warning with its rate and probability; one within
// chance of α_ood is not, and no warning is given when none is shifted.
func TestBaselineShiftAlarm(t *testing.T) {
	cal := make([]float64, 999)
	for i := range cal {
		cal[i] = float64(i)
	}
	inputs := func(n, flagged int) []float64 {
		id := make([]float64, n)
		for i := range id {
			id[i] = float64(i % 900)
			if i < flagged {
				id[i] = 2000
			}
		}
		return id
	}
	d := OODDetection{IDName: "held.npy", OODCalName: "ood-cal.npz", Test: ood.Test{Alpha: 0.01}}
	w, err := baselineShiftAlarm(d, []baselineScores{
		{"Mahalanobis", cal, inputs(20000, 9940)},
		{"KNN", cal, inputs(20000, 220)},
		{"D-KNN", cal, inputs(20000, 1000)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"held.npy: the conformal tests of the baselines flagged more of these 20000 in-distribution inputs than chance allows at α_ood = 0.01 — Mahalanobis 49.7% (probability ",
		"), D-KNN 5.0% (probability ",
		"calibration inputs (ood-cal.npz)",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q, want %q", w, want)
		}
	}
	if strings.Contains(w, "KNN 1.1%") {
		t.Errorf("KNN within chance named: %q", w)
	}
	if w, err := baselineShiftAlarm(d, []baselineScores{{"KNN", cal, inputs(20000, 200)}}); err != nil || w != "" {
		t.Errorf("none shifted: %q, %v", w, err)
	}
	d.IDBlocks = 1
	if w, _ := baselineShiftAlarm(d, []baselineScores{{"Mahalanobis", cal, inputs(20000, 9940)}}); !strings.Contains(w, "But these inputs are the rows of 1 block (ccs bundle -blocks)") {
		t.Errorf("rows of one block: %q", w)
	}
}

// TestTaroneCount: tests that cannot reach alpha/K are not counted; with
// every test able to, the count is Bonferroni's.
func TestTaroneCount(t *testing.T) {
	for _, c := range []struct {
		least []float64
		want  int
	}{
		{nil, 1},
		{[]float64{1e-9, 1e-9, 1e-9}, 3},
		{[]float64{1e-9, 0.003, 0.003, 0.003}, 1},      // three can never pass 1e-3
		{[]float64{1e-9, 1e-9, 4e-4, 4e-4, 0.01}, 3},   // K=2: 4 below 5e-4; K=3: 2 below 3.3e-4
		{[]float64{1e-9, 1e-9, 1e-9, 1e-9, 2.6e-4}, 4}, // K=4: 2.6e-4 > 2.5e-4, so 4
	} {
		if got := taroneCount(c.least, 1e-3); got != c.want {
			t.Errorf("taroneCount(%v) = %d, want %d", c.least, got, c.want)
		}
	}
}
