package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/suggest"
	"github.com/ccsets/ccs/table"
)

// The user's own arrays, as ccs bundle reads them: a file, or FILE:NAME
// for an array of an .npz, a tensor of a .safetensors or a column of a
// .parquet (bundle.SplitInput).

// inputKind is a file's type by its extension.
func inputKind(path string) (string, error) {
	if err := textParts(path); err != nil {
		return "", err
	}
	switch ext := strings.ToLower(filepath.Ext(filepath.Clean(path))); ext { // emb.zarr/ too
	case ".npy", ".npz", ".parquet", ".safetensors":
		return ext, nil
	case ".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle":
		return "", bundle.PickleFile(path)
	case ".arrow", ".feather": // read as Parquet is: a table of columns
		return ".parquet", nil
	case ".tsv", ".csv", ".txt":
		return ".txt", nil
	case ".gz":
		switch textExt(path) {
		case ".csv", ".tsv", ".txt":
			return ".txt", nil
		case ".jsonl", ".ndjson", ".json":
			return ".jsonl", nil
		}
		return "", fmt.Errorf("%s: a gzip-compressed file, which ccs reads only of a .csv, .tsv, .txt or JSON lines (.jsonl): decompress it first (gunzip -k %s)", path, path)
	case ".jsonl", ".ndjson", ".json": // JSON Lines: datasets' to_json writes them to a .json
		return ".jsonl", nil
	default:
		if other := otherFormat(ext); other != "" { // .h5ad, .xlsx, …: what it is, and how to write its arrays out
			return "", fmt.Errorf("%s: %s", path, other)
		}
		if ext == "" && bundle.IsTable(path) { // a Hugging Face dataset's directory
			return ".parquet", nil
		}
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return "", fmt.Errorf("%s: a directory without state.json or dataset_dict.json: want a file (.npy, .npz, .safetensors, .parquet, .arrow), a Hugging Face dataset's directory (save_to_disk), or a directory named *.parquet of Parquet parts (as Dask and Spark write one)", path)
		}
		return "", fmt.Errorf("%s: unknown file type %q: want .npy, .npz (FILE:ARRAY picks an array), .safetensors (FILE:TENSOR picks a tensor), .parquet, .arrow or a Hugging Face dataset's directory (FILE:COLUMN picks a column), a text table, .csv, .tsv or .txt (gzip-compressed too: .csv.gz), or JSON lines, .jsonl (FILE:FIELD picks a field)", path, ext)
	}
}

// otherFormat says what a file of a format ccs does not read is, and how
// to write its arrays in one it reads.
func otherFormat(ext string) string {
	switch ext {
	case ".h5ad":
		return `an AnnData file (HDF5), which ccs does not read: write its embedding and its labels out — in Python, a = anndata.read_h5ad(PATH); np.save("emb.npy", a.obsm["X_pca"]) (or another obsm key; a.X.toarray() for a sparse matrix of features); a.obs.to_csv("obs.csv") — then -embeddings emb.npy -labels obs.csv:cell_type (a column of a.obs)`
	case ".h5", ".hdf5", ".hdf", ".he5", ".keras":
		return `an HDF5 file, which ccs does not read: write the array out — in Python, with h5py.File(PATH) as f: np.save("emb.npy", f["NAME"][:]) (list the names with f.visit(print)) — and give emb.npy in its place`
	case ".mat":
		return `a MATLAB file, which ccs does not read: in MATLAB, writematrix(X, "emb.csv"); or in Python, np.save("emb.npy", scipy.io.loadmat(PATH)["X"]) (h5py for a -v7.3 file) — and give emb.npy (or emb.csv) in its place`
	case ".xlsx", ".xls", ".ods":
		return `a spreadsheet's workbook, which ccs does not read: save the sheet as CSV (Excel: File › Save As › CSV UTF-8; pandas: pd.read_excel(PATH).to_csv("emb.csv", index=False)) — and give the CSV in its place`
	case ".rds", ".rda", ".rdata":
		return `an R data file, which ccs does not read: in R, write.csv(x, "emb.csv", row.names = FALSE), or arrow::write_parquet(df, "emb.parquet") — and give that file in its place`
	case ".zarr":
		return `a Zarr store, which ccs does not read: in Python, np.save("emb.npy", zarr.open(PATH)[:]) — and give emb.npy in its place`
	}
	return ""
}

// textParts refuses a directory of text parts — Spark's df.write.csv or
// .json writes one, named as the file was meant to be (emb.csv/) —, with
// how to join them into the one file ccs reads: a directory read as a
// file fails with no more than "is a directory".
func textParts(path string) error {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return nil
	}
	if ext := strings.ToLower(filepath.Ext(filepath.Clean(path))); ext == ".parquet" || ext == ".arrow" {
		return nil // a directory of Parquet parts, whose reader says what it holds
	}
	path = filepath.Clean(path)
	for _, ext := range []string{".csv", ".tsv", ".txt", ".json", ".jsonl"} {
		parts, _ := filepath.Glob(filepath.Join(path, "part-*"+ext))
		gz, _ := filepath.Glob(filepath.Join(path, "part-*"+ext+".gz"))
		if len(parts)+len(gz) == 0 {
			continue
		}
		join := fmt.Sprintf("cat %s/part-*%s > joined%s", path, ext, ext)
		if ext == ".csv" || ext == ".tsv" {
			join = fmt.Sprintf("with a header in each part (option header=true): head -n 1 %s > joined%s; tail -q -n +2 %s/part-*%s >> joined%s; without one, cat %s/part-*%s > joined%s", first(parts, gz), ext, path, ext, ext, path, ext, ext)
		}
		if len(gz) > 0 {
			join += " (gunzip the .gz parts first)"
		}
		return fmt.Errorf("%s: a directory of %d %s parts, as Spark writes one (df.write%s): ccs reads one file — join them in their order, %s; or write Parquet (df.write.parquet), whose directory of parts ccs reads", path, len(parts)+len(gz), ext, map[bool]string{true: ".csv", false: ".json"}[ext != ".json" && ext != ".jsonl"], join)
	}
	return nil
}

// sameFile says whether paths a and b name one file (./emb.csv and
// emb.csv, a link and its target).
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// first is the first of a's paths, else of b's.
func first(a, b []string) string {
	if len(a) > 0 {
		return a[0]
	}
	return b[0]
}

// readArray reads an .npy, or one array of an .npz or tensor of a
// .safetensors: the named one, else the one of the given names present,
// else the only one.
func readArray(path, name string, names ...string) (bundle.Array, string, error) {
	kind, err := inputKind(path)
	if err != nil {
		return bundle.Array{}, "", err
	}
	switch kind {
	case ".npy":
		if name != "" {
			return bundle.Array{}, "", fmt.Errorf("%s: an .npy holds one array: no :%s", path, name)
		}
		a, err := bundle.ReadNPY(path)
		return a, strings.TrimSuffix(filepath.Base(path), ".npy"), err
	case ".npz":
		arrays, err := bundle.ReadNPZ(path)
		if err != nil {
			return bundle.Array{}, "", err
		}
		got, err := pickArray(path, "array", slices.Sorted(maps.Keys(arrays)), name, names)
		if err != nil {
			return bundle.Array{}, "", err
		}
		return arrays[got], got, nil
	case ".safetensors":
		st, err := bundle.OpenSafetensors(path)
		if err != nil {
			return bundle.Array{}, "", err
		}
		defer st.Close()
		got, err := pickArray(path, "tensor", st.Names(), name, names)
		if err != nil {
			return bundle.Array{}, "", err
		}
		a, err := st.Read(got)
		return a, got, err
	}
	return bundle.Array{}, "", fmt.Errorf("%s: a %s file, where an array is read: give it as an .npy, an .npz or a .safetensors (np.save(\"x.npy\", x))", path, map[string]string{".txt": "text", ".jsonl": "JSON-lines", ".parquet": "table", ".npy": "NumPy", ".npz": "NumPy", ".safetensors": "safetensors"}[kind])
}

// pickArray picks one of a file's arrays (or tensors), have: name, else
// the first of names present, else the only one.
func pickArray(path, what string, have []string, name string, names []string) (string, error) {
	if name != "" {
		if !slices.Contains(have, name) {
			return "", fmt.Errorf("%s: no %s %q (have %s)%s", path, what, name, quoted(have), suggest.DidYouMean(name, have))
		}
		return name, nil
	}
	for _, n := range names {
		if slices.Contains(have, n) {
			return n, nil
		}
	}
	if len(have) == 1 {
		return have[0], nil
	}
	return "", fmt.Errorf("%s: which %s? give FILE:%s (have %s)", path, what, strings.ToUpper(what), quoted(have))
}

