package table

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/arrowtest"
)

// nullInt64s is int64s with the rows null at null.
func nullInt64s(v []int64, null ...int) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i, x := range v {
		if slices.Contains(null, i) {
			b.AppendNull()
		} else {
			b.Append(x)
		}
	}
	return b.NewArray()
}

func float64Array(v []float64) arrow.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

// TestPairsAsQrels reads a BEIR-like qrels table (query-id, corpus-id,
// score; as the Hub's BEIR and MTEB datasets hold them, in Parquet and in
// an Arrow stream) and checks the pairs it resolves to against the same
// pairs written as a qrels .tsv and read by bundle.ReadQrels, the text
// reader: the same rows, the same pairs left out as scored 0 and as
// naming unknown ids.
func TestPairsAsQrels(t *testing.T) {
	queries := []string{"q1", "q1", "q2", "q3", "q3", "q9"}
	docs := []string{"d3", "d1", "d2", "d1", "d0", "d2"}
	scores := []int64{1, 2, 0, 1, 1, 1}
	queryIDs := []string{"q3", "q1", "q2"}
	rowIDs := []string{"d0", "d1", "d2", "d3"}

	var tsv strings.Builder
	tsv.WriteString("query-id\tcorpus-id\tscore\n")
	for i := range queries {
		tsv.WriteString(queries[i] + "\t" + docs[i] + "\t" + []string{"0", "1", "2"}[scores[i]] + "\n")
	}
	ref, err := bundle.NewPairIDs(queryIDs, rowIDs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := bundle.ReadQrels(strings.NewReader(tsv.String()), "qrels.tsv", ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 4 || ref.Unscored != 1 || ref.Unknown != 1 {
		t.Fatalf("the reference: %v, %d unscored, %d unknown", want, ref.Unscored, ref.Unknown)
	}

	dir := t.TempDir()
	names := []string{"query-id", "corpus-id", "score"}
	cols := []arrow.Array{strs(queries), strs(docs), int64s(scores)}
	pq := filepath.Join(dir, "qrels.parquet")
	writeParquet(t, pq, names, cols, 4)
	stream := filepath.Join(dir, "qrels.arrow")
	if err := os.WriteFile(stream, arrowtest.Write(t, names, cols, 4, false), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{pq, stream} {
		a, err := Pairs(path, "")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Shape, []int{6, 3}) || a.Str == nil {
			t.Fatalf("%s: shape %v, strings %v", path, a.Shape, a.Str != nil)
		}
		ids, err := bundle.NewPairIDs(queryIDs, rowIDs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ids.Rows(a, path)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || ids.Unscored != ref.Unscored || ids.Unknown != ref.Unknown || ids.First != ref.First {
			t.Errorf("%s: pairs %v (%d unscored, %d unknown, %s), the .tsv's %v (%d, %d, %s)", path, got, ids.Unscored, ids.Unknown, ids.First, want, ref.Unscored, ref.Unknown, ref.First)
		}
	}
}

// TestPairsColumns checks which columns are read: integers kept as
// integers, float scores exactly, columns picked by name among others.
func TestPairsColumns(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, names []string, cols ...arrow.Array) string {
		path := filepath.Join(dir, name)
		writeParquet(t, path, names, cols, 64)
		return path
	}
	// Row numbers: integers, as they are.
	ints := write("ints.parquet", []string{"q", "r"}, int64s([]int64{0, 2, 1}), int64s([]int64{5, 7, 6}))
	a, err := Pairs(ints, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.I64 == nil || !slices.Equal(a.I64, []int64{0, 5, 2, 7, 1, 6}) || !slices.Equal(a.Shape, []int{3, 2}) {
		t.Errorf("integer pairs: %v %v, want [0 5 2 7 1 6] of (3, 2)", a.I64, a.Shape)
	}
	// Float scores written so that they read back as the same numbers.
	fl := write("float.parquet", []string{"query_id", "doc_id", "relevance"},
		int64s([]int64{0, 1, 2}), int64s([]int64{3, 4, 5}), float64Array([]float64{0.1, 0, 2.5}))
	if a, err = Pairs(fl, ""); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Str, []string{"0", "3", "0.1", "1", "4", "0", "2", "5", "2.5"}) {
		t.Errorf("float scores: %q", a.Str)
	}
	// Among other columns: by qrels' names, or as FILE:Q,R,S says.
	wide := write("wide.parquet", []string{"timestamp", "corpus-id", "query-id", "score", "annotator"},
		int64s([]int64{9, 9}), strs([]string{"d1", "d2"}), strs([]string{"q1", "q2"}),
		int64s([]int64{1, 0}), strs([]string{"x", "y"}))
	for _, columns := range []string{"", "query-id,corpus-id,score", " query-id , corpus-id , score "} {
		if a, err = Pairs(wide, columns); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Str, []string{"q1", "d1", "1", "q2", "d2", "0"}) {
			t.Errorf("%q: %q, want the query-id, corpus-id and score columns", columns, a.Str)
		}
	}
	// The same columns of an Arrow stream and of a dataset directory of
	// Parquet shards (each read its own way: a batch's columns
	// projected, the shards' columns alone).
	wideNames := []string{"timestamp", "corpus-id", "query-id", "score", "annotator"}
	wideCols := func(lo, hi int) []arrow.Array {
		return []arrow.Array{int64s([]int64{9, 9}[lo:hi]), strs([]string{"d1", "d2"}[lo:hi]), strs([]string{"q1", "q2"}[lo:hi]),
			int64s([]int64{1, 0}[lo:hi]), strs([]string{"x", "y"}[lo:hi])}
	}
	stream := filepath.Join(dir, "wide.arrow")
	if err := os.WriteFile(stream, arrowtest.Write(t, wideNames, wideCols(0, 2), 1, false), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(dir, "wide-ds")
	os.Mkdir(ds, 0o755)
	writeParquet(t, filepath.Join(ds, "part-0.parquet"), wideNames, wideCols(0, 1), 64)
	writeParquet(t, filepath.Join(ds, "part-1.parquet"), wideNames, wideCols(1, 2), 64)
	os.WriteFile(filepath.Join(ds, "state.json"), []byte(`{"_data_files": [{"filename": "part-0.parquet"}, {"filename": "part-1.parquet"}]}`), 0o644)
	for _, path := range []string{wide, stream, ds} {
		for _, c := range []struct {
			columns string
			want    []string
		}{
			{"", []string{"q1", "d1", "1", "q2", "d2", "0"}},
			{"annotator,corpus-id", []string{"x", "d1", "y", "d2"}},
			{"corpus-id,query-id,score", []string{"d1", "q1", "1", "d2", "q2", "0"}},
			{"query-id,query-id", []string{"q1", "q1", "q2", "q2"}},
		} {
			a, err := Pairs(path, c.columns)
			if err != nil || !slices.Equal(a.Str, c.want) || a.Shape[1] != len(c.want)/2 {
				t.Errorf("%s:%s: %q (%v), want %q", filepath.Base(path), c.columns, a.Str, err, c.want)
			}
		}
	}
}

// TestPairsReadsPairColumnsAlone: a table of pairs with a passage's text
// beside them (10 MB of it) is read without the text: what Pairs
// allocates is a small part of it. Not parallel: it counts the bytes
// allocated.
func TestPairsReadsPairColumnsAlone(t *testing.T) {
	const n, textBytes = 5000, 2000
	q, r, text := make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		q[i], r[i] = fmt.Sprintf("q%d", i%50), fmt.Sprintf("d%d", i)
		text[i] = fmt.Sprintf("%06d", i) + strings.Repeat("passage text ", textBytes/13)
	}
	path := filepath.Join(t.TempDir(), "qrels.parquet")
	writeParquet(t, path, []string{"query-id", "text", "corpus-id", "score"}, []arrow.Array{strs(q), strs(text), strs(r), int64s(make([]int64, n))}, 1000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a, err := Pairs(path, "")
	runtime.ReadMemStats(&after)
	if err != nil || a.Shape[0] != n || a.Str[3*(n-1)+1] != r[n-1] {
		t.Fatalf("%v: %v", a.Shape, err)
	}
	alloc, of := after.TotalAlloc-before.TotalAlloc, uint64(n*textBytes)
	t.Logf("%d KB allocated for %d KB of text", alloc>>10, of>>10)
	if alloc > of/4 {
		t.Errorf("%d KB allocated to read the pairs, beside %d KB of text", alloc>>10, of>>10)
	}
}

// TestPairsBad: every table that does not hold pairs is refused, naming
// the file, the column and (for a value) its row.
func TestPairsBad(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, names []string, cols ...arrow.Array) string {
		path := filepath.Join(dir, name)
		writeParquet(t, path, names, cols, 64)
		return path
	}
	s2 := func(v ...string) arrow.Array { return strs(v) }
	four := write("four.parquet", []string{"a", "b", "c", "d"}, s2("q", "q"), s2("d", "d"), s2("x", "x"), s2("y", "y"))
	nullID := write("nullid.parquet", []string{"query-id", "corpus-id"}, strs([]string{"q1", ""}, 1), s2("d1", "d2"))
	nullScore := write("nullscore.parquet", []string{"query-id", "corpus-id", "score"}, s2("q1", "q2"), s2("d1", "d2"), nullInt64s([]int64{1, 0}, 1))
	nan := write("nan.parquet", []string{"query-id", "corpus-id", "score"}, s2("q1", "q2"), s2("d1", "d2"), float64Array([]float64{1, math.NaN()}))
	words := write("words.parquet", []string{"query-id", "corpus-id", "score"}, s2("q1", "q2"), s2("d1", "d2"), s2("yes", "no"))
	floatIDs := write("floatids.parquet", []string{"q", "r"}, float64Array([]float64{0, 1}), float64Array([]float64{2, 3}))
	for _, c := range []struct {
		path, columns string
		want          []string
	}{
		{four, "", []string{"four.parquet", "which columns hold the pairs", `"a" utf8`, "QUERY,ROW"}},
		{four, "a", []string{"four.parquet:a", "QUERY,ROW or QUERY,ROW,SCORE"}},
		{four, "a,b,c,d", []string{"QUERY,ROW or QUERY,ROW,SCORE"}},
		{four, "a,e", []string{`no column "e"`}},
		{nullID, "", []string{"nullid.parquet", `column "query-id", row 1 is null (its one null among 2 rows)`}},
		{nullScore, "", []string{"nullscore.parquet", `column "score", row 1 is null`, "without a score"}},
		{nan, "", []string{"nan.parquet", `column "score", row 1`, "not a finite number"}},
		{words, "", []string{"words.parquet", `column "score" is utf8`, "want scores"}},
		{floatIDs, "", []string{"floatids.parquet", `"q"`, "integer or string ids"}},
		{filepath.Join(dir, "none.parquet"), "", []string{"none.parquet"}},
	} {
		_, err := Pairs(c.path, c.columns)
		if err == nil {
			t.Errorf("%s:%s: no error", c.path, c.columns)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s:%s: %v\nwant %q in it", c.path, c.columns, err, w)
			}
		}
	}
}

