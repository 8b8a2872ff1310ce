package bundle

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestNewManifest: for each way of saying which rows go together, the
// manifest says what an anchor's positives and negatives are, counts each
// file's anchors by class as the plan made them, and names string labels
// so that ManifestLabelNames reads them back beside the written bundles.
func TestNewManifest(t *testing.T) {
	const n, d = 240, 3
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(i%7) + float32(i)/1000
	}
	labels, groups := make([]int64, n), make([]int64, n)
	for i := range n {
		labels[i], groups[i] = int64(i%3), int64(i/4)
	}
	for i := range n { // a group's rows share a class
		labels[i] = groups[i] % 3
	}
	queries := Embeddings{Source: "queries", Rows: rows[:20*d], N: 20, D: d}
	var pairs [][2]int
	for q := range 20 {
		for r := range 4 {
			pairs = append(pairs, [2]int{q, 4*q + r})
		}
	}
	emb := Embeddings{Source: "embeddings", Rows: rows, N: n, D: d}
	self := emb // the rows as their own queries, as multi-label data's
	self.Source = "queries"
	var selfPairs [][2]int
	for q := range 20 {
		for r := range 4 {
			selfPairs = append(selfPairs, [2]int{q, 100 + 4*q + r})
		}
	}
	views := Embeddings{Source: "views", Rows: rows, N: n / 4, D: d, Views: 4}
	for _, c := range []struct {
		name     string
		in       Inputs
		pos, neg string
	}{
		{"labels", Inputs{Embeddings: emb, Labels: labels}, "rows of the anchor's class in its split, never the anchor", "rows of other classes in its split"},
		{"groups", Inputs{Embeddings: emb, Groups: groups}, "the other rows of the anchor's group (its first row)", "other groups' first rows"},
		{"groups and labels", Inputs{Embeddings: emb, Groups: groups, Labels: labels}, "the other rows of the anchor's group (its first row)", "other groups' first rows, of other classes"},
		{"views", Inputs{Embeddings: views}, "the item's other views", "other items' first views"},
		{"views and labels", Inputs{Embeddings: views, Labels: labels[:n/4]}, "the item's other views", "other items' first views, of other classes"},
		{"pairs", Inputs{Embeddings: emb, Queries: &queries, Pairs: pairs}, "rows relevant to the query", "rows relevant to none of the query's, drawn from all rows"},
		{"pairs, the rows as queries", Inputs{Embeddings: emb, Queries: &self, Pairs: selfPairs}, "rows relevant to the query, never the query's own row (the queries are the rows)", "rows relevant to none of the query's, drawn from all rows but the query's own"},
	} {
		t.Run(c.name, func(t *testing.T) {
			items, err := c.in.Items()
			if err != nil {
				t.Fatal(err)
			}
			cfg := MakeConfig{K: 2, Split: [4]float64{0.4, 0.2, 0.2, 0.2}, Seed: 3, AllowFewer: true}
			if c.in.Labels != nil {
				cfg.LabelNames = []string{"ant", "bee", "cat"}
			}
			plan, err := Make(items, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := NewManifest("test", c.in, cfg, plan)
			if m.Positives != c.pos || m.Negatives != c.neg {
				t.Errorf("positives %q, negatives %q; want %q, %q", m.Positives, m.Negatives, c.pos, c.neg)
			}
			if m.Format != ManifestFormat || m.K != 2 || m.KNeg != 2 || m.Seed != 3 || m.Split["val"] != 0.2 || len(m.Files) != len(plan.Splits) {
				t.Errorf("manifest %+v", m)
			}
			for s, f := range m.Files {
				sp := plan.Splits[s]
				if f.File != sp.Name+".npz" || f.Anchors != len(sp.Anchors) {
					t.Errorf("file %+v for the %s split of %d anchors", f, sp.Name, len(sp.Anchors))
				}
				counts := map[string]int{}
				for _, l := range sp.Labels {
					counts[strconv.FormatInt(l, 10)]++
				}
				if sp.Labels != nil && !maps.Equal(f.Classes, counts) {
					t.Errorf("%s: classes %v, the split's labels count %v", sp.Name, f.Classes, counts)
				}
			}
			dir := t.TempDir()
			var queryRows []float32
			if c.in.Queries != nil {
				queryRows = c.in.Queries.Rows
			}
			if _, err := plan.Write(dir, c.in.Embeddings.Rows, queryRows, d); err != nil {
				t.Fatal(err)
			}
			path, err := WriteManifest(dir, m)
			if err != nil {
				t.Fatal(err)
			}
			var back Manifest
			raw, _ := os.ReadFile(path)
			if err := json.Unmarshal(raw, &back); err != nil || back.Negatives != c.neg || len(back.Files) != len(m.Files) {
				t.Fatalf("read back: %v, %+v", err, back)
			}
			test := filepath.Join(dir, "test.npz")
			b, err := Read(test)
			if err != nil {
				t.Fatal(err)
			}
			names := ManifestLabelNames(test, b)
			if c.in.Labels != nil && len(names) != 3 || c.in.Labels == nil && names != nil {
				t.Errorf("ManifestLabelNames: %q", names)
			}
		})
	}
}

