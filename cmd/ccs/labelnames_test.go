package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestBundleLabelNames: a multi-hot matrix whose columns -label-names
// names (in sorted order, as MultiLabelBinarizer's classes_ are) bundles
// byte for byte as the same labels given as a CSV column of lists, holds
// a label out by name as that column does, and its manifest names the
// labels; names in another order name the columns in that order (label j
// is column j, so the numbers differ from the list column's).
func TestBundleLabelNames(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(35, 2))
	const n, d = 300, 4
	names := []string{"anger", "grief", "joy", "love"} // sorted: mlb.classes_
	c := len(names)
	x, m := make([]float32, n*d), make([]int64, n*c)
	var lists strings.Builder
	lists.WriteString("text,labels\n")
	for i := range n {
		var row []string
		for j := range c {
			if rng.Float64() < 0.35 {
				m[i*c+j] = 1
				row = append(row, fmt.Sprintf("'%s'", names[j]))
			}
		}
		fmt.Fprintf(&lists, "row %d,\"[%s]\"\n", i, strings.Join(row, ", ")) // pandas' to_csv of a column of lists
		for j := range d {
			x[i*d+j] = float32(rng.NormFloat64())
		}
	}
	// The same labels binarized in another order (MultiLabelBinarizer(classes=shuffled)).
	shuffled := []string{"joy", "anger", "love", "grief"}
	m2 := make([]int64, n*c)
	for i := range n {
		for k, name := range shuffled {
			m2[i*c+k] = m[i*c+slices.Index(names, name)]
		}
	}
	for name, a := range map[string]bundle.Array{"x.npy": bundle.Float32(x, n, d), "m.npy": bundle.Int64(m, n, c), "m2.npy": bundle.Int64(m2, n, c)} {
		if err := bundle.WriteNPY(p(name), a); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(p("lists.csv"), []byte(lists.String()), 0o644)
	os.WriteFile(p("names.txt"), []byte(strings.Join(names, "\n")+"\n"), 0o644)
	os.WriteFile(p("shuffled.txt"), []byte(strings.Join(shuffled, "\n")), 0o644)
	common := []string{"-k", "3", "-kneg", "4", "-allow-fewer", "-seed", "5", "-ood-classes", "joy"}
	for _, r := range []struct{ out, labels, names string }{
		{"lists", p("lists.csv") + ":labels", ""},
		{"named", p("m.npy"), p("names.txt")},
		{"shuffled", p("m2.npy"), p("shuffled.txt")},
	} {
		args := []string{"bundle", "-embeddings", p("x.npy"), "-labels", r.labels, "-out", p(r.out)}
		if r.names != "" {
			args = append(args, "-label-names", r.names)
		}
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, append(args, common...)); err != nil {
			t.Fatal(err, stderr.String())
		}
	}
	for _, split := range []string{"fit", "val", "cal", "test", "ood"} {
		lists, err := os.ReadFile(p("lists/" + split + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		named, err := os.ReadFile(p("named/" + split + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(named, lists) {
			t.Errorf("%s: the named matrix's bundle differs from the list column's", split)
		}
	}
	labelNames := func(dir string) []string {
		data, err := os.ReadFile(p(dir + "/manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			LabelNames []string `json:"label_names"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m.LabelNames
	}
	for dir, want := range map[string][]string{"lists": names, "named": names, "shuffled": shuffled} {
		if got := labelNames(dir); !slices.Equal(got, want) {
			t.Errorf("%s: label_names %q, want %q", dir, got, want)
		}
	}
	// Named in another order, column j is still label j: the same rows
	// (those that carry "joy", column 0 there, 2 here) are held out.
	ood, err := bundle.ReadFeatures(p("shuffled/ood.npz"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := bundle.ReadFeatures(p("named/ood.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if ood.N != want.N || !slices.Equal(ood.Anchors, want.Anchors) {
		t.Errorf("shuffled names held out %d rows, sorted names %d: not the same rows", ood.N, want.N)
	}
	// ccs retrieve -labels of the matrix names each hit's labels by
	// -label-names, and refuses names that are not one a column.
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"calibrate", "-geometry", "ball", "-cal", p("named/cal.npz"), "-out", p("ball.json")}); err != nil {
		t.Fatal(err, stderr.String())
	}
	stdout.Reset()
	retrieve := []string{"retrieve", "-set", p("ball.json"), "-db", p("x.npy"), "-anchor-index", "0", "-labels", p("m.npy"), "-limit", "3"}
	if err := run(&stdout, &stderr, append(retrieve, "-label-names", p("names.txt"))); err != nil {
		t.Fatal(err, stderr.String())
	}
	var first []string
	for j, name := range names {
		if m[j] == 1 {
			first = append(first, name)
		}
	}
	if len(first) == 0 {
		t.Fatal("row 0 carries no label: the test needs one")
	}
	if want := "0\t0\t0\t" + strings.Join(first, ", ") + "\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("retrieve -label-names: no line %q in\n%s", want, stdout.String())
	}
	os.WriteFile(p("three.txt"), []byte("anger\ngrief\njoy\n"), 0o644)
	err = run(&stdout, &stderr, append(retrieve, "-label-names", p("three.txt")))
	if want := "-label-names " + p("three.txt") + ": 3 names for the 4 columns of the multi-hot matrix"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("retrieve -label-names of 3 names for 4 columns: %v, want %q", err, want)
	}
}

// TestBundleCSVIntListsLabelNames: a CSV column of integer lists named by
// -label-names has as many labels as names, as a multi-hot matrix has as
// many as columns: a label no row lists (the last, here) is kept, as a
// matrix's column of 0s is, the bundles and label_names those of the
// matrix; an id that no name names is refused, naming the file, the row
// and the id.
func TestBundleCSVIntListsLabelNames(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(36, 3))
	const n, d = 300, 4
	names := []string{"anger", "grief", "joy", "love", "sadness"} // no row is "sadness"
	c := len(names)
	x, m := make([]float32, n*d), make([]int64, n*c)
	var lists strings.Builder
	lists.WriteString("text,labels\n")
	for i := range n {
		var row []string
		for j := range c - 1 {
			if rng.Float64() < 0.35 {
				m[i*c+j] = 1
				row = append(row, fmt.Sprint(j))
			}
		}
		fmt.Fprintf(&lists, "row %d,\"[%s]\"\n", i, strings.Join(row, ", "))
		for j := range d {
			x[i*d+j] = float32(rng.NormFloat64())
		}
	}
	for name, a := range map[string]bundle.Array{"x.npy": bundle.Float32(x, n, d), "m.npy": bundle.Int64(m, n, c)} {
		if err := bundle.WriteNPY(p(name), a); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(p("lists.csv"), []byte(lists.String()), 0o644)
	os.WriteFile(p("names.txt"), []byte(strings.Join(names, "\n")+"\n"), 0o644)
	os.WriteFile(p("three.txt"), []byte(strings.Join(names[:3], "\n")+"\n"), 0o644)
	common := []string{"-k", "3", "-kneg", "4", "-allow-fewer", "-seed", "5", "-ood-classes", "joy", "-label-names", p("names.txt")}
	for _, r := range []struct{ out, labels string }{{"matrix", p("m.npy")}, {"lists", p("lists.csv") + ":labels"}} {
		var stderr bytes.Buffer
		if err := run(io.Discard, &stderr, append([]string{"bundle", "-embeddings", p("x.npy"), "-labels", r.labels, "-out", p(r.out)}, common...)); err != nil {
			t.Fatal(err, stderr.String())
		}
		var mf bundle.Manifest
		raw, err := os.ReadFile(p(r.out + "/manifest.json"))
		if err != nil || json.Unmarshal(raw, &mf) != nil {
			t.Fatalf("%s: manifest: %v", r.out, err)
		}
		if !slices.Equal(mf.LabelNames, names) {
			t.Errorf("%s: label_names %q, want %q", r.out, mf.LabelNames, names)
		}
	}
	for _, split := range []string{"fit", "val", "cal", "test", "ood"} {
		a, err := os.ReadFile(p("matrix/" + split + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p("lists/" + split + ".npz")); err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the list column's bundle differs from the matrix's (%v)", split, err)
		}
	}
	// Row 1 lists id 3 where the names number 3.
	var wide strings.Builder
	wide.WriteString("text,labels\n")
	for i := range n {
		fmt.Fprintf(&wide, "row %d,\"[%d, %d]\"\n", i, i%3, 2+i%2)
	}
	os.WriteFile(p("wide.csv"), []byte(wide.String()), 0o644)
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("x.npy"), "-labels", p("wide.csv") + ":labels", "-label-names", p("three.txt"), "-out", p("bad")})
	if want := "-label-names " + p("three.txt") + " names 3 labels (ids 0 to 2), and " + p("wide.csv") + ":labels row 1 (counted from 0) lists label 3, which no name names"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ids beyond the names: %v, want %q", err, want)
	}
}

// TestBundleCSVIntListsMissing: a -1 in a CSV column's integer lists
// (Hugging Face's missing label) is a missing label's mark, as in a
// Parquet list column: refused by default, counted; -missing-labels drop
// makes the bundles of the lists without it, byte for byte; class keeps
// it a label of its own. It once reached the bundles as label -1, a
// panic.
func TestBundleCSVIntListsMissing(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(36, 4))
	const n, d, c = 300, 4, 4
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	if err := bundle.WriteNPY(p("x.npy"), bundle.Float32(x, n, d)); err != nil {
		t.Fatal(err)
	}
	var with, without strings.Builder
	with.WriteString("text,labels\n")
	without.WriteString("text,labels\n")
	marked := 0
	for i := range n {
		var row []string
		for j := range c {
			if rng.Float64() < 0.4 {
				row = append(row, fmt.Sprint(j))
			}
		}
		fmt.Fprintf(&without, "row %d,\"[%s]\"\n", i, strings.Join(row, ", "))
		if i%9 == 0 {
			row, marked = append([]string{"-1"}, row...), marked+1
		}
		fmt.Fprintf(&with, "row %d,\"[%s]\"\n", i, strings.Join(row, ", "))
	}
	os.WriteFile(p("with.csv"), []byte(with.String()), 0o644)
	os.WriteFile(p("without.csv"), []byte(without.String()), 0o644)
	bundleOf := func(labels, out string, extra ...string) error {
		return run(io.Discard, io.Discard, append([]string{"bundle", "-embeddings", p("x.npy"), "-labels", p(labels) + ":labels", "-out", p(out),
			"-k", "3", "-kneg", "4", "-allow-fewer", "-seed", "5"}, extra...))
	}
	err := bundleOf("with.csv", "refused")
	if want := fmt.Sprintf(`some rows list a value that marks a missing label ("-1": %d rows, the first row `, marked); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("-1 by default: %v, want %q", err, want)
	}
	if err := bundleOf("with.csv", "drop", "-missing-labels", "drop"); err != nil {
		t.Fatal(err)
	}
	if err := bundleOf("without.csv", "without"); err != nil {
		t.Fatal(err)
	}
	for _, split := range []string{"fit", "val", "cal", "test"} {
		a, err := os.ReadFile(p("without/" + split + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p("drop/" + split + ".npz")); err != nil || !bytes.Equal(a, b) {
			t.Errorf("-missing-labels drop: %s.npz differs from the lists' without -1 (%v)", split, err)
		}
	}
	if err := bundleOf("with.csv", "class", "-missing-labels", "class"); err != nil {
		t.Fatal(err)
	}
	var m bundle.Manifest
	raw, err := os.ReadFile(p("class/manifest.json"))
	if err != nil || json.Unmarshal(raw, &m) != nil {
		t.Fatalf("manifest: %v", err)
	}
	if want := []string{"-1", "0", "1", "2", "3"}; !slices.Equal(m.LabelNames, want) {
		t.Errorf("-missing-labels class: label_names %q, want %q", m.LabelNames, want)
	}

	// With -label-names (a ClassLabel's names beside its ids), the -1 is
	// the same mark, not an id the names fail to name: refused by default,
	// counted, dropped with drop (the bundles of the lists without it).
	os.WriteFile(p("names.txt"), []byte("anger\ngrief\njoy\nlove\n"), 0o644)
	named := []string{"-label-names", p("names.txt")}
	err = bundleOf("with.csv", "named-refused", named...)
	if want := fmt.Sprintf(`some rows list a value that marks a missing label ("-1": %d rows, the first row `, marked); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("-1 with -label-names by default: %v, want %q", err, want)
	}
	if err := bundleOf("with.csv", "named-drop", append(named, "-missing-labels", "drop")...); err != nil {
		t.Fatalf("-1 with -label-names, -missing-labels drop: %v", err)
	}
	for _, split := range []string{"fit", "val", "cal", "test"} {
		a, err := os.ReadFile(p("without/" + split + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p("named-drop/" + split + ".npz")); err != nil || !bytes.Equal(a, b) {
			t.Errorf("-label-names, -missing-labels drop: %s.npz differs from the lists' without -1 (%v)", split, err)
		}
	}
	raw, err = os.ReadFile(p("named-drop/manifest.json"))
	if err != nil || json.Unmarshal(raw, &m) != nil {
		t.Fatalf("manifest: %v", err)
	}
	if want := []string{"anger", "grief", "joy", "love"}; !slices.Equal(m.LabelNames, want) {
		t.Errorf("-label-names, -missing-labels drop: label_names %q, want %q", m.LabelNames, want)
	}
	// class: the mark is a label after the names, named "-1": the
	// bundles of the lists with 4 for -1 and a fifth name.
	if err := bundleOf("with.csv", "named-class", append(named, "-missing-labels", "class")...); err != nil {
		t.Fatalf("-1 with -label-names, -missing-labels class: %v", err)
	}
	os.WriteFile(p("with4.csv"), []byte(strings.ReplaceAll(with.String(), "[-1", "[4")), 0o644)
	os.WriteFile(p("names5.txt"), []byte("anger\ngrief\njoy\nlove\nnone\n"), 0o644)
	if err := bundleOf("with4.csv", "named-4", "-label-names", p("names5.txt")); err != nil {
		t.Fatal(err)
	}
	for _, split := range []string{"fit", "val", "cal", "test"} {
		a, err := os.ReadFile(p("named-4/" + split + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p("named-class/" + split + ".npz")); err != nil || !bytes.Equal(a, b) {
			t.Errorf("-label-names, -missing-labels class: %s.npz differs from the lists' with 4 for -1 (%v)", split, err)
		}
	}
	raw, err = os.ReadFile(p("named-class/manifest.json"))
	if err != nil || json.Unmarshal(raw, &m) != nil {
		t.Fatalf("manifest: %v", err)
	}
	if want := []string{"anger", "grief", "joy", "love", "-1"}; !slices.Equal(m.LabelNames, want) {
		t.Errorf("-label-names, -missing-labels class: label_names %q, want %q", m.LabelNames, want)
	}
	// ccs retrieve -labels of those lists prints the mark as it is and
	// names the rest (it refused the -1 as an id no name names).
	var stdout bytes.Buffer
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("named-drop/cal.npz"), "-out", p("ball.json")}); err != nil {
		t.Fatal(err)
	}
	if err := run(&stdout, io.Discard, []string{"retrieve", "-set", p("ball.json"), "-db", p("x.npy"), "-anchor-index", "0", "-limit", "1",
		"-labels", p("with.csv") + ":labels", "-label-names", p("names.txt")}); err != nil {
		t.Fatalf("retrieve -labels with a -1, -label-names: %v", err)
	}
	if want := "0\t0\t0\t-1"; !strings.Contains(stdout.String(), want) {
		t.Errorf("retrieve -labels with a -1, -label-names: no line %q in\n%s", want, stdout.String())
	}
}