// quoted is names quoted and joined by commas.
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// arraySource names the array got of path in messages: the file, and the
// array or tensor of a file that holds several.
func arraySource(path, kind, got string) string {
	switch kind {
	case ".npz":
		return path + ": array " + strconv.Quote(got)
	case ".safetensors":
		return path + ": tensor " + strconv.Quote(got)
	}
	return path
}

// embeddingsFile is a matrix of embeddings read from a file.
type embeddingsFile struct {
	bundle.Embeddings
	conv   string   // the conversions made on reading, for the note on stderr
	splits []string // a Hugging Face DatasetDict's splits, read as one table
	// index is a text table's unnamed index of integers (left out), and
	// indexOrder says when it holds the row numbers out of order
	// (shuffledIndex): labels from another file pair with its rows by
	// position, and belong to them only where that file's index is the
	// same (csvIndex); orderWarned marks it said once.
	index       []int
	indexOrder  string
	orderWarned bool
}

// readEmbeddingsCtx is readEmbeddings, returning ctx's error as soon as
// ctx is done: reading 768 MB took 2.6 s on a loaded machine, which
// Ctrl-C waited out. The read goes on to its end on its own goroutine,
// its result dropped (the command is stopping; the process exits).
func readEmbeddingsCtx(ctx context.Context, arg string, views bool, others ...otherColumn) (*embeddingsFile, error) {
	type read struct {
		e   *embeddingsFile
		err error
	}
	done := make(chan read, 1)
	go func() {
		e, err := readEmbeddings(arg, views, others...)
		done <- read{e, err}
	}()
	select {
	case r := <-done:
		return r.e, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readEmbeddings reads embeddings: an (n, d) array (or, with views,
// (n, v, d) views) of any floating-point dtype, or a Parquet column of
// float16, float32 or float64 lists. Every value must be finite (bundle.EmbeddingsOf).
func readEmbeddings(arg string, views bool, others ...otherColumn) (*embeddingsFile, error) {
	path, name := bundle.SplitInput(arg)
	kind, err := inputKind(path)
	if err != nil {
		return nil, err
	}
	switch kind {
	case ".parquet":
		if views {
			return nil, fmt.Errorf("%s: views come as an (n, v, d) array in an .npy, .npz or .safetensors", path)
		}
		c, err := table.ReadParquetColumn(path, name)
		if err != nil {
			return nil, err
		}
		e := bundle.Embeddings{Source: path, Rows: c.Rows, N: c.N, D: c.D}
		f := &embeddingsFile{Embeddings: e, conv: c.Converted}
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			if f.splits, err = table.DatasetSplits(path); err != nil {
				return nil, err
			}
		}
		return f, bundle.CheckEmbeddings(e)
	case ".jsonl":
		if views {
			return nil, fmt.Errorf("%s: views come as an (n, v, d) array in an .npy, .npz or .safetensors", path)
		}
		e, note, err := readJSONLEmbeddings(path, name, others...)
		if err != nil {
			return nil, err
		}
		return &embeddingsFile{Embeddings: e, conv: note}, bundle.CheckEmbeddings(e)
	case ".txt":
		if views {
			return nil, fmt.Errorf("%s: views come as an (n, v, d) array in an .npy, .npz or .safetensors", path)
		}
		e, note, index, err := readTextEmbeddings(path, name, others...)
		if err != nil {
			return nil, err
		}
		return &embeddingsFile{Embeddings: e, conv: note, index: index, indexOrder: shuffledIndex(index, 2)}, bundle.CheckEmbeddings(e)
	}
	names := []string{"embeddings", "anchors", "features", "queries"}
	if views {
		names = append([]string{"views"}, names...)
	}
	a, got, err := readArray(path, name, names...)
	if err != nil {
		return nil, err
	}
	e, err := bundle.EmbeddingsOf(a, arraySource(path, kind, got), views)
	if err != nil {
		return nil, err
	}
	return &embeddingsFile{Embeddings: e, conv: a.Converted}, nil
}

// readIDs reads one integer per row — labels or group ids — from an .npy,
// an .npz's array, a Parquet column, a .txt of one a line or a column of a
// .csv or .tsv (readCSVIDs, whose warning it returns), of integers or
// strings (strings become 0, 1, … in sorted order, bundle.LabelCodes, their
// names returned).
func readIDs(arg string, what string) (ids []int64, names []string, missing map[int64]string, warn string, err error) {
	path, name := bundle.SplitInput(arg)
	kind, err := inputKind(path)
	if err != nil {
		return nil, nil, nil, "", err
	}
	switch kind {
	case ".parquet":
		return readParquetIDs(path, name, what, true)
	case ".jsonl":
		values, field, err := readJSONLValues(path, name, what, false, false)
		if err != nil {
			return nil, nil, nil, "", err
		}
		ids, names, missing, err := jsonlIDs(path, field, what, values)
		return ids, names, missing, "", err
	case ".txt":
		if ext := textExt(path); ext == ".csv" || ext == ".tsv" {
			return readCSVIDs(path, name, what)
		}
		if values, column, firstLine, ok, err := readTxtColumn(path, name, what); ok || err != nil {
			if err != nil {
				return nil, nil, nil, "", err
			}
			if err := realColumn(path, column, values, what); err != nil {
				return nil, nil, nil, "", err
			}
			ids, names, missing, err := idsOfText(values, path, what)
			if _, ok := err.(*headerError); ok {
				return nil, nil, nil, "", fmt.Errorf("%s:%d: %q in column %q is not an integer, and the column's other values are: give each row an integer (or a missing mark such as NA), or names throughout", path, firstLine, values[0], column)
			}
			return ids, names, missing, "", err
		}
		ids, names, missing, err := readTextIDs(path, what)
		return ids, names, missing, "", err
	}
	a, got, err := readArray(path, name, what)
	if err != nil {
		return nil, nil, nil, "", err
	}
	ids, names, err = bundle.Labels(a, arraySource(path, kind, got), what)
	return ids, names, nil, "", err
}

// labelsInput is what -labels holds: one label a row (ids, with names
// for strings, and readIDs' warning), or several (sets: a multi-hot
// matrix or a list column, of c labels).
type labelsInput struct {
	ids     []int64
	names   []string
	missing map[int64]string // the missing marks of a text file's integers, as written
	warn    string
	sets    [][]int32
	c       int
	// strs says a list column's labels (names) are strings, not
	// integers: which of them mark a missing label.
	strs bool
	// classLabel says names are a Hugging Face ClassLabel's (ids the
	// dataset's, names[i] class i's, in its order, not sorted); note,
	// why a ClassLabel's names were not used, where they lie.
	classLabel bool
	note       string
	// listIDs says sets are a CSV column's lists of integers as written,
	// c the highest of them plus one (2 at least), not a matrix's columns:
	// -label-names then gives c, and a negative one, a missing label's
	// mark, is named for -missing-labels (namedNegativeIDs).
	listIDs bool
	// nullID is the number a null among listIDs' numbers was read as
	// (JSON lines: below every number listed), named null for
	// -missing-labels; 0 where none.
	nullID int32
}

// readLabels reads -labels, reading each file once: several labels a row
// where it is a multi-hot (n, C) matrix of 0s and 1s in an .npy, .npz or
// .safetensors (bundle.LabelSets), a list column of a Parquet or Arrow
// table or a Hugging Face dataset (table.ColumnLabelSets), or a CSV column
// of lists (csvLabelLists: pandas' to_csv of a column of lists); else one label
// a row, as readIDs reads them.
//
// checked says every line of a JSON-lines file is read whole by another
// reader (ccs bundle's embeddings, of the same file): the labels' pass
// then skims each line (readJSONLValues).
func readLabels(arg string, checked bool) (labelsInput, error) {
	path, name := bundle.SplitInput(arg)
	kind, err := inputKind(path)
	if err != nil {
		return labelsInput{}, err
	}
	switch kind {
	case ".jsonl": // several labels a row where the field holds lists
		values, field, err := readJSONLValues(path, name, "labels", true, checked)
		if err != nil {
			return labelsInput{}, err
		}
		if li, ok, err := jsonlLabelLists(path, field, values); ok || err != nil {
			return li, err
		}
		ids, names, missing, err := jsonlIDs(path, field, "labels", values)
		return labelsInput{ids: ids, names: names, missing: missing}, err
	case ".txt":
		ids, names, missing, warn, err := readIDs(arg, "labels")
		if err == nil && names != nil {
			values := make([]string, len(ids))
			for i, id := range ids {
				if id >= 0 && id < int64(len(names)) {
					values[i] = names[id]
				}
			}
			if hot, width, ok, err := numberRows(values, arg); textExt(path) == ".txt" && (ok || err != nil) {
				if err != nil {
					return labelsInput{}, err
				}
				return multiHotLabels(hot, width, arg) // np.savetxt("labels.txt", M)
			}
			sets, setNames, hot, ok, err := csvLabelLists(values, arg)
			switch {
			case err != nil:
				return labelsInput{}, err
			case hot != nil: // a multi-hot matrix's rows, as lists
				return multiHotLabels(hot, len(hot)/len(values), arg)
			case ok && setNames == nil:
				c := 2
				for _, s := range sets {
					for _, l := range s {
						c = max(c, int(l)+1)
					}
				}
				return labelsInput{sets: sets, c: c, listIDs: true}, nil
			case ok:
				return labelsInput{sets: sets, names: setNames, strs: true, c: max(2, len(setNames))}, nil
			}
		}
		return labelsInput{ids: ids, names: names, missing: missing, warn: warn}, err
	case ".parquet": // a list column: a Hugging Face dataset's Sequence of labels
		tbl, col, err := readColumn(path, name, "labels")
		if err != nil {
			return labelsInput{}, err
		}
		defer tbl.Release()
		if m, c, ok := table.ColumnMultiHot(tbl, col); ok { // a multi-hot matrix's rows, as an .npy's
			a := bundle.Array{Shape: []int{len(m) / c, c}, I64: m}
			source := fmt.Sprintf("%s:%s", path, tbl.Schema().Field(col).Name)
			sets, ok, err := bundle.LabelSets(a, source)
			switch {
			case err != nil:
				return labelsInput{}, err
			case ok:
				return labelsInput{sets: sets, c: c}, nil
			}
			ids, names, err := bundle.Labels(a, source, "labels") // one-hot: one label a row
			return labelsInput{ids: ids, names: names}, err
		}
		sets, names, ok, err := table.ColumnLabelSets(path, tbl, col)
		switch {
		case err != nil:
			return labelsInput{}, err
		case ok:
			strs := false
			if l, isList := tbl.Schema().Field(col).Type.(arrow.ListLikeType); isList {
				strs = l.Elem().ID() == arrow.STRING || l.Elem().ID() == arrow.LARGE_STRING
			}
			if !strs {
				if li, named := sequenceClassLabels(path, tbl.Schema().Field(col).Name, tbl.Schema(), sets, names); named || li.note != "" {
					return li, nil
				}
			}
			return labelsInput{sets: sets, names: names, strs: strs, c: max(2, len(names))}, nil
		}
		return tableLabelIDs(path, tbl, col, "labels")
	}
	a, got, err := readArray(path, name, "labels")
	if err != nil {
		return labelsInput{}, err
	}
	source := arraySource(path, kind, got)
	sets, ok, err := bundle.LabelSets(a, source)
	switch {
	case err != nil:
		return labelsInput{}, err
	case ok:
		return labelsInput{sets: sets, c: a.Shape[1]}, nil
	}
	ids, names, err := bundle.Labels(a, source, "labels")
	return labelsInput{ids: ids, names: names}, err
}

// numberRows reads labels read a line each that are lines of numbers —
// np.savetxt of an (n, C) matrix, blank- or comma-separated — as that
// matrix where it holds 0s and 1s alone (ok: hot, row-major, and its
// width); a matrix of other numbers is refused, naming its first line
// that holds one; ok is false for anything else (one label a line).
func numberRows(values []string, source string) (hot []int64, width int, ok bool, err error) {
	split := func(v string) []string {
		if strings.ContainsAny(v, ",;") { // savetxt(delimiter=", "), ";": three parts at least, not a decimal comma's two
			if f := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' }); len(f) > 2 {
				return f
			}
			return nil
		}
		if f := strings.Fields(v); len(f) > 1 {
			return f
		}
		return nil
	}
	width = -1
	for _, v := range values {
		f := split(v)
		if width == -1 {
			width = len(f)
		}
		if len(f) != width || width < 2 {
			return nil, 0, false, nil
		}
		for _, x := range f {
			if _, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
				return nil, 0, false, nil
			}
		}
	}
	if width < 2 {
		return nil, 0, false, nil
	}
	hot = make([]int64, 0, len(values)*width)
	for i, v := range values {
		for _, x := range split(v) {
			switch f, _ := strconv.ParseFloat(strings.TrimSpace(x), 64); {
			case f == 0 || f == 1:
				hot = append(hot, int64(f))
			case width == 2: // "18 24": a label of two numbers, as it always was
				return nil, 0, false, nil
			default:
				return nil, 0, false, fmt.Errorf("%s: every line holds %d numbers, a matrix, and row %d (counted from 0) holds %s: labels are one a line (a name or an integer), or a multi-hot matrix of 0s and 1s, a row's labels its columns of 1", source, width, i, x)
			}
		}
	}
	return hot, width, true, nil
}

