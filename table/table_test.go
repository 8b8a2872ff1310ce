package table

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/arrowtest"
	"github.com/ccsets/ccs/retrieve"
)

// arrowBatches writes rows (with string ids and labels) as Arrow IPC in
// batches of batch rows: the stream format, as a Hugging Face dataset's
// save_to_disk writes it, or the file format (Feather v2).
func arrowBatches(t *testing.T, rows [][]float32, keys, labels []string, batch int, file bool) []byte {
	t.Helper()
	texts := make([]string, len(rows))
	for i := range texts {
		texts[i] = "a passage"
	}
	cols := []arrow.Array{strs(keys), strs(texts), lists(rows, 0), strs(labels)}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return arrowtest.Write(t, []string{"id", "text", "embedding", "label"}, cols, batch, file)
}

// TestReadArrowClaimsNoMore: a file that is no Arrow stream, whose first
// four bytes read as a message length claim 1.7 GB ("embe"), is refused
// without a buffer of that length (it cost seconds of clearing memory and
// as much resident memory as it claimed): the messages of a stream are no
// longer than the stream. Not parallel: it counts the process's
// allocations.
func TestReadArrowClaimsNoMore(t *testing.T) {
	data := []byte("embedding,label\n1,2\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readArrow(bytes.NewReader(data), int64(len(data)), 2*int64(len(data))+1<<20)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "not a readable Arrow IPC stream or file") {
		t.Errorf("a CSV read as Arrow: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("a %d-byte file that is no Arrow stream: %d MiB allocated to refuse it", len(data), got>>20)
	}
}

// TestReadArrow: a collection from an Arrow IPC stream (.arrow) or file
// (.feather) of several record batches: the rows, and the string ids from
// its "id" column, as written; ReadTable hands the other columns on; bad
// files are refused naming the file, and a header claiming more memory
// than the file could hold is refused before it is allocated.
func TestReadArrow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 23
	rows, keys, labels := make([][]float32, n), make([]string, n), make([]string, n)
	var flat []float32
	for i := range rows {
		rows[i] = []float32{float32(i), -float32(i) / 3, 0.5}
		flat = append(flat, rows[i]...)
		keys[i], labels[i] = fmt.Sprintf("doc%d", 100-i), []string{"ant", "bee"}[i%2]
	}
	for _, tc := range []struct {
		name string
		file bool
	}{{"data-00000-of-00001.arrow", false}, {"emb.feather", true}} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, arrowBatches(t, rows, keys, labels, 10, tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := retrieve.ReadCollection(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.N != n || c.D != 3 || !slices.Equal(c.Rows, flat) || !slices.Equal(c.Keys, keys) || c.IDs[n-1] != n-1 {
			t.Errorf("%s: N=%d D=%d keys %q", tc.name, c.N, c.D, c.Keys)
		}
		tbl, err := ReadTable(path)
		if err != nil {
			t.Fatal(err)
		}
		if tbl.NumRows() != n || tbl.NumCols() != 4 || tbl.Schema().Field(3).Name != "label" {
			t.Errorf("%s: table of %d rows, %d columns", tc.name, tbl.NumRows(), tbl.NumCols())
		}
		tbl.Release()
	}

	stream := arrowBatches(t, rows, keys, labels, 10, false)
	file := arrowBatches(t, rows, keys, labels, 10, true)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty.arrow", nil, "not a readable Arrow IPC"},
		{"text.arrow", []byte("id,embedding\n1,2\n"), "not a readable Arrow IPC"},
		{"short.arrow", stream[:len(stream)/2], "record batch "},
		{"short.feather", file[:len(file)-20], "not a readable Arrow IPC file"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := retrieve.ReadCollection(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%s: %v, want an error naming the file and %q", tc.name, err, tc.want)
		}
	}
	if _, err := readArrow(bytes.NewReader(stream), int64(len(stream)), 64); err == nil || !strings.Contains(err.Error(), "claim more than 64 bytes") {
		t.Errorf("over the allocation limit: %v", err)
	}

	// A dataset save_to_disk wrote in two shards: its state.json's order,
	// one collection.
	ds := filepath.Join(dir, "ds")
	os.Mkdir(ds, 0o755)
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(ds, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("data-00001-of-00002.arrow", arrowBatches(t, rows[15:], keys[15:], labels[15:], 4, false))
	write("data-00000-of-00002.arrow", arrowBatches(t, rows[:15], keys[:15], labels[:15], 4, false))
	write("state.json", []byte(`{"_data_files": [{"filename": "data-00000-of-00002.arrow"}, {"filename": "data-00001-of-00002.arrow"}], "_fingerprint": "x"}`))
	if !bundle.IsTable(ds) || bundle.IsTable(dir) {
		t.Errorf("IsTable: the dataset %v, a directory without state.json %v", bundle.IsTable(ds), bundle.IsTable(dir))
	}
	c, err := retrieve.ReadCollection(ds)
	if err != nil {
		t.Fatal(err)
	}
	if c.N != n || !slices.Equal(c.Rows, flat) || !slices.Equal(c.Keys, keys) {
		t.Errorf("dataset of two shards: N=%d, keys %q", c.N, c.Keys)
	}
	// A DatasetDict save_to_disk wrote: its splits' directories, in
	// dataset_dict.json's order, one collection.
	dd := filepath.Join(dir, "dd")
	for _, sp := range []struct {
		name   string
		lo, hi int
	}{{"train", 0, 9}, {"test", 9, n}} {
		os.MkdirAll(filepath.Join(dd, sp.name), 0o755)
		os.WriteFile(filepath.Join(dd, sp.name, "data-00000-of-00001.arrow"), arrowBatches(t, rows[sp.lo:sp.hi], keys[sp.lo:sp.hi], labels[sp.lo:sp.hi], 4, false), 0o644)
		os.WriteFile(filepath.Join(dd, sp.name, "state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	}
	os.WriteFile(filepath.Join(dd, "dataset_dict.json"), []byte(`{"splits": ["train", "test"]}`), 0o644)
	if !bundle.IsTable(dd) {
		t.Errorf("IsTable: a DatasetDict's directory is not a table")
	}
	if c, err := retrieve.ReadCollection(dd); err != nil || c.N != n || !slices.Equal(c.Rows, flat) || !slices.Equal(c.Keys, keys) {
		t.Errorf("DatasetDict of two splits: %v", err)
	}
	files, err := DatasetFiles(dd)
	wantFiles := []string{"dataset_dict.json", "train/state.json", "train/data-00000-of-00001.arrow", "test/state.json", "test/data-00000-of-00001.arrow"}
	for i := range files {
		files[i], _ = filepath.Rel(dd, files[i])
	}
	if err != nil || !slices.Equal(files, wantFiles) {
		t.Errorf("DatasetFiles of a DatasetDict: %q, %v; want %q", files, err, wantFiles)
	}
	if splits, err := DatasetSplits(dd); err != nil || !slices.Equal(splits, []string{"train", "test"}) {
		t.Errorf("DatasetSplits: %q, %v", splits, err)
	}
	if splits, err := DatasetSplits(ds); err != nil || splits != nil {
		t.Errorf("DatasetSplits of a Dataset: %q, %v; want none", splits, err)
	}
	os.MkdirAll(filepath.Join(dd, "other"), 0o755)
	os.WriteFile(filepath.Join(dd, "other", "b.feather"), arrowBatchesNoText(t, rows, keys, labels), 0o644)
	os.WriteFile(filepath.Join(dd, "other", "state.json"), []byte(`{"_data_files": [{"filename": "b.feather"}]}`), 0o644)
	for _, tc := range []struct{ dict, want string }{
		{`{"splits": []}`, "dataset_dict.json: lists no splits"},
		{`{"splits": ["../ds"]}`, `dataset_dict.json: splits names "../ds": want a directory in`},
		{`{"splits": ["train", "train"]}`, `dataset_dict.json: splits names "train" twice`},
		{`{"splits": ["train", "valid"]}`, "valid: a directory is read as a Hugging Face dataset"},
		{`{"splits": ["train", "other"]}`, "other/b.feather: its columns"},
		{`{"splits": `, "dataset_dict.json: unexpected end of JSON input"},
	} {
		os.WriteFile(filepath.Join(dd, "dataset_dict.json"), []byte(tc.dict), 0o644)
		if _, err := retrieve.ReadCollection(dd); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("dataset_dict %s: %v, want %q", tc.dict, err, tc.want)
		}
	}

	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "a.arrow"), stream, 0o644)
	os.WriteFile(filepath.Join(other, "b.feather"), arrowBatchesNoText(t, rows, keys, labels), 0o644)
	for _, tc := range []struct{ state, want string }{
		{`{"_data_files": []}`, "lists no _data_files"},
		{`{"_data_files": [{"filename": "../x.arrow"}]}`, `_data_files names "../x.arrow": want a file name in the directory`},
		{`{"_data_files": [{"filename": "a.arrow"}, {"filename": "b.feather"}]}`, "b.feather: its columns"},
		{`{"_data_files": [{"filename": "a.arrow"}, {"filename": "c.arrow"}]}`, "c.arrow: no such file"},
		{`{"_data_files": `, "state.json: unexpected end of JSON input"},
	} {
		os.WriteFile(filepath.Join(other, "state.json"), []byte(tc.state), 0o644)
		if _, err := retrieve.ReadCollection(other); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("state %s: %v, want %q", tc.state, err, tc.want)
		}
	}
}

// arrowBatchesNoText is arrowBatches' file format without its text
// column: another schema.
func arrowBatchesNoText(t *testing.T, rows [][]float32, keys, labels []string) []byte {
	t.Helper()
	data := arrowBatches(t, rows, keys, labels, 10, true)
	tbl, err := readArrow(bytes.NewReader(data), int64(len(data)), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	schema := arrow.NewSchema([]arrow.Field{tbl.Schema().Field(0), tbl.Schema().Field(2)}, nil)
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	tr := array.NewTableReader(tbl, 100)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		sub := array.NewRecordBatch(schema, []arrow.Array{rec.Column(0), rec.Column(2)}, rec.NumRows())
		if err := w.Write(sub); err != nil {
			t.Fatal(err)
		}
		sub.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadArrowStringIDs: an Arrow IPC file as Polars writes one — its
// strings as string_view, its lists as large_list — or as pandas'
// to_feather writes a category column of ids (a dictionary of strings)
// reads to the same collection, the string ids its keys; a category
// column that repeats an id is refused.
func TestReadArrowStringIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys := []string{"doc-a", "doc-b-with-a-name-longer-than-twelve-bytes", "doc-c"}
	for _, tc := range []struct {
		name string
		typ  arrow.DataType
		ids  []string
		want string // the error, if any
	}{
		{"polars", arrow.BinaryTypes.StringView, keys, ""},
		{"category", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, keys, ""},
		{"repeated category", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, []string{"doc-a", "doc-b", "doc-a"}, `column "id": retrieve: collection: rows 0 and 2 have the same id "doc-a"`},
		{"category floats", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Float64}, nil, `column "id" is dictionary<values=float64, indices=int8, ordered=false>, want integer or string ids`},
	} {
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: tc.typ},
			{Name: "embedding", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Float32)},
		}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		var flat []float32
		for i := range keys {
			switch ib := b.Field(0).(type) {
			case *array.StringViewBuilder:
				ib.Append(tc.ids[i])
			case *array.BinaryDictionaryBuilder:
				if err := ib.AppendString(tc.ids[i]); err != nil {
					t.Fatal(err)
				}
			case *array.Float64DictionaryBuilder:
				if err := ib.Append(float64(i)); err != nil {
					t.Fatal(err)
				}
			}
			lb := b.Field(1).(*array.LargeListBuilder)
			lb.Append(true)
			row := []float32{float32(i), 0.5, -1}
			lb.ValueBuilder().(*array.Float32Builder).AppendValues(row, nil)
			flat = append(flat, row...)
		}
		rec := b.NewRecordBatch()
		b.Release()
		var buf bytes.Buffer
		w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		path := filepath.Join(dir, tc.name+".arrow")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := retrieve.ReadCollection(path)
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: got %v, want an error naming %s and %q", tc.name, err, path, tc.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.N != 3 || c.D != 3 || !slices.Equal(c.Rows, flat) || !slices.Equal(c.Keys, keys) {
			t.Errorf("%s: N=%d D=%d rows %v keys %q", tc.name, c.N, c.D, c.Rows, c.Keys)
		}
	}
}

