package main

// Reproductions of a new user's findings on BEIR-style retrieval data:
// passages and queries with string ids, qrels as a TSV. Each test failed
// at 73db2ef for the reason its comment gives.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// h1Data writes a small BEIR-like data set into dir: passages.npy (np,
// d) and queries.npy (nq, d), unit norm, each query near its relevant
// passage; passage-ids.txt ("doc-00017") and query-ids.txt ("q0003") in
// row order; qrels.tsv (query-id, corpus-id, score, with a header); and
// the same embeddings as JSON lines and CSV with an "_id" field/column,
// as BEIR's corpus.jsonl names its ids.
func h1Data(t *testing.T, dir string) {
	t.Helper()
	const np, nq, d, topics = 400, 120, 8, 10
	rng := rand.New(rand.NewPCG(1, 1))
	centres := make([][]float64, topics)
	for i := range centres {
		centres[i] = make([]float64, d)
		for k := range d {
			centres[i][k] = rng.NormFloat64()
		}
	}
	unit := func(v []float64) []float32 {
		var s float64
		for _, x := range v {
			s += x * x
		}
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x / math.Sqrt(s))
		}
		return out
	}
	p := make([][]float32, np)
	for i := range p {
		v := make([]float64, d)
		for k := range d {
			v[k] = centres[i%topics][k] + 0.3*rng.NormFloat64()
		}
		p[i] = unit(v)
	}
	q := make([][]float32, nq)
	var qrels strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for i := range q {
		rel := rng.IntN(np)
		v := make([]float64, d)
		for k := range d {
			v[k] = float64(p[rel][k]) + 0.1*rng.NormFloat64()
		}
		q[i] = unit(v)
		fmt.Fprintf(&qrels, "q%04d\tdoc-%05d\t1\n", i, rel)
		fmt.Fprintf(&qrels, "q%04d\tdoc-%05d\t0\n", i, (rel+7)%np)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("qrels.tsv", qrels.String())
	for _, set := range []struct {
		name, prefix, format, idFile string
		rows                         [][]float32
	}{{"passages", "corpus", "doc-%05d", "passage-ids.txt", p}, {"queries", "queries", "q%04d", "query-ids.txt", q}} {
		flat := make([]float32, 0, len(set.rows)*d)
		var ids, jsonl, csv strings.Builder
		csv.WriteString("_id")
		for k := range d {
			fmt.Fprintf(&csv, ",e%d", k)
		}
		csv.WriteString("\n")
		for i, r := range set.rows {
			flat = append(flat, r...)
			id := fmt.Sprintf(set.format, i)
			ids.WriteString(id + "\n")
			e := make([]string, d)
			for k, x := range r {
				e[k] = strconv.FormatFloat(float64(x), 'g', -1, 32)
			}
			fmt.Fprintf(&jsonl, `{"_id": %q, "text": "text of %s", "embedding": [%s]}`+"\n", id, id, strings.Join(e, ", "))
			fmt.Fprintf(&csv, "%s,%s\n", id, strings.Join(e, ","))
		}
		if err := bundle.WriteNPY(filepath.Join(dir, set.name+".npy"), bundle.Float32(flat, len(set.rows), d)); err != nil {
			t.Fatal(err)
		}
		write(set.idFile, ids.String())
		write(set.prefix+".jsonl", jsonl.String())
		write(set.prefix+".csv", csv.String())
	}
}

func h1Bundle(dir string, stderr io.Writer, out string, args ...string) error {
	return run(io.Discard, stderr, append(append([]string{"bundle"}, args...), "-k", "1", "-kneg", "20", "-out", filepath.Join(dir, out)))
}

func h1SameBundles(t *testing.T, what, a, b string) {
	t.Helper()
	for _, split := range []string{"fit", "val", "cal", "test"} {
		x, _ := os.ReadFile(filepath.Join(a, split+".npz"))
		y, err := os.ReadFile(filepath.Join(b, split+".npz"))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s: %s.npz differs from the .npy and ids files' (%v)", what, split, err)
		}
	}
}