// TestManifestReaders: each Manifest* reader takes its answer from the
// manifest beside a bundle only where it is ccs bundle's, decodes, and
// lists the file with the bundle's number of anchors; otherwise it gives
// its zero answer.
func TestManifestReaders(t *testing.T) {
	const several = severalLabelsPositives + ", never the row itself"
	good := `{"format":"ccs-bundles","version":1,"split":{"fit":0,"val":0,"cal":0.5,"test":0.5},
		"label_names":["ant","bee"],"ood_classes":[1,5],"split_by":"blocks","kneg_hard":2,
		"positives":"` + several + `","negatives":"hard ones",
		"files":[{"split":"test","file":"test.npz","anchors":4,"classes":{"0":3,"1":1},"blocks":2},
		{"split":"ood","file":"ood.npz","anchors":2}]}`
	type answers struct {
		names, setNames []string
		split           string
		blocks          int
		negatives       string
		several, ood    bool
		oodClasses      []string
		notMade         string
	}
	named := answers{names: []string{"ant", "bee"}, setNames: []string{"ant", "bee"}, split: "test", blocks: 2,
		negatives: "hard ones", several: true, notMade: "fit 0, val 0, cal 0.5, test 0.5"}
	for _, c := range []struct {
		name     string
		manifest string // "": none
		file     string
		anchors  int
		want     answers
	}{
		{"the file listed", good, "test.npz", 4, named},
		{"the ood file", good, "ood.npz", 2, answers{setNames: []string{"ant", "bee"}, split: "ood", negatives: "hard ones", several: true, ood: true,
			oodClasses: []string{"bee", "5"}, notMade: named.notMade}},
		{"another number of anchors", good, "test.npz", 5, answers{notMade: named.notMade}},
		{"a file not listed", good, "cal.npz", 4, answers{notMade: named.notMade}},
		{"no manifest", "", "test.npz", 4, answers{}},
		{"not JSON", `{"format":"ccs-bundles",`, "test.npz", 4, answers{}},
		{"another format", strings.Replace(good, "ccs-bundles", "ccs-set", 1), "test.npz", 4, answers{}},
		{"a field of the wrong type", strings.Replace(good, `"version":1`, `"version":"1"`, 1), "test.npz", 4, answers{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.manifest != "" {
				if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(c.manifest), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, c.file)
			b := &Bundle{N: c.anchors, Labels: []int64{0, 0, 0, 1}, PositiveLabelStart: []int64{0, 1}, PositiveLabels: []int64{1}}
			if c.anchors == 2 {
				b.Labels = nil
			}
			oodClasses, ood := ManifestSeveralLabelsOOD(path, b)
			got := answers{names: ManifestLabelNames(path, b), setNames: ManifestLabelSetNames(path, b),
				split: ManifestSplit(path, b), blocks: ManifestBlocks(path, b), negatives: ManifestNegatives(path, b),
				several: ManifestSeveralLabels(path, b), ood: ood, oodClasses: oodClasses, notMade: NotMade(dir, "fit")}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			// The same answers of the manifest read once (nil where the
			// readers find none).
			m := ReadManifest(dir)
			oodClasses, ood = m.SeveralLabelsOODOf(path, b)
			once := answers{names: m.LabelNamesOf(path, b), setNames: m.LabelSetNamesOf(path, b),
				split: m.SplitOf(path, b), blocks: m.BlocksOf(path, b), negatives: m.NegativesOf(path, b),
				several: m.SeveralLabelsOf(path, b), ood: ood, oodClasses: oodClasses, notMade: NotMade(dir, "fit")}
			if !reflect.DeepEqual(once, c.want) {
				t.Errorf("read once: got %+v\nwant %+v", once, c.want)
			}
			if l := m.OneLabelNameOf(path, b); l != "" { // none of these manifests is of one label's rows
				t.Errorf("OneLabelNameOf: %q", l)
			}
			for _, err := range []error{CheckInDistribution(path, b), m.CheckInDistribution(path, b)} {
				if (err != nil) != (c.want.split == "ood") {
					t.Errorf("CheckInDistribution: %v, split %q", err, c.want.split)
				}
			}
		})
	}
}

