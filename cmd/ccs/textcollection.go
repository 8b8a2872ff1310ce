package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/retrieve"
)

// The command's -db (compare, evaluate, retrieve, serve, calibrate's
// reference pool, collection load) reads a text table or JSON lines as
// -embeddings does, and refuses the formats -embeddings refuses by name.
func init() { retrieve.RegisterText(readTextCollection) }

// idColumns are the names of a collection's column of ids taken without
// ?ids=, as a Parquet table's are.
var idColumns = []string{"id", "ids", "_id"}

// integral says whether every value is an integer: a column of ids.
func integral(v []float32) bool {
	for _, x := range v {
		if x != float32(math.Trunc(float64(x))) {
			return false
		}
	}
	return true
}

// readTextCollection reads a collection from a text table (.csv, .tsv,
// .txt) or JSON lines, gzip-compressed too, as -embeddings reads them:
// FILE:COLUMN (or FIELD) names the embedding; ?ids=NAME a column or field
// of ids — integers the items' ids, other strings their keys — left out
// of the embedding; without it, one named id, ids or _id, or else the
// row numbers. A file of one integer a row (ids given as -db) is refused,
// and so is a file of a format -embeddings names to refuse (HDF5, a
// workbook …); ok is false for any other file, retrieve's own to read.
func readTextCollection(path, name, ids string) (c *retrieve.Collection, ok bool, err error) {
	if other := otherFormat(strings.ToLower(filepath.Ext(filepath.Clean(path)))); other != "" {
		return nil, true, fmt.Errorf("%s: %s", path, other)
	}
	if kind, err := inputKind(path); err != nil || kind != ".txt" && kind != ".jsonl" {
		return nil, false, nil
	}
	arg := path
	if name != "" {
		arg = path + ":" + name
	}
	other := otherColumn{column: ids, flag: "?ids=" + ids, leftOut: new(string)}
	if ids == "" { // a column or field id, ids or _id (BEIR's corpus) is the ids, as a Parquet table's is
		other = otherColumn{flag: "the ids", names: idColumns, leftOut: new(string)}
	}
	f, err := readEmbeddings(arg, false, other)
	if err != nil {
		if ids == "" && strings.Contains(err.Error(), "an id or labels read as a coordinate?") {
			return nil, true, fmt.Errorf("%w; as a collection's ids: %s?ids=COLUMN", err, path)
		}
		return nil, true, err
	}
	if f.D == 1 && integral(f.Rows) {
		return nil, true, fmt.Errorf("%s: one integer a row, no embedding: a file of ids? ids go with ccs retrieve's -ids FILE, or beside the embeddings as FILE?ids=COLUMN", path)
	}
	if ids == "" { // the id column the reading left out
		ids = *other.leftOut
	}
	var keys []string
	if ids != "" {
		if keys, err = readIDStrings(path+":"+ids, "ids", f.N, f.D); err != nil {
			return nil, true, err // there, and refused: a repeat, one missing, a header read otherwise
		}
	}
	var ints []int64
	if ids != "" {
		ints = make([]int64, len(keys))
		for i, k := range keys {
			v, ok := integerText(k)                                                           // 103, or 103.0 as pandas writes an integer column that held a NaN
			if c := strconv.FormatInt(v, 10); !ok || k != c && !strings.HasPrefix(k, c+".") { // "007" stays a key
				ints = nil
				break
			}
			ints[i] = v
		}
	}
	c, err = retrieve.NewCollection(f.Rows, f.D, ints)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", path, err)
	}
	c.Converted = f.conv
	if keys != nil && ints == nil {
		if err := c.SetKeys(keys); err != nil {
			return nil, true, fmt.Errorf("%s: %w", path, err)
		}
	}
	return c, true, nil
}

// noteStore says, on stderr, what reading a collection converted — a
// text table's or JSON lines' note (what was read as the embedding, what
// left out, a batch output's order), float64 narrowed — as -embeddings'
// reading says it.
func noteStore(out *output, spec string, s retrieve.Store) {
	if c, ok := s.(*retrieve.Collection); ok && c.Converted != "" {
		fmt.Fprintf(out.stderr, "note: %s: converted on reading: %s\n", spec, c.Converted)
	}
}