// TestH1IdsUnnamedIDField: BEIR's corpus.jsonl names each passage's id
// "_id". your-data.md §6 says of -ids and -query-ids from tables "a
// column named id or _id, as BEIR's corpus and queries tables name
// theirs, is taken without :COLUMN", and -db corpus.jsonl does take
// "_id" unnamed (the hits carry the doc ids). But -ids corpus.jsonl
// (and -ids corpus.csv, -query-ids queries.jsonl) is refused: "which
// field holds the ids? give corpus.jsonl:FIELD (the fields: _id, text,
// embedding)" — only Parquet takes "_id" unnamed (tableColumn), the
// JSON-lines and CSV readers look for "ids"/"id" (and "query_ids" …)
// alone.
func TestH1IdsUnnamedIDField(t *testing.T) {
	dir := t.TempDir()
	h1Data(t, dir)
	in := func(name string) string { return filepath.Join(dir, name) }
	if err := h1Bundle(dir, io.Discard, "npy", "-embeddings", in("passages.npy"), "-queries", in("queries.npy"), "-pairs", in("qrels.tsv"),
		"-ids", in("passage-ids.txt"), "-query-ids", in("query-ids.txt")); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".jsonl", ".csv"} {
		var stderr bytes.Buffer
		err := h1Bundle(dir, &stderr, "unnamed"+ext, "-embeddings", in("corpus"+ext), "-queries", in("queries"+ext), "-pairs", in("qrels.tsv"),
			"-ids", in("corpus"+ext), "-query-ids", in("queries"+ext))
		if err != nil {
			t.Errorf("-ids corpus%s -query-ids queries%s (their only id field is BEIR's \"_id\"): %v", ext, ext, err)
			continue
		}
		h1SameBundles(t, "-ids corpus"+ext, filepath.Join(dir, "npy"), filepath.Join(dir, "unnamed"+ext))
	}
}

// TestH1AnchorJSONL: ccs retrieve -anchor queries.csv reads a text
// table of queries (the note says so) and answers each; -anchor
// queries.jsonl — the same queries as BEIR-style JSON lines, which
// -embeddings, -queries and -db all read — is refused with
// "queries.jsonl: .jsonl files hold no NumPy array", which reads as if
// the user had claimed one and says nothing of what -anchor takes.
func TestH1AnchorJSONL(t *testing.T) {
	dir := t.TempDir()
	h1Data(t, dir)
	in := func(name string) string { return filepath.Join(dir, name) }
	if err := h1Bundle(dir, io.Discard, "rag", "-embeddings", in("passages.npy"), "-queries", in("queries.npy"), "-pairs", in("qrels.tsv"),
		"-ids", in("passage-ids.txt"), "-query-ids", in("query-ids.txt")); err != nil {
		t.Fatal(err)
	}
	set := in("ball.json")
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", in("rag/cal.npz"), "-alpha", "0.1", "-out", set}); err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{}
	for _, anchor := range []string{"queries.csv", "queries.jsonl"} {
		var out bytes.Buffer
		err := run(&out, io.Discard, []string{"retrieve", "-set", set, "-db", in("passages.npy"), "-anchor", in(anchor), "-limit", "3"})
		if err != nil {
			t.Errorf("retrieve -anchor %s: %v", anchor, err)
			continue
		}
		answers[anchor] = out.String()
	}
	if a, b := answers["queries.csv"], answers["queries.jsonl"]; a != "" && b != "" && a != b {
		t.Errorf("-anchor queries.jsonl answers otherwise than -anchor queries.csv")
	}
}

