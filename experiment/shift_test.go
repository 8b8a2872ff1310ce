package experiment

import (
	"math"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
)

// TestShiftLevel: a marginal check warns below ShiftTail; a
// class-conditional one makes two tests (the classes summed, the least
// likely class with its Bonferroni factor) and warns where either is
// below ShiftTail/2, so that exchangeable anchors are warned of with
// probability at most ShiftTail in all.
func TestShiftLevel(t *testing.T) {
	worst := func(p float64) *conformal.ClassCheck {
		return &conformal.ClassCheck{Label: 3, Units: 200, Outside: 40, P: p}
	}
	for _, c := range []struct {
		name string
		e    conformal.Exchangeability
		want string // "" for no warning
	}{
		{"marginal below", conformal.Exchangeability{Units: 1000, Outside: 150, Expected: 0.1, P: 0.9e-3}, "leave the set more often than chance allows: 150 of 1000"},
		{"marginal below, units of another kind", conformal.Exchangeability{Units: 1000, Outside: 150, Expected: 0.1, P: 0.9e-3, Pairs: true, OtherUnits: true}, "with probability 0.0009 (approximate: the set was calibrated on anchors with one positive each, units of another kind)"},
		{"marginal above", conformal.Exchangeability{Units: 1000, Outside: 120, Expected: 0.1, P: 1.1e-3}, ""},
		{"class sum between the levels", conformal.Exchangeability{Units: 1000, Outside: 150, Expected: 0.1, P: 0.9e-3, Classes: 10, Worst: worst(0.5)}, ""},
		{"class sum below half", conformal.Exchangeability{Units: 1000, Outside: 160, Expected: 0.1, P: 0.4e-3, Classes: 10, Worst: worst(0.5)}, "(10 classes, each against its own threshold)"},
		{"worst class between the levels", conformal.Exchangeability{Units: 1000, Outside: 110, Expected: 0.1, P: 0.2, Classes: 10, Worst: worst(0.9e-3)}, ""},
		{"worst class below half", conformal.Exchangeability{Units: 1000, Outside: 110, Expected: 0.1, P: 0.2, Classes: 10, Worst: worst(0.4e-3)}, "its anchors of class 3 leave the set more often than chance allows: 40 of 200"},
		{"worst class below half, units of another kind", conformal.Exchangeability{Units: 1000, Outside: 110, Expected: 0.1, P: 0.2, Classes: 10, Worst: worst(0.4e-3), OtherUnits: true}, "(its tail times the 10 classes checked) (approximate: the set was calibrated on disjoint pairs, units of another kind)"},
	} {
		got := shiftWhat(&c.e)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestEvaluationLabelsText: an evaluation label by label (several labels
// a row) writes each label's row and names the worst among labels of
// eval.MinLabelPositives positives or more, by name where it has one.
func TestEvaluationLabelsText(t *testing.T) {
	e := &Evaluation{Geometry: "ball", Dim: 2, Alpha: 0.1, Coverage: 0.9, Labels: []LabelEvaluation{
		{Label: 0, Name: "cs.LG", Anchors: 50, Positives: 200, Coverage: 0.93},
		{Label: 1, Name: "q-bio", Anchors: 9, Positives: 30, Coverage: 0.70},
		{Label: 2, Anchors: 1, Positives: 2, Coverage: 0},
	}}
	var b strings.Builder
	if err := e.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Label | Anchors | Positives sharing it | Coverage |", "| cs.LG ", "| 2 ", "Worst label q-bio: coverage 70.00% of the 30 positives that share it, the lowest of the labels of 20 positives or more (1 has fewer) (1−α = 90.00%: guaranteed over all positives, not label by label"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// TestCalibrationText: an evaluation's text gives the rank and n of the
// threshold it states; a class-conditional set's over all classes, where
// its calibration kept some of the pairs (conformal.Info.OverAll), is
// taken among those, not among all the pairs (Info.N, Info.Rank).
func TestCalibrationText(t *testing.T) {
	c := conformal.Info{Mode: conformal.Class, N: 101, Rank: 92, Pairs: true,
		OverAll: &conformal.OverAll{N: 7, Rank: 8}}
	if got, want := calibrationText(c), "calibration class (rank 8 of n=7 disjoint pairs, the threshold over all classes: 7 of the 101 pairs kept, as a marginal calibration keeps them)"; got != want {
		t.Errorf("over all kept pairs: %q, want %q", got, want)
	}
	c.OverAll = nil
	if got, want := calibrationText(c), "calibration class (rank 92 of n=101 disjoint pairs)"; got != want {
		t.Errorf("every pair: %q, want %q", got, want)
	}
}

// TestEvaluationClassVolume: a class-conditional set's LogVol/d is its
// classes' (the test anchors' own thresholds), even where its threshold
// over all classes, which decides nothing, is +Inf (too few kept pairs).
func TestEvaluationClassVolume(t *testing.T) {
	set := &conformal.Set{Geometry: geometry.Ball{D: 2}, Alpha: 0.1, Threshold: math.Inf(1),
		Calibration: conformal.Info{Mode: conformal.Class, N: 101, Rank: 92, Pairs: true, OverAll: &conformal.OverAll{N: 7, Rank: 8}},
		Classes:     []conformal.ClassThreshold{{Label: 0, N: 100, Rank: 91, Threshold: 14}, {Label: 1, N: 1, Rank: 2, Threshold: math.Inf(1)}}}
	e := NewEvaluation(set, eval.Result{Coverage: 0.91, LogVolPerDim: 3.2, Positives: 200}, nil)
	if float64(e.LogVolPerDim) != 3.2 {
		t.Errorf("LogVol/d %v, want the classes' 3.2", e.LogVolPerDim)
	}
	set.Calibration, set.Classes = conformal.Info{Mode: conformal.OnePerAnchor, N: 7, Rank: 8}, nil
	if e := NewEvaluation(set, eval.Result{Coverage: 1, LogVolPerDim: 3.2, Positives: 200}, nil); !math.IsInf(float64(e.LogVolPerDim), 1) {
		t.Errorf("a whole-space marginal set: LogVol/d %v, want +Inf", e.LogVolPerDim)
	}
}

// TestEvaluationCaptionArticle: the coverage figure's caption says "an
// ellipsoid set" and "a ball set", not "a ellipsoid set".
func TestEvaluationCaptionArticle(t *testing.T) {
	for _, c := range []struct{ geometry, want string }{
		{"ellipsoid", "by an ellipsoid set (d=2)"},
		{"ball", "by a ball set (d=2)"},
		{"genball", "by a genball set (d=2)"},
	} {
		e := &Evaluation{Geometry: c.geometry, Dim: 2, Alpha: 0.1, Coverage: 0.9, Positives: 10}
		figs, err := e.Figures("evaluate")
		if err != nil {
			t.Fatal(err)
		}
		if len(figs) == 0 {
			t.Fatalf("%s: no figure", c.geometry)
		}
		if !strings.Contains(figs[0].Caption, c.want) {
			t.Errorf("%s: caption %q, want %q in it", c.geometry, figs[0].Caption, c.want)
		}
	}
}
