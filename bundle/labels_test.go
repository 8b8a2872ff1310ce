package bundle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestStringsFromNumPy: string arrays as NumPy itself writes them (Debian's
// python3-numpy) — UTF-32 in either byte order, bytes, Fortran order, an
// .npz member — read as NumPy gives them back: trailing NULs gone,
// interior ones kept, every code point as written.
func TestStringsFromNumPy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := `
import sys, numpy as np
d = sys.argv[1]
u = np.array(["boot", "émeu", "", "a\x00b", "日本語", "😀x"])
np.save(d + "/u.npy", u)
np.save(d + "/ube.npy", u.astype(">U5"))
np.save(d + "/s.npy", np.array([b"boot", b"coat", b"", b"x\x00y"]))
np.save(d + "/f.npy", np.asfortranarray(np.array([["a", "bb", "ccc"], ["dd", "e", ""]])))
np.savez(d + "/z.npz", labels=u[:2])
print(u.dtype.str, u.astype(">U5").dtype.str)
`
	out, err := exec.Command("/usr/bin/python3", "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "<U4 >U5" {
		t.Fatalf("numpy wrote dtypes %q, want <U4 and >U5", got)
	}
	want := []string{"boot", "émeu", "", "a\x00b", "日本語", "😀x"}
	for _, c := range []struct {
		file string
		want []string
		kind string
	}{
		{"u.npy", want, "<U4"},
		{"ube.npy", want, ">U5"},
		{"s.npy", []string{"boot", "coat", "", "x\x00y"}, "|S4"},
		{"f.npy", []string{"a", "bb", "ccc", "dd", "e", ""}, "<U3"}, // C order
	} {
		a, err := ReadNPY(filepath.Join(dir, c.file))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if !slices.Equal(a.Str, c.want) || a.F32 != nil || a.I64 != nil || a.Kind() != c.kind {
			t.Errorf("%s: %q (kind %s, F32 %v, I64 %v), want %q (%s)", c.file, a.Str, a.Kind(), a.F32 != nil, a.I64 != nil, c.want, c.kind)
		}
	}
	z, err := ReadNPZ(filepath.Join(dir, "z.npz"))
	if err != nil || !slices.Equal(z["labels"].Str, want[:2]) {
		t.Errorf("z.npz: %q, %v", z["labels"].Str, err)
	}
}

