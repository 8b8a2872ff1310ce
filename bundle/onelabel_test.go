package bundle

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestOneLabel: one label's rows (Items.OneLabel) plan the bundles of the
// recipe they replace — the rows as their own queries and the pairs
// np.argwhere(np.outer(rel, rel)), diagonal left out, rel = M[:, l] > 0 —
// label by label: the same splits, positives, negatives and pools, with
// hard negatives too, less the recipe's warning of the queries with no
// relevant row (the manifest counts the label's rows instead).
func TestOneLabel(t *testing.T) {
	const n, c, d = 300, 4, 3
	rng := rand.New(rand.NewPCG(8, 1))
	m, sets, rows := multiHot(t, rng, n, c, c, d, 0.6)
	e := Embeddings{Source: "e.npy", Rows: rows, N: n, D: d}
	for l := range c {
		var pairs [][2]int
		carrying := 0
		for q := range n {
			carrying += int(m[q*c+l])
			for r := range n {
				if q != r && m[q*c+l] == 1 && m[r*c+l] == 1 {
					pairs = append(pairs, [2]int{q, r})
				}
			}
		}
		one := &OneLabel{Label: int32(l), Name: fmt.Sprint("tag", l)}
		in := Inputs{Embeddings: e, LabelSets: sets, LabelsSource: "m.npy", OneLabel: one}
		native, err := in.Items()
		if err != nil {
			t.Fatal(err)
		}
		recipe, err := Inputs{Embeddings: e, Queries: &e, Pairs: pairs}.Items()
		if err != nil {
			t.Fatal(err)
		}
		for _, cfg := range []MakeConfig{
			{K: 3, KNeg: 5, Split: testSplit, Seed: 3},
			{K: 1, KNeg: 4, Split: [4]float64{0, 0, 0.5, 0.5}, Seed: 7},
			{K: 2, KNeg: 6, Split: testSplit, Seed: 1, HardNegatives: 3, HardCandidates: 20},
		} {
			a, err := Make(native, cfg)
			if err != nil {
				t.Fatal(l, err)
			}
			b, err := Make(recipe, cfg)
			if err != nil {
				t.Fatal(l, err)
			}
			if !reflect.DeepEqual(a.Splits, b.Splits) {
				t.Errorf("label %d, %+v: one label's plan differs from the recipe's:\n%v\n%v", l, cfg, a.Splits, b.Splits)
			}
			noRelevant := func(w string) bool { return strings.Contains(w, "queries have no relevant row") }
			if want := slices.DeleteFunc(slices.Clone(b.Warnings), noRelevant); !slices.Equal(a.Warnings, want) || len(want) == len(b.Warnings) {
				t.Errorf("label %d, %+v: warnings %q, the recipe's %q", l, cfg, a.Warnings, b.Warnings)
			}
			man := NewManifest("x", in, cfg, a)
			if got := man.OneLabel; got == nil || *got != (ManifestOneLabel{Label: one.Name, Rows: carrying, Of: n}) {
				t.Errorf("label %d: the manifest's one label %+v, want %d of %d rows", l, got, carrying, n)
			}
			if !strings.Contains(man.Positives, `the other rows carrying label "`+one.Name+`"`) || man.LabelNames != nil {
				t.Errorf("label %d: the manifest's positives %q, label names %q", l, man.Positives, man.LabelNames)
			}
			for _, sp := range a.Splits {
				if sp.Labels != nil || sp.PositiveLabels != nil {
					t.Errorf("label %d: the %s split carries labels", l, sp.Name)
				}
			}
		}
	}
}

