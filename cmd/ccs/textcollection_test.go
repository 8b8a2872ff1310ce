package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestTextCollection: -db reads a text table or JSON lines as -embeddings
// does — a user who bundled from datasets' to_json has no .npy to give
// compare's, evaluate's, retrieve's and serve's -db — with the hits, row
// for row and score for score, of the same rows in an .npz; ?ids=NAME
// names a column of integer ids (the hits' ids) or of strings (their
// keys), left out of the embedding.
func TestTextCollection(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	db := filepath.Join(dir, "test.npz")
	b, err := bundle.Read(db)
	if err != nil {
		t.Fatal(err)
	}
	var csv, jsonl strings.Builder
	csv.WriteString("doc,name")
	for j := range b.D {
		fmt.Fprintf(&csv, ",dim_%d", j)
	}
	csv.WriteString("\n")
	for i := range b.N {
		row := b.Anchors[i*b.D : (i+1)*b.D]
		fmt.Fprintf(&csv, "%d,passage-%03d", 1000+i, i)
		for _, x := range row {
			csv.WriteString("," + strconv.FormatFloat(float64(x), 'g', -1, 32))
		}
		csv.WriteString("\n")
		e, _ := json.Marshal(row)
		fmt.Fprintf(&jsonl, `{"doc": %d, "name": "passage-%03d", "embedding": %s}`+"\n", 1000+i, i, e)
	}
	for name, text := range map[string]string{"docs.csv": csv.String(), "docs.jsonl": jsonl.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type hit struct {
		ID    int64   `json:"id"`
		Key   *string `json:"key"`
		Row   int     `json:"row"`
		Score float64 `json:"score"`
	}
	retrieve := func(dbArg string) []hit {
		t.Helper()
		out, err := ccs("retrieve", "-set", set, "-anchor-index", "3", "-json", "-db", dbArg)
		if err != nil {
			t.Fatalf("-db %s: %v", dbArg, err)
		}
		var doc struct{ Hits []hit }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Hits
	}
	plain := retrieve(db)
	if len(plain) < 2 {
		t.Fatalf("%d hits: want a few", len(plain))
	}
	for _, c := range []struct {
		db   string
		ids  func(row int) (int64, string) // the hit's id and key
		keys bool
	}{
		{filepath.Join(dir, "docs.jsonl") + ":embedding", func(r int) (int64, string) { return int64(r), "" }, false},
		{filepath.Join(dir, "docs.jsonl") + "?ids=doc", func(r int) (int64, string) { return int64(1000 + r), "" }, false},
		{filepath.Join(dir, "docs.jsonl") + "?ids=name", func(r int) (int64, string) { return int64(r), fmt.Sprintf("passage-%03d", r) }, true},
		{filepath.Join(dir, "docs.csv") + "?ids=doc", func(r int) (int64, string) { return int64(1000 + r), "" }, false},
		{filepath.Join(dir, "docs.csv") + ":dim_*?ids=name", func(r int) (int64, string) { return int64(r), fmt.Sprintf("passage-%03d", r) }, true},
	} {
		got := retrieve(c.db)
		if len(got) != len(plain) {
			t.Fatalf("-db %s: %d hits, the .npz's %d", c.db, len(got), len(plain))
		}
		for i, h := range got {
			p := plain[i]
			id, key := c.ids(p.Row)
			if h.Row != p.Row || h.Score != p.Score || h.ID != id || (h.Key != nil) != c.keys || c.keys && *h.Key != key {
				t.Errorf("-db %s: hit %d: %+v (key %v); want the .npz's row %d, score %v, id %d, key %q", c.db, i, h, deref(h.Key), p.Row, p.Score, id, key)
			}
		}
	}
	// What was read as the embedding, and left out, is said, as for -embeddings.
	var stderr strings.Builder
	if err := run(io.Discard, &stderr, []string{"retrieve", "-set", set, "-anchor-index", "3", "-db", filepath.Join(dir, "docs.jsonl")}); err != nil ||
		!strings.Contains(stderr.String(), `docs.jsonl: converted on reading: JSON lines: 60 rows; the field "embedding" read as the embedding`) {
		t.Errorf("retrieve -db docs.jsonl: %v, stderr %q; want the reading's note", err, stderr.String())
	}
	if _, err := ccs("retrieve", "-set", set, "-anchor-index", "3", "-db", filepath.Join(dir, "docs.csv")+":dim_*?ids=nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("?ids= a column not there: %v", err)
	}
}

// TestTextCollectionIDColumn: a column or field named id, ids or _id (as
// BEIR's corpus names it) is a text collection's ids without ?ids=, as a
// Parquet table's is; one with a repeat is refused, not left for the row
// numbers; a table without one has the row numbers; a .txt of ids given
// as -db is told where ids go.
func TestTextCollectionIDColumn(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	files := map[string]string{
		"beir.jsonl": `{"_id": "d1", "title": "a", "emb": [0.5, 1]}` + "\n" + `{"_id": "d2", "title": "b", "emb": [1.5, -1]}` + "\n",
		"ids.csv":    "id,x,y\n7,0.5,1\n9,1.5,-1\n",
		"fids.csv":   "id,x,y\n7.0,0.5,1\n9.0,1.5,-1\n",
		"zids.csv":   "id,x,y\n007,0.5,1\n9,1.5,-1\n",
		"dup.csv":    "id,x,y\n7,0.5,1\n7,1.5,-1\n",
		"none.csv":   "x,y\n0.5,1\n1.5,-1\n",
		"ids.txt":    "1\n2\n3\n",
	}
	for name, text := range files {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		ids  []int64
		keys []string
		err  string
	}{
		{"beir.jsonl", []int64{0, 1}, []string{"d1", "d2"}, ""},
		{"ids.csv", []int64{7, 9}, nil, ""},
		{"fids.csv", []int64{7, 9}, nil, ""},                  // pandas' integers that held a NaN
		{"zids.csv", []int64{0, 1}, []string{"007", "9"}, ""}, // "007" a key, as written
		{"none.csv", []int64{0, 1}, nil, ""},
		{"dup.csv", nil, nil, "7"},
		{"ids.txt", nil, nil, "a file of ids? ids go with ccs retrieve's -ids FILE"},
	} {
		col, _, err := readTextCollection(p(c.name), "", "")
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v; want an error with %q", c.name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case fmt.Sprint(col.IDs) != fmt.Sprint(c.ids) || fmt.Sprint(col.Keys) != fmt.Sprint(c.keys):
			t.Errorf("%s: ids %v keys %q; want %v %q", c.name, col.IDs, col.Keys, c.ids, c.keys)
		}
	}
}