// TestStringsRefused: string data that is not Unicode is an error naming
// the element; widths beyond the cap, or none, are unsupported dtypes;
// too little data is an error; and the readers that take numbers refuse
// strings by their dtype.
func TestStringsRefused(t *testing.T) {
	t.Parallel()
	utf32 := func(order binary.AppendByteOrder, units ...uint32) []byte {
		var b []byte
		for _, u := range units {
			b = order.AppendUint32(b, u)
		}
		return b
	}
	for _, c := range []struct {
		name, descr, shape string
		data               []byte
		want               string
	}{
		{"surrogate", "<U2", "(2,)", utf32(binary.LittleEndian, 'a', 0, 'b', 0xD800), "element [1]: code unit 1, 0xd800, is not a Unicode code point"},
		{"beyond U+10FFFF", ">U1", "(1,)", utf32(binary.BigEndian, 0x110000), "element [0]: code unit 0, 0x110000, is not a Unicode code point"},
		{"not UTF-8", "|S2", "(2,)", []byte("ok\xff\xfe"), `element [1] = "\xff\xfe" is not UTF-8`},
		{"short", "<U2", "(3,)", utf32(binary.LittleEndian, 'a', 'b', 'c'), "holds 1 of the 3 values"},
		{"no width", "<U0", "(1,)", nil, "is not supported"},
		{"too wide", "<U4097", "(1,)", nil, "is not supported"},
		{"too wide bytes", "|S16385", "(1,)", nil, "is not supported"},
		{"leading zero", "<U03", "(1,)", nil, "is not supported"},
		{"objects", "|O", "(1,)", nil, "is not supported"},
	} {
		data := append(npyHeader(c.descr, c.shape), c.data...)
		_, err := decodeNPY(bytes.NewReader(data), "labels", 0, int64(len(data)), true)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"labels"`) {
			t.Errorf("%s: error %v, want one naming the array and saying %q", c.name, err, c.want)
		}
	}
	// Strings where numbers belong; a request body's strings.
	data := append(npyHeader("<U1", "(2, 1)"), utf32(binary.LittleEndian, 'a', 'b')...)
	if _, err := DecodeNPYBytes(data, "body", 0); err == nil || !strings.Contains(err.Error(), `array "body": dtype "<U1" is not supported`) || strings.Contains(err.Error(), "strings") {
		t.Errorf("a request body of strings: %v", err)
	}
	s, err := DecodeRaw(data[len(data)-8:], "anchors", "<U1", []int{2, 1}, false)
	if err != nil || !slices.Equal(s.Str, []string{"a", "b"}) {
		t.Fatal(s.Str, err)
	}
	_, err = FromArrays(map[string]Array{"anchors": s})
	if err == nil || !strings.Contains(err.Error(), `array "anchors": dtype <U1, want floating point`) {
		t.Errorf("string anchors: %v", err)
	}
	if err := WriteNPY(filepath.Join(t.TempDir(), "s.npy"), s); err == nil {
		t.Error("a string array was written as numbers")
	}
	if _, err := EmbeddingsOf(s, "emb.npy", false); err == nil || !strings.Contains(err.Error(), "<U1") {
		t.Errorf("string embeddings: %v", err)
	}
}

func TestLabelCodes(t *testing.T) {
	t.Parallel()
	codes, names := LabelCodes([]string{"dog", "cat", "émeu", "cat", "Dog", ""})
	if !slices.Equal(names, []string{"", "Dog", "cat", "dog", "émeu"}) || !slices.Equal(codes, []int64{3, 2, 4, 2, 1, 0}) {
		t.Errorf("codes %v, names %q", codes, names)
	}
	for _, c := range []struct {
		classes, names []string
		want           []int64
		err            string
	}{
		{[]string{"émeu", "cat"}, names, []int64{4, 2}, ""},
		{[]string{"3"}, nil, []int64{3}, ""},
		{[]string{"-1", "7"}, nil, []int64{-1, 7}, ""},
		{[]string{"cat", "émeu", "cat"}, names, []int64{2, 4}, ""}, // named twice: held out once
		{[]string{"7", "7"}, nil, []int64{7}, ""},
		{[]string{"cats"}, names, nil, `"cats" is not among the labels ("", "Dog", "cat", "dog", "émeu"): did you mean "cat"?`},
		{[]string{"emeu"}, names, nil, `"emeu" is not among the labels ("", "Dog", "cat", "dog", "émeu"): did you mean "émeu"?`},
		{[]string{"3"}, names, nil, `3 is not among the labels ("", "Dog", "cat", "dog", "émeu"): the labels are names, so name the class; by number, 3 is "dog"`},
		{[]string{"5"}, names, nil, `"5" is not among the labels ("", "Dog", "cat", "dog", "émeu")`},
		{[]string{"cat"}, nil, nil, `"cat" is not an integer label`},
		{[]string{"1.5"}, nil, nil, `"1.5" is not an integer label`},
		// a class that is only ever part of a joined list (a multi-domain
		// protein's Pfam families) is said to be so, not only missing
		{[]string{"PF00069.28"}, []string{"PF00069.28;PF07714.20", "PF00070.1", "PF07714.20;PF00069.28"}, nil,
			`"PF00069.28" is not a label on its own: 2 of the labels are lists that hold it, joined by ";" ("PF00069.28;PF07714.20", …)`},
		{[]string{"PF00070"}, []string{"PF00069.28;PF07714.20", "PF00070.1"}, nil, `"PF00070" is not among the labels`},
	} {
		got, err := ClassesNamed(c.classes, c.names)
		if c.err == "" && (err != nil || !slices.Equal(got, c.want)) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ClassesNamed(%q, %q) = %v, %v; want %v, %q", c.classes, c.names, got, err, c.want, c.err)
		}
	}
}

// TestMakeNamesClasses: with string labels' names, the plan's messages name
// a class by its string.
func TestMakeNamesClasses(t *testing.T) {
	t.Parallel()
	const n = 200
	labels := make([]int64, n)
	for i := range 40 {
		labels[i] = 1 // class 1: 40 items, about 10 a split
	}
	items := Items{N: n, Labels: labels}
	cfg := MakeConfig{K: 20, KNeg: 5, Split: [4]float64{0.25, 0.25, 0.25, 0.25}, LabelNames: []string{"coat", "sandal"}}
	_, err := Make(items, cfg)
	if err == nil || !strings.Contains(err.Error(), `class "sandal" has`) {
		t.Errorf("error %v, want one naming class \"sandal\"", err)
	}
	cfg.LabelNames = nil
	_, err = Make(items, cfg)
	if err == nil || !strings.Contains(err.Error(), "class 1 has") {
		t.Errorf("error %v, want one naming class 1", err)
	}
}

// TestPairIDs: pairs named by ids resolve to the rows the ids are given
// for; a side without ids takes row numbers; unknown ids are left out and
// counted; a header line is told from a pair.
func TestPairIDs(t *testing.T) {
	t.Parallel()
	p, err := NewPairIDs([]string{"q0", "q1"}, []string{"d5", "d7", "d9"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q, r   string
		qi, ri int
		ok     bool
	}{
		{"q1", "d9", 1, 2, true},
		{"q0", "d5", 0, 0, true},
		{"q2", "d5", 0, 0, false},
		{"q0", "d6", 0, 0, false},
	} {
		qi, ri, ok, err := p.Resolve(c.q, c.r)
		if err != nil || ok != c.ok || ok && (qi != c.qi || ri != c.ri) {
			t.Errorf("Resolve(%s, %s) = %d, %d, %v, %v", c.q, c.r, qi, ri, ok, err)
		}
	}
	// A side without ids takes row numbers, and says how to name them
	// otherwise, in both tongues.
	for _, c := range []struct {
		queries, rows []string
		q, r, want    string
	}{
		{nil, []string{"d5"}, "q0", "d5", `query "q0" is not a row number: give the queries' ids (-query-ids; query_ids= in Python) to name them by id`},
		{[]string{"q0"}, nil, "q0", "d5", `row "d5" is not a row number: give the rows' ids (-ids; ids= in Python) to name them by id`},
		{nil, nil, "0.0", "1834.0", `query "0.0" is a row number written as a float (pandas writes an integer column so where it holds a missing value): write the ids as integers (drop the pairs without one, then df[column].astype(int)) and the file again`},
	} {
		np, err := NewPairIDs(c.queries, c.rows)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := np.Resolve(c.q, c.r); err == nil || err.Error() != c.want {
			t.Errorf("Resolve(%s, %s): %v, want %q", c.q, c.r, err, c.want)
		}
	}
	if p.Unknown != 2 || p.First != `query id "q2"` || !strings.Contains(p.Note(), `2 pairs name ids that are not among the given ids (the first: query id "q2"): left out (1 distinct query id, 1 row id)`) {
		t.Errorf("unknown %d, first %s, note %q", p.Unknown, p.First, p.Note())
	}
	// New users' pairs: many pairs of a few query ids, counted distinct.
	news, _ := NewPairIDs([]string{"u0"}, []string{"i0", "i1"})
	for _, pr := range [][2]string{{"u7", "i0"}, {"u7", "i1"}, {"u8", "i0"}, {"u7", "i0"}, {"u0", "i1"}} {
		news.Resolve(pr[0], pr[1])
	}
	if want := `4 pairs name ids that are not among the given ids (the first: query id "u7"): left out (2 distinct query ids, no row id)`; news.Note() != want {
		t.Errorf("new queries: note %q, want %q", news.Note(), want)
	}
	// A new user's new item is a row id missing too, though its pair is
	// left out for the user: the catalogue lacks it.
	news.Resolve("u8", "i9")
	news.Resolve("u9", "i9")
	if want := `6 pairs name ids that are not among the given ids (the first: query id "u7"): left out (3 distinct query ids, 1 row id)`; news.Note() != want {
		t.Errorf("new queries' new rows: note %q, want %q", news.Note(), want)
	}
	// Spaces around an id are no part of it, as a text file's fields are
	// read trimmed; an id of another case is left out, and said.
	messy, _ := NewPairIDs([]string{"q0", "q1"}, []string{"doc-5", "doc-7", "Doc-7"})
	for _, c := range []struct {
		q, r   string
		qi, ri int
		ok     bool
	}{
		{" q1", "doc-5\t", 1, 0, true},
		{"q0 ", " Doc-7 ", 0, 2, true},
		{"Q1", "doc-5", 0, 0, false}, // but for case
		{"q1", "DOC-5", 0, 0, false}, // but for case
		{"q1", "DOC-7", 0, 0, false}, // doc-7 and Doc-7 fold alike: no one id meant
		{"q9", "doc-5", 0, 0, false},
	} {
		qi, ri, ok, err := messy.Resolve(c.q, c.r)
		if err != nil || ok != c.ok || ok && (qi != c.qi || ri != c.ri) {
			t.Errorf("Resolve(%q, %q) = %d, %d, %v, %v", c.q, c.r, qi, ri, ok, err)
		}
	}
	if want := `4 pairs name ids that are not among the given ids (the first: query id "Q1"): left out (2 distinct query ids, 2 row ids); 2 of them name a given id but for case (the first: query id "Q1", given as "q1"): ids are matched exactly; write both sides' ids in one case (ids.str.lower() in pandas)`; messy.Note() != want {
		t.Errorf("messy ids: note %q, want %q", messy.Note(), want)
	}
	if !p.Header("query-id", "corpus-id") || p.Header("q0", "corpus-id") {
		t.Error("header")
	}
	rowsOnly, _ := NewPairIDs(nil, []string{"d5", "d7"})
	if _, _, _, err := rowsOnly.Resolve("q0", "d5"); err == nil || !strings.Contains(err.Error(), `query "q0" is not a row number: give the queries' ids (-query-ids; query_ids= in Python)`) {
		t.Errorf("a query id without the queries' ids: %v", err)
	}
	if q, r, ok, err := rowsOnly.Resolve("3", "d7"); err != nil || !ok || q != 3 || r != 1 {
		t.Errorf("a row number beside an id: %d, %d, %v, %v", q, r, ok, err)
	}
	if !rowsOnly.Header("query", "d5") || rowsOnly.Header("0", "d5") || !rowsOnly.Header("0", "corpus") {
		t.Error("header of one named side")
	}
	plain, _ := NewPairIDs(nil, nil)
	if plain.Named() || plain.Header("0", "1") || !plain.Header("query-id", "1") {
		t.Error("row numbers")
	}
	// Every repeated id counted, rows numbered from 0 (an export that
	// listed 7 utterance paths twice), with the line that keeps one of each.
	if _, err := NewPairIDs([]string{"u/1", "u/2", "u/2", "u/3", "u/1", "u/1"}, nil); err == nil || err.Error() != `query id "u/2" is given twice (rows 1 and 2, numbered from 0 — in a text file, its lines 2 and 3); 2 ids repeat (3 rows beyond each one's first): keep each id's first row (_, first = np.unique(ids, return_index=True); keep = np.sort(first)) and the same rows of the queries` {
		t.Errorf("repeated ids: %v", err)
	}
	if _, err := NewPairIDs(nil, []string{"a", "b", "a"}); err == nil || !strings.Contains(err.Error(), `row id "a" is given twice (rows 0 and 2`) {
		t.Errorf("a repeated id: %v", err)
	}
	// Arrays of pairs: strings, integers (as ids when the rows are named
	// by them), and what is left.
	p, _ = NewPairIDs([]string{"q0", "q1"}, []string{"10", "20"})
	got, err := p.Rows(Array{Shape: []int{3, 2}, Str: []string{"q1", "20", "q0", "30", "q0", "10"}}, "pairs")
	if err != nil || !slices.Equal(got, [][2]int{{1, 1}, {0, 0}}) || p.Unknown != 1 {
		t.Errorf("string pairs: %v, %v (unknown %d)", got, err, p.Unknown)
	}
	p, _ = NewPairIDs(nil, []string{"10", "20"})
	got, err = p.Rows(Int64([]int64{1, 20, 0, 10}, 2, 2), "pairs")
	if err != nil || !slices.Equal(got, [][2]int{{1, 1}, {0, 0}}) {
		t.Errorf("integer pairs by id: %v, %v", got, err)
	}
	if _, err := p.Rows(Int64([]int64{1, 30}, 1, 2), "pairs"); err == nil || !strings.Contains(err.Error(), `pairs: no pairs: all 1 name ids that are not among the given ids (the first: row id "30")`) {
		t.Errorf("no pair left: %v", err)
	}
	// Columns swapped: every query id a row's, every row id a query's.
	sw, _ := NewPairIDs([]string{"q0", "q1"}, []string{"d5", "d7"})
	if _, err := sw.Rows(Array{Shape: []int{2, 2}, Str: []string{"d5", "q1", "d7", "q0"}}, "qrels.tsv"); err == nil || !strings.Contains(err.Error(), `qrels.tsv: no pairs: all 2 name ids that are not among the given ids (the first: query id "d5"): every pair's query id is a row's and its row id a query's — are the columns swapped, or the queries and the rows (their embeddings and ids) each given in the other's place?`) {
		t.Errorf("swapped columns: %v", err)
	}
	if _, err := p.Rows(Int64([]int64{1, 30, 4, 5}, 1, 4), "pairs"); err == nil || !strings.Contains(err.Error(), "pairs: dtype int64, shape (1, 4): want pairs (m, 2) of integers or strings, or (m, 3) with a score each") {
		t.Errorf("four columns: %v", err)
	}
	// An interaction log's columns as they are: which two to keep.
	if _, err := p.Rows(Array{Shape: []int{1, 4}, Str: []string{"u1", "i2", "2026-06-01 00:01:22", "view"}}, "pairs"); err == nil || !strings.Contains(err.Error(), "pairs: dtype string, shape (1, 4): want pairs (m, 2) of integers or strings, or (m, 3) with a score each; an interaction log's columns? give the query's (the user's) and the row's (the item's) id columns, log[:, [0, 1]], after keeping the rows that count (a time window, the events)") {
		t.Errorf("an interaction log's four columns: %v", err)
	}
	// A third column scores the pairs, as a qrels file's does: 0 or less
	// is no relevance.
	p, _ = NewPairIDs([]string{"q0", "q1"}, []string{"10", "20"})
	got, err = p.Rows(Array{Shape: []int{3, 3}, Str: []string{"q1", "20", "1", "q0", "10", "0", "q0", "20", "2.5"}}, "pairs")
	if err != nil || !slices.Equal(got, [][2]int{{1, 1}, {0, 1}}) {
		t.Errorf("scored string pairs: %v, %v", got, err)
	}
	p, _ = NewPairIDs(nil, nil)
	if got, err = p.Rows(Int64([]int64{1, 2, 1, 0, 3, -1}, 2, 3), "pairs"); err != nil || !slices.Equal(got, [][2]int{{1, 2}}) {
		t.Errorf("scored integer pairs: %v, %v", got, err)
	}
	for _, c := range []struct {
		a    Array
		want string
	}{
		{Int64([]int64{1, 2, 0}, 1, 3), "pairs: no pairs: all 1 are scored 0 or less"},
		{Array{Shape: []int{1, 3}, Str: []string{"1", "2", "yes"}}, `pairs: pair 0: score "yes" is not a number`},
		{Int64([]int64{0, 1, 2, 3, 4, 5, 1, 1, 0, 0, 1, 0}, 3, 4), "pairs: dtype int64, shape (3, 4): want pairs (m, 2) of integers or strings, or (m, 3) with a score each; transposed? its 3 rows would be the columns: give pairs.T"},
		{Array{Shape: []int{1, 3}, Str: []string{"1", "2", "view"}}, `pairs: pair 0: score "view" is not a number: the third column is read as each pair's relevance score; map its values to numbers (an interaction log's events: view 1, cart 2, purchase 3; an NLI label: entailment 1, neutral and contradiction 0 — pairs scored 0 or less are left out, -min-score, min_score= in Python, keeps the higher) or give two columns`},
	} {
		if _, err := p.Rows(c.a, "pairs"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.a, err, c.want)
		}
	}
	if ids, err := IDStrings(Int64([]int64{7, -1}, 2), "ids"); err != nil || !slices.Equal(ids, []string{"7", "-1"}) {
		t.Errorf("integer ids: %q, %v", ids, err)
	}
	if _, err := IDStrings(Float32([]float32{7}, 1), "ids"); err == nil || !strings.Contains(err.Error(), "ids: dtype float32, shape (1,): want one id per row") {
		t.Errorf("float ids: %v", err)
	}
}