// TestColumnLabelSets: list columns of labels — large lists of strings
// with a null row, an empty row, a null value and a label listed twice;
// fixed-size lists of small integers — read as each row's labels,
// numbered in the values' sorted order; a column that is not a list is
// not read (ok false), and lists of floats are refused by name.
func TestColumnLabelSets(t *testing.T) {
	build := func(lt arrow.DataType, fill func(b array.Builder)) arrow.Table {
		schema := arrow.NewSchema([]arrow.Field{{Name: "tags", Type: lt, Nullable: true}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		fill(b.Field(0))
		rec := b.NewRecordBatch()
		defer rec.Release()
		return array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	}
	strs := build(arrow.LargeListOf(arrow.BinaryTypes.String), func(b array.Builder) {
		lb := b.(*array.LargeListBuilder)
		vb := lb.ValueBuilder().(*array.StringBuilder)
		lb.Append(true)
		vb.AppendValues([]string{"owl", "cat", "owl"}, nil)
		lb.AppendNull()
		lb.Append(true) // empty
		lb.Append(true)
		vb.AppendNull()
		vb.Append("ant")
	})
	defer strs.Release()
	sets, names, ok, err := ColumnLabelSets("t.arrow", strs, 0)
	if err != nil || !ok || !slices.Equal(names, []string{"ant", "cat", "owl"}) || fmt.Sprint(sets) != "[[1 2] [] [] [0]]" {
		t.Errorf("strings: %v %v %v %v", sets, names, ok, err)
	}
	fixed := build(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Uint8), func(b array.Builder) {
		lb := b.(*array.FixedSizeListBuilder)
		vb := lb.ValueBuilder().(*array.Uint8Builder)
		for _, pair := range [][2]uint8{{7, 3}, {3, 3}, {9, 7}} {
			lb.Append(true)
			vb.AppendValues(pair[:], nil)
		}
	})
	defer fixed.Release()
	sets, names, ok, err = ColumnLabelSets("t.arrow", fixed, 0)
	if err != nil || !ok || !slices.Equal(names, []string{"3", "7", "9"}) || fmt.Sprint(sets) != "[[0 1] [0] [1 2]]" {
		t.Errorf("fixed-size integers: %v %v %v %v", sets, names, ok, err)
	}
	plain := build(arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("cat") })
	defer plain.Release()
	if _, _, ok, err := ColumnLabelSets("t.arrow", plain, 0); ok || err != nil {
		t.Errorf("a string column: ok %v, %v", ok, err)
	}
	floats := build(arrow.ListOf(arrow.PrimitiveTypes.Float32), func(b array.Builder) {
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float32Builder).Append(0.5)
	})
	defer floats.Release()
	if _, _, _, err := ColumnLabelSets("t.arrow", floats, 0); err == nil || !strings.Contains(err.Error(), `t.arrow: column "tags" is list<item: float32, nullable>, want lists of integer or string labels`) {
		t.Errorf("lists of floats: %v", err)
	}
}

