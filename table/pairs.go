package table

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/ccsets/ccs/bundle"
)

// Pair columns' names, as BEIR's and MTEB's qrels on the Hugging Face Hub
// name them (query-id, corpus-id, score) and as other exports do, for a
// table whose pair columns are not its only ones.
var (
	queryColumns = []string{"query-id", "query_id", "qid", "query"}
	rowColumns   = []string{"corpus-id", "corpus_id", "doc-id", "doc_id", "docid", "pid", "passage-id", "passage_id", "passage", "doc"}
	scoreColumns = []string{"score", "relevance", "rel", "label", "grade"}
)

// Pairs reads relevance pairs (query, relevant row) from the table at
// path — Parquet, Arrow IPC, or a Hugging Face dataset's directory, as
// ReadTable reads them, but for the pair columns alone — as an (m, 2) array, or (m, 3) with a score each
// (what bundle.PairIDs.Rows resolves): the columns columns names, "QUERY,ROW"
// or "QUERY,ROW,SCORE"; without it, a table of two or three columns in
// that order, or the columns named as BEIR's qrels name them (query-id,
// corpus-id and score, as the Hub's BEIR and MTEB datasets hold them; and
// query_id, qid, corpus_id, doc_id, pid …). Ids are integers or strings
// (the array holds integers where both ids and the score are integers,
// strings otherwise); a score is an integer or a float. A null anywhere is
// an error naming its column and row: a pair without an id or a score
// says nothing.
func Pairs(path, columns string) (bundle.Array, error) {
	// The pair columns alone are read (a table of pairs may carry a
	// query's text beside them), in the file's order: cols[j] is the
	// read table's column at its rank among them.
	var cols, read []int
	tbl, err := readColumns(path, func(s *arrow.Schema) ([]int, error) {
		var err error
		if cols, err = pairColumns(path, s, columns); err != nil {
			return nil, err
		}
		read = slices.Compact(slices.Sorted(slices.Values(cols)))
		return read, nil
	})
	if err != nil {
		return bundle.Array{}, err
	}
	defer tbl.Release()
	for j, c := range cols {
		cols[j], _ = slices.BinarySearch(read, c)
	}
	m, w := int(tbl.NumRows()), len(cols)
	ints := make([][]int64, w)
	strs := make([][]string, w)
	var scores []float64
	for j, c := range cols {
		if j == 2 {
			ints[j], scores, err = scoreValues(path, tbl, c)
		} else {
			ints[j], strs[j], err = ColumnValues(path, tbl, c, "integer or string ids")
		}
		if err != nil {
			return bundle.Array{}, err
		}
	}
	shape := []int{m, w}
	if strs[0] == nil && strs[1] == nil && scores == nil {
		a := bundle.Array{Shape: shape, I64: make([]int64, m*w)}
		for i := range m {
			for j := range w {
				a.I64[i*w+j] = ints[j][i]
			}
		}
		return a, nil
	}
	a := bundle.Array{Shape: shape, Str: make([]string, m*w)}
	for i := range m {
		for j := range w {
			switch {
			case strs[j] != nil:
				a.Str[i*w+j] = strs[j][i]
			case j == 2 && scores != nil:
				a.Str[i*w+j] = strconv.FormatFloat(scores[i], 'g', -1, 64)
			default:
				a.Str[i*w+j] = strconv.FormatInt(ints[j][i], 10)
			}
		}
	}
	return a, nil
}

// DatasetDictPairsNote is the note ccs bundle -pairs and Python's
// ccs.bundle(pairs=) give when path (a file of pairs, its columns split
// off) is a DatasetDict's directory, whose splits ReadQrels reads as one
// table of m pairs: every split's judgements pooled. It is "" for anything
// else.
func DatasetDictPairsNote(path string, m int) string {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return ""
	}
	splits, err := DatasetSplits(path)
	if err != nil || len(splits) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: a DatasetDict: its splits %s read as one table of pairs, in that order (%d relevant pairs in all), every split's judgements pooled (%s reads one split)",
		path, strings.Join(splits, ", "), m, filepath.Join(path, splits[0]))
}

