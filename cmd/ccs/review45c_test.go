package main

// Review of 00e3768..4d4fdfa (03cd9c2, fc33573, 7fc323b, 9f09394): each
// test fails on the reviewed commits and names the fault it shows.

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// rv45cWrite writes files into dir.
func rv45cWrite(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rv45cRows is n rows of d normal coordinates, each formatted by row(i, x).
func rv45cRows(n, d int, row func(i int, x []float64) string) string {
	r := rand.New(rand.NewPCG(45, 3))
	var b strings.Builder
	for i := range n {
		x := make([]float64, d)
		for j := range x {
			x[j] = r.NormFloat64()
		}
		b.WriteString(row(i, x))
	}
	return b.String()
}

// rv45cJoin formats x with %.5f, separated by sep.
func rv45cJoin(x []float64, sep string) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = fmt.Sprintf("%.5f", v)
	}
	return strings.Join(s, sep)
}

type rv45cHit struct {
	ID  int64   `json:"id"`
	Key *string `json:"key"`
	Row int     `json:"row"`
}

// rv45cRetrieve runs retrieve -json around the collection's row 3 and
// returns its hits.
func rv45cRetrieve(t *testing.T, set, db string) ([]rv45cHit, error) {
	t.Helper()
	out, err := ccs("retrieve", "-set", set, "-anchor-index", "3", "-json", "-db", db)
	if err != nil {
		return nil, err
	}
	var doc struct{ Hits []rv45cHit }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return doc.Hits, nil
}

// HIGH, 7fc323b (textcollection.go, idColumns): a text -db without ?ids=
// looks for a column "id", "ids" or "_id" with readIDStrings(path+":id"),
// and readIDStrings refuses any column of a .txt ("a text file of ids has
// no columns"), an error that is neither "no column" nor "no field": so
// every .txt collection — np.savetxt's blank-separated table, the most
// common text export of an array, with or without a header line — is
// refused by retrieve, evaluate, compare, serve, calibrate's reference
// pool and collection load. 03cd9c2 read them; docs/serve.md and
// docs/your-data.md name .txt among -db's formats.
func TestReview45cDBTxtTableRefused(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir) // d = 3
	rv45cWrite(t, dir, map[string]string{
		"emb.txt":        rv45cRows(40, 3, func(_ int, x []float64) string { return rv45cJoin(x, " ") + "\n" }),
		"emb_header.txt": "x y z\n" + rv45cRows(40, 3, func(_ int, x []float64) string { return rv45cJoin(x, " ") + "\n" }),
	})
	for _, name := range []string{"emb.txt", "emb_header.txt"} {
		hits, err := rv45cRetrieve(t, set, filepath.Join(dir, name))
		if err != nil {
			t.Errorf("retrieve -db %s: %v; want the table read as -embeddings reads it (03cd9c2 did)", name, err)
			continue
		}
		if len(hits) == 0 || hits[0].Row != 3 {
			t.Errorf("retrieve -db %s: hits %v; want row 3 first", name, hits)
		}
	}
}

// MEDIUM, 7fc323b (inputs.go, numberRows' split): a .txt multi-hot matrix
// written with np.savetxt(path, M, fmt="%d", delimiter=", ") — "0, 1, 1" —
// is split at blanks first into "0," "1," "1", which are no numbers, so
// the lines are no matrix and each combination becomes one class,
// silently (the bundles say "3 classes", no "several labels a row"
// note). 00e3768 read it as the matrix. A ";" separator, which numberRows
// split at before, is likewise now one class per combination.
func TestReview45cSavetxtMatrixCommaSpace(t *testing.T) {
	dir := t.TempDir()
	rows := [][]int{{1, 1, 0}, {0, 1, 1}, {1, 0, 1}, {1, 0, 0}}
	for _, sep := range []string{", ", ";"} {
		var b strings.Builder
		for i := range 40 {
			r := rows[i%len(rows)]
			fmt.Fprintf(&b, "%d%s%d%s%d\n", r[0], sep, r[1], sep, r[2])
		}
		p := filepath.Join(dir, "labels.txt")
		rv45cWrite(t, dir, map[string]string{"labels.txt": b.String()})
		li, err := readLabels(p, false)
		if err != nil {
			t.Errorf("separator %q: %v", sep, err)
			continue
		}
		if li.sets == nil || li.c != 3 {
			t.Errorf("separator %q: %d classes (names %q), sets %v; want a multi-hot matrix of 3 columns, as 00e3768 read it", sep, len(li.names), li.names, li.sets != nil)
		}
	}
}