// TestReadArrowLargeBatch: a record batch whose body is over arrow-go's
// default cap of 256 MiB — 66 000 rows of d = 1024 float32, as pyarrow
// writes a Feather file in chunks of 65 536 rows — is read (the file
// format; the stream's reader takes the same cap, the file's size). Not
// in -short: it writes 270 MB.
func TestReadArrowLargeBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 270 MB file")
	}
	const n, d = 66000, 1024
	rows := make([][]float32, n)
	flat := make([]float32, n*d)
	keys, labels := make([]string, n), make([]string, n)
	for i := range rows {
		rows[i] = flat[i*d : (i+1)*d]
		rows[i][i%d] = float32(i)
		keys[i], labels[i] = fmt.Sprint("p", i), "a"
	}
	path := filepath.Join(t.TempDir(), "big.arrow")
	if err := os.WriteFile(path, arrowBatches(t, rows, keys, labels, n, true), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := retrieve.ReadCollection(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.N != n || c.D != d || !slices.Equal(c.Rows, flat) || c.Keys[n-1] != keys[n-1] {
		t.Errorf("%d × %d rows, last key %q: not what was written", c.N, c.D, c.Keys[n-1])
	}
}

// TestReadArrowBatches: an Arrow stream, an Arrow file and a dataset
// directory of two shards are read a record batch at a time into rows
// made once at their size (their rows counted from the batches' metadata
// first: the capacity is the length), the ids with their rows; a
// truncated batch, a column of the wrong type, a ragged or null row are
// refused naming the file, the column and the row counted across
// batches and shards.
func TestReadArrowBatches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 25
	rows, rows64 := make([][]float32, n), make([][]float64, n)
	ids, keys := make([]int64, n), make([]string, n)
	var flat []float32
	for i := range rows {
		rows[i] = []float32{float32(i), -float32(i) / 3, 0.25}
		rows64[i] = []float64{float64(i), -float64(float32(i) / 3), 0.25}
		flat = append(flat, rows[i]...)
		ids[i], keys[i] = int64(500-3*i), fmt.Sprintf("doc-%d", 500-3*i)
	}
	// dataset writes a directory of two shards, rows [0, 11) and [11, n),
	// as save_to_disk does (the stream format).
	dataset := func(name string, names []string, cols []arrow.Array) string {
		ds := filepath.Join(dir, name)
		os.Mkdir(ds, 0o755)
		for s, r := range [][2]int{{0, 11}, {11, n}} {
			part := make([]arrow.Array, len(cols))
			for i, c := range cols {
				part[i] = array.NewSlice(c, int64(r[0]), int64(r[1]))
			}
			shard := fmt.Sprintf("data-%05d-of-00002.arrow", s)
			if err := os.WriteFile(filepath.Join(ds, shard), arrowtest.Write(t, names, part, 4, false), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(ds, "state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00002.arrow"}, {"filename": "data-00001-of-00002.arrow"}]}`), 0o644)
		return ds
	}
	// write makes each form of a table: the stream, the file, a dataset.
	write := func(name string, names []string, cols []arrow.Array) []string {
		stream, file := filepath.Join(dir, name+".arrow"), filepath.Join(dir, name+".feather")
		if err := os.WriteFile(stream, arrowtest.Write(t, names, cols, 7, false), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, arrowtest.Write(t, names, cols, 7, true), 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{stream, file, dataset(name, names, cols)}
	}
	for _, tc := range []struct {
		name     string
		cols     []string
		arrs     []arrow.Array
		ids      string // ?ids=
		wantIDs  []int64
		wantKeys []string
		conv     string
	}{
		{"float32 with string ids", []string{"id", "embedding"}, []arrow.Array{strs(keys), lists(rows, 0)}, "", nil, keys, ""},
		{"float32 fixed-size, ids named", []string{"emb", "doc_id"}, []arrow.Array{lists(rows, 3), int64s(ids)}, "doc_id", ids, nil, ""},
		{"float64", []string{"vector", "id"}, []arrow.Array{lists64(rows64, 0), int32s(ids)}, "", ids, nil, "float64 → float32"},
		{"float16", []string{"emb"}, []arrow.Array{lists16(rows)}, "", nil, nil, "float16 → float32"},
	} {
		for _, path := range write(strings.ReplaceAll(tc.name, " ", "_"), tc.cols, tc.arrs) {
			spec := path
			if tc.ids != "" {
				spec += "?ids=" + tc.ids
			}
			c, err := retrieve.ReadCollection(spec)
			if err != nil {
				t.Errorf("%s: %v", spec, err)
				continue
			}
			wantIDs := tc.wantIDs
			if wantIDs == nil {
				for i := range n {
					wantIDs = append(wantIDs, int64(i))
				}
			}
			wantRows := flat
			if tc.conv == "float16 → float32" {
				wantRows = nil
				for _, x := range flat {
					wantRows = append(wantRows, float16.New(x).Float32())
				}
			}
			if c.N != n || c.D != 3 || !slices.Equal(c.Rows, wantRows) || !slices.Equal(c.IDs, wantIDs) || !slices.Equal(c.Keys, tc.wantKeys) || c.Converted != tc.conv {
				t.Errorf("%s: N=%d D=%d ids %v keys %q converted %q", spec, c.N, c.D, c.IDs, c.Keys, c.Converted)
			}
			if cap(c.Rows) != len(c.Rows) {
				t.Errorf("%s: rows of capacity %d for %d values: not made once at their size", spec, cap(c.Rows), len(c.Rows))
			}
		}
	}

	ragged := slices.Clone(rows)
	ragged[16] = []float32{1, 2}
	withNull := slices.Clone(rows)
	withNull[13] = nil
	i32 := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int32)
	for range n {
		i32.Append(true)
		i32.ValueBuilder().(*array.Int32Builder).Append(1)
	}
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	fb.AppendValues(make([]float64, n), nil)
	for _, tc := range []struct {
		name string
		cols []string
		arrs []arrow.Array
		want string
		ids  string // ?ids=
	}{
		{"missing ids column", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), int64s(ids)}, `no column "doc_id" for the ids (the columns: "emb" list<item: float32, nullable>, "id" int64)`, "doc_id"},
		{"ragged", []string{"emb"}, []arrow.Array{lists(ragged, 0)}, `column "emb", row 16 has 2 values, row 0 has 3`, ""},
		{"null row", []string{"emb"}, []arrow.Array{lists(withNull, 0)}, `column "emb", row 13 is null`, ""},
		{"int32 lists", []string{"emb"}, []arrow.Array{i32.NewArray()}, `want one column of float16, float32 or float64 lists (the embeddings; or one named [embedding embeddings emb vector]), found 0 among the columns "emb" list<item: int32, nullable>`, ""},
		{"float ids", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), fb.NewArray()}, `column "id" is float64, want integer or string ids`, ""},
		{"repeated id", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), strs(append(slices.Clone(keys[:n-1]), keys[2]))}, `column "id": retrieve: collection: rows 2 and 24 have the same id "doc-494"`, ""},
		{"null id", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), strs(keys, 20)}, `column "id", row 20 is null`, ""},
	} {
		paths := write(strings.ReplaceAll(tc.name, " ", "_"), tc.cols, tc.arrs)
		for _, path := range paths {
			spec := path
			if tc.ids != "" {
				spec += "?ids=" + tc.ids
			}
			_, err := retrieve.ReadCollection(spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path) {
				t.Errorf("%s: %v, want an error naming %s and %q", tc.name, err, path, tc.want)
			}
		}
	}

	// Truncated: a stream cut in its third record batch's body, a file
	// without its footer's end, a dataset whose second shard is cut.
	stream := arrowtest.Write(t, []string{"emb"}, []arrow.Array{lists(rows, 0)}, 7, false)
	file := arrowtest.Write(t, []string{"emb"}, []arrow.Array{lists(rows, 0)}, 7, true)
	ds := dataset("truncated", []string{"emb"}, []arrow.Array{lists(rows, 0)})
	shard := filepath.Join(ds, "data-00001-of-00002.arrow")
	data, err := os.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(shard, data[:len(data)-40], 0o644)
	for _, tc := range []struct {
		path string
		data []byte
		want string
	}{
		{filepath.Join(dir, "cut.arrow"), stream[:len(stream)*3/4], "record batch "},
		{filepath.Join(dir, "cut.feather"), file[:len(file)-20], "not a readable Arrow IPC file"},
		{shard, nil, "record batch "},
	} {
		if tc.data != nil {
			os.WriteFile(tc.path, tc.data, 0o644)
		}
		spec := tc.path
		if tc.data == nil {
			spec = ds
		}
		_, err := retrieve.ReadCollection(spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), tc.path) {
			t.Errorf("%s: %v, want an error naming %s and %q", spec, err, tc.path, tc.want)
		}
	}
}

// TestArrowRows: the rows of an Arrow stream and file are counted from
// their batches' metadata, dictionary batches not counted; anything else
// is −1.
func TestArrowRows(t *testing.T) {
	t.Parallel()
	rows := make([][]float32, 30)
	keys := make([]string, len(rows))
	for i := range rows {
		rows[i], keys[i] = []float32{float32(i)}, []string{"a", "b", "c"}[i%3]
	}
	db := array.NewDictionaryBuilder(memory.DefaultAllocator, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for _, k := range keys {
		db.AppendString(k)
	}
	dict := db.NewArray()
	for _, tc := range []struct {
		name string
		data []byte
		want int64
	}{
		{"stream", arrowtest.Write(t, []string{"emb"}, []arrow.Array{lists(rows, 0)}, 7, false), 30},
		{"file", arrowtest.Write(t, []string{"emb"}, []arrow.Array{lists(rows, 0)}, 7, true), 30},
		{"stream with a dictionary", arrowtest.Write(t, []string{"emb", "label"}, []arrow.Array{lists(rows, 0), dict}, 8, false), 30},
		{"file with a dictionary", arrowtest.Write(t, []string{"emb", "label"}, []arrow.Array{lists(rows, 0), dict}, 30, true), 30},
		{"empty", nil, -1},
		{"text", []byte("embedding,label\n1,2\n3,4\n"), -1},
		{"cut", arrowtest.Write(t, []string{"emb"}, []arrow.Array{lists(rows, 0)}, 7, false)[:300], -1},
	} {
		if got := arrowRows(bytes.NewReader(tc.data), int64(len(tc.data))); got != tc.want {
			t.Errorf("%s: %d rows, want %d", tc.name, got, tc.want)
		}
	}
}

// TestReadArrowKeepsRowsAlone: reading an Arrow stream with ids — utf8,
// or string_view as Polars writes them — keeps the rows and the ids
// alone, not the batches they came in (whose arrays are slices of one
// buffer: ids kept as read kept every batch's embeddings, twice the
// rows; string_view ids concatenated kept their batches' data buffers,
// the bodies). Not parallel: it measures the heap.
func TestReadArrowKeepsRowsAlone(t *testing.T) {
	const n, d = 8000, 256
	rows, keys, labels := make([][]float32, n), make([]string, n), make([]int64, n)
	for i := range rows {
		rows[i], keys[i] = make([]float32, d), fmt.Sprintf("passage-%06d-of-the-corpus", i)
		rows[i][i%d] = 1
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"utf8.arrow", arrowtest.Write(t, []string{"id", "emb"}, []arrow.Array{strs(keys), lists(rows, 0)}, 500, false)},
		{"view.arrow", viewStream(t, keys, rows, labels, 500)},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, err := retrieve.ReadCollection(path)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		rowBytes := int64(4 * n * d)
		if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > rowBytes*5/4 {
			t.Errorf("%s: %d MB held after reading %d MB of rows", tc.name, held>>20, rowBytes>>20)
		}
		if c.N != n || c.Keys[n-1] != keys[n-1] {
			t.Errorf("%s: %d rows, last key %q", tc.name, c.N, c.Keys[n-1])
		}
		runtime.KeepAlive(c)
	}
}

// TestReadTableColumnArrow: one column of an Arrow IPC stream, an Arrow
// IPC file (and one LZ4-compressed, as pandas' to_feather writes it) and
// a dataset directory of two shards — strings and integers with nulls, a
// category (dictionary) column, Polars' string_view, a list column and
// the embeddings themselves — and of a dataset of Parquet shards is read
// as a table of that column alone, col 0, the schema's metadata kept,
// its values those of the whole table's column; the picker sees the
// whole schema, and its error is returned as it is.
func TestReadTableColumnArrow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 23
	rows, keys, fams := make([][]float32, n), make([]string, n), make([]string, n)
	labels := array.NewInt64Builder(memory.DefaultAllocator)
	cats := array.NewDictionaryBuilder(memory.DefaultAllocator, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	views := array.NewStringViewBuilder(memory.DefaultAllocator)
	tags := array.NewListBuilder(memory.DefaultAllocator, arrow.BinaryTypes.String)
	for i := range n {
		rows[i] = []float32{float32(i), 0.5, -1}
		keys[i], fams[i] = fmt.Sprintf("doc-%d-with-a-name-longer-than-twelve-bytes", i), []string{"PF1", "PF2", "PF3"}[i%3]
		if i%7 == 3 {
			labels.AppendNull()
			cats.AppendNull()
		} else {
			labels.Append(int64(i % 3))
			cats.AppendString(fams[i])
		}
		views.Append(keys[i])
		tags.Append(true)
		tags.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"a", "b", "c"}[:i%3+1], nil)
	}
	names := []string{"embedding", "family", "label", "category", "id", "tags"}
	cols := []arrow.Array{lists(rows, 0), strs(fams, 4, 11), labels.NewArray(), cats.NewArray(), views.NewArray(), tags.NewArray()}
	md := arrow.NewMetadata([]string{"huggingface"}, []string{`{"info": {"features": {"label": {"names": ["a", "b", "c"], "_type": "ClassLabel"}}}}`})
	// withMeta is data with the schema's metadata: arrowtest.Write writes none.
	withMeta := func(data []byte, file bool, opts ...ipc.Option) []byte {
		tbl, err := readArrow(bytes.NewReader(data), int64(len(data)), 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Release()
		schema := arrow.NewSchema(tbl.Schema().Fields(), &md)
		var buf bytes.Buffer
		var w interface {
			Write(arrow.RecordBatch) error
			Close() error
		}
		opts = append(opts, ipc.WithSchema(schema))
		if file {
			fw, err := ipc.NewFileWriter(&buf, opts...)
			if err != nil {
				t.Fatal(err)
			}
			w = fw
		} else {
			w = ipc.NewWriter(&buf, opts...)
		}
		tr := array.NewTableReader(tbl, 5)
		defer tr.Release()
		for tr.Next() {
			rec := array.NewRecordBatch(schema, tr.RecordBatch().Columns(), tr.RecordBatch().NumRows())
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	stream, file := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "t.feather")
	os.WriteFile(stream, withMeta(arrowtest.Write(t, names, cols, 100, false), false), 0o644)
	os.WriteFile(file, withMeta(arrowtest.Write(t, names, cols, 100, true), true), 0o644)
	lz4 := filepath.Join(dir, "lz4.feather") // pandas' to_feather compresses with LZ4
	os.WriteFile(lz4, withMeta(arrowtest.Write(t, names, cols, 100, true), true, ipc.WithLZ4()), 0o644)
	ds := filepath.Join(dir, "ds")
	os.Mkdir(ds, 0o755)
	for s, r := range [][2]int{{0, 11}, {11, n}} {
		part := make([]arrow.Array, len(cols))
		for i, c := range cols {
			part[i] = array.NewSlice(c, int64(r[0]), int64(r[1]))
		}
		os.WriteFile(filepath.Join(ds, fmt.Sprintf("data-%05d-of-00002.arrow", s)), withMeta(arrowtest.Write(t, names, part, 4, false), false), 0o644)
	}
	os.WriteFile(filepath.Join(ds, "state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00002.arrow"}, {"filename": "data-00001-of-00002.arrow"}]}`), 0o644)
	// A dataset of Parquet shards (the column alone, a batch at a time),
	// of the columns Parquet holds alike: not string_view.
	pqds := filepath.Join(dir, "pqds")
	os.Mkdir(pqds, 0o755)
	for s, r := range [][2]int{{0, 11}, {11, n}} {
		var part []arrow.Array
		for _, c := range []int{0, 1, 2, 3, 5} {
			part = append(part, array.NewSlice(cols[c], int64(r[0]), int64(r[1])))
		}
		writeParquet(t, filepath.Join(pqds, fmt.Sprintf("part-%d.parquet", s)), []string{"embedding", "family", "label", "category", "tags"}, part, 4, md)
	}
	// A Parquet file, as a dataset's to_parquet writes it: the features
	// in its key-value metadata, which pqarrow leaves out of the schema.
	pq := filepath.Join(dir, "t.parquet")
	writeParquet(t, pq, []string{"embedding", "family", "label", "category", "tags"}, []arrow.Array{cols[0], cols[1], cols[2], cols[3], cols[5]}, 4, md)
	os.WriteFile(filepath.Join(pqds, "state.json"), []byte(`{"_data_files": [{"filename": "part-0.parquet"}, {"filename": "part-1.parquet"}]}`), 0o644)
	for _, path := range []string{stream, file, lz4, ds, pqds, pq} {
		whole, err := ReadTable(path)
		if err != nil {
			t.Fatal(err)
		}
		for want, fld := range whole.Schema().Fields() {
			name := fld.Name
			tbl, col, err := ReadTableColumn(path, func(s *arrow.Schema) (int, error) {
				if s.NumFields() != int(whole.NumCols()) {
					t.Errorf("%s: %s: the picker saw %d fields", path, name, s.NumFields())
				}
				return want, nil
			})
			if err != nil {
				t.Fatalf("%s: %s: %v", path, name, err)
			}
			if tbl.NumCols() != 1 || col != 0 || tbl.Schema().Field(0).Name != name || tbl.NumRows() != n {
				t.Fatalf("%s: %s: %d columns, col %d, %v, %d rows", path, name, tbl.NumCols(), col, tbl.Schema(), tbl.NumRows())
			}
			if got, _ := tbl.Schema().Metadata().GetValue("huggingface"); !strings.Contains(got, "ClassLabel") {
				t.Errorf("%s: %s: the schema's metadata %v, not the file's", path, name, tbl.Schema().Metadata())
			}
			if a, b := whole.Column(want).Data(), tbl.Column(0).Data(); !array.ChunkedEqual(a, b) {
				t.Errorf("%s: %s: %v, the whole table's %v", path, name, b, a)
			}
			tbl.Release()
		}
		whole.Release()
		if _, _, err := ReadTableColumn(path, func(*arrow.Schema) (int, error) { return 0, errors.New("no such column") }); err == nil || err.Error() != "no such column" {
			t.Errorf("%s: the picker's error: %v", path, err)
		}
	}
}