// readNamedIDs reads one label a row, as readIDs does, but names the
// integers of a table's Hugging Face ClassLabel column by its names
// (tableLabelIDs), as -labels does: for -query-labels, whose names become
// the bundles' labels' names, -ood-rows, whose names are the faults, and
// -groups and -sessions, whose names messages give, and retrieve
// -anchor-labels, whose names pick a class-conditional set's classes.
func readNamedIDs(arg, what string) (labelsInput, error) {
	path, name := bundle.SplitInput(arg)
	if kind, err := inputKind(path); err == nil && kind == ".parquet" {
		tbl, col, err := readColumn(path, name, what)
		if err != nil {
			return labelsInput{}, err
		}
		defer tbl.Release()
		return tableLabelIDs(path, tbl, col, what)
	}
	ids, names, missing, warn, err := readIDs(arg, what)
	return labelsInput{ids: ids, names: names, missing: missing, warn: warn}, err
}

// tableLabelIDs reads column col of tbl (read from path) as tableIDs
// does, a null a missing label; integers the schema's metadata calls a
// Hugging Face ClassLabel are named by its names, in the dataset's id
// order (classLabelNames: classLabel set, or note saying why not).
func tableLabelIDs(path string, tbl arrow.Table, col int, what string) (labelsInput, error) {
	ids, names, missing, _, err := tableIDs(path, tbl, col, what, true)
	li := labelsInput{ids: ids, names: names, missing: missing}
	if err == nil && names == nil {
		li.names, li.note = classLabelNames(path, tbl.Schema().Field(col).Name, tbl.Schema(), ids)
		li.classLabel = li.names != nil
	}
	return li, err
}

// classLabelNames are the names of a table's integer labels (ids, of
// column) when the schema's metadata calls it a Hugging Face ClassLabel
// (table.ClassLabelNames): label i is names[i]. Metadata that lies — no
// JSON, names no list of distinct strings, or fewer names than the ids
// used — is ignored, the labels left numbers, and note says why.
func classLabelNames(path, column string, schema *arrow.Schema, ids []int64) (names []string, note string) {
	names, err := table.ClassLabelNames(schema, column)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v: its classes are numbered, not named", path, err)
	}
	if names == nil {
		return nil, ""
	}
	top := slices.Max(append([]int64{-1}, ids...))
	if top >= int64(len(names)) {
		return nil, fmt.Sprintf("%s: the ClassLabel feature %q of the schema's \"huggingface\" metadata names %d classes, but the column holds class %d: its classes are numbered, not named (ds.cast_column(%q, ClassLabel(names=…)) names them all)", path, column, len(names), top, column)
	}
	return names, ""
}