// TestJSONLPairs: relevance pairs as JSON lines read as the same qrels
// TSV is — fields found by their qrels names, a score of 0 not relevant,
// the first line a pair whatever its ids — and a fault is named by the
// JSON-lines file's own line, past blank lines.
func TestJSONLPairs(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	files := map[string]string{
		"q.tsv":   "query-id\tcorpus-id\tscore\n0\t3\t1\n1\t4\t1\n2\t5\t0\n2\t6\t2\n",
		"q.jsonl": `{"query-id": 0, "corpus-id": 3, "score": 1}` + "\n\n" + `{"query-id": 1, "corpus-id": 4, "score": 1}` + "\n" + `{"query-id": 2, "corpus-id": 5, "score": 0}` + "\n" + `{"query-id": 2, "corpus-id": 6, "score": 2}` + "\n",
		"s.jsonl": `{"qid": 0, "doc_id": 3}` + "\n" + `{"qid": 1, "doc_id": 4}` + "\n",
		"n.jsonl": `{"query_id": 0, "doc_id": 3}` + "\n\n" + `{"query_id": 1, "doc_id": null}` + "\n",
		"x.jsonl": `{"a": 0, "b": 3}` + "\n",
	}
	for name, text := range files {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := readPairs(p("q.tsv"), &bundle.PairIDs{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readPairs(p("q.jsonl"), &bundle.PairIDs{})
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 3 {
		t.Errorf("JSON lines: %v, %v; the TSV's %v", got, err, want)
	}
	if got, err := readPairs(p("s.jsonl"), &bundle.PairIDs{}); err != nil || fmt.Sprint(got) != "[[0 3] [1 4]]" {
		t.Errorf("qid, doc_id, no score: %v, %v", got, err)
	}
	if got, err := readPairs(p("x.jsonl")+":a,b", &bundle.PairIDs{}); err != nil || fmt.Sprint(got) != "[[0 3]]" {
		t.Errorf("fields named: %v, %v", got, err)
	}
	if _, err := readPairs(p("n.jsonl"), &bundle.PairIDs{}); err == nil || !strings.Contains(err.Error(), `n.jsonl:3: "doc_id" is null`) {
		t.Errorf("a null id: %v", err)
	}
	if _, err := readPairs(p("x.jsonl"), &bundle.PairIDs{}); err == nil || !strings.Contains(err.Error(), "which fields hold the query's id and the relevant row's? name them") {
		t.Errorf("fields not found: %v", err)
	}
}