// TestReadTableColumnKeepsColumnAlone: reading the labels or the ids
// (string_view, as Polars writes them) of an Arrow stream whose
// embeddings sit beside them keeps that column alone: the table was read
// whole (the embeddings kept for one column of labels), and a column
// kept as read, or concatenated (which shares a string_view's data
// buffers), keeps every batch's body. Not parallel: it measures the heap.
func TestReadTableColumnKeepsColumnAlone(t *testing.T) {
	const n, d = 8000, 256
	rows, keys, labels := make([][]float32, n), make([]string, n), make([]int64, n)
	for i := range rows {
		rows[i], keys[i], labels[i] = make([]float32, d), fmt.Sprintf("passage-%06d-of-the-corpus", i), int64(i%10)
		rows[i][i%d] = 1
	}
	path := filepath.Join(t.TempDir(), "e.arrow")
	if err := os.WriteFile(path, viewStream(t, keys, rows, labels, 500), 0o644); err != nil {
		t.Fatal(err)
	}
	rowBytes := int64(4 * n * d)
	for _, tc := range []struct {
		name string
		col  int
	}{{"id", 0}, {"label", 2}} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tbl, _, err := ReadTableColumn(path, func(*arrow.Schema) (int, error) { return tc.col, nil })
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > rowBytes/8 {
			t.Errorf("%s: %d KB held after reading its column, beside %d KB of embeddings", tc.name, held>>10, rowBytes>>10)
		}
		if ids, strs, err := ColumnValues(path, tbl, 0, "ids"); err != nil || len(ids)+len(strs) != n || (strs != nil && strs[n-1] != keys[n-1]) || (ids != nil && ids[n-1] != labels[n-1]) {
			t.Errorf("%s: %d ids, %d strings, %v", tc.name, len(ids), len(strs), err)
		}
		tbl.Release()
	}
}