// sequenceClassLabels are a list column's integer labels (sets, numbered
// in the sorted order of their values, names) named by the names of a
// Hugging Face Sequence(ClassLabel) (table.SequenceClassLabelNames), as
// -label-names names a CSV column's integer lists: the sets hold the
// dataset's ids (listIDs; a negative one, -1, a missing label's mark for
// -missing-labels), label j names[j], in the dataset's id order, a class
// no row lists kept. named is false where the metadata names no such
// column; metadata that lies (as classLabelNames says) leaves them
// numbered, with a note saying why.
func sequenceClassLabels(path, column string, schema *arrow.Schema, sets [][]int32, names []string) (li labelsInput, named bool) {
	clNames, err := table.SequenceClassLabelNames(schema, column)
	if err != nil {
		return labelsInput{sets: sets, names: names, c: max(2, len(names)), note: fmt.Sprintf("%s: %v: its classes are numbered, not named", path, err)}, false
	}
	if clNames == nil {
		return labelsInput{}, false
	}
	ids := make([]int32, len(names))
	for j, n := range names {
		v, _ := strconv.ParseInt(n, 10, 32)
		ids[j] = int32(v)
	}
	if top := slices.Max(append([]int32{-1}, ids...)); int(top) >= len(clNames) {
		return labelsInput{sets: sets, names: names, c: max(2, len(names)), note: fmt.Sprintf("%s: the Sequence(ClassLabel) feature %q of the schema's \"huggingface\" metadata names %d classes, but the column lists class %d: its classes are numbered, not named", path, column, len(clNames), top)}, false
	}
	raw := make([][]int32, len(sets))
	for i, s := range sets {
		raw[i] = make([]int32, len(s))
		for k, l := range s {
			raw[i][k] = ids[l]
		}
	}
	strs, err := bundle.MatrixNames(clNames, len(clNames))
	if err != nil { // table.SequenceClassLabelNames refuses names twice
		return labelsInput{sets: sets, names: names, c: max(2, len(names)), note: fmt.Sprintf("%s: %v: its classes are numbered, not named", path, err)}, false
	}
	return labelsInput{sets: raw, names: clNames, strs: strs, c: len(clNames), listIDs: true, classLabel: true}, true
}

// classLabelIDs are -ood-classes as written, where the labels are a
// ClassLabel's (names, in the dataset's id order): an integer in range
// that names no class is the class of that id, its name (-ood-classes 1
// as before the names were read: "Trouser").
func classLabelIDs(classes, names []string) []string {
	out := slices.Clone(classes)
	for i, c := range classes {
		if v, err := strconv.ParseInt(c, 10, 64); err == nil && v >= 0 && v < int64(len(names)) && !slices.Contains(names, c) {
			out[i] = names[v]
		}
	}
	return out
}

// readTxtColumn reads a column of a .txt table of blank-separated fields
// with a header (np.savetxt's default delimiter, its header= line as
// "# x y label" above the data, or a first line of names): the column
// named, else one named as what is (label, labels). ok is false where the
// file is no such table — no column named, and no header naming what —:
// a .txt of one label a line, whose labels may hold blanks ("B cell").
func readTxtColumn(path, column, what string) (values []string, name string, firstLine int, ok bool, err error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, "", 0, false, err
	}
	i, comment := 0, ""
	for i < len(lines) && commentStart([]byte(lines[i]+"\n")) {
		comment, i = lines[i], i+1
	}
	if i >= len(lines) {
		return nil, "", 0, false, nil
	}
	want := columnNames(column, what)
	named := func(h []string) int { return columnIndex(h, want) }
	header, start := strings.Fields(lines[i]), i+1
	col := named(header)
	if c := commentNames(comment, 0); col < 0 && len(c) == len(header) && len(c) > 1 && named(c) >= 0 {
		header, start, col = c, i, named(c) // np.savetxt's header line above the data
	}
	if column == "" && col >= 0 && start < len(lines) {
		// No column named: a table only where the header's word heads a
		// column beside columns of numbers ("0.5 1.5 cat" below "x y
		// label"), not a .txt of one label a line whose first line holds
		// the word ("label A", "session 1", "no label").
		row := strings.Fields(lines[start])
		table := len(row) == len(header) && row[col] != header[col]
		for k, f := range row {
			if _, _, ok := parseNumber(f); k != col && !ok {
				table = false
			}
		}
		if !table {
			return nil, "", 0, false, nil
		}
	}
	if col < 0 || len(header) < 2 {
		if column == "" {
			return nil, "", 0, false, nil
		}
		return nil, "", 0, true, fmt.Errorf("%s: no column %q (the columns of its first line, split at blanks: %s): a .txt of labels holds one a line; a table's column is named by its header", path, column, strings.Join(header, ", "))
	}
	for k := start; k < len(lines); k++ {
		f := strings.Fields(lines[k])
		if len(f) == 0 {
			continue // a blank line: none (at the end, extra line breaks)
		}
		if len(f) != len(header) {
			return nil, "", 0, true, fmt.Errorf("%s:%d: %d fields, and the header has %d", path, k+1, len(f), len(header))
		}
		if firstLine == 0 {
			firstLine = k + 1
		}
		values = append(values, f[col])
	}
	return values, header[col], firstLine, true, nil
}

// readLines is a text file's lines (CRLF or LF, the last newline
// optional); none for an empty file.
func readLines(path string) ([]string, error) {
	r, c, err := openText(path) // a .gz decompressed, past Excel's and pandas' utf-8-sig byte-order mark
	if err != nil {
		return nil, err
	}
	defer c.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	text := strings.TrimSuffix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if text == "" {
		return nil, nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if err := utf8Text(path, i+1, l); err != nil {
			return nil, err
		}
	}
	return lines, nil
}

// csvIndex is a .csv's or .tsv's unnamed first column (pandas' index, R's
// row names) where it holds integers, nil otherwise: what tells whether
// two tables exported from one frame pair row by row.
func csvIndex(path string) []int {
	if ext := textExt(path); ext != ".csv" && ext != ".tsv" {
		return nil
	}
	r, f, err := openCSV(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	header, err := r.Read()
	if err != nil || len(header) < 2 || header[0] != "" {
		return nil
	}
	var rows []int
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows
		}
		if err != nil || len(rec) == 0 {
			return nil
		}
		k, err := strconv.Atoi(strings.TrimSpace(rec[0]))
		if err != nil {
			return nil
		}
		rows = append(rows, k)
	}
}

// shuffledPrefix begins shuffledIndex's warning.
const shuffledPrefix = "its first column, the index (unnamed, as pandas' to_csv and R's write.csv write row numbers),"

// shuffledIndex says when a table's unnamed index — pandas' row numbers,
// R's row names — holds each of 0 … n−1 (or 1 … n) once but out of
// order: the table was sorted or filtered after its rows were numbered
// (R's order(df$label)), and its values, matched to the embeddings' rows
// by position, may belong to other rows. "" otherwise; firstLine is the
// first value's line.
func shuffledIndex(rows []int, firstLine int) string {
	n := len(rows)
	if n < 2 || slices.IsSorted(rows) {
		return ""
	}
	lo := slices.Min(rows)
	if (lo != 0 && lo != 1) || slices.Max(rows) != lo+n-1 {
		return ""
	}
	seen := make([]bool, n)
	for _, r := range rows {
		if seen[r-lo] {
			return ""
		}
		seen[r-lo] = true
	}
	at := 0
	for at < n && rows[at] == lo+at {
		at++
	}
	return fmt.Sprintf(shuffledPrefix+" holds %d … %d out of order (line %d: row %d, where row %d was next): the table was sorted or filtered after its rows were numbered, and its values are matched to the embeddings' rows by position, not by that index — if the embeddings were saved before the sort, sort the table back first (df.sort_index(); R: df[order(as.integer(rownames(df))), ])",
		lo, lo+n-1, firstLine+at, rows[at], lo+at)
}

// realColumn refuses a column of real numbers given for labels or group
// ids (a coordinate picked by mistake, tickets.csv:dim_3): every value a
// number, some not whole. Read as names, each row was a class of its own,
// and the refusal spoke of one-item classes and -groups.
func realColumn(path, column string, values []string, what string) error {
	fraction := ""
	for _, v := range values {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) {
			if bundle.MissingString(v) {
				continue
			}
			return nil
		}
		if fraction == "" && f != math.Trunc(f) {
			fraction = v
		}
	}
	if fraction == "" {
		return nil
	}
	return fmt.Errorf("%s: column %q holds real numbers (%s among them), not %s: a coordinate picked by mistake? %s are integers or names", path, column, fraction, what, what)
}

// utf8Text refuses a line that is not UTF-8: a Latin-1 or Windows-1252
// export (Excel's plain "CSV") whose "ü" became U+FFFD in every name and
// file ccs wrote, silently.
func utf8Text(path string, line int, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	quoted := strconv.Quote(s)
	if len(quoted) > 80 {
		quoted = quoted[:80] + "…"
	}
	switch {
	case strings.HasPrefix(s, "\xff\xfe") || strings.HasPrefix(s, "\xfe\xff") || strings.Contains(s, "\x00"):
		return fmt.Errorf("%s:%d: not UTF-8 but UTF-16 (%s: Windows' \"Unicode\" text, PowerShell's Out-File): save it as UTF-8 (iconv -f utf-16 -t utf-8 FILE; Notepad: Save as, UTF-8)", path, line, quoted)
	case cp1252(s):
		return fmt.Errorf("%s:%d: not UTF-8 (%s): a Windows-1252 export (its curly quotes and dashes, bytes 0x80–0x9F), as Excel's plain CSV writes one? save it as UTF-8 (Excel: CSV UTF-8; iconv -f cp1252 -t utf-8 FILE; pandas: encoding=\"utf-8\")", path, line, quoted)
	}
	return fmt.Errorf("%s:%d: not UTF-8 (%s): a Latin-1 or Windows-1252 export, as Excel's plain CSV writes one? save it as UTF-8 (Excel: CSV UTF-8; iconv -f latin1 -t utf-8 FILE, or -f cp1252 for Windows' own; pandas: encoding=\"utf-8\")", path, line, quoted)
}