// ReadQrels reads relevance pairs (query, relevant row) from a file of
// them, resolved to rows by ids (bundle.PairIDs.Rows): text, .tsv, .csv
// or .txt (bundle.ReadQrels: BEIR's qrels; columns, where given, named
// by its header line), or else a table (Pairs: a
// Parquet or Arrow file, a Hugging Face dataset's directory, a directory
// of Parquet parts), its pair columns those columns names ("QUERY,ROW" or
// "QUERY,ROW,SCORE"; "" for Pairs to find them). It is what ccs bundle
// -pairs and Python's ccs.bundle(pairs=FILE) read a file with.
func ReadQrels(path, columns string, ids *bundle.PairIDs) ([][2]int, error) {
	ext, gz := strings.ToLower(filepath.Ext(path)), false
	if ext == ".gz" { // qrels.tsv.gz
		ext, gz = strings.ToLower(filepath.Ext(strings.TrimSuffix(path, filepath.Ext(path)))), true
	}
	switch ext {
	case ".tsv", ".csv", ".txt":
		if columns != "" { // named by its header line
			ids.Columns = strings.Split(columns, ",")
			defer func() { ids.Columns = nil }()
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var r io.Reader = f
		if gz {
			z, err := gzip.NewReader(f)
			if err != nil {
				return nil, fmt.Errorf("%s: not gzip-compressed: %w", path, err)
			}
			r = z
		}
		pairs, err := bundle.ReadQrels(r, path, ids)
		if gz && errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: the gzip stream stops before its end: the file is cut short (gzip -t says so) — write or copy it again", path)
		}
		return pairs, err
	}
	a, err := Pairs(path, columns)
	if err != nil {
		return nil, err
	}
	return ids.Rows(a, path)
}

// pairColumns are the indices of the query's, the row's and (where there
// is one) the score's columns of schema: those columns names (FILE:Q,R[,S]),
// or the only two or three, or those named as qrels name them.
func pairColumns(path string, schema *arrow.Schema, columns string) ([]int, error) {
	if columns != "" {
		names := strings.Split(columns, ",")
		if len(names) != 2 && len(names) != 3 {
			return nil, fmt.Errorf("%s:%s: want the pairs' columns QUERY,ROW or QUERY,ROW,SCORE (the columns: %s)", path, columns, Columns(schema))
		}
		cols := make([]int, len(names))
		for j, name := range names {
			name = strings.TrimSpace(name)
			at := schema.FieldIndices(name)
			if len(at) == 0 {
				return nil, NoColumn(path, name, schema)
			}
			cols[j] = at[0]
		}
		return cols, nil
	}
	if n := schema.NumFields(); n == 2 || n == 3 {
		cols := make([]int, n)
		for j := range cols {
			cols[j] = j
		}
		return cols, nil
	}
	find := func(names []string) int {
		for _, name := range names {
			if i := slices.IndexFunc(schema.Fields(), func(f arrow.Field) bool { return strings.EqualFold(f.Name, name) }); i >= 0 {
				return i
			}
		}
		return -1
	}
	q, r, s := find(queryColumns), find(rowColumns), find(scoreColumns)
	if q < 0 || r < 0 {
		return nil, fmt.Errorf("%s: which columns hold the pairs? give %s:QUERY,ROW or %s:QUERY,ROW,SCORE (the columns: %s)", path, path, path, Columns(schema))
	}
	if s < 0 {
		return []int{q, r}, nil
	}
	return []int{q, r, s}, nil
}

// scoreValues reads a score column: integers (ints; of the types idValue
// reads), or floating-point numbers (floats; float16 is not taken), every
// one finite and none null.
func scoreValues(path string, tbl arrow.Table, col int) (ints []int64, floats []float64, err error) {
	fld := tbl.Schema().Field(col)
	rows := 0
	for _, chunk := range tbl.Column(col).Data().Chunks() {
		for i := range chunk.Len() {
			if chunk.IsNull(i) {
				return nil, nil, fmt.Errorf("%s: column %q, %s is null: a pair without a score says nothing of its relevance (BEIR's qrels score a relevant pair above 0, one judged not relevant 0)", path, fld.Name, rowName(path, rows+i))
			}
		}
		switch c := chunk.(type) {
		case *array.Float64:
			floats = append(floats, c.Float64Values()...)
		case *array.Float32:
			for _, v := range c.Float32Values() {
				floats = append(floats, float64(v))
			}
		default:
			for i := range chunk.Len() {
				v, _, kind := idValue(chunk, i)
				if kind != idInt {
					return nil, nil, fmt.Errorf("%s: column %q is %v: want scores, integers or floating-point numbers (BEIR's qrels score a relevant pair above 0)", path, fld.Name, fld.Type)
				}
				ints = append(ints, v)
			}
		}
		rows += chunk.Len()
	}
	if ints != nil && floats != nil {
		return nil, nil, fmt.Errorf("%s: column %q mixes integer and floating-point chunks", path, fld.Name)
	}
	for i, v := range floats {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("%s: column %q, %s: score %v is not a finite number: a missing score says nothing of the pair's relevance: give it one, or leave the pair out", path, fld.Name, rowName(path, i), v)
		}
	}
	return ints, floats, nil
}
