package experiment

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

// TestCompareKey: a comparison's cells are keyed on what changes numbers
// (level, recipe, bundles' arrays, class names, the code), whether the
// bundles were made in memory or read from their files, and not on seeds,
// workers or where the sets go; defaults key as their values do.
func TestCompareKey(t *testing.T) {
	t.Parallel()
	mixed := sim.Mixed(1, 200)
	split := mixed.Split(1)
	cal, err := mixed.Pairs(split.Cal, 10, 1, "cal")
	if err != nil {
		t.Fatal(err)
	}
	test, err := mixed.Pairs(split.Test, 10, 1, "test")
	if err != nil {
		t.Fatal(err)
	}
	data := CompareData{Name: "d", Cal: cal, Test: test}
	key := func(cfg CompareConfig, data CompareData, code string) string {
		t.Helper()
		k, err := compareKey(cfg, data, code, true)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(CompareConfig{Config: Config{Seeds: 2}}, data, "v1")
	path := filepath.Join(t.TempDir(), "test.npz")
	if err := bundle.Write(path, test); err != nil {
		t.Fatal(err)
	}
	read, err := bundle.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	moved := *test
	moved.Anchors = slices.Clone(test.Anchors)
	moved.Anchors[5] += 1e-3
	epochs := train.Config{MaxEpochs: 3}
	for _, c := range []struct {
		name string
		cfg  CompareConfig
		data CompareData
		code string
		same bool
	}{
		{"other seeds, workers, sets and name", CompareConfig{Config: Config{Seeds: 5, Workers: 1, OutDir: "o"}}, CompareData{Name: "x", Cal: cal, Test: test}, "v1", true},
		{"the defaults given", CompareConfig{Config: Config{Alpha: 0.05}, Resplits: 200}, data, "v1", true},
		{"the test bundle read from its file", CompareConfig{}, CompareData{Cal: cal, Test: read}, "v1", true},
		{"another alpha", CompareConfig{Config: Config{Alpha: 0.1}}, data, "v1", false},
		{"another recipe", CompareConfig{Config: Config{Train: epochs}}, data, "v1", false},
		{"other resplits", CompareConfig{Resplits: 20}, data, "v1", false},
		{"one anchor moved", CompareConfig{}, CompareData{Cal: cal, Test: &moved}, "v1", false},
		{"test and calibration swapped", CompareConfig{}, CompareData{Cal: test, Test: cal}, "v1", false},
		{"class names", CompareConfig{}, CompareData{Cal: cal, Test: test, LabelNames: []string{"a"}}, "v1", false},
		{"other code", CompareConfig{}, data, "v2", false},
		{"a Size column", CompareConfig{Sizes: &CompareSizes{Rows: test.Anchors, N: test.N, D: test.D}}, data, "v1", false},
		{"a head's outputs", CompareConfig{Config: Config{HeadDim: 4}}, data, "v1", false},
	} {
		if got := key(c.cfg, c.data, c.code); (got == base) != c.same {
			t.Errorf("%s: same key %v, want %v", c.name, got == base, c.same)
		}
	}
	// The rows that train nothing keep their key whatever the heads'.
	if untrained := func(h int) string {
		k, err := compareKey(CompareConfig{Config: Config{HeadDim: h}}, data, "v1", false)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}; untrained(0) != untrained(4) {
		t.Error("a head's outputs change the key of the rows that train nothing")
	}
	// The heads' outputs key the InfoNCE rows' cells alone, and a head
	// of the embeddings' dimension is the default's.
	cellsOf := func(h int) *Cells {
		c, err := NewCompareCells(t.TempDir(), CompareConfig{Config: Config{HeadDim: h}}, data, "v1")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	plain, narrow, same := cellsOf(0), cellsOf(4), cellsOf(test.D)
	head, learned := InfoNCERows()[0].File, LearnedRows()[0].File
	if plain.keyFor(learned, true) != narrow.keyFor(learned, true) || plain.keyFor(head, true) == narrow.keyFor(head, true) ||
		plain.keyFor(head, true) != same.keyFor(head, true) {
		t.Errorf("head keys: a learned row's %v, a head row's %v, the dimension's own %v",
			plain.keyFor(learned, true) == narrow.keyFor(learned, true), plain.keyFor(head, true) != narrow.keyFor(head, true), plain.keyFor(head, true) == same.keyFor(head, true))
	}
	// The Size column's key: its collection's rows and anchors, the
	// default given alike.
	sized := func(rows []float32, anchors int) string {
		return key(CompareConfig{Sizes: &CompareSizes{Rows: rows, N: len(rows) / test.D, D: test.D, Name: "any", Anchors: anchors}}, data, "v1")
	}
	other := slices.Clone(test.Anchors)
	other[0] += 1e-3
	if a := sized(test.Anchors, 0); a != sized(test.Anchors, eval.DefaultSizeAnchors) || a == sized(other, 0) || a == sized(test.Anchors, 5) {
		t.Error("the Size column's key does not follow its rows and anchors")
	}
}

// TestCompareCellsBaselines: a comparison run again with other training
// flags reads its baseline rows back (no recipe changes them) and
// computes its learned rows again.
func TestCompareCellsBaselines(t *testing.T) {
	dir := t.TempDir()
	one, err := NewCompareCells(dir, CompareConfig{}, CompareData{}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	two, err := NewCompareCells(dir, CompareConfig{Config: Config{Train: train.Config{MaxEpochs: 3}}}, CompareData{}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	f := func() (int, error) { calls++; return calls, nil }
	cell(one, "compare", "ball", 0, false, f)
	cell(one, "compare", "genball-neg", 0, true, f)
	calls = 0
	cell(two, "compare", "ball", 0, false, f)
	cell(two, "compare", "genball-neg", 0, true, f)
	if reused, computed, stale := two.Counts(); reused != 1 || computed != 1 || stale != 1 || calls != 1 {
		t.Errorf("other training flags: %d read back, %d computed (%d stale), want the baseline read back and the learned row computed", reused, computed, stale)
	}
}
