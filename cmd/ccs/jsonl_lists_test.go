package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBundleJSONLLabelLists: a JSON-lines field of lists — datasets'
// to_json of a multi-label column, names (["joy", "love"]) or class ids
// ([0, 3]), or a multi-hot row ([0, 1, 0, 0, 1], 0.0 and 1.0 as a BCE
// target is written, true and false) — is read as several labels a row:
// the same bundles, byte for byte, as the multi-hot matrix; one-hot rows
// are one label a row, as the labels themselves give; null and [] are no
// label; what no list of labels is, is refused naming its line.
func TestBundleJSONLLabelLists(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, c = 400, 5
	m := multiLabelOOD(t, dir, 6, n, 4, c, 6)
	names := []string{"anger", "fear", "grief", "joy", "love"}
	var named, ids, hot, hotf, hotb strings.Builder
	for i := range n {
		var q, k, h, hf, hb []string
		for j := range c {
			if m[i*c+j] == 1 {
				q, k = append(q, `"`+names[j]+`"`), append(k, fmt.Sprint(j))
			}
			h = append(h, fmt.Sprint(m[i*c+j]))
			hf = append(hf, fmt.Sprintf("%.1f", float64(m[i*c+j])))
			hb = append(hb, fmt.Sprint(m[i*c+j] == 1))
		}
		fmt.Fprintf(&named, `{"text": "row %d", "labels": [%s]}`+"\n", i, strings.Join(q, ", "))
		fmt.Fprintf(&ids, `{"labels": [%s], "idx": %d}`+"\n", strings.Join(k, ","), i)
		fmt.Fprintf(&hot, `{"labels": [%s]}`+"\n", strings.Join(h, ", "))
		fmt.Fprintf(&hotf, `{"labels": [%s]}`+"\n", strings.Join(hf, ", "))
		fmt.Fprintf(&hotb, `{"labels": [%s]}`+"\n", strings.Join(hb, ", "))
	}
	var onehot, one strings.Builder
	for i := range n {
		j := i % 3
		row := []string{"0", "0", "0"}
		row[j] = "1"
		fmt.Fprintf(&onehot, `{"label": [%s]}`+"\n", strings.Join(row, ", "))
		fmt.Fprintf(&one, `{"label": %d}`+"\n", j)
	}
	bad := func(at int, v string) string { // row at's labels v, among lists
		var b strings.Builder
		for i := range n {
			l := `["joy"]`
			if i == at {
				l = v
			}
			fmt.Fprintf(&b, `{"labels": %s}`+"\n", l)
		}
		return b.String()
	}
	files := map[string]string{
		"named.jsonl": named.String(), "ids.jsonl": ids.String(), "hot.jsonl": hot.String(),
		"hotf.jsonl": hotf.String(), "hotb.jsonl": hotb.String(), "onehot.jsonl": onehot.String(), "one.jsonl": one.String(),
		"scalar.jsonl": bad(7, `"joy"`), "mixed.jsonl": bad(9, `[3]`), "real.jsonl": strings.ReplaceAll(bad(5, `[2.5]`), `"joy"`, "1"),
		"nested.jsonl": bad(4, `[["joy"]]`), "nullitem.jsonl": bad(6, `["joy", null]`), "bools.jsonl": bad(8, `[true]`),
		"none.jsonl":  strings.Replace(named.String(), `"row 3", "labels": [`, `"row 3", "labels": null, "x": [`, 1),
		"empty.jsonl": strings.Replace(named.String(), `"row 3", "labels": [`, `"row 3", "labels": [], "x": [`, 1),
	}
	for name, text := range files {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bundleOf := func(labels, ood, out string) error {
		args := []string{"bundle", "-embeddings", p("x.npy"), "-labels", labels, "-k", "3", "-kneg", "5", "-allow-fewer", "-out", p(out)}
		if ood != "" {
			args = append(args, "-ood-classes", ood, "-ood-cal-share", "0.1")
		}
		return run(io.Discard, io.Discard, args)
	}
	same := func(what, a, b string, splits ...string) {
		t.Helper()
		for _, split := range splits {
			x, _ := os.ReadFile(p(a + "/" + split + ".npz"))
			y, err := os.ReadFile(p(b + "/" + split + ".npz"))
			if err != nil || !bytes.Equal(x, y) {
				t.Errorf("%s: %s.npz differs from %s's (%v)", what, split, a, err)
			}
		}
	}
	if err := bundleOf(p("m.npy"), "4", "matrix"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ labels, ood string }{
		{"named.jsonl", "love"}, {"ids.jsonl:labels", "4"}, {"hot.jsonl", "4"}, {"hotf.jsonl", "4"}, {"hotb.jsonl", "4"},
	} {
		out := "out-" + strings.ReplaceAll(c.labels, ":", "-")
		if err := bundleOf(p(c.labels), c.ood, out); err != nil {
			t.Fatalf("%s: %v", c.labels, err)
		}
		same(c.labels, "matrix", out, "fit", "val", "cal", "test", "ood-cal", "ood")
	}
	if err := bundleOf(p("onehot.jsonl"), "", "onehot"); err != nil {
		t.Fatal(err)
	}
	if err := bundleOf(p("one.jsonl"), "", "one"); err != nil {
		t.Fatal(err)
	}
	same("one-hot rows", "one", "onehot", "fit", "val", "cal", "test")
	for _, name := range []string{"none.jsonl", "empty.jsonl"} {
		if err := bundleOf(p(name), "", "out-"+name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, c := range []struct{ name, want string }{
		{"scalar.jsonl", `scalar.jsonl:8: "labels" holds the string "joy", and line 1 a list (["joy"]): with several labels a row, every row's a list ([] or null for none)`},
		{"mixed.jsonl", `mixed.jsonl:1: "labels" lists ["joy"], and line 10 [3]: labels of one kind, integers or names`},
		{"real.jsonl", `real.jsonl:6: "labels" lists 2.5, which is no label number: label numbers are integers below 2^31, names strings`},
		{"nested.jsonl", `nested.jsonl:5: "labels" lists ["joy"]: labels are names or integers`},
		{"nullitem.jsonl", `nullitem.jsonl: several labels a row, and some rows list a value that marks a missing label (null: 1 row, the first row 6; rows numbered from 0): shared, it would make those rows one another's positives; -missing-labels drop`},
		{"bools.jsonl", `bools.jsonl:9: "labels" lists true among lists that are no multi-hot rows`},
	} {
		err := bundleOf(p(c.name), "", "out-"+c.name)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant …%s…", c.name, err, c.want)
		}
	}
}

// TestBundleCSVMultiHotLists: a CSV column of lists that are a multi-hot
// matrix's rows — pandas' to_csv of M.tolist(), every row one length of
// 0s and 1s — is that matrix, as Python's ccs.bundle and a Parquet column
// read it (it was read as the labels 0 and 1: every row with a 0 the
// positive of every other); with one row of another length, the lists
// are label numbers again.
func TestBundleCSVMultiHotLists(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, c = 400, 5
	m := multiLabelOOD(t, dir, 6, n, 4, c, 6)
	var b strings.Builder
	b.WriteString(",labels\n")
	for i := range n {
		var h []string
		for j := range c {
			h = append(h, fmt.Sprint(m[i*c+j]))
		}
		fmt.Fprintf(&b, "%d,\"[%s]\"\n", i, strings.Join(h, ", "))
	}
	if err := os.WriteFile(p("hot.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bundleOf := func(labels, out string) (string, error) {
		var stderr bytes.Buffer
		err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("x.npy"), "-labels", labels, "-ood-classes", "4", "-ood-cal-share", "0.1",
			"-k", "3", "-kneg", "5", "-allow-fewer", "-out", p(out)})
		return stderr.String(), err
	}
	if _, err := bundleOf(p("m.npy"), "matrix"); err != nil {
		t.Fatal(err)
	}
	note, err := bundleOf(p("hot.csv")+":labels", "hot")
	if err != nil || !strings.Contains(note, "5 labels, several a row") {
		t.Fatalf("multi-hot lists: %v, %s", err, note)
	}
	for _, split := range []string{"fit", "val", "cal", "test", "ood-cal", "ood"} {
		x, _ := os.ReadFile(p("matrix/" + split + ".npz"))
		y, err := os.ReadFile(p("hot/" + split + ".npz"))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s.npz differs from the matrix's (%v)", split, err)
		}
	}
	ragged := strings.Replace(b.String(), "\n0,\"[", "\n0,\"[1, ", 1)
	if err := os.WriteFile(p("ragged.csv"), []byte(ragged), 0o644); err != nil {
		t.Fatal(err)
	}
	// Float multi-hot rows (a BCE target), as pandas writes them: the matrix.
	if err := os.WriteFile(p("hotf.csv"), []byte(strings.NewReplacer("0,", "0.0,", "1,", "1.0,", "0]", "0.0]", "1]", "1.0]").Replace(b.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundleOf(p("hotf.csv")+":labels", "hotf"); err != nil {
		t.Fatalf("float multi-hot lists: %v", err)
	}
	for _, split := range []string{"fit", "val", "cal", "test", "ood-cal", "ood"} {
		x, _ := os.ReadFile(p("matrix/" + split + ".npz"))
		y, err := os.ReadFile(p("hotf/" + split + ".npz"))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("float rows: %s.npz differs from the matrix's (%v)", split, err)
		}
	}
	// Label numbers written as floats (a float tensor's .tolist()), of
	// several lengths: the integers, as one label a line reads 3.0; 2.5
	// refused, saying why.
	for name, text := range map[string]string{"ids.csv": "labels\n\"[3, 1]\"\n\"[2]\"\n", "fids.csv": "labels\n\"[3.0, 1e0]\"\n\"[2.0]\"\n", "rids.csv": "labels\n\"[3.0, 1.0]\"\n\"[2.5]\"\n"} {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := readLabels(p("ids.csv"), false)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readLabels(p("fids.csv"), false); err != nil || fmt.Sprint(got.sets, got.c) != fmt.Sprint(want.sets, want.c) || want.c != 4 {
		t.Errorf("float ids: %v, %v %d; want %v %d", err, got.sets, got.c, want.sets, want.c)
	}
	if _, err := readLabels(p("rids.csv"), false); err == nil || !strings.Contains(err.Error(), "rids.csv: row 1, [2.5]: a number that is no integer, where a list's numbers are label numbers") {
		t.Errorf("2.5 among ids: %v", err)
	}
	if _, err := bundleOf(p("ragged.csv")+":labels", "ragged"); err == nil || !strings.Contains(err.Error(), `label 4 is not`) || !strings.Contains(err.Error(), "(0 to 1)") {
		t.Errorf("lists of two lengths: %v; want the labels 0 and 1, where 4 is none", err)
	}
}