// TestPairsDatasetDictRows: a null or a NaN in a DatasetDict's directory
// of qrels splits, read as one table, is named by its row in the table
// and by its split and its row there, where the user looks for it; a
// file's row is named as before.
func TestPairsDatasetDictRows(t *testing.T) {
	dir := t.TempDir()
	dd := filepath.Join(dir, "qrels")
	s := func(v ...string) arrow.Array { return strs(v) }
	for _, sp := range []struct {
		name string
		rows int
		ids  arrow.Array
		sc   arrow.Array
	}{
		{"test", 3, s("d1", "d2", "d3"), float64Array([]float64{1, 1, 0})},
		{"train", 2, strs([]string{"d4", ""}, 1), float64Array([]float64{1, math.NaN()})},
	} {
		os.MkdirAll(filepath.Join(dd, sp.name), 0o755)
		q := strs(slices.Repeat([]string{"q"}, sp.rows))
		raw := arrowtest.Write(t, []string{"query-id", "corpus-id", "score"}, []arrow.Array{q, sp.ids, sp.sc}, 2, false)
		os.WriteFile(filepath.Join(dd, sp.name, "data-00000-of-00001.arrow"), raw, 0o644)
		os.WriteFile(filepath.Join(dd, sp.name, "state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	}
	os.WriteFile(filepath.Join(dd, "dataset_dict.json"), []byte(`{"splits": ["test", "train"]}`), 0o644)
	for _, c := range []struct{ columns, want string }{
		{"", `column "corpus-id", row 4 (split "train", its row 1) is null`},
		{"query-id,query-id,score", `column "score", row 4 (split "train", its row 1): score NaN is not a finite number`},
	} {
		if _, err := Pairs(dd, c.columns); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:%s: %v, want %q", dd, c.columns, err, c.want)
		}
	}
	// Splits whose score columns are of other types (float64 in test,
	// int64 in train) are refused naming the column and both types.
	os.WriteFile(filepath.Join(dd, "train", "data-00000-of-00001.arrow"), arrowtest.Write(t, []string{"query-id", "corpus-id", "score"},
		[]arrow.Array{s("q", "q"), s("d4", "d5"), int64s([]int64{1, 0})}, 2, false), 0o644)
	if _, err := Pairs(dd, ""); err == nil || !strings.Contains(err.Error(), `column "score" is int64 here and float64 in test/data-00000-of-00001.arrow`) {
		t.Errorf("%s of splits of other score types: %v", dd, err)
	}
	// So is a null embedding in such a directory of embeddings.
	de := filepath.Join(dir, "emb")
	for _, sp := range []struct {
		name string
		rows [][]float32
	}{{"train", [][]float32{{1, 2}, {3, 4}}}, {"test", [][]float32{{5, 6}, nil}}} {
		os.MkdirAll(filepath.Join(de, sp.name), 0o755)
		raw := arrowtest.Write(t, []string{"emb"}, []arrow.Array{lists(sp.rows, 0)}, 2, false)
		os.WriteFile(filepath.Join(de, sp.name, "data-00000-of-00001.arrow"), raw, 0o644)
		os.WriteFile(filepath.Join(de, sp.name, "state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	}
	os.WriteFile(filepath.Join(de, "dataset_dict.json"), []byte(`{"splits": ["train", "test"]}`), 0o644)
	if _, err := ReadParquetColumn(de, "emb"); err == nil || !strings.Contains(err.Error(), `column "emb", row 3 (split "test", its row 1) is null`) {
		t.Errorf("%s: %v, want its split's row", de, err)
	}
	if got := rowName(filepath.Join(dd, "train", "data-00000-of-00001.arrow"), 1); got != "row 1" {
		t.Errorf("a file's row: %q, want %q", got, "row 1")
	}
}

// TestReadQrelsTextColumns: a text of pairs with a header line has its
// columns picked by name (FILE:QUERY,ROW[,SCORE]), in the order named —
// another order than the file's, or two of an interaction log's four —
// and a name the header lacks, or a line of another width, is refused at
// its line.
func TestReadQrelsTextColumns(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	path := write("qrels.tsv", "query-id\tcorpus-id\tscore\n0\t1\t1\n1\t0\t1\n1\t2\t0\n")
	log := write("log.csv", "user_id,ts,item_id,event\n2,17,0,1\n0,18,2,0\n,19,1,1\n")
	for _, c := range []struct {
		path, columns string
		want          [][2]int
		err           string
	}{
		{path, "", [][2]int{{0, 1}, {1, 0}}, ""},
		{path, "query-id,corpus-id,score", [][2]int{{0, 1}, {1, 0}}, ""},
		{path, "corpus-id,query-id,score", [][2]int{{1, 0}, {0, 1}}, ""},
		{path, "query-id,corpus-id", [][2]int{{0, 1}, {1, 0}, {1, 2}}, ""}, // no score: every pair
		{path, "query-id,corpus_id", nil, `qrels.tsv:1: no column "corpus_id" in the header line (its columns: query-id, corpus-id, score): did you mean "corpus-id"?`},
		{path, "query-id,query-id", nil, `the column "query-id" named twice`},
		{path, "query-id", nil, "want the pairs' columns QUERY,ROW or QUERY,ROW,SCORE"},
		{log, "user_id,item_id,event", [][2]int{{2, 0}}, `log.csv:4: an empty field`},
		{write("short.csv", "u,i,s,x\n0,1,1,7\n1,1\n"), "u,i", nil, "short.csv:3: 2 columns, and the header (line 1) has 4"},
	} {
		ids, err := bundle.NewPairIDs(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadQrels(c.path, c.columns, ids)
		switch {
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%s:%s: %v, %v; want %v", filepath.Base(c.path), c.columns, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s:%s: %v; want an error with %q", filepath.Base(c.path), c.columns, err, c.err)
		}
	}
	ids, _ := bundle.NewPairIDs(nil, nil)
	got, err := ReadQrels(write("log2.csv", "user_id,ts,item_id,event\n2,17,0,1\n0,18,2,0\n1,19,1,3\n"), "user_id,item_id,event", ids)
	if err != nil || !slices.Equal(got, [][2]int{{2, 0}, {1, 1}}) {
		t.Errorf("an interaction log's two columns and its score: %v, %v", got, err)
	}
}