// cp1252 says whether s holds a byte 0x80–0x9F that is not part of a
// UTF-8 character: Windows-1252's curly quotes, dashes and euro sign,
// which Latin-1 leaves to control characters.
func cp1252(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 && s[i] >= 0x80 && s[i] <= 0x9f {
			return true
		}
		i += size
	}
	return false
}

// readTextIDs reads labels or group ids from a .txt file, one a line in
// row order: integers when every line is one (-1 marks no label, as in an
// .npy), otherwise strings; an empty line is a missing label (-1 among
// integers, "" among names). A first line that is not an integer above integers is
// a column's name, refused.
func readTextIDs(path, what string) ([]int64, []string, map[int64]string, error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(lines) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no %s", path, what)
	}
	ids, names, missing, err := idsOfText(lines, path, what)
	var header *headerError
	if errors.As(err, &header) {
		return nil, nil, nil, fmt.Errorf("%s:1: %q is a column's name, not one of the %s (the other lines are integers): a .txt of %s holds one a line and nothing else, in row order (remove it)", path, lines[0], what, what)
	}
	return ids, names, missing, err
}

// headerError is idsOfText's: the first value alone is not an integer.
type headerError struct{}

func (headerError) Error() string { return "a header above integers" }

// utf8BOM is the byte order mark some exports start a UTF-8 file with.
var utf8BOM = []byte("\ufeff")

// idsOfText reads labels or group ids from text values, one a row:
// integers when every value is one — or an integer-valued float ("3.0",
// as pandas writes an integer column that has a missing value) — or marks
// a missing label ("", "NA", "nan", … : bundle.MissingString), each such
// -1, no label; otherwise strings (a missing mark a missing label among
// them). A first value that is neither, above integers, is a
// *headerError.
func idsOfText(lines []string, path, what string) ([]int64, []string, map[int64]string, error) {
	if v, ok := savetxtIntegers(lines); ok { // np.savetxt("y.txt", y): 9.000000000000000000e+00
		lines = v
	}
	ints := make([]int64, len(lines))
	bad := -1       // the last line that is not an integer or a missing mark
	var marks []int // the lines that are missing marks
	lowest := int64(0)
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
		if v, ok := integerText(lines[i]); ok {
			ints[i], lowest = v, min(lowest, v)
			continue
		}
		if bundle.MissingString(lines[i]) {
			marks = append(marks, i) // no label, among integers as among names
			continue
		}
		bad = i
	}
	switch {
	case bad < 0:
		// Each spelling of a missing mark gets a negative label of its
		// own, below the file's own integers, which messages name as
		// written ("NA": 10, not -1: 10).
		var missing map[int64]string
		code, spelled := min(lowest, 0)-1, map[string]int64{}
		for _, i := range marks {
			c, ok := spelled[lines[i]]
			if !ok {
				if missing == nil {
					missing = map[int64]string{}
				}
				c, spelled[lines[i]], missing[code] = code, code, lines[i]
				code--
			}
			ints[i] = c
		}
		return ints, nil, missing, nil
	case bad == 0 && len(lines) > 1:
		return nil, nil, nil, &headerError{}
	}
	ids, names, err := bundle.Labels(bundle.Array{Shape: []int{len(lines)}, Str: lines}, path, what)
	return ids, names, nil, err
}

// savetxtForm is a number as NumPy's savetxt writes one by default
// (%.18e): a digit, a point, digits, an exponent of a sign and digits.
var savetxtForm = regexp.MustCompile(`^[+-]?[0-9]\.[0-9]+[eE][+-][0-9]+$`)

// savetxtIntegers reads lines every one of which is a number in
// savetxt's default form or a missing mark, each an integer below 2^53
// (savetxt writes an integer array so), as those integers' decimal
// forms; ok is false otherwise: a file of labels written so, not by
// hand ("1e1" beside "10" stays two names).
func savetxtIntegers(lines []string) (out []string, ok bool) {
	out = make([]string, len(lines))
	numbers := 0
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if !savetxtForm.MatchString(l) {
			if bundle.MissingString(l) {
				out[i] = l
				continue
			}
			return nil, false
		}
		f, err := strconv.ParseFloat(l, 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
			return nil, false
		}
		out[i] = strconv.FormatInt(int64(f), 10)
		numbers++
	}
	return out, numbers > 0
}

// integerText reads an integer, or an integer-valued float written with a
// decimal point and zeros ("3.0", "-12.00").
func integerText(s string) (int64, bool) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	i := strings.IndexByte(s, '.')
	if i <= 0 || strings.Trim(s[i+1:], "0") != "" {
		return 0, false
	}
	v, err := strconv.ParseInt(s[:i], 10, 64)
	return v, err == nil
}

// headerLike reports whether a .txt file's first line names a column of
// ids, as a table's header would (id, _id, corpus-id, doc_id, query-id,
// qid, pid, a recommender's user_id and item_id, …), rather than being an
// id.
func headerLike(line string) bool {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "id", "ids", "_id", "key", "doc", "docid", "doc_id", "doc-id", "document_id", "corpus-id", "corpus_id", "corpusid",
		"pid", "passage", "passage_id", "passage-id", "qid", "query", "query-id", "query_id", "queryid", "query-ids", "query_ids",
		"user", "user_id", "user-id", "userid", "item", "item_id", "item-id", "itemid", "product_id", "product-id", "productid", "sku":
		return true
	}
	return false
}

// tableColumn is the column of schema (path's) that FILE:COLUMN names
// (-labels, -groups, -ids …), or, unnamed, the one named for what
// ("labels" or "label"; for ids, "id" or "_id" too, as BEIR's corpus and
// queries tables on the Hugging Face Hub name theirs).
func tableColumn(path string, schema *arrow.Schema, column, what string) (int, error) {
	if column != "" {
		if at := schema.FieldIndices(column); len(at) > 0 {
			return at[0], nil
		}
		return -1, table.NoColumn(path, column, schema)
	}
	names := columnNames("", what)
	for _, name := range names {
		if at := schema.FieldIndices(name); len(at) > 0 {
			return at[0], nil
		}
	}
	quoted := make([]string, len(names))
	for i, name := range names {
		quoted[i] = strconv.Quote(name)
	}
	return -1, fmt.Errorf("%s: which column holds the %s? none is named %s (the columns: %s): give %s:COLUMN", path, what, strings.Join(quoted, " or "), table.Columns(schema), path)
}

// readParquetIDs reads an integer or string column, as tableIDs does.
func readParquetIDs(path, column, what string, nulls bool) (ids []int64, names []string, missing map[int64]string, warn string, err error) {
	tbl, col, err := readColumn(path, column, what)
	if err != nil {
		return nil, nil, nil, "", err
	}
	defer tbl.Release()
	return tableIDs(path, tbl, col, what, nulls)
}

// readColumn reads the column of path's table (Parquet, Arrow, a
// dataset's directory) that tableColumn picks — name, or the one of what
// — alone (table.ReadTableColumn). The caller releases the table.
func readColumn(path, name, what string) (arrow.Table, int, error) {
	return table.ReadTableColumn(path, func(s *arrow.Schema) (int, error) { return tableColumn(path, s, name, what) })
}