// TestManifestWarning: a manifest edited by hand — class names reversed
// or repeated, counts changed, not JSON, another format or version — is
// said to be unused, and its names are not given to the classes; ccs
// bundle's own says nothing.
func TestManifestWarning(t *testing.T) {
	const n, d = 240, 3
	rows := make([]float32, n*d)
	labels := make([]int64, n)
	for i := range n {
		labels[i] = int64(i % 3)
		if i%5 == 0 {
			labels[i] = 2 // unequal classes: reversed names count otherwise
		}
		for j := range d {
			rows[i*d+j] = float32(labels[i]) + float32((i*d+j)%11)/100
		}
	}
	in := Inputs{Embeddings: Embeddings{Source: "e", Rows: rows, N: n, D: d}, Labels: labels}
	items, err := in.Items()
	if err != nil {
		t.Fatal(err)
	}
	cfg := MakeConfig{K: 2, Split: [4]float64{0.4, 0.2, 0.2, 0.2}, Seed: 3, LabelNames: []string{"ant", "bee", "cat"}}
	plan, err := Make(items, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := plan.Write(dir, rows, nil, d); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteManifest(dir, NewManifest("test", in, cfg, plan)); err != nil {
		t.Fatal(err)
	}
	test := filepath.Join(dir, "test.npz")
	b, err := Read(test)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if w := ManifestWarning(test, b); w != "" || len(ManifestLabelNames(test, b)) != 3 {
		t.Fatalf("ccs bundle's manifest: %q, names %q", w, ManifestLabelNames(test, b))
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		json.Unmarshal(raw, &m)
		f(m)
		out, _ := json.Marshal(m)
		return string(out)
	}
	for _, c := range []struct{ name, text, want string }{
		{"names reversed", edit(func(m map[string]any) { m["label_names"] = []string{"cat", "bee", "ant"} }), "its label_names do not name the classes its files count"},
		{"a name twice", edit(func(m map[string]any) { m["label_names"] = []string{"ant", "ant", "cat"} }), "its label_names do not name the classes its files count"},
		{"counts changed", edit(func(m map[string]any) {
			for _, f := range m["files"].([]any) {
				f.(map[string]any)["classes"] = map[string]int{"0": 1, "1": 1, "2": 1}
			}
		}), "lists test.npz with other anchors or other counts a class than the file holds"},
		{"not JSON", "{not json", "is not ccs bundle's manifest (invalid character"},
		{"empty", "", "is not ccs bundle's manifest (unexpected end of JSON input)"},
		{"another version", edit(func(m map[string]any) { m["version"] = 9 }), `(format "ccs-bundles", version 9; want "ccs-bundles", version 1)`},
	} {
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if w := ManifestWarning(test, b); !strings.Contains(w, c.want) {
			t.Errorf("%s: %q, want %q", c.name, w, c.want)
		}
		if names := ManifestLabelNames(test, b); names != nil {
			t.Errorf("%s: the classes named %q", c.name, names)
		}
	}
}
