package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/retrieve"
)

// The command's -db (compare, evaluate, retrieve, serve, calibrate's
// reference pool, collection load) reads a text table or JSON lines as
// -embeddings does.
func init() { retrieve.RegisterText(readTextCollection) }

// idColumns are the names of a collection's column of ids taken without
// ?ids=, as a Parquet table's are.
var idColumns = []string{"id", "ids", "_id"}

// leftAsIDs finds, in a reading's note, the column or field it left out
// as the ids ("id" (?ids)).
var leftAsIDs = regexp.MustCompile(`("(?:[^"\\]|\\.)*") \(\?ids\)`)

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
// row numbers. A file of one number a row (ids given as -db) is refused.
func readTextCollection(path, name, ids string) (*retrieve.Collection, error) {
	arg := path
	if name != "" {
		arg = path + ":" + name
	}
	var others []otherColumn
	if ids != "" {
		others = append(others, otherColumn{column: ids, flag: "?ids=" + ids})
	} else { // a column or field id, ids or _id (BEIR's corpus) is the ids, as a Parquet table's is
		others = append(others, otherColumn{flag: "?ids", names: idColumns})
	}
	f, err := readEmbeddings(arg, false, others...)
	if err != nil {
		if ids == "" && strings.Contains(err.Error(), "an id or labels read as a coordinate?") {
			return nil, fmt.Errorf("%w; as a collection's ids: %s?ids=COLUMN", err, path)
		}
		return nil, err
	}
	if f.D == 1 && integral(f.Rows) {
		return nil, fmt.Errorf("%s: one integer a row, no embedding: a file of ids? ids go with ccs retrieve's -ids FILE, or beside the embeddings as FILE?ids=COLUMN", path)
	}
	if ids == "" { // the id column the reading left out, as its note says: "id" (?ids)
		if m := leftAsIDs.FindStringSubmatch(f.conv); m != nil {
			ids, _ = strconv.Unquote(m[1])
		}
	}
	var keys []string
	if ids != "" {
		if keys, err = readIDStrings(path+":"+ids, "ids", f.N, f.D); err != nil {
			return nil, err // there, and refused: a repeat, one missing, a header read otherwise
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
	c, err := retrieve.NewCollection(f.Rows, f.D, ints)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Converted = f.conv
	if keys != nil && ints == nil {
		if err := c.SetKeys(keys); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return c, nil
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