// TestReadQrels: a qrels text's pairs, what is left out (and said), and
// the lines that lie refused: a missing, empty or NaN score is no
// judgement, and a line without its score beside lines with theirs would
// be read as relevant.
func TestReadQrels(t *testing.T) {
	qids, rids := []string{"q0", "q1", "q2"}, []string{"d0", "d1", "d2", "d3"}
	read := func(text string) ([][2]int, *PairIDs, error) {
		p, err := NewPairIDs(qids, rids)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadQrels(strings.NewReader(text), "qrels.tsv", p)
		return got, p, err
	}
	got, p, err := read("query-id\tcorpus-id\tscore\r\nq0\td1\t2\r\nq0\td2\t0\r\nq1\td3\t1\r\nq1\td3\t0\r\n\r\nq2\tnone\t1\r\nq0\td1\t1\r\n")
	if err != nil || !slices.Equal(got, [][2]int{{0, 1}, {1, 3}, {0, 1}}) {
		t.Fatalf("pairs %v, %v", got, err)
	}
	want := `1 pair names an id that is not among the given ids (row id "none"): left out; 1 pair scored as relevant and also 0 or less (the first: query "q1", row "d3"): kept relevant`
	if p.Unscored != 2 || p.Conflicts != 1 || p.Note() != want || p.UnscoredNote() != "1 pair scored 0 or less, judged not relevant: left out" {
		t.Errorf("note %q, %q (unscored %d, conflicts %d), want %q", p.Note(), p.UnscoredNote(), p.Unscored, p.Conflicts, want)
	}
	// A header of two columns: every pair relevant, said; none without a header.
	if _, p, err := read("query-id\tcorpus-id\nq0\td1\n"); err != nil || !strings.HasPrefix(p.ScoreNote(), "two columns (query-id, corpus-id), no scores: every pair is taken as relevant") {
		t.Errorf("two columns: %q, %v", p.ScoreNote(), err)
	}
	if _, p, err := read("q0\td1\n"); err != nil || p.ScoreNote() != "" {
		t.Errorf("two columns, no header: %q, %v", p.ScoreNote(), err)
	}
	// An empty text, and a header with no pairs below it, said so.
	for text, want := range map[string]string{
		"":                             "qrels.tsv: empty: no pairs",
		"\n \n":                        "qrels.tsv: empty: no pairs",
		"query-id\tcorpus-id\tscore\n": "qrels.tsv: a header line (line 1: query-id, corpus-id, score) and no pairs below it",
		"\nquery-id,corpus-id\n\n":     "qrels.tsv: a header line (line 2: query-id, corpus-id) and no pairs below it",
	} {
		if _, _, err := read(text); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	// A header naming the row's column first: refused, the columns being
	// read in order (numbers would pair the wrong way, no error).
	for _, text := range []string{"corpus-id\tquery-id\tscore\n3\t0\t1\n", "doc_id,qid\n3,0\n"} {
		p, _ := NewPairIDs(nil, nil)
		if _, err := ReadQrels(strings.NewReader(text), "qrels.tsv", p); err == nil || !strings.Contains(err.Error(), "qrels.tsv:1: the header names the columns") || !strings.Contains(err.Error(), "the relevant row's first, the query's second") {
			t.Errorf("%q: %v", text, err)
		}
	}
	// The way out it names: the columns named in the query's order.
	p, _ = NewPairIDs(nil, nil)
	if _, err := ReadQrels(strings.NewReader("corpus-id\tquery-id\tscore\n3\t0\t1\n"), "qrels.tsv", p); err == nil || !strings.Contains(err.Error(), "-pairs FILE:query-id,corpus-id,score") {
		t.Errorf("the refusal names no columns to give: %v", err)
	}
	p, _ = NewPairIDs(nil, nil)
	p.Columns = []string{"query-id", "corpus-id", "score"}
	if got, err := ReadQrels(strings.NewReader("corpus-id\tquery-id\tscore\n3\t0\t1\n"), "qrels.tsv", p); err != nil || !slices.Equal(got, [][2]int{{0, 3}}) {
		t.Errorf("the columns named: %v, %v, want [[0 3]]", got, err)
	}
	// Ten pairs in eleven swapped, one id unknown: swapped, said.
	text := "query-id\tcorpus-id\tscore\n"
	for i := range 10 {
		text += fmt.Sprintf("d%d\tq%d\t1\n", i%4, i%3)
	}
	if _, _, err := read(text + "zz\tq0\t1\n"); err == nil || !strings.Contains(err.Error(), "10 of them name a row's id as the query and a query's as the row — are the columns swapped, or the queries and the rows (their embeddings and ids) each given in the other's place?") {
		t.Errorf("ten in eleven swapped: %v", err)
	}
	// Two columns throughout, spaces or commas: every pair relevant.
	for _, text := range []string{"q0 d1\nq2 d0\n", "query,corpus\nq0, d1\nq2 ,d0  \n"} {
		if got, p, err := read(text); err != nil || !slices.Equal(got, [][2]int{{0, 1}, {2, 0}}) || p.Note()+p.UnscoredNote() != "" {
			t.Errorf("%q: %v, %v, note %q", text, got, err, p.Note())
		}
	}
	// Ids holding spaces (or commas): a line with tabs is split on tabs
	// alone, one with commas on commas; spaces only where it has neither.
	for _, c := range []struct {
		text string
		want [][2]int
	}{
		{"query-id\tcorpus-id\tscore\nq 0\tp 115\t1\nq 1\td,1\t2\n", [][2]int{{0, 0}, {1, 2}}},
		{"q 0 , p 115\nq 1,p 7\n", [][2]int{{0, 0}, {1, 1}}},
		{"q 0\tp 115\n", [][2]int{{0, 0}}},
		// A line of CSV: a quoted field may hold a comma or a doubled
		// quote, a quote within an unquoted one is a character of it.
		{"\"q 0\",\"doc, 12\",1\n\"q 1\",\"say \"\"hi\"\"\",2\nq 1, 5\" screen,1\n", [][2]int{{0, 3}, {1, 4}, {1, 5}}},
		{"\"q 0\" , \"p 7\"\n", [][2]int{{0, 1}}},
	} {
		p, err := NewPairIDs([]string{"q 0", "q 1"}, []string{"p 115", "p 7", "d,1", "doc, 12", `say "hi"`, `5" screen`})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ReadQrels(strings.NewReader(c.text), "qrels.tsv", p); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v, want %v", c.text, got, err, c.want)
		}
	}
	// Every field quoted (csv.QUOTE_ALL, R's write.csv): the quotes are
	// not part of the ids; "" inside a field is a quote.
	if got, p, err := read("\"query\",\"corpus\"\r\n\"q0\",\"d1\"\r\n\"q2\",\"d0\"\r\n"); err != nil || !slices.Equal(got, [][2]int{{0, 1}, {2, 0}}) || p.Note() != "" {
		t.Errorf("quoted fields: %v, %v, note %q", got, err, p.Note())
	}
	if unquote(`"a""b"`) != `a"b` || unquote(`"`) != `"` || unquote(`x"`) != `x"` {
		t.Errorf("unquote")
	}
	// A third column named as something else than a score is said to be
	// read as one; a score column is not.
	for _, c := range []struct{ text, want string }{
		{"user_id,item_id,timestamp\nq0,d1,1700000000\nq1,d2,1700000100\n", `the third column, "timestamp", was read as each pair's relevance score (a pair scored 0 or less is left out as not relevant)`},
		{"user_id,item_id,clicked\nq0,d1,1\nq1,d2,0\n", `the third column, "clicked"`},
		{"query-id\tcorpus-id\tscore\nq0\td1\t1\n", ""},
		{"q0\td1\t1\n", ""},
	} {
		_, p, err := read(c.text)
		if err != nil || (c.want == "") != (p.ScoreNote() == "") || !strings.Contains(p.ScoreNote(), c.want) {
			t.Errorf("%q: score note %q, %v; want %q", c.text, p.ScoreNote(), err, c.want)
		}
	}
	for _, c := range []struct{ name, text, want string }{
		{"NaN score", "q0\td1\t1\nq1\td2\tNaN\n", `qrels.tsv:2: score "NaN" is not a finite number: a missing score says nothing`},
		{"pandas' missing score", "q0,d1,nan\n", `qrels.tsv:1: score "nan" is not a finite number`},
		{"infinite score", "q0\td1\t+Inf\n", `qrels.tsv:1: score "+Inf" is not a finite number`},
		{"empty score", "query-id\tcorpus-id\tscore\nq0\td1\t\n", `qrels.tsv:2: an empty field ("q0\td1\t")`},
		{"empty id", "q0,,1\n", `qrels.tsv:1: an empty field ("q0,,1")`},
		{"an unterminated quote", "\"q0,d1,1\n", `qrels.tsv:1: an unterminated quote ("\"q0,d1,1"): a field opened with " must close with " on its line, a quote inside it doubled ("")`},
		{"an unterminated quote, later", "q0,d1,1\nq1,\"d2,1\n", `qrels.tsv:2: an unterminated quote ("q1,\"d2,1")`},
		{"a quoted field over two lines", "q0,\"d\n1\",1\n", `qrels.tsv:1: an unterminated quote ("q0,\"d")`},
		{"empty id between tabs", "q0\t \t1\n", `qrels.tsv:1: an empty field ("q0\t \t1")`},
		{"a line without its score", "query-id\tcorpus-id\tscore\nq0\td1\t1\nq1\td2\n", "qrels.tsv:3: 2 columns, and line 1 has 3: every line gives a query, a relevant row and, if one does, a score"},
		{"a score in a file of pairs", "q0 d1\nq1 d2 0\n", "qrels.tsv:2: 3 columns, and line 1 has 2"},
		{"a word for a score", "q0\td1\t1\nq1\td2\tyes\n", `qrels.tsv:2: score "yes" is not a number`},
		{"a header again", "query-id\tcorpus-id\tscore\nquery-id\tcorpus-id\tscore\nq0\td1\t1\n", `qrels.tsv:2: the header of line 1 again (query-id, corpus-id, score): files put together with their headers? remove the repeats`},
		{"TREC's Q0", "q0 Q0 d1 1\n", "TREC's qrels (query, iteration, document, relevance)?"},
		{"TREC's four columns", "q0 0 d1 1\n", "qrels.tsv:1: 4 columns, want query, relevant row [, score]: TREC's qrels (query, iteration, document, relevance)? keep the first, third and fourth: awk '{print $1\"\\t\"$3\"\\t\"$4}'"},
		{"an interaction log", "user_id,item_id,timestamp,event\nq0,d1,2026-06-01 00:01:22,view\n", `qrels.tsv:1: 4 columns (user_id, item_id, timestamp, event), want query, relevant row [, score]: a table of several columns, such as an interaction log, gives its pairs as two of them — the query's (the user's) id and the row's (the item's) — and a number scoring each pair, if any: keep the rows that count (a time window, the events) and those columns (docs/your-data.md, "Interaction logs")`},
		{"an interaction log without its header", "q0,d1,2026-06-01 00:01:22,view\n", `qrels.tsv:1: 4 columns, want query, relevant row [, score]: a table of several columns, such as an interaction log, gives its pairs`},
		{"an event for a score", "user_id,item_id,event\nq0,d1,view\n", `qrels.tsv:2: score "view" is not a number: the third column, "event", is read as each pair's relevance score; map its values to numbers (an interaction log's events: view 1, cart 2, purchase 3; an NLI label: entailment 1, neutral and contradiction 0 — pairs scored 0 or less are left out, -min-score, min_score= in Python, keeps the higher) or give two columns`},
		// An event's name for a score on the first line too: a pair,
		// not a header, whose word is no column's name.
		{"an event for a score, no header", "q0,d1,view\nq1,d2,view\n", `qrels.tsv:1: score "view" is not a number: the third column is read as each pair's relevance score`},
		{"row numbers for ids", "user,item\n0\t1\n1\t2\n", `qrels.tsv: no pairs: all 2 name ids that are not among the given ids (the first: query id "0"); the first given query id is "q0", the first given row id "d0"`},
		{"every pair judged not relevant", "q0\td1\t0\nq1\td2\t-1\n", "qrels.tsv: no pairs: all 2 are scored 0 or less"},
		{"VoxCeleb's trial list", "1 id10270/x6uYqmx31kE/00001.wav id10270/8jEAjG6SegY/00008.wav\n0 id10270/x6uYqmx31kE/00001.wav id10300/ize_eiCFEg0/00003.wav\n", `qrels.tsv:1: "1 id10270/x6uYqmx31kE/00001.wav id10270/8jEAjG6SegY/00008.wav" reads as a speaker-verification trial (target (1 or 0), enrolment, test, as VoxCeleb's lists), not a relevance pair`},
		{"VoxCeleb's trial list, a non-target first", "0\tq0\td1\n", `reads as a speaker-verification trial (target (1 or 0)`},
		{"Kaldi's trial list", "id10270-x6uYqmx31kE-00001 id10270-8jEAjG6SegY-00008 target\n", `reads as a speaker-verification trial (enrolment, test, target or nontarget, as Kaldi's and NIST's)`},
		{"Kaldi's trial list, a non-target first", "q0 d1 nontarget\n", `reads as a speaker-verification trial (enrolment, test, target or nontarget`},
		{"a header whose score is a target", "user_id,item_id,target\nq0,d1,1\nq1,d2,yes\n", `qrels.tsv:3: score "yes" is not a number`},
	} {
		if _, _, err := read(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// pandas' to_csv with its index: the unnamed first column left out,
	// the pairs those of the file without it.
	withIndex, _, err := read(",user_id,item_id\n0,q0,d1\n1,q1,d2\n")
	without, _, err2 := read("user_id,item_id\nq0,d1\nq1,d2\n")
	if err != nil || err2 != nil || !slices.Equal(withIndex, without) || len(without) != 2 {
		t.Errorf("pairs with pandas' index: %v %v, without it %v %v", withIndex, err, without, err2)
	}
	// Row numbers and an event's name on the first line: a pair.
	rn, _ := NewPairIDs(nil, nil)
	if _, err := ReadQrels(strings.NewReader("0,1,view\n2,3,cart\n"), "qrels.tsv", rn); err == nil || !strings.Contains(err.Error(), `qrels.tsv:1: score "view" is not a number: the third column is read as`) {
		t.Errorf("row numbers, an event for a score: %v", err)
	}
	// Its first line taken for a header (string ids, none given): the
	// event it ends in is no column's name.
	rn, _ = NewPairIDs(nil, nil)
	if _, err := ReadQrels(strings.NewReader("u1,i2,view\nu1,i3,view\n"), "qrels.tsv", rn); err == nil || !strings.Contains(err.Error(), `qrels.tsv:2: score "view" is not a number: the third column is read as`) {
		t.Errorf("string ids, an event for a score: %v", err)
	}
	// Graded judgements, the highly relevant alone (MinScore 2).
	two := 2.0
	p, _ = NewPairIDs(qids, rids)
	p.MinScore = &two
	got, err = ReadQrels(strings.NewReader("q0\td1\t2\nq0\td2\t1\nq1\td3\t3\nq2\td0\t0\n"), "qrels.tsv", p)
	if err != nil || !slices.Equal(got, [][2]int{{0, 1}, {1, 3}}) || p.UnscoredNote() != "2 pairs scored below the least relevant score 2: left out of the positives (those scored above 0, relevant at a lower grade, are no query's negatives either)" {
		t.Errorf("min score 2: %v, %v, note %q", got, err, p.UnscoredNote())
	}
	if _, err := ReadQrels(strings.NewReader("q0\td1\t1\n"), "qrels.tsv", p); err == nil || !strings.Contains(err.Error(), "qrels.tsv: no pairs: all 1 are scored below the least relevant score 2") {
		t.Errorf("min score 2, none left: %v", err)
	}
	for _, text := range []string{"q0\td1\n"} {
		if _, err := ReadQrels(strings.NewReader(text), "qrels.tsv", p); err == nil || !strings.Contains(err.Error(), "qrels.tsv: a least relevant score (2) for pairs without scores") {
			t.Errorf("min score without scores: %v", err)
		}
	}
	if _, err := p.Rows(Array{Shape: []int{1, 2}, Str: []string{"q0", "d1"}}, "pairs"); err == nil || !strings.Contains(err.Error(), "pairs: a least relevant score (2) for pairs without scores") {
		t.Errorf("min score, an array without scores: %v", err)
	}
	// An array's scores are held to the same.
	p, _ = NewPairIDs(qids, rids)
	if _, err := p.Rows(Array{Shape: []int{2, 3}, Str: []string{"q0", "d1", "1", "q1", "d2", "nan"}}, "pairs"); err == nil || !strings.Contains(err.Error(), `pairs: pair 1: score "nan" is not a finite number`) {
		t.Errorf("an array's NaN score: %v", err)
	}
	if _, err := p.Rows(Array{Shape: []int{1, 3}, Str: []string{"1", "id10270/x6uYqmx31kE/00001.wav", "id10270/8jEAjG6SegY/00008.wav"}}, "pairs"); err == nil || !strings.Contains(err.Error(), `pairs: pair 0: "1 id10270/x6uYqmx31kE/00001.wav id10270/8jEAjG6SegY/00008.wav" reads as a speaker-verification trial`) {
		t.Errorf("an array of trials: %v", err)
	}
	// A text's header row, as np.loadtxt(path, dtype=str) keeps it.
	if _, err := p.Rows(Array{Shape: []int{2, 3}, Str: []string{"query-id", "corpus-id", "score", "q0", "d1", "1"}}, "pairs"); err == nil || !strings.Contains(err.Error(), `pairs: pair 0: "query-id", "corpus-id", "score" reads as a header row, not a pair: leave it out (np.loadtxt(..., skiprows=1), or pairs[1:])`) {
		t.Errorf("a header row: %v", err)
	}
	// A numeric table's to_numpy(): whole-number ids read as the integers
	// they are (a float score beside them); an id that is not one, or one
	// float32 cannot hold exactly, refused; a NaN score named.
	rows := func(a Array) ([][2]int, error) {
		p, _ := NewPairIDs(nil, nil)
		return p.Rows(a, "pairs")
	}
	fromFloats, err := rows(Float32([]float32{0, 1, 0.5, 2, 3, 0, 4, 5, 2}, 3, 3))
	fromInts, err2 := rows(Int64([]int64{0, 1, 1, 2, 3, 0, 4, 5, 2}, 3, 3))
	if err != nil || err2 != nil || !slices.Equal(fromFloats, fromInts) || len(fromFloats) != 2 {
		t.Errorf("whole-number float pairs: %v (%v), want %v (%v)", fromFloats, err, fromInts, err2)
	}
	for _, c := range []struct {
		a    Array
		want string
	}{
		{Float32([]float32{0.5, 1, 1}, 1, 3), "a float array holds the ids as floats: give the relevant pairs as integers (p[p[:, 2] > 0, :2].astype(np.int64))"},
		{Float32([]float32{1 << 24, 1, 1}, 1, 3), "a float array holds the ids as floats"},
		{Float32([]float32{0, 1, float32(math.NaN())}, 1, 3), "pairs: pair 0: score NaN is not a finite number"},
	} {
		if _, err := rows(c.a); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("float pairs %v: %v, want %q", c.a.F32, err, c.want)
		}
	}
}

// TestPairRowNumbers: pairs of row numbers as integers are taken as they
// are (no ids to resolve), as the same numbers as strings are; an empty
// array has no pairs.
func TestPairRowNumbers(t *testing.T) {
	cases := []struct {
		name string
		a    Array
		want [][2]int
		err  string
	}{
		{"integers", Int64([]int64{3, 0, 1, 7, 3, 0}, 3, 2), [][2]int{{3, 0}, {1, 7}, {3, 0}}, ""},
		{"the same as strings", Array{Shape: []int{3, 2}, Str: []string{"3", "0", "1", "7", "3", "0"}}, [][2]int{{3, 0}, {1, 7}, {3, 0}}, ""},
		{"out of range: for Make to name", Int64([]int64{-1, 9}, 1, 2), [][2]int{{-1, 9}}, ""},
		{"none", Int64([]int64{}, 0, 2), nil, "pairs.npy: no pairs"},
	}
	for _, c := range cases {
		p, err := NewPairIDs(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Rows(c.a, "pairs.npy")
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s: error %v, want %s", c.name, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%s: %v, %v, want %v", c.name, got, err, c.want)
		}
	}
}