// tableIDs reads column col of tbl (read from path) as an integer or
// string column of what. With nulls — labels, group ids —, a null row is
// a missing label, as a text file's empty line is: its id is negative
// (−1 for strings; below the column's own integers for integers) and
// missing names it bundle.NullMark, so that -missing-labels applies to it
// and messages count it as null. Without — ids —, a null row is an
// error.
func tableIDs(path string, tbl arrow.Table, col int, what string, nulls bool) (ids []int64, names []string, missing map[int64]string, warn string, err error) {
	var strs []string
	var null []bool
	if nulls {
		ids, strs, null, err = table.ColumnValuesNull(path, tbl, col, "integer or string "+what)
	} else {
		ids, strs, err = table.ColumnValues(path, tbl, col, "integer or string "+what)
	}
	if err != nil {
		return nil, nil, nil, "", err
	}
	if null == nil {
		if strs == nil {
			return ids, nil, nil, "", nil
		}
		ids, names = bundle.LabelCodes(strs)
		return ids, names, nil, "", nil
	}
	code := int64(-1)
	if strs != nil {
		// Number the rows' strings without the nulls' placeholders.
		present := make([]string, 0, len(strs))
		for i, s := range strs {
			if !null[i] {
				present = append(present, s)
			}
		}
		codes, n := bundle.LabelCodes(present)
		ids, names = make([]int64, len(strs)), n
		for i, j := 0, 0; i < len(strs); i++ {
			if null[i] {
				ids[i] = code
				continue
			}
			ids[i], j = codes[j], j+1
		}
	} else {
		for i, v := range ids {
			if !null[i] {
				code = min(code, v-1)
			}
		}
		for i := range ids {
			if null[i] {
				ids[i] = code
			}
		}
	}
	return ids, names, map[int64]string{code: bundle.NullMark}, "", nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readPairs reads relevance pairs (query, relevant row): an (m, 2) array
// (.npy, an .npz's array) of integers or strings, or a text file of two
// columns separated by tabs, commas or spaces (a header line, and a third
// column of relevance scores — pairs scored 0 are left out — as BEIR's
// qrels files have them, are allowed), or a table's columns (table.Pairs:
// a Parquet or Arrow file of query-id, corpus-id and score, as the Hugging
// Face Hub holds BEIR's and MTEB's qrels; FILE:QUERY,ROW[,SCORE] picks
// them). ids resolves each pair's two ids to rows: 0-based row numbers,
// or ids looked up among the rows' ids.
func readPairs(arg string, ids *bundle.PairIDs) ([][2]int, error) {
	path, name := bundle.SplitInput(arg)
	kind, err := inputKind(path)
	if err != nil {
		return nil, err
	}
	if kind == ".txt" || kind == ".parquet" {
		return table.ReadQrels(path, name, ids)
	}
	if kind == ".jsonl" {
		return readJSONLPairs(path, name, ids)
	}
	a, _, err := readArray(path, name, "pairs", "qrels")
	if err != nil {
		return nil, err
	}
	return ids.Rows(a, path)
}

// readIDStrings reads the ids of n rows (of d values), in row order: a
// text file of one id a line, or an .npy, an .npz's array or a Parquet
// column of strings or integers; any number of them where n < 0.
func readIDStrings(arg, what string, n, d int) ([]string, error) {
	path, name := bundle.SplitInput(arg)
	kind, err := inputKind(path)
	if err != nil {
		return nil, err
	}
	var ids []string
	ext := textExt(path)
	switch {
	case kind == ".txt" && (ext == ".csv" || ext == ".tsv") && (name != "" || csvColumns(path) > 1):
		// A table's column: FILE.csv:COLUMN, or pandas' to_csv of a Series
		// (its index column and the ids).
		if ids, err = readCSVStrings(path, name, what); err != nil {
			return nil, err
		}
	case kind == ".txt" && name != "":
		return nil, fmt.Errorf("%s:%s: a text file of ids has no columns: it holds one id a line (a .csv or .tsv may name its column)", path, name)
	case kind == ".txt":
		if ids, err = readLines(path); err != nil {
			return nil, err
		}
		// The spaces around an id trimmed, as a text of pairs trims them
		// (an id ending in a space matched no pair's); empty lines at the
		// end (extra newlines) are no ids.
		for i, id := range ids {
			ids[i] = strings.TrimSpace(id)
		}
		for len(ids) > 1 && ids[len(ids)-1] == "" { // blank lines at the end: no ids
			ids = ids[:len(ids)-1]
		}
		for i, id := range ids {
			if id == "" {
				return nil, fmt.Errorf("%s:%d: an empty id (a blank line: a .txt of ids holds one id a line, in row order)", path, i+1)
			}
		}
		if len(ids) > 0 && headerLike(ids[0]) {
			return nil, fmt.Errorf("%s:1: %q is a column's name, not an id: a .txt of ids holds one id a line and nothing else, in row order, so a header line would give every row the id of the one before it (remove it)", path, ids[0])
		}
	case kind == ".jsonl":
		values, field, err := readJSONLValues(path, name, strings.ReplaceAll(what, " ", "_"), false, false)
		if err != nil {
			return nil, err
		}
		ids = make([]string, len(values))
		for i, v := range values {
			if v.kind == 0 || v.text == "" {
				return nil, fmt.Errorf("%s:%d: %q is null or empty: every row needs its id", path, v.line, field)
			}
			ids[i] = v.text
		}
	case kind == ".parquet":
		codes, names, _, _, err := readParquetIDs(path, name, what, false)
		if err != nil {
			return nil, err
		}
		ids = make([]string, len(codes))
		for i, c := range codes {
			if names != nil {
				ids[i] = names[c]
			} else {
				ids[i] = strconv.FormatInt(c, 10)
			}
		}
	default:
		a, _, err := readArray(path, name, strings.ReplaceAll(what, " ", "_"), "ids")
		if err != nil {
			return nil, err
		}
		if ids, err = bundle.IDStrings(a, path); err != nil {
			return nil, err
		}
	}
	if n >= 0 && len(ids) != n {
		hint := bundle.TransposedHint(len(ids), n, d)
		if kind == ".txt" && len(ids) == n+1 {
			hint = fmt.Sprintf(" (one line too many: its first line, %q, a header? a .txt of ids holds one id a line and nothing else, in row order: remove it, or write the ids with header=False)", ids[0])
		}
		return nil, &idCountError{msg: fmt.Sprintf("%s: %d %s for %d rows%s", path, len(ids), what, n, hint), got: len(ids)}
	}
	return ids, nil
}

// idCountError is readIDStrings' refusal of ids of another count than
// the rows': got ids.
type idCountError struct {
	msg string
	got int
}

func (e *idCountError) Error() string { return e.msg }

// openCSV opens a CSV file (a TSV by its extension; else the separator
// is sniffSeparator's of its first line) for reading, past a
// UTF-8 byte-order mark (Excel's "CSV UTF-8", pandas' utf-8-sig), its
// records of any number of fields; close the file when done.
func openCSV(path string) (*csvFile, io.Closer, error) {
	r0, f, err := openText(path)
	if err != nil {
		return nil, nil, err
	}
	br := r0.(*bufio.Reader)
	sep, skipped, comment := tableTop(br, textExt(path))
	r := csv.NewReader(br)
	if sep != 0 {
		r.Comma = sep // a spreadsheet's semicolons, where the comma is the decimal mark; a tab
	}
	r.FieldsPerRecord = -1
	return &csvFile{Reader: r, br: br, skipped: skipped, comment: commentNames(comment, r.Comma)}, f, nil
}

// csvFile is a CSV file's reader, its line numbers the file's where lines
// before the reader's first (Excel's "sep=;") were skipped.
type csvFile struct {
	*csv.Reader
	br         *bufio.Reader // what the reader reads, a line at a time
	skipped    int
	lastRecord []string // the last record Read returned
	comment    []string // the names of the last "#" line above the first record (np.savetxt's header=), if any
}

// records reads the records past the one just read (whose last field
// is its field last), in blocks on every core (inBlocks), calling each
// in the file's order with the fields of cols (copies: "" where a record
// is too short), the record's number of fields and its line; the first
// error in the file's order is returned, a parse error's in the file's
// lines.
func (r *csvFile) records(path string, last int, cols []int, each func(rec []string, fields, line int) error) error {
	lastLine, _ := r.FieldPos(last)
	type record struct {
		fields []string
		n      int
		line   int
	}
	// The record just read ends on its last field's line, past the line
	// breaks in it; the rest starts on the next.
	start := lastLine + 1
	if rec := r.lastRecord; last < len(rec) {
		start += strings.Count(rec[last], "\n")
	}
	comma := r.Comma
	return inBlocks(r.br, path, start, func(b []byte) int { return blockCut(b, true) },
		func(data []byte, line int) ([]record, error) {
			var out []record
			keep := func(rec []string, line int) error {
				f := make([]string, len(cols))
				for k, c := range cols {
					if c < len(rec) {
						f[k] = strings.Clone(rec[c]) // not the record's string, which holds every field
					}
				}
				out = append(out, record{f, len(rec), line})
				return nil
			}
			if comma < utf8.RuneSelf && bytes.IndexByte(data, '"') < 0 {
				err := plainLines(data, byte(comma), line, len(cols), keep)
				return out, err
			}
			cr := csv.NewReader(bytes.NewReader(data))
			cr.Comma, cr.FieldsPerRecord, cr.ReuseRecord = comma, -1, true
			for {
				rec, err := cr.Read()
				if err == io.EOF {
					return out, nil
				}
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					pe.Line += line - 1
					pe.StartLine += line - 1
				}
				if err != nil {
					return out, fmt.Errorf("%s: %w", path, err)
				}
				l, _ := cr.FieldPos(0)
				keep(rec, l+line-1)
			}
		},
		func(b []record) error {
			for _, rec := range b {
				if err := each(rec.fields, rec.n, rec.line); err != nil {
					return err
				}
			}
			return nil
		})
}