// TestReadTableColumnParquetShards: reading the labels of a dataset of
// Parquet shards reads their label column alone, not the embeddings
// beside it (each shard was read whole: the embeddings allocated, then
// let go). Not parallel: it counts the bytes allocated.
func TestReadTableColumnParquetShards(t *testing.T) {
	const n, d = 8000, 256
	rows, labels := make([][]float32, n), make([]int64, n)
	for i := range rows {
		rows[i], labels[i] = make([]float32, d), int64(i%10)
		rows[i][i%d] = 1
	}
	dir := t.TempDir()
	emb, lab := lists(rows, d), int64s(labels)
	for s, r := range [][2]int{{0, n / 2}, {n / 2, n}} {
		part := []arrow.Array{array.NewSlice(emb, int64(r[0]), int64(r[1])), array.NewSlice(lab, int64(r[0]), int64(r[1]))}
		writeParquet(t, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", s)), []string{"embedding", "label"}, part, 1000)
	}
	os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"_data_files": [{"filename": "part-0.parquet"}, {"filename": "part-1.parquet"}]}`), 0o644)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tbl, _, err := ReadTableColumn(dir, func(*arrow.Schema) (int, error) { return 1, nil })
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	rowBytes := uint64(4 * n * d)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > rowBytes/8 {
		t.Errorf("%d KB allocated to read the labels, beside %d KB of embeddings", alloc>>10, rowBytes>>10)
	}
	if ids, _, err := ColumnValues(dir, tbl, 0, "labels"); err != nil || len(ids) != n || ids[n-1] != labels[n-1] {
		t.Errorf("%d labels, %v", len(ids), err)
	}
}

// TestScanTableCountsParquetShards: a dataset of Parquet shards has its
// rows counted ahead (their footers), as one of Arrow shards has, so
// that the embeddings' destination is made once at its size.
func TestScanTableCountsParquetShards(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for s, n := range []int{7, 5} {
		rows := make([][]float32, n)
		for i := range rows {
			rows[i] = []float32{float32(i), 1}
		}
		writeParquet(t, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", s)), []string{"embedding"}, []arrow.Array{lists(rows, 0)}, 3)
	}
	os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"_data_files": [{"filename": "part-0.parquet"}, {"filename": "part-1.parquet"}]}`), 0o644)
	for _, count := range []bool{true, false} {
		got, read := int64(0), 0
		err := scanTable(dir, count, func(_ *arrow.Schema, rows int64) ([]int, error) {
			got = rows
			return []int{0}, nil
		}, func(rec arrow.RecordBatch, _ int, _ bool) error {
			read += int(rec.NumRows())
			return nil
		})
		if want := map[bool]int64{true: 12, false: -1}[count]; err != nil || got != want || read != 12 {
			t.Errorf("count %v: rows %d, want %d; %d read, %v", count, got, want, read, err)
		}
	}
}

