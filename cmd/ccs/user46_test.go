package main

// Reproductions of a new user's findings on BEIR-style retrieval data
// (REPORT.md in the clone's root): passages and queries with string ids,
// qrels as a TSV. Each test fails on the commit the report was written
// against, for the reason its comment gives.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
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