// FieldPos is csv.Reader's, in the file's lines.
func (r *csvFile) FieldPos(field int) (line, column int) {
	line, column = r.Reader.FieldPos(field)
	return line + r.skipped, column
}

// Read is csv.Reader's, a parse error's lines the file's.
func (r *csvFile) Read() ([]string, error) {
	rec, err := r.Reader.Read()
	r.lastRecord = rec
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		pe.Line += r.skipped
		pe.StartLine += r.skipped
	}
	return rec, err
}

// csvColumns is the number of columns of a CSV (or TSV) file's first
// line, 0 where it cannot be read.
func csvColumns(path string) int {
	r, f, err := openCSV(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	first, err := r.Read()
	if err != nil {
		return 0
	}
	return len(first)
}

// readCSVStrings reads a CSV (or TSV) file's column of ids as written,
// in row order, below its header: the column named, or with none named
// the one beside pandas' unnamed index (Series.to_csv). An empty id is
// an error naming its line.
func readCSVStrings(path, column, what string) ([]string, error) {
	r, f, err := openCSV(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := slices.Index(header, column)
	var named []string // unnamed: the header's columns named as what's are (id, _id)
	if column == "" {
		for _, h := range header {
			if slices.Contains(columnNames("", what), strings.TrimSpace(h)) {
				named = append(named, h)
			}
		}
	}
	switch {
	case column == "" && len(header) == 2 && header[0] == "":
		col = 1
	case column == "" && len(named) == 1:
		col = slices.Index(header, named[0])
	case column == "" && len(named) > 1:
		return nil, fmt.Errorf("%s: both %q and %q could hold the %s: name one, %s:%s", path, named[0], named[1], what, path, named[0])
	case column == "":
		return nil, fmt.Errorf("%s: which column holds the %s? give %s:COLUMN (the columns: %s)", path, what, path, nameList(header))
	case col < 0:
		return nil, fmt.Errorf("%s: no column %q (the columns: %s)%s", path, column, nameList(header), suggest.DidYouMean(column, header))
	}
	var ids []string
	for line := 2 + r.skipped; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return ids, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if col >= len(rec) {
			return nil, fmt.Errorf("%s:%d: %d fields, and the header has %d", path, line, len(rec), len(header))
		}
		if rec[col] == "" {
			return nil, fmt.Errorf("%s:%d: an empty id", path, line)
		}
		if err := utf8Text(path, line, rec[col]); err != nil {
			return nil, err
		}
		ids = append(ids, strings.Clone(rec[col])) // not the record's string, which holds every field
	}
}

// readCSVIDs reads labels or group ids from a column of a table in a .csv
// (or a tab-separated .tsv), as pandas' to_csv writes a DataFrame (and
// AnnData's obs.to_csv): a header line naming the columns, quoted fields
// where they hold the separator. column names the column, by its header;
// without it, one named as what is (label, labels). A file of one column
// is a .txt of one label a line (readTextIDs). The values are read as
// readTextIDs reads its lines. warn is set when the first column is
// pandas' unnamed index (AnnData's obs_names) and repeats a value: rows an
// export wrote twice, which do not line up with the embeddings' rows.
func readCSVIDs(path, column, what string) (ids []int64, names []string, missing map[int64]string, warn string, err error) {
	r, f, err := openCSV(path)
	if err != nil {
		return nil, nil, nil, "", err
	}
	defer f.Close()
	header, err := r.Read()
	if err == io.EOF {
		return nil, nil, nil, "", fmt.Errorf("%s: no %s", path, what)
	}
	if err != nil {
		return nil, nil, nil, "", fmt.Errorf("%s: %w", path, err)
	}
	quoted := make([]string, len(header))
	for i, h := range header {
		quoted[i] = strconv.Quote(h)
	}
	col := slices.Index(header, column)
	if col < 0 && column != "" { // "x, label": names matched without the blanks around them, as the embeddings' reader has them
		col = slices.IndexFunc(header, func(h string) bool { return strings.TrimSpace(h) == strings.TrimSpace(column) })
	}
	var dataFirst []string // the first line, data below np.savetxt's "# x,y,label" header
	want := columnNames(column, what)
	named := func(h []string) int { return columnIndex(h, want) }
	if c := r.comment; col < 0 && named(header) < 0 && len(c) == len(header) && len(c) > 1 && named(c) >= 0 {
		dataFirst, header = header, c
		if column != "" {
			col = named(c)
		}
		for i, h := range header {
			quoted[i] = strconv.Quote(h)
		}
	}
	columns := nameList(quoted)
	// One column, no name given: its first line is a header only where it
	// names the column (pandas' to_csv(index=False) of a Series) or stands
	// alone above integers; otherwise it is a value, as in a .txt.
	firstIsValue := false
	switch {
	case column == "" && len(header) == 1:
		col, firstIsValue = 0, !columnName(header[0], what)
	case column == "" && len(header) == 2 && header[0] == "":
		col = 1 // pandas' unnamed index and one column: Series.to_csv
	case column == "":
		col = slices.IndexFunc(header, func(h string) bool { return h == what || h == strings.TrimSuffix(what, "s") })
		if col < 0 {
			return nil, nil, nil, "", fmt.Errorf("%s: which column holds the %s? give %s:COLUMN (the columns: %s)", path, what, path, columns)
		}
	}
	if col >= 0 && slices.Index(header[col+1:], header[col]) >= 0 {
		return nil, nil, nil, "", fmt.Errorf("%s: two columns are named %q (the columns: %s): rename one", path, header[col], columns)
	}
	if col < 0 {
		hint := ": the first line is read as the columns' names, as pandas' to_csv writes them"
		numbers := 0
		for _, h := range header {
			if _, _, ok := parseNumber(h); ok {
				numbers++
			}
		}
		if numbers >= 2 && numbers*2 >= len(header) && !(header[0] == "" && numbers < len(header)-1) { // pandas' ",query_id,0,1,…" is a header
			return nil, nil, nil, "", fmt.Errorf("%s: no column %q: its first line holds numbers (%s, %s … of %d fields), no names — a file without a header has no column of a name: write the %s' column alone as a .txt, cut -d'%c' -f N %s > %s.txt (N its column's number, 1 the first), or the file with a header", path, column, header[0], header[1], len(header), what, r.Comma, path, what)
		}
		if near, ok := suggest.Nearest(column, header); ok {
			hint = fmt.Sprintf(": did you mean %q?", near)
		} else if len(header) == 1 {
			// One column whose name holds the others': another delimiter.
			for _, sep := range []string{"|", " "} {
				if slices.Contains(strings.Split(header[0], sep), column) {
					hint = fmt.Sprintf(": the file's columns are separated by %q, and a .csv's are read at commas (semicolons, tabs where its first line has more of them): write it with commas (pandas' to_csv), or save the column alone as .txt", sep)
					break
				}
			}
		}
		return nil, nil, nil, "", fmt.Errorf("%s: no column %q (the columns: %s)%s", path, column, columns, hint)
	}
	index := header[0] == "" && col != 0 // pandas' unnamed index: AnnData's obs_names
	seen := map[string]int{}             // an index value → its line
	var rowNumbers []int                 // the index's values while they are integers
	var values []string
	repeats, first := 0, ""
	firstLine := 0 // the first value's line
	each := func(rec []string, fields, line int) error {
		if firstLine == 0 {
			firstLine = line
		}
		if fields != len(header) {
			return fmt.Errorf("%s:%d: %d fields, and the header has %d", path, line, fields, len(header))
		}
		if err := utf8Text(path, line, rec[0]); err != nil {
			return err
		}
		if !firstIsValue && strings.TrimSpace(rec[0]) == strings.TrimSpace(header[col]) && strings.TrimSpace(rec[1]) == strings.TrimSpace(header[0]) {
			return fmt.Errorf("%s:%d: a line repeating the header (%q in column %q): files joined with their headers (cat part-*.csv)? keep the first file's header only (tail -n +2 for the others): read as a row, it would pair every row below with the label of the one above", path, line, header[col], header[col])
		}
		values = append(values, strings.TrimSpace(rec[0]))
		if index {
			if k, err := strconv.Atoi(strings.TrimSpace(rec[1])); err == nil && len(rowNumbers) == len(values)-1 {
				rowNumbers = append(rowNumbers, k)
			}
			if at, ok := seen[rec[1]]; ok {
				if repeats == 0 {
					first = fmt.Sprintf("%q on lines %d and %d", rec[1], at, line)
				}
				repeats++
			} else {
				seen[rec[1]] = line
			}
		}
		return nil
	}
	if dataFirst != nil {
		line, _ := r.FieldPos(0)
		if err := each([]string{dataFirst[col], dataFirst[0]}, len(dataFirst), line); err != nil {
			return nil, nil, nil, "", err
		}
	}
	if err := r.records(path, len(header)-1, []int{col, 0}, each); err != nil {
		return nil, nil, nil, "", err
	}
	if firstIsValue {
		lines := append([]string{header[0]}, values...)
		ids, names, missing, err = idsOfText(lines, path, what)
		if _, ok := err.(*headerError); !ok {
			return ids, names, missing, "", err
		}
		// Not an integer, above integers: the column's name.
	}
	if len(values) == 0 {
		return nil, nil, nil, "", fmt.Errorf("%s: no %s below the header", path, what)
	}
	if repeats == 0 && len(rowNumbers) == len(values) {
		warn = shuffledIndex(rowNumbers, firstLine)
	}
	if repeats > 0 {
		warn = fmt.Sprintf("its first column, the index (unnamed, as pandas' to_csv writes a DataFrame's index: AnnData's obs_names), repeats %s (the first: %s): rows an export wrote twice do not line up with the embeddings' rows, and distinct cells of one barcode (two samples concatenated) need unique names to be told apart (adata.obs_names_make_unique())",
			plural(repeats, "value", "values"), first)
	}
	if err := realColumn(path, header[col], values, what); err != nil {
		return nil, nil, nil, "", err
	}
	ids, names, missing, err = idsOfText(values, path, what)
	if _, ok := err.(*headerError); ok {
		return nil, nil, nil, "", fmt.Errorf("%s:%d: %q in column %q is not an integer, and the column's other values are: give each row an integer (or a missing mark such as NA, or nothing), or names throughout", path, firstLine, values[0], header[col])
	}
	return ids, names, missing, warn, err
}

// columnName reports whether a one-column table's first line names its
// column of what (labels or groups) rather than being the first value.
func columnName(s, what string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case what, strings.TrimSuffix(what, "s"), "label", "labels", "class", "classes", "target", "targets", "y",
		"category", "categories", "cell_type", "celltype", "group", "groups", "group_id", "cluster", "clusters",
		"language", "lang", "locale", "domain":
		return true
	}
	return false
}