// MEDIUM, 9f09394 (jsonl.go, readJSONLPairs): the fields are picked from
// the first line's keys alone. A first line without a score (a writer
// that omits a null field — Spark's write.json — or a qrels whose first
// pair was written without one) makes the whole file two columns: every
// later line's score is ignored, and pairs scored 0 are read as relevant,
// silently. A score missing on a later line is refused (noField), so the
// same field is read or not by where it is missing.
func TestReview45cJSONLPairsScoreFromFirstLineOnly(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	relevant := 0
	for j := range 10 {
		if j == 0 {
			fmt.Fprintf(&b, `{"query-id": %d, "corpus-id": %d}`+"\n", j, j)
		} else {
			fmt.Fprintf(&b, `{"query-id": %d, "corpus-id": %d, "score": 1}`+"\n", j, j)
		}
		relevant++
		fmt.Fprintf(&b, `{"query-id": %d, "corpus-id": %d, "score": 0}`+"\n", j, j+10)
	}
	p := filepath.Join(dir, "qrels.jsonl")
	rv45cWrite(t, dir, map[string]string{"qrels.jsonl": b.String()})
	pairs, err := readJSONLPairs(p, "", &bundle.PairIDs{})
	if err != nil {
		return // refusing the file is fine
	}
	for _, pr := range pairs {
		if pr[1] >= 10 {
			t.Fatalf("%d pairs read, among them (%d, %d), scored 0 in the file: the scores of every line but the first were ignored; want the %d pairs scored 1 (or the file refused)", len(pairs), pr[0], pr[1], relevant)
		}
	}
}

// MEDIUM, 7fc323b (textcollection.go, idColumns): the "id" field is taken
// for the ids without ?ids= — the note says `left out: "id" (?ids)` —
// but where a line lacks it, readIDStrings' "no field \"id\"" is taken for
// a file without one, and the collection is read with the row numbers
// for ids, silently; -db FILE?ids=id refuses the same file at that line.
func TestReview45cDBJSONLMissingIDDropsIDs(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	text := rv45cRows(40, 3, func(i int, x []float64) string {
		e, _ := json.Marshal(x)
		if i == 20 {
			return fmt.Sprintf(`{"embedding": %s}`+"\n", e)
		}
		return fmt.Sprintf(`{"id": "doc%d", "embedding": %s}`+"\n", i, e)
	})
	rv45cWrite(t, dir, map[string]string{"docs.jsonl": text})
	db := filepath.Join(dir, "docs.jsonl")
	if _, err := rv45cRetrieve(t, set, db+"?ids=id"); err == nil {
		t.Fatalf("?ids=id: read; the test assumes it refuses line 21")
	}
	hits, err := rv45cRetrieve(t, set, db)
	if err != nil {
		return // refused, as ?ids=id is: fine
	}
	if len(hits) > 0 && hits[0].Key == nil {
		t.Errorf("-db docs.jsonl: hits carry row numbers (first %+v), the \"id\" field dropped without a word though its note says it is the ids; want line 21's missing id refused, as ?ids=id refuses it", hits[0])
	}
}

