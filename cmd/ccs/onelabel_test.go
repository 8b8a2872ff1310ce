package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/ccsets/ccs/conformal"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestBundleOneLabel: -one-label bundles one label's rows of several a
// row byte for byte as the recipe it replaces (the relevance pairs
// np.argwhere(np.outer(rel, rel)) less the diagonal, rel = M[:, l] > 0,
// given as -queries X -pairs, the same seed): the label named by a
// matrix's column number, by -label-names (in the matrix's order or
// another), and by a list column's value. The manifest names the label
// and counts its rows, and a set calibrates on its calibration split.
func TestBundleOneLabel(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(36, 1))
	const n, d = 300, 4
	names := []string{"anger", "grief", "joy", "love"} // sorted: mlb.classes_
	shuffled := []string{"joy", "anger", "love", "grief"}
	c := len(names)
	x, m, m2 := make([]float32, n*d), make([]int64, n*c), make([]int64, n*c)
	var lists strings.Builder
	lists.WriteString("text,labels\n")
	for i := range n {
		var row []string
		for j := range c {
			if rng.Float64() < 0.35 {
				m[i*c+j] = 1
				m2[i*c+slices.Index(shuffled, names[j])] = 1
				row = append(row, fmt.Sprintf("'%s'", names[j]))
			}
		}
		fmt.Fprintf(&lists, "row %d,\"[%s]\"\n", i, strings.Join(row, ", ")) // pandas' to_csv of a column of lists
		for j := range d {
			x[i*d+j] = float32(rng.NormFloat64())
		}
	}
	const joy = 2
	var pairs []int64 // the recipe's, in np.argwhere's order
	carrying := 0
	for q := range n {
		carrying += int(m[q*c+joy])
		for r := range n {
			if q != r && m[q*c+joy] == 1 && m[r*c+joy] == 1 {
				pairs = append(pairs, int64(q), int64(r))
			}
		}
	}
	for name, a := range map[string]bundle.Array{"x.npy": bundle.Float32(x, n, d), "m.npy": bundle.Int64(m, n, c), "m2.npy": bundle.Int64(m2, n, c), "pairs.npy": bundle.Int64(pairs, len(pairs)/2, 2)} {
		if err := bundle.WriteNPY(p(name), a); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(p("lists.csv"), []byte(lists.String()), 0o644)
	os.WriteFile(p("names.txt"), []byte(strings.Join(names, "\n")+"\n"), 0o644)
	os.WriteFile(p("shuffled.txt"), []byte(strings.Join(shuffled, "\n")+"\n"), 0o644)
	common := []string{"-k", "3", "-kneg", "5", "-seed", "7"}
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, append([]string{"bundle", "-embeddings", p("x.npy"), "-queries", p("x.npy"), "-pairs", p("pairs.npy"), "-out", p("recipe")}, common...)); err != nil {
		t.Fatal(err, stderr.String())
	}
	for _, c := range []struct {
		name string
		args []string
		as   string // the label as the manifest names it
	}{
		{"column", []string{"-labels", p("m.npy"), "-one-label", "2"}, "2"},
		{"named", []string{"-labels", p("m.npy"), "-label-names", p("names.txt"), "-one-label", "joy"}, "joy"},
		{"named in another order", []string{"-labels", p("m2.npy"), "-label-names", p("shuffled.txt"), "-one-label", "joy"}, "joy"},
		{"lists", []string{"-labels", p("lists.csv") + ":labels", "-one-label", "joy"}, "joy"},
	} {
		out := p(strings.ReplaceAll(c.name, " ", "-"))
		stderr.Reset()
		if err := run(&stdout, &stderr, slices.Concat([]string{"bundle", "-embeddings", p("x.npy"), "-out", out}, c.args, common)); err != nil {
			t.Fatal(c.name, err, stderr.String())
		}
		for _, split := range []string{"fit", "val", "cal", "test"} {
			got, err := os.ReadFile(filepath.Join(out, split+".npz"))
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := os.ReadFile(p("recipe/" + split + ".npz")); !bytes.Equal(got, want) {
				t.Errorf("%s: %s.npz differs from the recipe's", c.name, split)
			}
		}
		note := fmt.Sprintf("label %q alone (-one-label): its %d of %d rows are the queries", c.as, carrying, n)
		if !strings.Contains(stderr.String(), note) || strings.Contains(stderr.String(), "queries have no relevant row") {
			t.Errorf("%s: stderr says not %q, or warns of the rows without the label:\n%s", c.name, note, stderr.String())
		}
		var man struct {
			OneLabel   *bundle.ManifestOneLabel `json:"one_label"`
			LabelNames []string                 `json:"label_names"`
			Positives  string                   `json:"positives"`
		}
		b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatal(err)
		}
		if man.OneLabel == nil || *man.OneLabel != (bundle.ManifestOneLabel{Label: c.as, Rows: carrying, Of: n}) || man.LabelNames != nil ||
			!strings.HasPrefix(man.Positives, fmt.Sprintf("the other rows carrying label %q", c.as)) {
			t.Errorf("%s: manifest %+v, want label %q of %d rows of %d and no label names", c.name, man, c.as, carrying, n)
		}
	}
	// One set a label, calibrated on its calibration split over every
	// anchor, calibrate and evaluate saying whose bundles they are; a
	// class-conditional calibration of it is refused, saying so.
	const note = `the bundles of label "joy" alone (ccs bundle -one-label; one_label= in Python): every anchor carries it, and the guarantee is for anchors carrying "joy"`
	stderr.Reset()
	if err := run(&stdout, &stderr, []string{"calibrate", "-geometry", "ball", "-cal", p("named/cal.npz"), "-alpha", "0.2", "-out", p("joy.json")}); err != nil {
		t.Fatal(err, stderr.String())
	}
	if want := "note: " + p("named/cal.npz") + ": " + note + "\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("calibrate: stderr\n%s\nwant %q", stderr.String(), want)
	}
	// The set file keeps the label (serve's /v1/sets shows its
	// calibration).
	if s, err := conformal.Load(p("joy.json")); err != nil {
		t.Fatal(err)
	} else if s.Calibration.OneLabel != "joy" {
		t.Errorf("joy.json: one_label %q, want joy", s.Calibration.OneLabel)
	}
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"evaluate", "-set", p("joy.json"), "-test", p("named/test.npz")}); err != nil {
		t.Fatal(err, stderr.String())
	}
	if want := "note: " + p("named/test.npz") + ": " + note + "\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("evaluate: stderr\n%s\nwant %q", stderr.String(), want)
	}
	// compare says it below its table and in its JSON; bundles of every
	// label do not.
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"compare", "-data", p("named"), "-rows", "baselines", "-seeds", "1", "-resplits", "10", "-quiet"}); err != nil {
		t.Fatal(err)
	}
	if want := `One label: "joy" — the bundles hold the rows carrying it alone (ccs bundle -one-label): every anchor carries it, and the guarantee is for anchors carrying "joy"`; !strings.Contains(stdout.String(), want) {
		t.Errorf("compare:\n%s\nwant %q", stdout.String(), want)
	}
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"compare", "-data", p("named"), "-rows", "baselines", "-seeds", "1", "-resplits", "10", "-quiet", "-json"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), `"one_label": "joy"`) {
		t.Errorf("compare -json: no one_label \"joy\" in\n%s", stdout.String())
	}
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"compare", "-data", p("recipe"), "-rows", "baselines", "-seeds", "1", "-resplits", "10", "-quiet", "-json"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout.String(), "one_label") {
		t.Errorf("compare -json of the pairs' bundles: one_label in\n%s", stdout.String())
	}
	const perClass = `-per-class: the bundles of label "joy" alone (ccs bundle -one-label; one_label= in Python) carry no labels to split by: every anchor carries it, and the coverage over all of them is that label's — leave -per-class out`
	const why = `the bundles of label "joy" alone (ccs bundle -one-label; one_label= in Python): every anchor carries it, and the bundles carry no labels — one threshold over every anchor (-calibration one) is that label's, with its guarantee`
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("named/cal.npz"), "-calibration", "class", "-out", p("s.json")}, "calibrate: -calibration class: " + p("named/cal.npz") + ": " + why},
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("named/cal.npz"), "-class", "joy", "-out", p("s.json")}, "calibrate: -class joy: " + p("named/cal.npz") + ": " + why},
		{[]string{"compare", "-data", p("named"), "-rows", "baselines", "-calibration", "class", "-seeds", "1", "-quiet"}, "compare: -calibration class: " + p("named/cal.npz") + ": " + why},
		// -per-class has no labels to split by, and says whose bundles
		// they are rather than that the bundle lacks labels.
		{[]string{"evaluate", "-set", p("joy.json"), "-test", p("named/test.npz"), "-per-class"}, p("named/test.npz") + ": " + perClass},
		{[]string{"coverage-check", "-set", p("joy.json"), "-test", p("named/test.npz"), "-per-class", "-resplits", "10"}, "coverage-check: " + p("joy.json") + " on " + p("named/test.npz") + ": " + perClass},
	} {
		if err := run(io.Discard, io.Discard, c.args); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.args[0], err, c.want)
		}
	}
}