// TestScanTableShared: scanTable says a batch's arrays are shared — to be
// copied before they are kept — of an Arrow IPC file (slices of the
// message body) and of a Parquet file read whole (slices of its table),
// not of the wanted columns of a dataset's Parquet shards, read a page
// at a time into arrays of their own; and ReadTableColumn and
// ReadParquetColumns, which keep those as read, give every row's value
// of shards of several batches each (an array the reader reused for the
// next batch would give a later batch's values).
func TestScanTableShared(t *testing.T) {
	t.Parallel()
	const n = 3*4096 + 17 // four batches a shard
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	os.Mkdir(p("ds"), 0o755)
	var keys []string
	var labels []int64
	for s := range 2 {
		rows, k, l := make([][]float32, n), make([]string, n), make([]int64, n)
		for i := range rows {
			rows[i], k[i], l[i] = []float32{float32(i), float32(s)}, fmt.Sprintf("doc-%d-%d", s, i), int64(s*n+i)
		}
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		sb.AppendValues(k, nil)
		writeParquet(t, p(fmt.Sprintf("ds/part-%d.parquet", s)), []string{"embedding", "label", "id"}, []arrow.Array{lists(rows, 0), int64s(l), sb.NewArray()}, n)
		sb.Release()
		keys, labels = append(keys, k...), append(labels, l...)
	}
	os.WriteFile(p("ds/state.json"), []byte(`{"_data_files": [{"filename": "part-0.parquet"}, {"filename": "part-1.parquet"}]}`), 0o644)
	rows := make([][]float32, 10)
	for i := range rows {
		rows[i] = []float32{float32(i), 0}
	}
	os.WriteFile(p("ids.arrow"), viewStream(t, make([]string, 10), rows, make([]int64, 10), 4), 0o644)
	for _, c := range []struct {
		path   string
		want   []int // nil: all columns
		shared bool
	}{
		{p("ds"), []int{1}, false},
		{p("ds/part-0.parquet"), []int{2, 1}, false},
		{p("ds/part-0.parquet"), nil, true},
		{p("ids.arrow"), []int{2}, true},
		{p("ids.arrow"), nil, true},
	} {
		batches, wrong := 0, 0
		err := scanTable(c.path, false, func(*arrow.Schema, int64) ([]int, error) { return c.want, nil }, func(_ arrow.RecordBatch, _ int, shared bool) error {
			batches++
			if shared != c.shared {
				wrong++
			}
			return nil
		})
		if err != nil || batches == 0 || wrong > 0 {
			t.Errorf("%s, columns %v: %d of %d batches not shared=%v (%v)", c.path, c.want, wrong, batches, c.shared, err)
		}
	}
	for col, want := range map[int]int{1: 0, 2: 1} {
		tbl, _, err := ReadTableColumn(p("ds"), func(*arrow.Schema) (int, error) { return col, nil })
		if err != nil {
			t.Fatal(err)
		}
		ids, strs, err := ColumnValues(p("ds"), tbl, 0, "ids")
		tbl.Release()
		if err != nil || want == 0 && !slices.Equal(ids, labels) || want == 1 && !slices.Equal(strs, keys) {
			t.Errorf("ReadTableColumn of column %d: %d ids, %d strings, not the shards' %d rows (%v)", col, len(ids), len(strs), 2*n, err)
		}
	}
	c, err := ReadParquetColumns(p("ds"), "embedding", "id")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Keys, keys) {
		t.Errorf("ReadParquetColumns: %d ids, not the shards' %d", len(c.Keys), len(keys))
	}
}

