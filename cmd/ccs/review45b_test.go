package main

// Review of 2f1c735..fc33573 (ba64b49, ade16ff, 00e3768, 03cd9c2,
// fc33573). Each test below fails on the reviewed code and states the
// behaviour expected, but TestReview45bBundleSameFileConcurrent, a -race
// check of ba64b49 that passes; see REPORT.md for the details.

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rv45bWrite writes text files under dir.
func rv45bWrite(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rv45bEmbeddings is a CSV of n random rows of 4 dimensions.
func rv45bEmbeddings(n int) string {
	r := rand.New(rand.NewPCG(45, 2))
	var b strings.Builder
	b.WriteString("dim_0,dim_1,dim_2,dim_3\n")
	for range n {
		fmt.Fprintf(&b, "%.4f,%.4f,%.4f,%.4f\n", r.NormFloat64(), r.NormFloat64(), r.NormFloat64(), r.NormFloat64())
	}
	return b.String()
}

// rv45bLines is n lines cycling through vals.
func rv45bLines(n int, vals ...string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(vals[i%len(vals)] + "\n")
	}
	return b.String()
}

// 00e3768, integerText: labels "1e1" and "10" are two distinct strings of
// one file; they were two classes, and are now both the integer 10 — two
// classes merged silently (groups, blocks, sessions and -ood-rows read
// through idsOfText alike).
func TestReview45bSciNotationLabelsMerged(t *testing.T) {
	lines := []string{"1e1", "10", "2e1", "20", "1e1", "10"}
	ids, names, _, err := idsOfText(slices45b(lines), "labels.txt", "labels")
	if err != nil {
		t.Fatal(err)
	}
	if names == nil && ids[0] == ids[1] {
		t.Errorf(`idsOfText(%q) = ids %v: "1e1" and "10" are one label; want distinct labels (names, as before 00e3768)`, lines, ids)
	}
}

// The same, end to end: a bundle of labels "1e1", "10", "2e1", "20" has 4
// classes, and -ood-classes 1e1 names one of them.
func TestReview45bSciNotationLabelsBundle(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	rv45bWrite(t, dir, map[string]string{"emb.csv": rv45bEmbeddings(400), "labels.txt": rv45bLines(400, "1e1", "10", "2e1", "20")})
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.csv"), "-labels", p("labels.txt"), "-out", p("out"), "-k", "2", "-allow-fewer", "-ood-classes", "1e1"})
	if err != nil {
		t.Fatalf("bundle: %v (labels 1e1, 10, 2e1, 20: four classes, one held out)", err)
	}
	m, err := os.ReadFile(p("out/manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		LabelNames []string `json:"label_names"`
	}
	if err := json.Unmarshal(m, &man); err != nil {
		t.Fatal(err)
	}
	if len(man.LabelNames) != 4 {
		t.Errorf("label_names %q; want the 4 labels as written", man.LabelNames)
	}
}

func slices45b(s []string) []string { return append([]string(nil), s...) }

// 00e3768, numberRows: a .txt of one label a line whose labels happen to
// be two numbers ("18 24", an age band) was read as 3 classes; it is now
// refused as "a matrix".
func TestReview45bTwoNumberLabelsRefused(t *testing.T) {
	dir := t.TempDir()
	rv45bWrite(t, dir, map[string]string{"ages.txt": rv45bLines(30, "18 24", "25 34", "35 44")})
	li, err := readLabels(filepath.Join(dir, "ages.txt"), false)
	if err != nil {
		t.Fatalf("readLabels: %v; want the 3 labels of one a line, as before 00e3768", err)
	}
	if len(li.names) != 3 || li.sets != nil {
		t.Errorf("names %q, sets %v; want 3 classes", li.names, li.sets != nil)
	}
}

// 00e3768, numberRows: a label column written with a decimal comma
// (German Excel: "0,0" and "1,0", ';' the separator) was two classes; it
// is now a multi-hot matrix of two columns where every "0,0" row has no
// label at all (left out of the queries) — silently, but for a note.
func TestReview45bDecimalCommaLabelsMisread(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id;label\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%d;%s\n", i, []string{"0,0", "1,0"}[i%2])
	}
	rv45bWrite(t, dir, map[string]string{"de.csv": b.String()})
	li, err := readLabels(filepath.Join(dir, "de.csv")+":label", false)
	if err != nil {
		t.Fatal(err)
	}
	if li.sets != nil || len(li.ids) != 40 || li.ids[0] == li.ids[1] {
		t.Errorf("labels 0,0 and 1,0 read as sets (%v) / ids %v; want one label a row, two classes", li.sets != nil, li.ids[:min(4, len(li.ids))])
	}
}

