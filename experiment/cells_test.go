package experiment

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

// TestCells: a cell is computed once and read back under its key; another
// key, a damaged file or another row or seed computes it again; a failed
// computation keeps nothing; nil cells compute every time.
func TestCells(t *testing.T) {
	dir := t.TempDir()
	c, err := NewCells(dir, "k1")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	f := func(v int) func() (int, error) { return func() (int, error) { calls++; return v, nil } }
	for i, want := range []int{7, 7} {
		if v, err := cell(c, "tab/le", "row 1", 3, true, f(7)); err != nil || v != want {
			t.Fatalf("call %d: %v, %v", i, v, err)
		}
	}
	if r, n, s := c.Counts(); calls != 1 || r != 1 || n != 1 || s != 0 {
		t.Errorf("%d computations, counts %d %d %d; want 1, 1 read back, 1 computed", calls, r, n, s)
	}
	if v, _ := cell(c, "tab/le", "row 1", 4, true, f(8)); v != 8 {
		t.Errorf("another seed read %v", v)
	}
	// Has sees the cells kept under c's key only.
	for _, h := range []struct {
		row  string
		seed uint64
		want bool
	}{{"row 1", 3, true}, {"row 1", 4, true}, {"row 1", 5, false}, {"row 2", 3, false}} {
		if got := c.Has("tab/le", h.row, h.seed, true); got != h.want {
			t.Errorf("Has(%q, %d) = %v", h.row, h.seed, got)
		}
	}
	c2, _ := NewCells(dir, "k2")
	if c2.Has("tab/le", "row 1", 3, true) {
		t.Error("Has a cell of another key")
	}
	if v, _ := cell(c2, "tab/le", "row 1", 3, true, f(9)); v != 9 {
		t.Errorf("another key read %v, want a computed 9", v)
	}
	if _, _, s := c2.Counts(); s != 1 {
		t.Errorf("stale %d, want 1", s)
	}
	if err := os.WriteFile(c2.path("tab/le", "row 1", 3), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, _ := cell(c2, "tab/le", "row 1", 3, true, f(10)); v != 10 {
		t.Errorf("a damaged file read %v, want a computed 10", v)
	}
	boom := errors.New("boom")
	if _, err := cell(c2, "t", "r", 0, true, func() (int, error) { return 0, boom }); err != boom {
		t.Errorf("error %v", err)
	}
	if _, err := os.Stat(c2.path("t", "r", 0)); !os.IsNotExist(err) {
		t.Error("a failed cell was kept")
	}
	calls = 0
	cell(nil, "t", "r", 0, true, f(1))
	cell(nil, "t", "r", 0, true, f(1))
	if calls != 2 {
		t.Errorf("nil cells: %d computations, want 2", calls)
	}
	if _, err := NewCells(dir, ""); err == nil {
		t.Error("an empty key was accepted")
	}
}

// TestCurveMatchesRow: each row's recalibrated curve, at the table's own
// α, is the row itself (the ellipsoid's included: its curve calibrates on
// the half that did not estimate Σ), and a bundle other than the set's
// calibration bundle is refused.
func TestCurveMatchesRow(t *testing.T) {
	recipe := train.SimRecipe
	recipe.MaxEpochs = 2
	cfg := SimConfig{Config: Config{Seeds: 2, K: 20, Train: recipe}, PerClass: 200}
	tab, err := Sim(context.Background(), cfg, append(Baselines(), Learned(geometry.KindGenBall, objective.Neg)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		i := slices.IndexFunc(r.Curve, func(p CurvePoint) bool { return p.Alpha == 0.05 })
		if i < 0 {
			t.Fatalf("%s: no point at α = 0.05 in %+v", r.Method, r.Curve)
		}
		p := r.Curve[i]
		if p.Coverage != r.Coverage || p.Exclusion != r.Exclusion || p.LogVolPerDim != r.LogVolPerDim {
			t.Errorf("%s: curve at α = 0.05 %+v, the row %+v / %+v / %+v", r.Method, p, r.Coverage, r.Exclusion, r.LogVolPerDim)
		}
	}
	data := sim.Mixed(0, 200)
	sp, err := simSplits(data, cfg, 0, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Alpha = 0.05
	set, err := Ellipsoid().Fit(context.Background(), sp, cfg.Config, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eval.Recalibrated(set, sp.Cal, sp.Test, CurveAlphas); err == nil {
		t.Error("the ellipsoid recalibrated on its whole calibration split: no error")
	}
}

// TestReadDocument: a document's kind is checked, and tables the text and
// the figures would index out of range are refused, not a panic later.
func TestReadDocument(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"kind": "cifar"}`, `kind "cifar"`},
		{`{"geometry": "ball", "coverage": 0.9}`, `kind ""`},                                                 // ccs evaluate's before it had a kind
		{`{"format": "ccs-bundles", "version": 1}`, `a file of format "ccs-bundles", not a result document`}, // a bundles' manifest
		{`{"format": "ccs-set", "version": 1}`, `a file of format "ccs-set", not a result document`},
		{`{"kind": "sim", "tables": {}}`, "sim result: tables: an object, want an array"},
		// encoding/json's errors in the file's words (an embedded
		// struct's field named as the file writes it).
		{`{"kind": "coverage-check", "alpha": "0.1"}`, `coverage-check result: alpha: "0.1" is a string, want a number`},
		{"{\"kind\": \"coverage-check\",\n \"alpha\": NaN}", `line 2, column 11: NaN is not JSON`},
		{`{"kind": "coverage-check", "resplits": 3, "coverages": [0.9, 0.8]}`, "2 coverages for 3 resplits"},
		{`{"kind": "coverage-check", "resplits": 1, "coverages": [1.5]}`, "not a fraction"},
		{`{"kind": "coverage-check", "resplits": 2, "coverage": {"mean": 0.9}, "coverages": [null, null]}`, "coverage.mean = 0.9, and the 2 coverages average 0: a coverage null, or edited by hand?"},
		{`{"kind": "coverage-check", "resplits": 2, "coverage": {"mean": 0.9}, "coverages": [0.9, 0.9], "band": [1.5, -0.5]}`, "band = [1.5, -0.5], not an interval of fractions"},
		{`{"kind": "coverage-check", "resplits": 1, "this_set": {"coverage": 95, "positives": 10}}`, "this_set.coverage = 95, not a fraction"},
		// An evaluation of no fields rendered 0.00% against 1 − α = 100%;
		// one in percent 9577%.
		{`{"kind": "evaluate"}`, "calibration.mode missing or unknown"},
		{`{"kind": "evaluate", "calibration": {"mode": "one-per-anchor"}, "alpha": 0.05}`, "positives = 0"},
		{`{"kind": "evaluate", "calibration": {"mode": "one-per-anchor"}, "alpha": 0.05, "positives": 10, "coverage": 95.77}`, "coverage = 95.77, not a fraction"},
		{`{"kind": "evaluate", "calibration": {"mode": "pac"}, "alpha": 0.05, "positives": 10, "coverage": 0.9, "classes": [{"coverage": 0.9, "exclusion": 2}]}`, "classes[0].exclusion = 2, not a fraction"},
		{`{"kind": "sim", "tables": [null]}`, "tables[0] is null"},
		{`{"kind": "fmnist", "hull": [null]}`, "hull[0] is null"},
		{`{"kind": "ood", "ood": [null]}`, "ood[0] is null"},
		{`{"kind": "ood", "ood": [{"ood_sets": ["a", "b"], "rows": [{"method": "M", "auroc": [], "fpr95": []}]}]}`, "0 AUROC, 0 FPR95"},
		{`{"kind": "ood", "ood": [{"ood_sets": ["a"], "rows": [{"method": "M", "auroc": [{}], "fpr95": [{}], "false_alarm_rate": {}}]}]}`, "0 TAR"},
	} {
		_, err := ReadDocument(strings.NewReader(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.doc, err, c.want)
		}
	}
	d, err := ReadDocument(strings.NewReader(`{"kind": "ood", "ood": [{"ood_sets": ["a"], "rows": [{"method": "M", "unavailable": "no logits"}]}]}`))
	if err != nil || len(d.Result.(*OODResult).OOD[0].Rows) != 1 {
		t.Errorf("an unavailable row: %v", err)
	}
}