// viewStream writes an Arrow IPC stream of columns id (keys as
// string_view, as Polars writes strings), embedding (rows) and label in
// batches of batch rows, each built on its own: a slice of one
// string_view array is written with the whole array's data buffers.
func viewStream(t testing.TB, keys []string, rows [][]float32, labels []int64, batch int) []byte {
	t.Helper()
	var stream bytes.Buffer
	var w *ipc.Writer
	for lo := 0; lo < len(keys); lo += batch {
		hi := min(len(keys), lo+batch)
		vb := array.NewStringViewBuilder(memory.DefaultAllocator)
		vb.AppendValues(keys[lo:hi], nil)
		cols := []arrow.Array{vb.NewArray(), lists(rows[lo:hi], 0), int64s(labels[lo:hi])}
		vb.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: cols[0].DataType()}, {Name: "embedding", Type: cols[1].DataType()}, {Name: "label", Type: cols[2].DataType()}}, nil)
		if w == nil {
			w = ipc.NewWriter(&stream, ipc.WithSchema(schema))
		}
		rec := array.NewRecordBatch(schema, cols, int64(hi-lo))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		for _, c := range cols {
			c.Release()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return stream.Bytes()
}

// readArrow reads an Arrow IPC stream or file of size bytes from r whole,
// its record batches allocating at most limit bytes in all (scanArrow).
func readArrow(r io.ReaderAt, size, limit int64) (arrow.Table, error) {
	return collect(func(start func(*arrow.Schema, int64) error, batch func(arrow.RecordBatch) error) error {
		return scanArrow(r, size, limit, func(s *arrow.Schema) error { return start(s, -1) }, batch)
	})
}