// 00e3768, maxListLabels: a sample of an extreme multi-label data set
// (400 rows, label ids up to 299 999) named by -label-names (300 000
// names) was bundled; it is now refused as "a typo?", though every id is
// named, and the advice (write them as strings) loses -label-names.
func TestReview45bListLabelsBoundIgnoresLabelNames(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	ids := []int{5, 17, 99, 123456, 250000, 299999}
	r := rand.New(rand.NewPCG(1, 2))
	var jl, names strings.Builder
	for range 400 {
		a, b := ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]
		fmt.Fprintf(&jl, `{"labels": [%d, %d]}`+"\n", a, b)
	}
	for j := range 300000 {
		fmt.Fprintf(&names, "label_%d\n", j)
	}
	rv45bWrite(t, dir, map[string]string{"emb.csv": rv45bEmbeddings(400), "xml.jsonl": jl.String(), "names.txt": names.String()})
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.csv"), "-labels", p("xml.jsonl"), "-label-names", p("names.txt"), "-out", p("out"), "-k", "2", "-allow-fewer"})
	if err != nil && strings.Contains(err.Error(), "far beyond") {
		t.Errorf("bundle: %v; want the ids -label-names names read", err)
	}
}

// 00e3768: a null inside JSON-lines integer lists is "named null in its
// messages" (the commit); the refusal says "-1", a value the file does
// not hold.
func TestReview45bNullInIDListsNamedMinusOne(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	rv45bWrite(t, dir, map[string]string{"emb.csv": rv45bEmbeddings(60), "l.jsonl": rv45bLines(60, `{"labels": [0, null]}`, `{"labels": [1, 2]}`, `{"labels": [2]}`)})
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.csv"), "-labels", p("l.jsonl"), "-out", p("out"), "-k", "2", "-allow-fewer"})
	if err == nil || strings.Contains(err.Error(), `"-1"`) || !strings.Contains(err.Error(), "null") {
		t.Errorf("bundle: %v; want the missing label named null, as the file writes it", err)
	}
}

// fc33573, unlistedLabels: rows that list no label at all ([] or null
// everywhere) warn that "the highest, -1 (row 0), makes 2 labels — a
// typo?".
func TestReview45bUnlistedLabelsNoneListed(t *testing.T) {
	if msg := unlistedLabels([][]int32{{}, {}, {}}, 2); strings.Contains(msg, "-1") {
		t.Errorf("unlistedLabels(no labels) = %q; want no \"highest, -1\"", msg)
	}
}

// 00e3768, parseJSONLine: a line in the middle of a .jsonl that ends
// before its object does (a raw newline inside a string) is said to be
// "a file cut short", though lines follow it.
func TestReview45bCutShortHintMidFile(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 10 {
		text := "hello world"
		if i == 2 {
			text = "hello\nworld"
		}
		fmt.Fprintf(&b, `{"emb": [0.1, 0.2, %d.5], "text": "%s"}`+"\n", i, text)
	}
	rv45bWrite(t, dir, map[string]string{"nl.jsonl": b.String()})
	_, err := readEmbeddings(filepath.Join(dir, "nl.jsonl"), false)
	if err == nil || strings.Contains(err.Error(), "cut short") {
		t.Errorf("readEmbeddings: %v; want no \"file cut short\" for line 3 of 11", err)
	}
}

// ade16ff: -db (retrieve, evaluate, serve, compare, calibrate
// -reference-db) never reaches inputKind: an .h5ad is "not a collection
// file … (a text file of ids goes with ccs retrieve -ids FILE …)".
func TestReview45bDBOtherFormat(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	db := filepath.Join(dir, "cells.h5ad")
	rv45bWrite(t, dir, map[string]string{"cells.h5ad": "\x89HDF\r\n\x1a\n"})
	err := run(io.Discard, io.Discard, []string{"retrieve", "-set", set, "-db", db, "-anchor-index", "0"})
	if err == nil || !strings.Contains(err.Error(), "AnnData") {
		t.Errorf("retrieve -db cells.h5ad: %v; want it named an AnnData file, as -embeddings names it", err)
	}
}