// labelsByQueryID puts query labels read from arg in the queries' row
// order when arg is a .csv or .tsv whose first column (not the labels')
// holds the queries' ids (queryIDs, of -query-ids idsArg), one line a
// query in any order — a table of query-id,language as a database export
// writes it —, and says so in note when the order was not the rows'.
// Labels of another file, or of a table whose first column holds no
// query id, are returned as they are, in row order. A first column that
// names some queries but not every one once is refused, naming the
// first line at fault.
func labelsByQueryID(arg string, labels []int64, queryIDs []string, idsArg string) ([]int64, string, error) {
	path, column := bundle.SplitInput(arg)
	ext := textExt(path)
	if ext != ".csv" && ext != ".tsv" {
		return labels, "", nil
	}
	r, f, err := openCSV(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	header, err := r.Read()
	if err != nil || len(header) < 2 || header[0] == column {
		return labels, "", nil // one column, or the labels' own: no ids
	}
	var first []string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		first = append(first, strings.Clone(strings.TrimSpace(rec[0])))
	}
	if len(first) != len(labels) {
		return labels, "", nil
	}
	row := make(map[string]int, len(queryIDs))
	for i, id := range queryIDs {
		row[id] = i
	}
	named := 0
	for _, id := range first {
		if _, ok := row[id]; ok {
			named++
		}
	}
	if named == 0 {
		return labels, "", nil // not ids: the labels in row order
	}
	byRow := make([]int64, len(queryIDs))
	line := make([]int, len(queryIDs)) // the line (from 2) that labels row i
	moved := false
	for i, id := range first {
		q, ok := row[id]
		switch {
		case !ok:
			return nil, "", fmt.Errorf("%s:%d: query id %q is not among %s's, though %d of its %d lines name one: its first column, %q, is read as the queries' ids, each query's label matched by it", path, i+2, id, idsArg, named, len(first), header[0])
		case line[q] > 0:
			return nil, "", fmt.Errorf("%s:%d: query id %q is on line %d too: one line a query", path, i+2, id, line[q])
		}
		byRow[q], line[q] = labels[i], i+2
		moved = moved || q != i
	}
	for q, l := range line {
		if l == 0 {
			return nil, "", fmt.Errorf("%s: query %q of %s has no line, though its first column, %q, names queries by id: give every query its label", path, queryIDs[q], idsArg, header[0])
		}
	}
	if !moved {
		return labels, "", nil
	}
	return byRow, fmt.Sprintf("its lines are not in the queries' row order: each query's label was matched by its id, the first column %q, to %s", header[0], idsArg), nil
}

// nameMatrix names the columns of the multi-hot matrix li read from
// -labels (labels) by the names in -label-names (arg): column j becomes
// label names[j], as a list column's values name its labels (li.names,
// li.strs). Labels that are no such matrix are refused, as are names that
// are not one a column, empty or given twice. Lists of integers (a CSV
// column's) are numbered columns whose count the names give, as a
// matrix's columns give it: a label no row lists is kept, as a matrix's
// column of 0s is, and an id no name names is refused, naming the row; a
// negative one, a missing label's mark, is -missing-labels' (ccs bundle
// applies it first: missingNamedIDs) and printed as it is by retrieve.
func nameMatrix(li *labelsInput, labels, arg string) error {
	switch {
	case li.sets == nil:
		return fmt.Errorf("-label-names %s names the columns of a multi-hot matrix (several labels a row), and %s holds one label a row: give those labels as names instead (mlb.classes_[M.argmax(1)] for a one-hot matrix M)", arg, labels)
	case li.names != nil:
		return fmt.Errorf("-label-names %s names the columns of a multi-hot matrix, and %s holds lists of labels, which are their own names: leave -label-names out", arg, labels)
	}
	names, err := readLabelNames(arg)
	if err != nil {
		return err
	}
	if li.listIDs {
		for i, s := range li.sets {
			for _, l := range s {
				if int(l) >= len(names) { // a negative one marks a missing label (-missing-labels)
					return fmt.Errorf("-label-names %s names %d labels (ids 0 to %d), and %s %s lists label %d, which no name names: give one a label, in the ids' order", arg, len(names), len(names)-1, labels, rowName(labels, i), l)
				}
			}
		}
		li.c = len(names)
	}
	strs, err := bundle.MatrixNames(names, li.c)
	if err != nil {
		return fmt.Errorf("-label-names %s: %w (-labels %s)", arg, err, labels)
	}
	li.names, li.strs = names, strs
	return nil
}

// rowName names row i of a -labels file for a message, counted from 0
// as pandas' index counts it, and for JSON lines, one row a line, the
// line it is on where no line is blank.
func rowName(labels string, i int) string {
	path, _ := bundle.SplitInput(labels)
	if k, err := inputKind(path); err == nil && k == ".jsonl" {
		return fmt.Sprintf("row %d (counted from 0; line %d where no line is blank)", i, i+1)
	}
	return fmt.Sprintf("row %d (counted from 0)", i)
}

// nameList lists a table's column names for a message: all of a dozen,
// else the first ten and the last, and how many (a table of 386 columns
// named them all).
func nameList(names []string) string {
	if len(names) <= 12 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s … %s, %d in all", strings.Join(names[:10], ", "), names[len(names)-1], len(names))
}

// readLabelNames reads -label-names: a text file of one name a line (an
// empty line refused by its number), or an .npy, an .npz's array or a
// Parquet column of strings or integers, as -ids are read.
func readLabelNames(arg string) ([]string, error) {
	path, _ := bundle.SplitInput(arg)
	kind, err := inputKind(path)
	if err != nil {
		return nil, err
	}
	if kind != ".txt" {
		return readIDStrings(arg, "label names", -1, 0)
	}
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" { // blank lines at the end (echo >>): no names
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("-label-names %s: no names in it (one a line)", arg)
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			return nil, fmt.Errorf("-label-names %s:%d: an empty name: every column needs one, a line each", path, i+1)
		}
	}
	return lines, nil
}