// TestLabelsFloatHint: a float array of ids is refused with the way to
// save it as integers, naming the array the message is about.
func TestLabelsFloatHint(t *testing.T) {
	for _, c := range []struct{ what, want string }{
		{"labels", "blocks.npy: dtype float32, want integer labels (any integer type) or strings (whole numbers stored as floats: save them as integers, labels.astype(np.int64))"},
		{"blocks", "blocks.npy: dtype float32, want integer blocks (any integer type) or strings (whole numbers stored as floats: save them as integers, blocks.astype(np.int64))"},
		{"groups", "groups.astype(np.int64)"},
		{"ood-rows", "ood_rows.astype(np.int64)"},
	} {
		_, _, err := Labels(Float32([]float32{0, 1, 1}, 3), "blocks.npy", c.what)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
	// With NaN among them, pandas' integer column with missing values,
	// astype(np.int64) would make NaN a huge negative number: the hint
	// counts them and says how to mark and drop them.
	nan := float32(math.NaN())
	_, _, err := Labels(Float32([]float32{0, nan, 1, nan}, 4), "labels.npy", "labels")
	if want := `labels.npy: dtype float32, want integer labels (any integer type) or strings (2 of them NaN, pandas' missing value: give those rows -1, labels.fillna(-1).astype(np.int64), and leave them out with -missing-labels drop; missing_labels="drop" in Python)`; err == nil || err.Error() != want {
		t.Errorf("NaN labels: %v, want %q", err, want)
	}
}

// TestSetLabelsNamed: held-out labels of several a row, by column number
// for a matrix, by name for lists; a number given for names says which
// name a MultiLabelBinarizer's column of that number is (sorted order).
func TestSetLabelsNamed(t *testing.T) {
	t.Parallel()
	names := []string{"joy", "anger", "grief"} // in the lists' order, not sorted
	for _, c := range []struct {
		classes, names []string
		c              int
		want           []int64
		err            string
	}{
		{[]string{"2", "0", "2"}, nil, 3, []int64{2, 0}, ""},
		{[]string{"grief"}, names, 3, []int64{2}, ""},
		{[]string{"grief"}, nil, 3, nil, `"grief" is not an integer label (a multi-hot matrix's labels are its columns, 0 to 2): give its column's number (list(mlb.classes_).index("grief"), mlb the MultiLabelBinarizer)`},
		{[]string{"5"}, nil, 3, nil, "label 5 is not a column of the multi-hot matrix (0 to 2)"},
		{[]string{"greif"}, names, 3, nil, `"greif" is not among the labels ("joy", "anger", "grief"): did you mean "grief"?`},
		{[]string{"angr"}, names, 3, nil, `"angr" is not among the labels ("joy", "anger", "grief"): did you mean "anger"?`},
		{[]string{"1"}, names, 3, nil, `"1" is not among the labels ("joy", "anger", "grief"): the labels are names, and a multi-hot matrix of them (MultiLabelBinarizer) numbers them in sorted order, in which 1 is "grief"`},
	} {
		got, err := SetLabelsNamed(c.classes, c.names, c.c)
		if c.err == "" && (err != nil || !slices.Equal(got, c.want)) || c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)) {
			t.Errorf("SetLabelsNamed(%q, %q) = %v, %v; want %v, %q", c.classes, c.names, got, err, c.want, c.err)
		}
	}
}