// TestClassLabelNames: a Hugging Face ClassLabel's names, in id order;
// nothing where the metadata says nothing of the column; an error that
// says what is wrong where it lies.
func TestClassLabelNames(t *testing.T) {
	hf := func(features string) *arrow.Schema {
		md := arrow.NewMetadata([]string{"huggingface"}, []string{`{"info": {"features": ` + features + `}}`})
		return arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64}}, &md)
	}
	for _, tc := range []struct {
		name   string
		schema *arrow.Schema
		want   []string
		err    string
	}{
		{"names in id order", hf(`{"label": {"names": ["T-shirt/top", "Trouser", "Bag"], "_type": "ClassLabel"}}`), []string{"T-shirt/top", "Trouser", "Bag"}, ""},
		{"no metadata", arrow.NewSchema([]arrow.Field{{Name: "label", Type: arrow.PrimitiveTypes.Int64}}, nil), nil, ""},
		{"another column", hf(`{"fine": {"names": ["a"], "_type": "ClassLabel"}}`), nil, ""},
		{"a Value", hf(`{"label": {"dtype": "int64", "_type": "Value"}}`), nil, ""},
		{"malformed JSON", hf(`{"label": {"names": ["a", `), nil, `"huggingface" metadata is no JSON document`},
		{"names no list", hf(`{"label": {"names": "a,b", "_type": "ClassLabel"}}`), nil, `ClassLabel feature "label" of the schema's "huggingface" metadata has names "a,b", not a list of strings`},
		{"names of numbers", hf(`{"label": {"names": [1, 2], "_type": "ClassLabel"}}`), nil, `has names [1, 2], not a list of strings`},
		{"no names", hf(`{"label": {"num_classes": 2, "_type": "ClassLabel"}}`), nil, `has names none, not a list of strings`},
		{"a name twice", hf(`{"label": {"names": ["a", "b", "a"], "_type": "ClassLabel"}}`), nil, `names classes 0 and 2 both "a"`},
	} {
		got, err := ClassLabelNames(tc.schema, "label")
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		case !slices.Equal(got, tc.want):
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSequenceClassLabelNames: a Hugging Face Sequence(ClassLabel)'s
// names (List from datasets 4, or a list of one feature), in id order;
// nothing for a plain ClassLabel, a Sequence of values or another
// column; an error where the names lie.
func TestSequenceClassLabelNames(t *testing.T) {
	hf := func(features string) *arrow.Schema {
		md := arrow.NewMetadata([]string{"huggingface"}, []string{`{"info": {"features": ` + features + `}}`})
		return arrow.NewSchema([]arrow.Field{{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, &md)
	}
	const cl = `{"names": ["joy", "anger", "love"], "_type": "ClassLabel"}`
	for _, tc := range []struct {
		name   string
		schema *arrow.Schema
		want   []string
		err    string
	}{
		{"Sequence", hf(`{"tags": {"feature": ` + cl + `, "_type": "Sequence"}}`), []string{"joy", "anger", "love"}, ""},
		{"List", hf(`{"tags": {"feature": ` + cl + `, "_type": "List"}}`), []string{"joy", "anger", "love"}, ""},
		{"a list of one feature", hf(`{"tags": [` + cl + `]}`), []string{"joy", "anger", "love"}, ""},
		{"no metadata", arrow.NewSchema([]arrow.Field{{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil), nil, ""},
		{"a plain ClassLabel", hf(`{"tags": ` + cl + `}`), nil, ""},
		{"a Sequence of values", hf(`{"tags": {"feature": {"dtype": "int64", "_type": "Value"}, "_type": "Sequence"}}`), nil, ""},
		{"another column", hf(`{"label": {"feature": ` + cl + `, "_type": "Sequence"}}`), nil, ""},
		{"a name twice", hf(`{"tags": {"feature": {"names": ["a", "a"], "_type": "ClassLabel"}, "_type": "Sequence"}}`), nil, `names classes 0 and 1 both "a"`},
		{"malformed JSON", hf(`{"tags": {"feature": `), nil, `"huggingface" metadata is no JSON document`},
	} {
		got, err := SequenceClassLabelNames(tc.schema, "tags")
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		case !slices.Equal(got, tc.want):
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// BenchmarkReadTableColumnStringView reads the string_view id column
// (Polars' strings, some inline, most in data buffers) of a 10⁵-row
// Arrow stream in batches of 1000 rows.
func BenchmarkReadTableColumnStringView(b *testing.B) {
	const n, d = 100_000, 8
	rows, keys, labels := make([][]float32, n), make([]string, n), make([]int64, n)
	for i := range rows {
		rows[i], keys[i] = make([]float32, d), fmt.Sprintf("passage-%06d-of-the-corpus", i)
		if i%4 == 0 {
			keys[i] = fmt.Sprintf("q%d", i) // inline: 12 bytes or fewer
		}
	}
	path := filepath.Join(b.TempDir(), "ids.arrow")
	if err := os.WriteFile(path, viewStream(b, keys, rows, labels, 1000), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		tbl, _, err := ReadTableColumn(path, func(*arrow.Schema) (int, error) { return 0, nil })
		if err != nil {
			b.Fatal(err)
		}
		if tbl.NumRows() != n {
			b.Fatalf("%d rows", tbl.NumRows())
		}
		tbl.Release()
	}
}

// BenchmarkReadTableColumnParquetShards reads the label and the string
// id column of a dataset directory of four Parquet shards (10⁵ rows,
// 8-d embeddings beside them), a page at a time.
func BenchmarkReadTableColumnParquetShards(b *testing.B) {
	const shards, n, d = 4, 25_000, 8
	dir := b.TempDir()
	var files []string
	for s := range shards {
		rows, keys, labels := make([][]float32, n), make([]string, n), make([]int64, n)
		for i := range rows {
			rows[i], keys[i], labels[i] = make([]float32, d), fmt.Sprintf("passage-%06d-%d", i, s), int64(i%7)
		}
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		sb.AppendValues(keys, nil)
		name := fmt.Sprintf("data-%05d-of-%05d.parquet", s, shards)
		writeParquet(b, filepath.Join(dir, name), []string{"embedding", "label", "id"}, []arrow.Array{lists(rows, 0), int64s(labels), sb.NewArray()}, n)
		sb.Release()
		files = append(files, fmt.Sprintf(`{"filename": %q}`, name))
	}
	os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"_data_files": [`+strings.Join(files, ", ")+`]}`), 0o644)
	for _, col := range []int{1, 2} {
		b.Run([]string{1: "label", 2: "id"}[col], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tbl, _, err := ReadTableColumn(dir, func(*arrow.Schema) (int, error) { return col, nil })
				if err != nil {
					b.Fatal(err)
				}
				if tbl.NumRows() != shards*n {
					b.Fatalf("%d rows", tbl.NumRows())
				}
				tbl.Release()
			}
		})
	}
}

// TestOwnColumn: ownColumn of a slice of a string_view array, of a list
// of them and of a dictionary of them equals the slice and shares none
// of its memory (a buffer shared would keep a batch's body alive).
func TestOwnColumn(t *testing.T) {
	mem := memory.DefaultAllocator
	keys := []string{"a", "passage-000001-of-the-corpus", "", "short", "passage-000004-of-the-corpus", "passage-000005-of-the-corpus"}
	vb := array.NewStringViewBuilder(mem)
	defer vb.Release()
	vb.AppendValues(keys, nil)
	vb.AppendNull()
	views := vb.NewArray()
	defer views.Release()
	lb := array.NewListBuilder(mem, arrow.BinaryTypes.StringView)
	defer lb.Release()
	for i := range keys {
		lb.Append(true)
		lb.ValueBuilder().(*array.StringViewBuilder).AppendValues(keys[i:], nil)
	}
	lb.AppendNull()
	list := lb.NewArray()
	defer list.Release()
	ib := array.NewInt8Builder(mem)
	defer ib.Release()
	ib.AppendValues([]int8{5, 4, 3, 2, 1, 0}, nil)
	ib.AppendNull()
	indices := ib.NewArray()
	defer indices.Release()
	dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.StringView}, indices, views)
	defer dict.Release()
	for _, a := range []arrow.Array{views, list, dict} {
		t.Run(a.DataType().String(), func(t *testing.T) {
			in := array.NewSlice(a, 1, int64(a.Len()))
			defer in.Release()
			own, err := ownColumn(in)
			if err != nil {
				t.Fatal(err)
			}
			defer own.Release()
			if !array.Equal(in, own) {
				t.Errorf("ownColumn: %v, want %v", own, in)
			}
			var inBufs, ownBufs []*memory.Buffer
			var gather func(d arrow.ArrayData, into *[]*memory.Buffer)
			gather = func(d arrow.ArrayData, into *[]*memory.Buffer) {
				for _, b := range d.Buffers() {
					if b != nil && b.Len() > 0 {
						*into = append(*into, b)
					}
				}
				for _, c := range d.Children() {
					gather(c, into)
				}
				if d.DataType().ID() == arrow.DICTIONARY {
					gather(d.Dictionary(), into)
				}
			}
			gather(in.Data(), &inBufs)
			gather(own.Data(), &ownBufs)
			for _, o := range ownBufs {
				for _, b := range inBufs {
					if &o.Bytes()[0] == &b.Bytes()[0] {
						t.Errorf("a buffer of %d bytes shared", o.Len())
					}
				}
			}
		})
	}
}

// TestColumnMultiHotHoles: a list column of a multi-hot matrix's rows in
// which a row of no label is null or an empty list (as datasets writes a
// missing entry) is still the matrix, that row zeros — it was read as the
// labels 0 and 1 of every row — across chunks, the first row a hole too;
// rows of two lengths are not.
func TestColumnMultiHotHoles(t *testing.T) {
	build := func(rows [][]int64) arrow.Table {
		schema := arrow.NewSchema([]arrow.Field{{Name: "labels", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true}}, nil)
		var recs []arrow.RecordBatch
		for half := range 2 { // two chunks
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			lb := b.Field(0).(*array.ListBuilder)
			for i, r := range rows {
				if i%2 != half {
					continue
				}
				if r == nil {
					lb.AppendNull()
					continue
				}
				lb.Append(true)
				lb.ValueBuilder().(*array.Int64Builder).AppendValues(r, nil)
			}
			recs = append(recs, b.NewRecordBatch())
			b.Release()
		}
		return array.NewTableFromRecords(schema, recs)
	}
	rows := [][]int64{nil, {0, 1, 0}, {}, {1, 1, 0}, {0, 0, 1}, nil}
	tbl := build(rows)
	defer tbl.Release()
	m, c, ok := ColumnMultiHot(tbl, 0)
	// The chunks hold rows 0, 2, 4 then 1, 3, 5.
	want := []int64{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0}
	if !ok || c != 3 || !slices.Equal(m, want) {
		t.Errorf("ColumnMultiHot = %v, %d, %v; want %v, 3, true", m, c, ok, want)
	}
	ragged := build([][]int64{{0, 1, 0}, nil, {1, 1}})
	defer ragged.Release()
	if _, _, ok := ColumnMultiHot(ragged, 0); ok {
		t.Error("rows of two lengths read as a matrix")
	}
}
