package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// user45bRAG writes a small RAG export into dir: passages (n rows, d
// coordinates) as an .npy with their ids "p-i" in ids.txt, queries (m
// rows) near 1–2 passages each as an .npy with ids "q-j" in query-ids.txt,
// and the BEIR qrels (query-id, corpus-id, score) as qrels.tsv; it returns
// the passages, row-major.
func user45bRAG(t *testing.T, dir string, n, m, d int) []float32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(45, 2))
	p := make([]float32, n*d)
	for i := range p {
		p[i] = float32(rng.NormFloat64())
	}
	q := make([]float32, m*d)
	var qrels, ids, qids strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for j := range m {
		r := (j * 7) % n
		for c := range d {
			q[j*d+c] = p[r*d+c] + float32(0.05*rng.NormFloat64())
		}
		fmt.Fprintf(&qrels, "q-%d\tp-%d\t1\n", j, r)
		if j%2 == 0 {
			fmt.Fprintf(&qrels, "q-%d\tp-%d\t1\n", j, (r+1)%n)
		}
		fmt.Fprintf(&qids, "q-%d\n", j)
	}
	for i := range n {
		fmt.Fprintf(&ids, "p-%d\n", i)
	}
	for name, text := range map[string]string{"qrels.tsv": qrels.String(), "ids.txt": ids.String(), "query-ids.txt": qids.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := bundle.WriteNPY(filepath.Join(dir, "passages.npy"), bundle.Float32(p, n, d)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(filepath.Join(dir, "queries.npy"), bundle.Float32(q, m, d)); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUser45bRepeatedNumericHeader: pandas names the columns of a frame
// made from an array 0, 1, …, so two part files joined with cat (or a
// header written again by an append) repeat a header line of numbers:
// ",doc_id,0,1,2". docs/your-data.md ("A text table") says such a line is
// refused and said to be a repeated header ("a line repeating the header,
// as part files joined with `cat` have … said to be such"); with named
// columns (dim_0 …) it is. With pandas' numeric names it is read as a
// row — the passage (0, 1, 2) — silently, and every row after it is one
// off: -db's hits name row r+1 for the user's passage r.
func TestUser45bRepeatedNumericHeader(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	b, err := bundle.Read(filepath.Join(dir, "test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, header := range []string{",doc_id,0,1,2", ",doc_id,dim_0,dim_1,dim_2"} {
		var csv strings.Builder
		csv.WriteString(header + "\n")
		for i := range b.N {
			if i == b.N/2 {
				csv.WriteString(header + "\n") // cat part-0.csv part-1.csv
			}
			fmt.Fprintf(&csv, "%d,doc-%d", i, i)
			for _, x := range b.Anchors[i*b.D : (i+1)*b.D] {
				csv.WriteString("," + strconv.FormatFloat(float64(x), 'g', -1, 32))
			}
			csv.WriteString("\n")
		}
		path := filepath.Join(dir, "docs.csv")
		if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := ccs("retrieve", "-set", set, "-anchor-index", "0", "-db", path)
		if err == nil || !strings.Contains(err.Error(), "header") {
			t.Errorf("header %q repeated on line %d: retrieve -db answered (%v):\n%s\nwant it refused as a line repeating the header", header, b.N/2+2, err, firstLines(out, 3))
		}
		_, err = ccs("bundle", "-embeddings", path, "-labels", filepath.Join(dir, "test.npz")+":labels", "-out", filepath.Join(dir, "b"))
		if err == nil || !strings.Contains(err.Error(), "repeating the header") {
			t.Errorf("header %q repeated: bundle -embeddings: %v; want it refused as a line repeating the header", header, err)
		}
	}
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// TestUser45bQrelsGzip: -pairs qrels.tsv.gz. ccs reads a gzip-compressed
// .csv/.tsv/.txt everywhere else (inputKind takes a .tsv.gz as text), but
// the qrels reader dispatches on the last extension, ".gz", and hands the
// file to the Arrow reader: "not a readable Arrow IPC stream or file:
// arrow/ipc: … message metadata length … exceeds limit". It should read
// as the .tsv does (or be refused saying to gunzip it).
func TestUser45bQrelsGzip(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	user45bRAG(t, dir, 200, 120, 4)
	raw, err := os.ReadFile(p("qrels.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(raw)
	w.Close()
	if err := os.WriteFile(p("qrels.tsv.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(pairs, out string) []string {
		return []string{"bundle", "-embeddings", p("passages.npy"), "-queries", p("queries.npy"), "-pairs", p(pairs),
			"-ids", p("ids.txt"), "-query-ids", p("query-ids.txt"), "-out", p(out), "-k", "1", "-kneg", "5"}
	}
	if err := run(io.Discard, io.Discard, args("qrels.tsv", "plain")); err != nil {
		t.Fatal(err)
	}
	err = run(io.Discard, io.Discard, args("qrels.tsv.gz", "gz"))
	if err != nil {
		if strings.Contains(err.Error(), "Arrow") {
			t.Fatalf("-pairs qrels.tsv.gz: %v\nwant it read as qrels.tsv (or refused saying to decompress it), not handed to the Arrow reader", err)
		}
		return // refused plainly: acceptable
	}
	for _, s := range []string{"fit", "cal", "test"} {
		a, _ := os.ReadFile(p("plain/" + s + ".npz"))
		b, _ := os.ReadFile(p("gz/" + s + ".npz"))
		if !bytes.Equal(a, b) {
			t.Errorf("%s.npz from qrels.tsv.gz differs from qrels.tsv's", s)
		}
	}
}

// TestUser45bQrelsJSONLines: relevance judgements exported as JSON lines
// ({"query_id": …, "doc_id": …, "score": 1}) are refused with
// "qrels.jsonl: .jsonl files hold no NumPy array" — which says nothing of
// what -pairs takes — while the same flag given a file without an
// extension answers that JSON lines, .jsonl, are a file type ccs wants.
// Either read them (as a table of query, row, score, by the names
// -pairs already knows: query_id, doc_id, score) or refuse them saying
// which formats -pairs reads.
func TestUser45bQrelsJSONLines(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	user45bRAG(t, dir, 200, 120, 4)
	raw, _ := os.ReadFile(p("qrels.tsv"))
	var jl strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(line, "\t")
		fmt.Fprintf(&jl, `{"query_id": %q, "doc_id": %q, "score": %s}`+"\n", f[0], f[1], f[2])
	}
	os.WriteFile(p("qrels.jsonl"), []byte(jl.String()), 0o644)
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("passages.npy"), "-queries", p("queries.npy"), "-pairs", p("qrels.jsonl"),
		"-ids", p("ids.txt"), "-query-ids", p("query-ids.txt"), "-out", p("rag"), "-k", "1", "-kneg", "5"})
	if err != nil && strings.Contains(err.Error(), "NumPy array") {
		t.Errorf("-pairs qrels.jsonl: %v\nwant JSON lines read as a qrels table, or a refusal that names what -pairs takes", err)
	}
}

// TestUser45bMisspeltColumnPandasCSV: a pandas export of an embedding
// frame (",query_id,0,1,2": an index, an id column, numeric column names)
// has a header, which -embeddings reads. README: "A mistyped name — … a
// label or column of your data — is answered with the nearest". A column
// misspelt is answered:
//   - by -labels with "its first line holds numbers (, query_id … ), no
//     names — a file without a header has no column of a name", which is
//     false (the header is there, query_id in it) and names no nearest;
//   - by -ids / -query-ids / -db's ?ids= with the whole header (386
//     names for a 384-dim export) and no nearest, where the same mistake
//     in JSON lines gets `did you mean "doc_id"?`.
func TestUser45bMisspeltColumnPandasCSV(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	user45bRAG(t, dir, 200, 120, 4)
	q, err := bundle.ReadNPY(p("queries.npy"))
	if err != nil {
		t.Fatal(err)
	}
	qf := q.F32
	var csv strings.Builder
	csv.WriteString(",query_id,0,1,2,3\n")
	for j := range 120 {
		fmt.Fprintf(&csv, "%d,q-%d", j, j)
		for _, x := range qf[j*4 : (j+1)*4] {
			csv.WriteString("," + strconv.FormatFloat(float64(x), 'g', -1, 32))
		}
		csv.WriteString("\n")
	}
	os.WriteFile(p("queries.csv"), []byte(csv.String()), 0o644)
	// The spelling right: read.
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("passages.npy"), "-queries", p("queries.csv"), "-pairs", p("qrels.tsv"),
		"-ids", p("ids.txt"), "-query-ids", p("queries.csv") + ":query_id", "-out", p("ok"), "-k", "1", "-kneg", "5"}); err != nil {
		t.Fatal(err)
	}
	err = run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("passages.npy"), "-queries", p("queries.csv"), "-pairs", p("qrels.tsv"),
		"-ids", p("ids.txt"), "-query-ids", p("queries.csv") + ":query_di", "-out", p("x"), "-k", "1", "-kneg", "5"})
	if err == nil || !strings.Contains(err.Error(), `did you mean "query_id"`) {
		t.Errorf("-query-ids queries.csv:query_di: %v\nwant the nearest column, query_id", err)
	}
	err = run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("queries.csv"), "-labels", p("queries.csv") + ":query_di", "-out", p("y")})
	if err == nil || strings.Contains(err.Error(), "without a header") || !strings.Contains(err.Error(), `did you mean "query_id"`) {
		t.Errorf("-labels queries.csv:query_di: %v\nwant the nearest column, query_id (the file has a header: -embeddings read it)", err)
	}
}