// TestMatrixNames: names of a multi-hot matrix's columns are one a
// column, none empty, none twice; integers alone are integer labels.
func TestMatrixNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		names []string
		c     int
		strs  bool
		err   string
	}{
		{[]string{"joy", "anger", "grief"}, 3, true, ""},
		{[]string{"10", "2", "-1"}, 3, false, ""},
		{[]string{"10", "two"}, 2, true, ""},
		{[]string{"joy", "anger"}, 3, false, "2 names for the 3 columns of the multi-hot matrix"},
		{[]string{"joy", "anger", "grief", "love"}, 3, false, "4 names for the 3 columns"},
		{[]string{"joy", " ", "grief"}, 3, false, "column 1's name is empty"},
		{[]string{"joy", "", "grief"}, 3, false, "column 1's name is empty"},
		{[]string{"joy", "grief", "grief"}, 3, false, `"grief" names columns 1 and 2`},
	} {
		strs, err := MatrixNames(c.names, c.c)
		if c.err == "" && (err != nil || strs != c.strs) || c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)) {
			t.Errorf("MatrixNames(%q, %d) = %v, %v; want %v, %q", c.names, c.c, strs, err, c.strs, c.err)
		}
	}
}

// TestColumnsNamed: a named matrix's labels are held out by name; a
// column's number says which name that column has, in the matrix's order.
func TestColumnsNamed(t *testing.T) {
	t.Parallel()
	names := []string{"joy", "anger", "grief"} // mlb.classes_ of MultiLabelBinarizer(classes=…)
	if got, err := ColumnsNamed([]string{"grief", "joy"}, names); err != nil || !slices.Equal(got, []int64{2, 0}) {
		t.Errorf("ColumnsNamed(grief, joy) = %v, %v; want [2 0]", got, err)
	}
	want := `"0" is not among the labels ("joy", "anger", "grief"): the matrix's columns are named, and column 0 is "joy"`
	if _, err := ColumnsNamed([]string{"0"}, names); err == nil || err.Error() != want {
		t.Errorf("ColumnsNamed(0) = %v, want %q", err, want)
	}
}