// TestOneLabelRefused: one label's rows are refused where they have no
// meaning or are too few, each refusal naming the label and the count.
func TestOneLabelRefused(t *testing.T) {
	const n, d = 40, 2
	sets := make([][]int32, n)
	for i := range sets {
		switch {
		case i == 0:
			sets[i] = []int32{0, 1} // label 0: row 0 alone
		case i < 3:
			sets[i] = []int32{1, 2} // label 1: rows 0–2; label 2: rows 1–39
		default:
			sets[i] = []int32{2}
		}
	}
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(i % 7)
	}
	e := Embeddings{Source: "e.npy", Rows: rows, N: n, D: d}
	for _, c := range []struct {
		name  string
		label int32
		in    func(*Inputs)
		cfg   MakeConfig
		want  string
	}{
		{"one row", 0, nil, MakeConfig{K: 1}, `label "x" is carried by 1 row of 40: a row's positives are the other rows carrying it`},
		{"no row", 3, nil, MakeConfig{K: 1}, `label "x" is carried by 0 rows of 40`},
		{"too few for k", 1, nil, MakeConfig{K: 3}, `label "x" is carried by 3 of 40 rows: each has the 2 others as its positives, too few for k = 3`},
		{"too few negatives", 2, nil, MakeConfig{K: 2, KNeg: 2}, `label "x" is carried by 39 of 40 rows: a query's negatives are the rows that do not carry it, 1, too few for kneg = 2`},
		{"too few for the splits", 1, nil, MakeConfig{K: 1, AllowFewer: true}, `split is empty: too few queries for its share 0.1 (the queries are the rows carrying label "x": 3 of the 40)`},
		{"ood", 2, nil, MakeConfig{K: 1, OODClasses: []int64{0}}, `OOD labels and an OOD calibration share are held out of the bundles of every label`},
		{"ood-cal", 2, nil, MakeConfig{K: 1, OODCalShare: 0.1}, `OOD labels and an OOD calibration share`},
		{"negative", -1, nil, MakeConfig{K: 1}, `its number -1 is negative`},
		{"one label a row", 2, func(in *Inputs) { in.LabelSets, in.Labels = nil, make([]int64, n) }, MakeConfig{K: 1}, `m.npy: one label's rows (label "x") are of several labels a row`},
	} {
		in := Inputs{Embeddings: e, LabelSets: sets, LabelsSource: "m.npy", OneLabel: &OneLabel{Label: c.label, Name: "x"}}
		if c.in != nil {
			c.in(&in)
		}
		items, err := in.Items()
		if err == nil {
			_, err = Make(items, c.cfg)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// Items made otherwise: with pairs, the label's rows would mix with
	// them.
	items, err := Inputs{Embeddings: e, LabelSets: sets, OneLabel: &OneLabel{Label: 2, Name: "x"}}.Items()
	if err != nil {
		t.Fatal(err)
	}
	items.Pairs = [][2]int{{0, 1}}
	if _, err := Make(items, MakeConfig{K: 1}); err == nil || !strings.Contains(err.Error(), "make their own relevance pairs") {
		t.Errorf("with pairs: %v", err)
	}
}

// TestOneLabelErrors: the refusals of splitting one label's bundles by
// class are nil for bundles of no one label, and otherwise wrap
// ErrOneLabel, naming the label and the flag or keyword given.
func TestOneLabelErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   func(label, flag string) error
		flag  string
		wants []string
	}{
		{"class", OneLabelClassError, "-calibration one", []string{`label "joy" alone`, "one threshold over every anchor (-calibration one) is that label's"}},
		{"per class", OneLabelPerClassError, "per_class=True", []string{`per_class=True: the bundles of label "joy" alone`, "leave per_class=True out"}},
	} {
		if err := c.err("", c.flag); err != nil {
			t.Errorf("%s: no one label: %v, want nil", c.name, err)
		}
		err := c.err("joy", c.flag)
		if !errors.Is(err, ErrOneLabel) {
			t.Errorf("%s: %v does not wrap ErrOneLabel", c.name, err)
		}
		if wrapped := fmt.Errorf("calibrate: cal.npz: %w", err); !errors.Is(wrapped, ErrOneLabel) {
			t.Errorf("%s: wrapped once more, %v no longer wraps ErrOneLabel", c.name, wrapped)
		}
		for _, want := range c.wants {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want it to say %q", c.name, err, want)
			}
		}
	}
}