// MEDIUM, 7fc323b (textcollection.go, idColumns): np.savetxt(path, A,
// delimiter=",", header="id,x,y,z") writes the header as a comment,
// "# id,x,y,z", which -embeddings reads as the header (the note: `left
// out: "id" (?ids)`), but readCSVStrings does not: its "no column" makes
// the ids the row numbers, silently (and ?ids=id is refused, naming the
// first data line as the columns).
func TestReview45cDBCommentHeaderIDsDropped(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	text := "# id,x,y,z\n" + rv45cRows(40, 3, func(i int, x []float64) string {
		return fmt.Sprintf("%d,%s\n", 100+i, rv45cJoin(x, ","))
	})
	rv45cWrite(t, dir, map[string]string{"docs.csv": text})
	hits, err := rv45cRetrieve(t, set, filepath.Join(dir, "docs.csv"))
	if err != nil {
		return // refused: fine
	}
	if len(hits) == 0 || hits[0].ID != int64(100+hits[0].Row) {
		t.Errorf("-db docs.csv (header \"# id,x,y,z\"): first hit %+v; want its id 100+row, the \"id\" column the note says it took", hits[:min(1, len(hits))])
	}
}

// LOW, 7fc323b (jsonl.go, nullID): a null among JSON-lines label numbers
// beside a -1 is read as -2, named null only where -label-names is not
// given: with -label-names, the refusal names "-2", a value the file never
// holds (and -missing-labels class names the label "-2" in the manifest);
// retrieve -labels names it "-2" too (readRowLabels).
func TestReview45cJSONLNullBesideMinusOneNamedMinusTwo(t *testing.T) {
	dir := t.TempDir()
	var labels strings.Builder
	for i := range 300 {
		l := fmt.Sprintf("[%d, %d]", i%4, (i+1)%4)
		switch i % 10 {
		case 0:
			l = "[null]"
		case 5:
			l = "[-1]"
		}
		fmt.Fprintf(&labels, `{"labels": %s}`+"\n", l)
	}
	rv45cWrite(t, dir, map[string]string{
		"emb.txt":    rv45cRows(300, 4, func(_ int, x []float64) string { return rv45cJoin(x, " ") + "\n" }),
		"l.jsonl":    labels.String(),
		"names4.txt": "a\nb\nc\nd\n",
	})
	p := func(s string) string { return filepath.Join(dir, s) }
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.txt"), "-labels", p("l.jsonl") + ":labels", "-label-names", p("names4.txt"), "-out", p("out"), "-k", "2"})
	if err == nil || strings.Contains(err.Error(), `"-2"`) || !strings.Contains(err.Error(), "null") {
		t.Errorf("bundle -label-names: %v; want the missing marks refused naming null, as without -label-names, not \"-2\"", err)
	}
	rowLabels, _, err := readRowLabels(p("l.jsonl")+":labels", "", 300, "db")
	if err != nil {
		t.Fatal(err)
	}
	if got := rowLabels[0]; got == "-2" {
		t.Errorf("retrieve -labels: row 0 ([null]) labelled %q; want null (bundle.NullMark), as ccs bundle names it", got)
	}
}

// LOW, 7fc323b (textcollection.go, D == 1): a text -db of one column of
// real numbers is refused as "a file of ids?", though -embeddings reads
// the same file (d = 1), an .npz collection of d = 1 serves a set
// calibrated on it, and 03cd9c2 read it. Only integers look like ids.
func TestReview45cDBOneColumnOfRealsRefused(t *testing.T) {
	dir := t.TempDir()
	text := "x\n" + rv45cRows(40, 1, func(_ int, x []float64) string { return rv45cJoin(x, ",") + "\n" })
	rv45cWrite(t, dir, map[string]string{"emb.csv": text})
	if _, err := readEmbeddings(filepath.Join(dir, "emb.csv"), false); err != nil {
		t.Fatalf("-embeddings: %v", err)
	}
	if _, _, err := readTextCollection(filepath.Join(dir, "emb.csv"), "", ""); err != nil {
		t.Errorf("-db emb.csv (a column of reals, as -embeddings reads it): %v; want d = 1", err)
	}
}