// TestFloatMultiHot: a float matrix of exactly 0s and 1s (Keras' and
// PyTorch's multi-hot targets) reads as the integer one, multi-hot or
// one-hot; a matrix with a stray value names its cell; floats that are
// not 0 or 1 stay refused by their dtype.
func TestFloatMultiHot(t *testing.T) {
	ints := []int64{1, 0, 1, 0, 1, 1, 1, 0, 0}
	floats := make([]float32, len(ints))
	for i, v := range ints {
		floats[i] = float32(v)
	}
	want, ok, err := LabelSets(Array{Shape: []int{3, 3}, I64: ints}, "m")
	got, ok2, err2 := LabelSets(Array{Shape: []int{3, 3}, F32: floats}, "m")
	if !ok || !ok2 || err != nil || err2 != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("float multi-hot: %v %v %v, want %v", got, ok2, err2, want)
	}
	ids, _, err := Labels(Array{Shape: []int{3, 2}, F32: []float32{0, 1, 1, 0, 0, 1}}, "y", "labels")
	if err != nil || !reflect.DeepEqual(ids, []int64{1, 0, 1}) {
		t.Errorf("float one-hot: %v, %v", ids, err)
	}
	stray := make([]int64, 400)
	for i := range stray {
		stray[i] = int64(i % 3 % 2)
	}
	stray[217] = 2
	_, _, err = Labels(Array{Shape: []int{100, 4}, I64: stray}, "m.npy", "labels")
	if err == nil || !strings.Contains(err.Error(), "m.npy: shape (100, 4), want one label per row, (n,) (a multi-hot matrix, several labels a row, holds 0s and 1s; row 54, column 1 is 2: mark each label 0 or 1, (M > 0).astype(np.int64))") {
		t.Errorf("a stray 2: %v", err)
	}
	if _, _, err := Labels(Array{Shape: []int{2, 2}, F32: []float32{0, 1, 0.5, 1}}, "m.npy", "labels"); err == nil || !strings.Contains(err.Error(), "dtype float") ||
		!strings.Contains(err.Error(), "(row 1, column 0 is 0.5, which is no label") || strings.Contains(err.Error(), "astype") {
		t.Errorf("floats not 0 or 1: %v", err)
	}
}

