package main

// Review of bde724f (fastfloat, plainLines) and 2f1c735 (JSON-lines label
// lists, CSV multi-hot lists). Each test fails on 2f1c735 and says what is
// expected.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// review45Rows makes n rows of d-dimensional embeddings around the
// centres of their multi-hot rows (c columns: label i%c, and now and then
// the next), and returns them with the rows.
func review45Rows(n, d, c int) (emb [][]float64, hot [][]int) {
	r := rand.New(rand.NewPCG(45, 1))
	for i := range n {
		h := make([]int, c)
		h[i%c] = 1
		if r.Float64() < 0.15 {
			h[(i+1)%c] = 1
		}
		e := make([]float64, d)
		for k := range d {
			for j := range c {
				e[k] += float64(h[j]*(j+1)) * float64(k+1)
			}
			e[k] += 0.3 * r.NormFloat64()
		}
		emb, hot = append(emb, e), append(hot, h)
	}
	return emb, hot
}

func review45Write(t *testing.T, path string, lines []any) {
	t.Helper()
	var b bytes.Buffer
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReview45JSONLNestedEmbeddingTakesLabels (2f1c735, medium): an API
// batch output's embedding is nested (response.body.data.0.embedding) and
// the row's multi-hot labels sit at the top, {"response": …, "labels":
// [0, 1, 0, 0, 1]}. -embeddings FILE (no field) picks the one top-level list
// of numbers as the embedding — the labels field that -labels FILE:labels
// names — and, since -labels now reads that field as lists too, bundle
// succeeds on embeddings that are the labels themselves. Before 2f1c735 the
// run was refused (-labels refused the list). Expected: a field that
// -labels names is no candidate for the embedding (as a CSV's labels column
// is not: otherColumn), so the nested embedding is found, or a refusal.
func TestReview45JSONLNestedEmbeddingTakesLabels(t *testing.T) {
	dir := t.TempDir()
	emb, hot := review45Rows(400, 4, 5)
	var lines []any
	for i := range emb {
		lines = append(lines, map[string]any{
			"response": map[string]any{"body": map[string]any{"data": []any{map[string]any{"embedding": emb[i]}}}},
			"labels":   hot[i],
		})
	}
	p := filepath.Join(dir, "batch.jsonl")
	review45Write(t, p, lines)
	var stderr bytes.Buffer
	err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p, "-labels", p + ":labels",
		"-k", "3", "-kneg", "3", "-allow-fewer", "-seed", "1", "-out", filepath.Join(dir, "out")})
	if strings.Contains(stderr.String(), `the field "labels" read as the embedding`) {
		t.Errorf("bundle read the -labels field as the embedding too (error: %v):\n%s\nwant the nested embedding (4 numbers a row), or a refusal", err, stderr.String())
	}
}

// TestReview45JSONLSameFileLabelsField (2f1c735, low): the docs' pattern
// -embeddings docs.jsonl -labels docs.jsonl:label, with the label field a
// list of class ids ([3, 16]) or multi-hot rows — what 2f1c735 reads — is
// refused: "embedding and labels each hold a list of numbers: which is the
// embedding?", though -labels names the field (a CSV's labels column is
// left out of the embedding's columns). Expected: the field -labels names
// is not an embedding candidate, and the run succeeds.
func TestReview45JSONLSameFileLabelsField(t *testing.T) {
	dir := t.TempDir()
	emb, hot := review45Rows(400, 4, 5)
	var lines []any
	for i := range emb {
		var ids []int
		for j, x := range hot[i] {
			if x == 1 {
				ids = append(ids, j)
			}
		}
		lines = append(lines, map[string]any{"embedding": emb[i], "labels": ids})
	}
	p := filepath.Join(dir, "docs.jsonl")
	review45Write(t, p, lines)
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p, "-labels", p + ":labels",
		"-k", "3", "-kneg", "3", "-allow-fewer", "-seed", "1", "-out", filepath.Join(dir, "out")}); err != nil {
		t.Errorf("-embeddings docs.jsonl -labels docs.jsonl:labels: %v\nwant the field -labels names left out of the embedding's candidates", err)
	}
}