// TestH1PairsTSVColumnsByName: your-data.md §6 on BEIR's qrels ("a
// .tsv.gz too, or JSON lines of the same … query_id, qid, doc_id, pid
// and the like found by their names, -pairs FILE:QUERY,ROW[,SCORE]
// otherwise"). A qrels TSV whose header names its columns in another
// order (corpus-id, query-id, score: a pandas export with the columns
// reordered) is refused, rightly, with "write them in that order"; but
// naming its columns as the docs say is refused too ("a text file of
// pairs is read by position … and has no columns to pick"), though the
// same columns in JSON lines are found by their names, and qrels.parquet
// takes FILE:QUERY,ROW,SCORE.
func TestH1PairsTSVColumnsByName(t *testing.T) {
	dir := t.TempDir()
	h1Data(t, dir)
	in := func(name string) string { return filepath.Join(dir, name) }
	common := []string{"-embeddings", in("passages.npy"), "-queries", in("queries.npy"), "-ids", in("passage-ids.txt"), "-query-ids", in("query-ids.txt")}
	if err := h1Bundle(dir, io.Discard, "tsv", append([]string{"-pairs", in("qrels.tsv")}, common...)...); err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(in("qrels.tsv"))
	var swapped strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(src)), "\n") {
		f := strings.Split(line, "\t")
		swapped.WriteString(f[1] + "\t" + f[0] + "\t" + f[2] + "\n")
	}
	if err := os.WriteFile(in("swapped.tsv"), []byte(swapped.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	err := h1Bundle(dir, io.Discard, "named", append([]string{"-pairs", in("swapped.tsv") + ":query-id,corpus-id,score"}, common...)...)
	if err != nil {
		t.Fatalf("-pairs swapped.tsv:query-id,corpus-id,score (its header: corpus-id, query-id, score): %v", err)
	}
	h1SameBundles(t, "swapped.tsv:query-id,corpus-id,score", filepath.Join(dir, "tsv"), filepath.Join(dir, "named"))
}

// TestUser46Messages: the rest of the retrieval user's findings, each a
// message that named the wrong thing or said too little: an empty qrels
// file and a header alone said "no pairs"; a header of two columns took
// every pair as relevant without a word; ids of the other side's count
// did not suggest the swap, nor name the rows they were counted against;
// -kneg beyond the rows was blamed on the qrels file; a repeated id in
// retrieve -ids was not given its lines; the queries' own ids field was
// not said to be -query-ids'; and -db's note named a flag, "?ids", that
// no one typed.
func TestUser46Messages(t *testing.T) {
	dir := t.TempDir()
	h1Data(t, dir)
	in := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, text string) string {
		if err := os.WriteFile(in(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return in(name)
	}
	qrels, _ := os.ReadFile(in("qrels.tsv"))
	var two strings.Builder
	two.WriteString("query-id\tcorpus-id\n")
	for _, l := range strings.Split(strings.TrimSpace(string(qrels)), "\n")[1:] {
		if f := strings.Split(l, "\t"); f[2] == "1" {
			two.WriteString(f[0] + "\t" + f[1] + "\n")
		}
	}
	ids, _ := os.ReadFile(in("passage-ids.txt"))
	lines := strings.SplitAfter(string(ids), "\n")
	dup := write("dup.txt", strings.Join(append(append(append([]string{}, lines[:5]...), lines[4]), lines[6:]...), ""))
	base := []string{"-embeddings", in("passages.npy"), "-queries", in("queries.npy"), "-ids", in("passage-ids.txt"), "-query-ids", in("query-ids.txt")}
	with := func(args ...string) []string {
		out := append([]string{}, base...)
		for i := 0; i < len(args); i += 2 {
			if j := slices.Index(out, args[i]); j >= 0 {
				out[j+1] = args[i+1]
			} else {
				out = append(out, args[i], args[i+1])
			}
		}
		return out
	}
	for _, c := range []struct {
		name   string
		args   []string
		err    string // "" for none
		stderr string
	}{
		{"empty qrels", with("-pairs", write("empty.tsv", "")), "empty.tsv: empty: no pairs", ""},
		{"a header alone", with("-pairs", write("header.tsv", "query-id\tcorpus-id\tscore\n")), "header.tsv: a header line (line 1: query-id, corpus-id, score) and no pairs below it", ""},
		{"two columns", with("-pairs", write("two.tsv", two.String())), "", "two columns (query-id, corpus-id), no scores: every pair is taken as relevant"},
		{"ids swapped", with("-pairs", in("qrels.tsv"), "-ids", in("query-ids.txt"), "-query-ids", in("passage-ids.txt")),
			"passage-ids.txt: 400 query ids for 120 rows (the rows of -queries " + in("queries.npy") + "): as many as the other side's rows — -ids and -query-ids swapped?", ""},
		{"-kneg beyond the rows", append(with("-pairs", in("qrels.tsv")), "-kneg", "5000"), "bundle: 400 rows, too few for 5000 negatives per query (-kneg", ""},
		{"the queries' own ids", []string{"-embeddings", in("corpus.jsonl"), "-queries", in("queries.jsonl"), "-pairs", in("qrels.tsv"), "-ids", in("corpus.jsonl"), "-query-ids", in("queries.jsonl")},
			"", `left out: "_id" (-query-ids), "text"`},
	} {
		var stderr bytes.Buffer
		args := append(append([]string{"bundle"}, c.args...), "-k", "1", "-out", in("out-"+strings.ReplaceAll(c.name, " ", "-")))
		if !slices.Contains(args, "-kneg") {
			args = append(args, "-kneg", "20")
		}
		err := run(io.Discard, &stderr, args)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		case c.err != "" && strings.HasPrefix(err.Error(), in("qrels.tsv")):
			t.Errorf("%s: %v: blamed on the qrels file", c.name, err)
		case !strings.Contains(stderr.String(), c.stderr):
			t.Errorf("%s: stderr %q, want %q", c.name, stderr.String(), c.stderr)
		}
	}
	set := in("ball.json")
	if err := h1Bundle(dir, io.Discard, "rag", with("-pairs", in("qrels.tsv"))...); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", in("rag/cal.npz"), "-alpha", "0.1", "-out", set}); err != nil {
		t.Fatal(err)
	}
	err := run(io.Discard, io.Discard, []string{"retrieve", "-set", set, "-db", in("passages.npy"), "-ids", dup, "-anchor", in("queries.npy"), "-limit", "1"})
	if want := `row id "doc-00004" is given twice (rows 4 and 5, numbered from 0 — in a text file, its lines 5 and 6)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("retrieve -ids with a repeat: %v, want %q", err, want)
	}
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"retrieve", "-set", set, "-db", in("corpus.csv"), "-anchor", in("queries.npy"), "-limit", "1"}); err != nil || !strings.Contains(stderr.String(), `left out: "_id" (the ids)`) {
		t.Errorf("retrieve -db corpus.csv: %v, stderr %q", err, stderr.String())
	}
}