// TestReversedWarning: pairs judged not relevant that lie nearer their
// queries than the relevant ones — a triplet's columns swapped — are
// warned of; the same scores the right way round, or judged negatives
// the plan's own check compares, are not; and a pair out of range is
// refused as the file numbers it, with what all its pairs span.
func TestReversedWarning(t *testing.T) {
	const nq, d = 60, 4
	r := rand.New(rand.NewPCG(3, 4))
	queries := make([]float32, nq*d)
	rows := make([]float32, 2*nq*d)
	for q := range nq {
		for k := range d {
			x := float32(r.NormFloat64())
			queries[q*d+k] = x
			rows[2*q*d+k] = x + 0.1*float32(r.NormFloat64())     // the paraphrase
			rows[(2*q+1)*d+k] = x + 0.8*float32(r.NormFloat64()) // the hard negative
		}
	}
	read := func(pos, neg string, judged bool) (string, error) {
		var text strings.Builder
		for q := range nq {
			fmt.Fprintf(&text, "%d\t%d\t%s\n%d\t%d\t%s\n", q, 2*q, pos, q, 2*q+1, neg)
		}
		p := &PairIDs{NQueries: nq, NRows: 2 * nq, Judged: judged}
		pairs, err := ReadQrels(strings.NewReader(text.String()), "pairs.tsv", p)
		if err != nil {
			return "", err
		}
		return p.ReversedWarning(pairs, queries, rows, d), nil
	}
	if w, err := read("0", "1", false); err != nil || !strings.Contains(w, "are the scores reversed?") {
		t.Errorf("swapped: %q, %v", w, err)
	}
	for _, c := range []struct {
		pos, neg string
		judged   bool
	}{{"1", "0", false}, {"0", "1", true}} {
		if w, err := read(c.pos, c.neg, c.judged); err != nil || w != "" {
			t.Errorf("%+v: %q, %v", c, w, err)
		}
	}
	p := &PairIDs{NQueries: nq, NRows: 2 * nq}
	_, err := ReadQrels(strings.NewReader("0\t1\t1\n1\t2\t0\n2\t130\t0\n3\t125\t1\n"), "pairs.tsv", p)
	if want := "pairs.tsv: line 3 names row 130, there are 120 rows of embeddings (2 of the 4 pairs name a query or row out of range; queries 0 … 3, rows 1 … 130"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("out of range: %v, want %q", err, want)
	}
}