// ade16ff: the advice ends "then -embeddings emb.npy" whatever flag read
// the file: -labels, -groups, -views, -ids, -pairs are told to give their
// file as -embeddings.
func TestReview45bOtherFormatAdviceFlag(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	rv45bWrite(t, dir, map[string]string{"emb.csv": rv45bEmbeddings(20), "labels.h5": "x", "groups.xlsx": "x"})
	for _, args := range [][]string{
		{"-embeddings", p("emb.csv"), "-labels", p("labels.h5")},
		{"-embeddings", p("emb.csv"), "-groups", p("groups.xlsx")},
	} {
		err := run(io.Discard, io.Discard, append([]string{"bundle", "-out", p("out")}, args...))
		if err == nil || strings.Contains(err.Error(), "then -embeddings") {
			t.Errorf("bundle %v: %v; want advice for %s, not -embeddings", args[2:], err, args[2])
		}
	}
}

// 03cd9c2: a .txt of ids given as -db by mistake was told "a text file
// of ids goes with ccs retrieve -ids FILE"; it is now read as (n, 1)
// embeddings, "dimension 1; the set's dimension is 4".
func TestReview45bDBTextOfIDs(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	rv45bWrite(t, dir, map[string]string{"ids.txt": rv45bLines(50, "1", "2", "3", "4", "5")})
	err := run(io.Discard, io.Discard, []string{"retrieve", "-set", set, "-db", filepath.Join(dir, "ids.txt"), "-anchor-index", "0"})
	if err == nil || !strings.Contains(err.Error(), "-ids") {
		t.Errorf("retrieve -db ids.txt: %v; want the old pointer to -ids FILE", err)
	}
}

// 03cd9c2: a CSV collection with an "id" column (a Parquet one's ids by
// default) is refused without ?ids=, and the refusal's advice, FILE:dim_*,
// reads it with the row numbers for ids: it never names ?ids=id.
func TestReview45bDBTextIDColumnAdvice(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	const d = 3 // ccs simulate's
	var b strings.Builder
	b.WriteString("id")
	for j := range d {
		fmt.Fprintf(&b, ",dim_%d", j)
	}
	b.WriteString("\n")
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 50 {
		fmt.Fprintf(&b, "%d", 1000+i)
		for range d {
			fmt.Fprintf(&b, ",%.4f", r.NormFloat64())
		}
		b.WriteString("\n")
	}
	rv45bWrite(t, dir, map[string]string{"db.csv": b.String()})
	err := run(io.Discard, io.Discard, []string{"retrieve", "-set", set, "-db", filepath.Join(dir, "db.csv"), "-anchor-index", "0"})
	if err != nil && !strings.Contains(err.Error(), "?ids=") {
		t.Errorf("retrieve -db db.csv (an id column): %v; want the id column taken as the ids (as a Parquet table's) or ?ids=id advised", err)
	}
}

// 00e3768: a CSV list column of quoted strings 'True' and 'False' (names,
// as JSON lines' ["True", "False"] are) is now read as multi-hot bits; it
// was two label names, and JSON lines still reads them so.
func TestReview45bQuotedTrueFalseNames(t *testing.T) {
	dir := t.TempDir()
	rv45bWrite(t, dir, map[string]string{
		"l.csv":   "labels\n" + rv45bLines(20, `"['True', 'False']"`, `"['False', 'True']"`),
		"l.jsonl": rv45bLines(20, `{"labels": ["True", "False"]}`, `{"labels": ["False", "True"]}`),
	})
	c, err := readLabels(filepath.Join(dir, "l.csv")+":labels", false)
	if err != nil {
		t.Fatal(err)
	}
	j, err := readLabels(filepath.Join(dir, "l.jsonl")+":labels", false)
	if err != nil {
		t.Fatal(err)
	}
	if (c.sets == nil) != (j.sets == nil) || strings.Join(c.names, ",") != strings.Join(j.names, ",") {
		t.Errorf("CSV ['True', 'False']: sets %v names %q; JSON lines [\"True\", \"False\"]: sets %v names %q; want alike", c.sets != nil, c.names, j.sets != nil, j.names)
	}
}

