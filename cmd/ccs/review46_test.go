package main

// A review of 73db2ef..603057f: each test failed at 603057f for the
// reason its comment gives.

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestH3QueryLabelsOwnTable: -query-labels naming the queries' own text
// table without a column (as -labels emb.csv takes the embeddings' own
// "label" column) is read by readNamedIDs(o.QueryLabels, "labels"),
// which finds "labels"/"label"; but the otherColumn the new code gives
// -queries' reader is named columnNames("", "query_labels") —
// "query_labels"/"query_label" —, so the queries' "label" column is
// not known as -query-labels' and is refused as a coordinate ("an id
// or labels read as a coordinate?"). (A column named "query_label" is
// the reverse: left out of the embedding, then not found by
// -query-labels' reader.)
func TestReview46QueryLabelsOwnTable(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 3))
	const nc, nq, d = 200, 90, 4
	var corpus, queries, qrels strings.Builder
	corpus.WriteString("id,e0,e1,e2,e3\n")
	for i := range nc {
		fmt.Fprintf(&corpus, "d%d,%.4f,%.4f,%.4f,%.4f\n", i, rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64())
	}
	queries.WriteString("id,e0,e1,e2,e3,label\n")
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for i := range nq {
		fmt.Fprintf(&queries, "q%d,%.4f,%.4f,%.4f,%.4f,%d\n", i, rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), i%3)
		fmt.Fprintf(&qrels, "q%d\td%d\t1\n", i, (i*7)%nc)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	for name, s := range map[string]string{"corpus.csv": corpus.String(), "queries.csv": queries.String(), "qrels.tsv": qrels.String()} {
		if err := os.WriteFile(in(name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"bundle", "-embeddings", in("corpus.csv"), "-ids", in("corpus.csv"), "-queries", in("queries.csv"),
		"-query-ids", in("queries.csv"), "-pairs", in("qrels.tsv"), "-k", "1", "-kneg", "2", "-out", in("out")}
	// Naming the column works: the files are fine.
	if err := run(io.Discard, io.Discard, append(args[:len(args):len(args)], "-query-labels", in("queries.csv")+":label")); err != nil {
		t.Fatalf("-query-labels queries.csv:label: %v", err)
	}
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, append(args[:len(args):len(args)], "-query-labels", in("queries.csv"), "-out", in("out2"))); err != nil {
		t.Errorf("-query-labels queries.csv (its column \"label\", as -labels emb.csv takes one): %v", err)
	}
}

// TestH3QueryIDsOwnCSVColumn: -queries queries.csv -query-ids
// queries.csv, its ids column "query_id". The queries' reader is given
// -query-ids' otherColumn named columnNames("", "query_ids") — query_ids,
// query_id, id, _id —, so it leaves "query_id" out of the embedding and
// says so (`left out: "query_id" (-query-ids)`); then readIDStrings reads
// the ids with what = "query ids" (a space: readCSVStrings, Parquet's
// tableColumn), whose names are "query ids"/"query id"/id/_id, and
// refuses: "which column holds the query ids?". The same queries as JSON
// lines (readJSONLValues, given the underscore form) are read.
func TestReview46QueryIDsOwnCSVColumn(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(4, 4))
	const nc, nq = 200, 90
	var corpus, queries, qrels strings.Builder
	corpus.WriteString("id,e0,e1,e2,e3\n")
	for i := range nc {
		fmt.Fprintf(&corpus, "d%d,%.4f,%.4f,%.4f,%.4f\n", i, rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64())
	}
	queries.WriteString("query_id,e0,e1,e2,e3\n")
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for i := range nq {
		fmt.Fprintf(&queries, "q%d,%.4f,%.4f,%.4f,%.4f\n", i, rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64())
		fmt.Fprintf(&qrels, "q%d\td%d\t1\n", i, (i*7)%nc)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	for name, s := range map[string]string{"corpus.csv": corpus.String(), "queries.csv": queries.String(), "qrels.tsv": qrels.String()} {
		if err := os.WriteFile(in(name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", in("corpus.csv"), "-ids", in("corpus.csv"), "-queries", in("queries.csv"),
		"-query-ids", in("queries.csv"), "-pairs", in("qrels.tsv"), "-k", "1", "-kneg", "2", "-out", in("out")})
	if err != nil {
		t.Errorf("-query-ids queries.csv (its column \"query_id\", which the queries' reader left out as -query-ids'): %v\n%s", err, stderr.String())
	}
}