// TestReview45MultiHotNullRow (2f1c735, medium): multi-hot rows, one of
// them null (a row without labels, as datasets writes None) — or [] in
// JSON lines, or an empty cell in a CSV column — are no longer "a multi-hot
// matrix's rows" and are read as lists of label ids: every row lists 0 and
// 1, "2 labels, several a row", nearly every row the positive of every
// other — the misreading 2f1c735 fixes for the rows without a hole. bundle
// then fails far away ("query 0 has 398 rows relevant to it among 400, too
// few others"), or succeeds on the wrong labels; bools with a null say
// "lists true among lists that are no multi-hot rows (one length, 0s and
// 1s)", which they are. Expected: the matrix (the null row no label, as an
// all-zero row), or a refusal naming the null's line.
func TestReview45MultiHotNullRow(t *testing.T) {
	dir := t.TempDir()
	_, hot := review45Rows(400, 4, 5)
	for _, hole := range []string{"null", "[]"} {
		var b strings.Builder
		for i, h := range hot {
			v := strings.ReplaceAll(fmt.Sprint(h), " ", ", ")
			if i == 7 {
				v = hole
			}
			fmt.Fprintf(&b, `{"labels": %s}`+"\n", v)
		}
		p := filepath.Join(dir, "hot-"+strings.Trim(hole, "[]")+".jsonl")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		li, err := readLabels(p, false)
		if err == nil && li.c != 5 {
			t.Errorf("JSON lines, multi-hot rows (5 columns) and line 8 %s: read as %d labels (listIDs %v: the items 0 and 1 as label ids); want the 5 columns' labels, or an error naming line 8", hole, li.c, li.listIDs)
		}
	}
	var b strings.Builder
	b.WriteString("i,labels\n")
	for i, h := range hot {
		if i == 7 {
			fmt.Fprintf(&b, "%d,\n", i)
			continue
		}
		fmt.Fprintf(&b, "%d,\"%s\"\n", i, strings.ReplaceAll(fmt.Sprint(h), " ", ", "))
	}
	p := filepath.Join(dir, "hot.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	li, err := readLabels(p+":labels", false)
	if err == nil && li.c != 5 {
		t.Errorf("CSV, multi-hot lists (5 columns) and row 8's cell empty: read as %d labels (listIDs %v); want the 5 columns' labels, or an error naming the row", li.c, li.listIDs)
	}
}

// TestReview45ListLabelHugeID (2f1c735 for JSON lines, medium; the CSV
// column of lists has it since before): one list holding the id
// 2000000000 (< 2^31, accepted) makes c = 2000000001 "labels, several a
// row", and bundle then allocates per label (bundle.sharedLabels): "fatal
// error: runtime: out of memory" (48 GB asked for 400 rows), a crash no
// recover catches. An id of 10^8 asks for 2.4 GB. Expected: a refusal
// naming the row (or ids renumbered as a Parquet list column's are), not a
// label space of 2·10^9 for a handful of labels. (The test checks c, which
// is what bundle sizes its tables by, so that it does not crash itself.)
func TestReview45ListLabelHugeID(t *testing.T) {
	dir := t.TempDir()
	var j, c strings.Builder
	c.WriteString("i,labels\n")
	for i := range 400 {
		l := fmt.Sprintf("[%d, %d]", i%3, 3+i%2)
		if i == 5 {
			l = "[2000000000]"
		}
		fmt.Fprintf(&j, `{"labels": %s}`+"\n", l)
		fmt.Fprintf(&c, "%d,\"%s\"\n", i, l)
	}
	for _, f := range []struct{ name, text, arg string }{
		{"big.jsonl", j.String(), ""}, {"big.csv", c.String(), ":labels"},
	} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
		li, err := readLabels(p+f.arg, false)
		if err == nil && li.c > 1<<24 {
			t.Errorf("%s: a list holding 2000000000 among the labels 0..4: c = %d labels, which bundle allocates tables for (out of memory, a fatal error); want a refusal naming row 6", f.name, li.c)
		}
	}
}

// TestReview45JSONLListIntegerSpellings (2f1c735, low): one label a row,
// JSON lines read 1e0 and 3.0 as the integers 1 and 3 (jsonlIDs: "1e0 is
// 1"); lists of ids refuse them, "no integer label ccs can read (label
// numbers are integers below 2^31 …)", which 3.0 is. Expected: the lists
// read as their integers, as one label a row is.
func TestReview45JSONLListIntegerSpellings(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, `{"labels": [%d.0, 3.0]}`+"\n", i%3)
	}
	p := filepath.Join(dir, "ids.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readLabels(p, false); err != nil {
		t.Errorf("lists [0.0, 3.0], …: %v\nwant the ids 0..3, as {\"labels\": 3.0} is read as 3", err)
	}
}

// TestReview45JSONLNullItemMissingLabels (2f1c735, low): a null among a
// row's names (["joy", null], as datasets writes a missing entry) is
// refused outright — "lists null: labels are names or integers" — even
// with -missing-labels drop or class, and the message does not name the
// flag. Python's ccs.bundle(labels=lists) takes None in a list by
// missing_labels ("drop" leaves it out, "class" makes it a label), and a
// Parquet list column's null item is left out (table.ColumnLabelSets).
// Expected: -missing-labels drop reads it as no label (or, without the
// flag, a refusal that names -missing-labels).
func TestReview45JSONLNullItemMissingLabels(t *testing.T) {
	dir := t.TempDir()
	emb, hot := review45Rows(400, 4, 5)
	names := []string{"anger", "fear", "grief", "joy", "love"}
	var lines []any
	for i := range emb {
		l := []any{}
		for j, x := range hot[i] {
			if x == 1 {
				l = append(l, names[j])
			}
		}
		if i%50 == 3 {
			l = append(l, nil)
		}
		lines = append(lines, map[string]any{"embedding": emb[i], "labels": l})
	}
	p := filepath.Join(dir, "rows.jsonl")
	review45Write(t, p, lines)
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p + ":embedding", "-labels", p + ":labels", "-missing-labels", "drop",
		"-k", "3", "-kneg", "3", "-allow-fewer", "-seed", "1", "-out", filepath.Join(dir, "out")})
	if err != nil {
		t.Errorf("[\"joy\", null] with -missing-labels drop: %v\nwant the null left out of the row's labels, as Python's missing_labels=\"drop\" and a Parquet list column do", err)
	}
}