// 00e3768: float multi-hot rows ([0.0, 1.0, 0.0]) are the matrix in a
// CSV column, JSON lines and Python's ccs.bundle now; a Parquet
// list<double> of the same rows (pandas' df["labels"] = list(M.astype(float)))
// is refused ("want lists of integer or string labels").
func TestReview45bParquetFloatMultiHot(t *testing.T) {
	dir := t.TempDir()
	rows := [][]float64{{0, 1, 0}, {1, 0, 1}, {0, 0, 1}, {1, 0, 0}}
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Float64)
	defer lb.Release()
	var jl strings.Builder
	for i := range 40 {
		r := rows[i%len(rows)]
		lb.Append(true)
		lb.ValueBuilder().(*array.Float64Builder).AppendValues(r, nil)
		fmt.Fprintf(&jl, `{"labels": [%.1f, %.1f, %.1f]}`+"\n", r[0], r[1], r[2])
	}
	writeColumnParquet(t, filepath.Join(dir, "l.parquet"), "labels", lb.NewArray(), 1<<16)
	rv45bWrite(t, dir, map[string]string{"l.jsonl": jl.String()})
	j, err := readLabels(filepath.Join(dir, "l.jsonl")+":labels", false)
	if err != nil {
		t.Fatal(err)
	}
	q, err := readLabels(filepath.Join(dir, "l.parquet")+":labels", false)
	if err != nil {
		t.Fatalf("Parquet list<double> of 0.0/1.0: %v; JSON lines of the same rows read (%d sets, c %d)", err, len(j.sets), j.c)
	}
	if len(q.sets) != len(j.sets) || q.c != j.c {
		t.Errorf("Parquet: %d sets, c %d; JSON lines: %d sets, c %d", len(q.sets), q.c, len(j.sets), j.c)
	}
}

// ba64b49: the labels are read on a goroutine beside the embeddings'
// read; where both come from one file (a CSV's label column, a JSON-lines
// field) the bundle is as when read one after the other (run with -race).
func TestReview45bBundleSameFileConcurrent(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	r := rand.New(rand.NewPCG(7, 8))
	var c, j strings.Builder
	c.WriteString("label,dim_0,dim_1,dim_2\n")
	for i := range 600 {
		x, y, z := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		l := []string{"a", "b", "c"}[i%3]
		fmt.Fprintf(&c, "%s,%.4f,%.4f,%.4f\n", l, x, y, z)
		fmt.Fprintf(&j, `{"embedding": [%.4f, %.4f, %.4f], "labels": [%d, %d]}`+"\n", x, y, z, i%10, (i+1)%10)
	}
	rv45bWrite(t, dir, map[string]string{"t.csv": c.String(), "t.jsonl": j.String()})
	for _, args := range [][]string{
		{"-embeddings", p("t.csv"), "-labels", p("t.csv") + ":label", "-out", p("o1")},
		{"-embeddings", p("t.jsonl"), "-labels", p("t.jsonl") + ":labels", "-out", p("o2")},
	} {
		for range 3 {
			if err := run(io.Discard, io.Discard, append([]string{"bundle", "-k", "2", "-allow-fewer"}, args...)); err != nil {
				t.Fatalf("bundle %v: %v", args, err)
			}
		}
	}
}

// 00e3768, csvLabelLists: a column of lists mixing a quoted name and an
// integer-valued float (["joy"] in one row, [1.0] in another, as pandas
// writes a column of mixed lists) panics, index out of range [-1]: the
// row of "a number that is no integer" is looked for, and there is none
// (1.0 is an integer, "joy" no number). On the labels' goroutine
// (ba64b49) the panic kills ccs bundle with a stack trace. Before
// 00e3768: refused ("1.0" is neither a quoted string nor an integer).
func TestReview45bCSVMixedNameFloatPanics(t *testing.T) {
	dir := t.TempDir()
	rv45bWrite(t, dir, map[string]string{"l.csv": "labels\n" + rv45bLines(20, `"['joy']"`, `"[1.0]"`)})
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("readLabels panicked: %v; want an error (names and numbers mixed)", r)
		}
	}()
	if _, err := readLabels(filepath.Join(dir, "l.csv")+":labels", false); err == nil {
		t.Errorf("names and label numbers mixed: no error")
	}
}

// FuzzReview45bCSVLabelLists: csvLabelLists and numberRows never panic
// (the seed above panics).
func FuzzReview45bCSVLabelLists(f *testing.F) {
	for _, s := range []string{"['joy']\n[1.0]", "[0, 1]\n[]\n[1, 0]", "[0.0, 1.0]\n[True, False]", "0 1\n1 0", "[1e0]\n['a']", "[]\n[]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%q: panic %v", s, r)
			}
		}()
		values := strings.Split(s, "\n")
		csvLabelLists(values, "x.csv")
		numberRows(values, "x.txt")
	})
}

// ade16ff: a Zarr store is a directory, which a shell's completion names
// with a trailing slash (emb.zarr/): that is "a directory without
// state.json or dataset_dict.json", not the Zarr advice.
func TestReview45bZarrTrailingSlash(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "emb.zarr")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	rv45bWrite(t, store, map[string]string{".zgroup": "{}"})
	_, err := inputKind(store + "/")
	if err == nil || !strings.Contains(err.Error(), "a Zarr store") {
		t.Errorf("inputKind(emb.zarr/): %v; want the Zarr store named", err)
	}
}