// TestWarnLogits: logits that are the embeddings, fewer columns than
// classes, or an argmax at chance are warned of; a classifier's logits —
// in another class order, or over more classes than the rows hold — are
// not.
func TestWarnLogits(t *testing.T) {
	const n, k, d = 600, 4, 6
	r := rand.New(rand.NewPCG(7, 8))
	labels := make([]int64, n)
	anchors := make([]int, n)
	rows := make([]float32, n*d)
	for i := range n {
		labels[i], anchors[i] = int64(i%k), i
		for j := range d {
			rows[i*d+j] = float32(r.NormFloat64())
		}
	}
	logits := func(c int, of func(i, j int) float64) []float32 {
		out := make([]float32, n*c)
		for i := range n {
			for j := range c {
				out[i*c+j] = float32(of(i, j) + 0.3*r.NormFloat64())
			}
		}
		return out
	}
	perm := r.Perm(n)
	classifier := func(i, j int) float64 { // its column for class l is (l+2) mod c: another order
		if j == (i%k+2)%6 {
			return 2
		}
		return 0
	}
	for _, c := range []struct {
		name   string
		logits []float32
		c      int
		want   string
	}{
		{"the embeddings", rows, d, "are the embeddings' own"},
		{"fewer columns", logits(3, func(i, j int) float64 { return 0 }), 3, "3 columns for the 4 classes"},
		{"at chance", logits(k, func(i, j int) float64 { return 0 }), k, "where chance gives 25.0%"},
		{"a classifier, its own order, more columns", logits(6, classifier), 6, ""},
		{"more columns, rows in another order", logits(6, func(i, j int) float64 { return classifier(perm[i], j) }), 6, "where labels in a shuffled order give"},
		{"more columns, at chance", logits(6, func(i, j int) float64 { return 0 }), 6, "where labels in a shuffled order give"},
	} {
		p := &Plan{Splits: []SplitPlan{{Anchors: anchors, Labels: labels}}}
		p.WarnLogits(c.logits, c.c, rows, d)
		got := strings.Join(p.Warnings, "; ")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
