package main

import (
	"fmt"
	"strconv"

	"github.com/ccsets/ccs/retrieve"
)

// The command's -db (compare, evaluate, retrieve, serve, calibrate's
// reference pool, collection load) reads a text table or JSON lines as
// -embeddings does.
func init() { retrieve.RegisterText(readTextCollection) }

// readTextCollection reads a collection from a text table (.csv, .tsv,
// .txt) or JSON lines, gzip-compressed too, as -embeddings reads them:
// FILE:COLUMN (or FIELD) names the embedding; ?ids=NAME a column or field
// of ids — integers the items' ids, other strings their keys — left out
// of the embedding; without it the ids are the row numbers.
func readTextCollection(path, name, ids string) (*retrieve.Collection, error) {
	arg := path
	if name != "" {
		arg = path + ":" + name
	}
	var others []otherColumn
	if ids != "" {
		others = append(others, otherColumn{column: ids, flag: "?ids=" + ids})
	}
	f, err := readEmbeddings(arg, false, others...)
	if err != nil {
		return nil, err
	}
	var keys []string
	var ints []int64
	if ids != "" {
		if keys, err = readIDStrings(path+":"+ids, "ids", f.N, f.D); err != nil {
			return nil, err
		}
		ints = make([]int64, len(keys))
		for i, k := range keys {
			v, err := strconv.ParseInt(k, 10, 64)
			if err != nil || strconv.FormatInt(v, 10) != k { // "007" stays a key
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
