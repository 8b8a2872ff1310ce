package table

import (
	"math"
	"os"
	"path/filepath"
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
	if a, err = Pairs(wide, "annotator,corpus-id"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Str, []string{"x", "d1", "y", "d2"}) || a.Shape[1] != 2 {
		t.Errorf("two named columns: %q", a.Str)
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
		{nullID, "", []string{"nullid.parquet", `column "query-id", row 1 is null`}},
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
