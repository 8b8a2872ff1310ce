package table

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/sttest"
	"github.com/ccsets/ccs/retrieve"
)

// writeParquet writes columns (arrays of equal length) to a Parquet file,
// in row groups of chunk rows, with md (at most one) as its schema's
// metadata, which pqarrow writes as the file's key-value metadata.
func writeParquet(t testing.TB, path string, names []string, cols []arrow.Array, chunk int64, md ...arrow.Metadata) {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
	}
	var meta *arrow.Metadata
	if len(md) > 0 {
		meta = &md[0]
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, meta), cols, int64(cols[0].Len()))
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pqarrow.WriteTable(tbl, f, chunk, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

// lists64 builds a list<float64> (or fixed_size_list when fixed > 0)
// array of rows.
func lists64(rows [][]float64, fixed int) arrow.Array {
	mem := memory.DefaultAllocator
	if fixed > 0 {
		b := array.NewFixedSizeListBuilder(mem, int32(fixed), arrow.PrimitiveTypes.Float64)
		for _, r := range rows {
			b.Append(true)
			b.ValueBuilder().(*array.Float64Builder).AppendValues(r, nil)
		}
		return b.NewArray()
	}
	b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Float64)
	for _, r := range rows {
		b.Append(true)
		b.ValueBuilder().(*array.Float64Builder).AppendValues(r, nil)
	}
	return b.NewArray()
}

// lists16 builds a list<float16> array of rows, as a half-precision
// model's embeddings are stored.
func lists16(rows [][]float32) arrow.Array {
	b := array.NewListBuilder(memory.DefaultAllocator, arrow.FixedWidthTypes.Float16)
	for _, r := range rows {
		b.Append(true)
		for _, x := range r {
			b.ValueBuilder().(*array.Float16Builder).Append(float16.New(x))
		}
	}
	return b.NewArray()
}

// lists builds a list<float32> (or fixed_size_list when fixed > 0) array
// of rows; a nil row is null.
func lists(rows [][]float32, fixed int) arrow.Array {
	mem := memory.DefaultAllocator
	var b interface {
		array.Builder
		ValueBuilder() array.Builder
	}
	if fixed > 0 {
		b = array.NewFixedSizeListBuilder(mem, int32(fixed), arrow.PrimitiveTypes.Float32)
	} else {
		b = array.NewListBuilder(mem, arrow.PrimitiveTypes.Float32)
	}
	vb := b.ValueBuilder().(*array.Float32Builder)
	for _, r := range rows {
		if r == nil {
			b.AppendNull()
			continue
		}
		switch lb := b.(type) {
		case *array.ListBuilder:
			lb.Append(true)
		case *array.FixedSizeListBuilder:
			lb.Append(true)
		}
		vb.AppendValues(r, nil)
	}
	return b.NewArray()
}

// strs builds a string array; a nil entry of null (when given) is null.
func strs(v []string, null ...int) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	for i, s := range v {
		if slices.Contains(null, i) {
			b.AppendNull()
		} else {
			b.Append(s)
		}
	}
	return b.NewArray()
}

func int64s(v []int64) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(v, nil)
	return b.NewArray()
}

func int32s(v []int64) arrow.Array {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	for _, x := range v {
		b.Append(int32(x))
	}
	return b.NewArray()
}

func uint64s(v []uint64) arrow.Array {
	b := array.NewUint64Builder(memory.DefaultAllocator)
	b.AppendValues(v, nil)
	return b.NewArray()
}

// TestReadParquet: list and fixed-size-list columns, over several row
// groups, with and without ids, read to the same collection as the rows
// written; bad files are refused with the column and row named.
func TestReadParquet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rows := make([][]float32, 25)
	flat := []float32{}
	ids := make([]int64, len(rows))
	for i := range rows {
		rows[i] = []float32{float32(i), -float32(i) / 3, 1e-30 * float32(i)}
		flat = append(flat, rows[i]...)
		ids[i] = int64(1000 - 7*i)
	}
	keys := make([]string, len(rows))
	for i := range keys {
		keys[i] = fmt.Sprintf("doc-%d", 1000-7*i)
	}
	rows64 := make([][]float64, len(rows))
	for i, r := range rows {
		rows64[i] = []float64{float64(r[0]), float64(r[1]), float64(r[2])}
	}
	for _, tc := range []struct {
		name     string
		cols     []string
		arrs     []arrow.Array
		chunk    int64 // rows per row group
		wantIDs  []int64
		wantKeys []string
	}{
		{"float64 list", []string{"id", "embedding"}, []arrow.Array{int64s(ids), lists64(rows64, 0)}, 10, ids, nil},
		{"float64 fixed-size list", []string{"vec"}, []arrow.Array{lists64(rows64, 3)}, 100, nil, nil},
		{"float16 list", []string{"id", "embedding"}, []arrow.Array{int64s(ids), lists16(rows)}, 10, ids, nil},
		{"list with ids", []string{"id", "embedding"}, []arrow.Array{int64s(ids), lists(rows, 0)}, 10, ids, nil},
		{"list with string ids", []string{"embedding", "id"}, []arrow.Array{lists(rows, 0), strs(keys)}, 10, nil, keys},
		{"list with int32 ids", []string{"id", "embedding"}, []arrow.Array{int32s(ids), lists(rows, 0)}, 10, ids, nil},
		{"BEIR's _id", []string{"_id", "title", "emb"}, []arrow.Array{strs(keys), strs(keys), lists(rows, 0)}, 10, nil, keys},
		{"id before _id", []string{"_id", "id", "emb"}, []arrow.Array{strs(keys), int64s(ids), lists(rows, 0)}, 10, ids, nil},
		// One row group: pqarrow v18.8.0's writer repeats the first rows of
		// a fixed-size-list column in every later row group (its reader
		// reads what was written, checked on the column's raw values).
		{"fixed-size list, no ids", []string{"title_vec"}, []arrow.Array{lists(rows, 3)}, 100, nil, nil},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".parquet")
		writeParquet(t, path, tc.cols, tc.arrs, tc.chunk)
		c, err := retrieve.ReadCollection(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := tc.wantIDs
		if want == nil {
			for i := range rows {
				want = append(want, int64(i))
			}
		}
		wantRows := flat
		if strings.HasPrefix(tc.name, "float16") { // the rows as half precision holds them, widened exactly
			wantRows = make([]float32, len(flat))
			for i, x := range flat {
				wantRows[i] = float16.New(x).Float32()
			}
		}
		if c.N != len(rows) || c.D != 3 || !slices.Equal(c.Rows, wantRows) || !slices.Equal(c.IDs, want) || !slices.Equal(c.Keys, tc.wantKeys) {
			t.Errorf("%s: read N=%d D=%d ids %v keys %q rows %v", tc.name, c.N, c.D, c.IDs, c.Keys, c.Rows[:6])
		}
		if want := map[bool]string{true: strings.Fields(tc.name)[0] + " → float32"}[strings.HasPrefix(tc.name, "float")]; c.Converted != want {
			t.Errorf("%s: converted %q, want %q", tc.name, c.Converted, want)
		}
	}

	ragged := slices.Clone(rows)
	ragged[12] = []float32{1, 2}
	withNull := slices.Clone(rows)
	withNull[4] = nil
	i32 := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int32)
	i32.Append(true)
	i32.ValueBuilder().(*array.Int32Builder).Append(1)
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	fb.AppendValues(make([]float64, len(rows)), nil)
	floatIDs := fb.NewArray()
	for _, tc := range []struct {
		name string
		cols []string
		arrs []arrow.Array
		want string
		ids  string // ?ids=
	}{
		{"missing ids column", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), int64s(ids)}, `no column "doc_id" for the ids (the columns: "emb" list<element: float32, nullable>, "id" int64)`, "doc_id"},
		{"ragged", []string{"emb"}, []arrow.Array{lists(ragged, 0)}, `column "emb", row 12 has 2 values, row 0 has 3`, ""},
		{"null row", []string{"emb"}, []arrow.Array{lists(withNull, 0)}, `column "emb", row 4 is null`, ""},
		{"int32", []string{"emb"}, []arrow.Array{i32.NewArray()}, `want one column of float16, float32 or float64 lists (the embeddings; or one named [embedding embeddings emb vector]), found 0 among the columns "emb" list<element: int32, nullable>`, ""},
		{"float64 overflow", []string{"emb"}, []arrow.Array{lists64([][]float64{{1, 2}, {3, 1e39}}, 0)}, `column "emb", row 1, coordinate 1: 1e+39 overflows float32`, ""},
		{"float64 underflow", []string{"emb"}, []arrow.Array{lists64([][]float64{{1e-50, 2}}, 0)}, `column "emb", row 0, coordinate 0: 1e-50 underflows to zero in float32`, ""},
		{"float64 NaN", []string{"emb"}, []arrow.Array{lists64([][]float64{{1, 2}, {math.NaN(), 1}}, 0)}, `row 1, coordinate 0 is NaN`, ""},
		{"two lists", []string{"a", "b"}, []arrow.Array{lists(rows, 0), lists(rows, 0)}, `found 2 among the columns "a" list<element: float32, nullable>, "b" list<element: float32, nullable>`, ""},
		{"null string id", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), strs(keys, 7)}, `column "id", row 7 is null`, ""},
		{"empty string id", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), strs(append(slices.Clone(keys[:24]), ""))}, `column "id": retrieve: collection: the string id of row 24 is empty`, ""},
		{"repeated string id", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), strs(append(slices.Clone(keys[:24]), keys[3]))}, `column "id": retrieve: collection: rows 3 and 24 have the same id "doc-979"`, ""},
		{"float ids", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), floatIDs}, `column "id" is float64, want integer or string ids`, ""},
		{"repeated ids", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), int64s(append(slices.Clone(ids[:24]), ids[5]))}, `column "id": retrieve: collection: rows 5 and 24 have the same id 965`, ""},
		{"a uint64 id above int64", []string{"emb", "id"}, []arrow.Array{lists(rows, 0), uint64s(append(make([]uint64, 24), 1<<63))}, `column "id", row 24 is 9223372036854775808, above 2^63−1`, ""},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".parquet")
		writeParquet(t, path, tc.cols, tc.arrs, 10)
		spec := path
		if tc.ids != "" {
			spec += "?ids=" + tc.ids
		}
		_, err := retrieve.ReadCollection(spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want an error naming %s and %q", tc.name, err, path, tc.want)
		}
	}
}

// TestReadParquetBatches: a Parquet collection is read a batch of rows at
// a time (4 096), across row groups, its ids in the same batches from the
// same open file; the rows and ids are the file's, in order, float16
// widened exactly; an ids column the file lacks is named.
func TestReadParquetBatches(t *testing.T) {
	t.Parallel()
	const n = 10000
	rows := make([][]float32, n)
	var want []float32
	keys := make([]string, n)
	for i := range rows {
		rows[i] = []float32{float32(i % 2048), -float32(i%1000) / 8, 0.5}
		want = append(want, rows[i]...)
		keys[i] = fmt.Sprintf("k%d", n-i)
	}
	nums := make([]int64, n)
	for i := range nums {
		nums[i] = int64(7*n - 7*i)
	}
	path := filepath.Join(t.TempDir(), "big.parquet")
	writeParquet(t, path, []string{"num", "emb", "key"}, []arrow.Array{int64s(nums), lists16(rows), strs(keys)}, 3000)
	c, err := retrieve.ReadCollection(path + "?ids=key")
	if err != nil {
		t.Fatal(err)
	}
	if c.N != n || c.D != 3 || !slices.Equal(c.Rows, want) || !slices.Equal(c.Keys, keys) || c.Converted != "float16 → float32" {
		t.Errorf("N=%d D=%d rows equal %v keys equal %v converted %q", c.N, c.D, slices.Equal(c.Rows, want), slices.Equal(c.Keys, keys), c.Converted)
	}
	// The ids' column before the embeddings' in the file, read in the
	// same batches: each row still has its own id.
	c, err = retrieve.ReadCollection(path + "?ids=num")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Rows, want) || !slices.Equal(c.IDs, nums) {
		t.Errorf("?ids=num: rows equal %v ids equal %v", slices.Equal(c.Rows, want), slices.Equal(c.IDs, nums))
	}
	if _, err := retrieve.ReadCollection(path + "?ids=nums"); err == nil || !strings.Contains(err.Error(), `no column "nums" for the ids`) || !strings.Contains(err.Error(), `did you mean "num"?`) {
		t.Errorf("?ids=nums: %v, want the missing ids column named", err)
	}
}

// TestWriteParquetRoundTrip: WriteParquet's file, over two row groups,
// reads back to the same collection.
func TestWriteParquetRoundTrip(t *testing.T) {
	t.Parallel()
	const n, d = 70_000, 2
	rows := make([]float32, n*d)
	ids := make([]int64, n)
	for i := range n {
		rows[i*d], rows[i*d+1] = float32(i), -float32(i)/7
		ids[i] = int64(n - i)
	}
	c, err := retrieve.NewCollection(rows, d, ids)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.parquet")
	if err := WriteParquet(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := retrieve.ReadCollection(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.N != n || got.D != d || !slices.Equal(got.Rows, rows) || !slices.Equal(got.IDs, ids) || got.Keys != nil {
		t.Errorf("read back N=%d D=%d, rows equal %v, ids equal %v, keys %d", got.N, got.D, slices.Equal(got.Rows, rows), slices.Equal(got.IDs, ids), len(got.Keys))
	}
	// With string ids: the "id" column holds them, and they read back.
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("passage/%d", n-i)
	}
	if err := c.SetKeys(keys); err != nil {
		t.Fatal(err)
	}
	if err := WriteParquet(path, c); err != nil {
		t.Fatal(err)
	}
	if got, err = retrieve.ReadCollection(path); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Keys, keys) || !slices.Equal(got.Rows, rows) || got.IDs[n-1] != n-1 {
		t.Errorf("string ids read back: keys equal %v, rows equal %v, last id %d (want its row, %d)", slices.Equal(got.Keys, keys), slices.Equal(got.Rows, rows), got.IDs[n-1], n-1)
	}
}

// TestReadCollectionNamed: FILE:NAME names the embeddings' array, tensor
// or column, as ccs bundle's -embeddings takes them; an archive whose only
// (n, d) float array has another name is read without one; a name that is
// not there is refused listing what is.
func TestReadCollectionNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	flat := []float32{1, 2, 3, 4, 5, 6.5}
	keys := []string{"doc-a", "doc-b", "doc-c"}
	ids, rowIDs := []int64{40, 7, 99}, []int64{0, 1, 2}
	if err := bundle.WriteNPZ(p("two.npz"), map[string]bundle.Array{"emb": bundle.Float32(flat, 3, 2), "emb2": bundle.Float32(flat, 2, 3),
		"ids": bundle.Int64(ids, 3)}); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPZ(p("one.npz"), map[string]bundle.Array{"vectors": bundle.Float32(flat, 3, 2), "ids": bundle.Int64(ids, 3)}); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("rows.npy"), bundle.Float32(flat, 3, 2)); err != nil {
		t.Fatal(err)
	}
	sttest.Write(t, p("st.safetensors"), sttest.T("a", "F32", []int{3, 2}, sttest.LE(flat...)), sttest.T("b", "F32", []int{2, 3}, sttest.LE(flat...)))
	writeParquet(t, p("t.parquet"), []string{"id", "title_vec", "body_vec"}, []arrow.Array{strs(keys), lists([][]float32{{1, 2}, {3, 4}, {5, 6.5}}, 0), lists([][]float32{{0}, {0}, {0}}, 0)}, 10)
	// Ids under another name (?ids=NAME): a protein export's seq_id.
	writeParquet(t, p("seq.parquet"), []string{"seq_id", "emb"}, []arrow.Array{strs(keys), lists([][]float32{{1, 2}, {3, 4}, {5, 6.5}}, 0)}, 10)
	writeParquet(t, p("both.parquet"), []string{"id", "doc_id", "emb"}, []arrow.Array{strs(keys), int64s(ids), lists([][]float32{{1, 2}, {3, 4}, {5, 6.5}}, 0)}, 10)
	if err := bundle.WriteNPZ(p("keys.npz"), map[string]bundle.Array{"embeddings": bundle.Float32(flat, 3, 2), "ids": bundle.Int64(rowIDs, 3),
		"doc_ids": bundle.Int64(ids, 3)}); err != nil {
		t.Fatal(err)
	}
	sttest.Write(t, p("ids.safetensors"), sttest.T("embeddings", "F32", []int{3, 2}, sttest.LE(flat...)), sttest.T("pid", "I64", []int{3}, sttest.LE(ids...)))
	for _, c := range []struct {
		spec string
		d    int
		ids  []int64
		keys []string
	}{
		{p("two.npz") + ":emb", 2, ids, nil},
		{p("one.npz"), 2, ids, nil},
		{p("st.safetensors") + ":a", 2, rowIDs, nil},
		{p("st.safetensors") + ":b", 3, rowIDs[:2], nil},
		{p("t.parquet") + ":title_vec", 2, rowIDs, keys},
		{p("seq.parquet"), 2, rowIDs, nil}, // seq_id is not taken unnamed
		{p("seq.parquet") + "?ids=seq_id", 2, rowIDs, keys},
		{p("both.parquet") + "?id=doc_id", 2, ids, nil},
		{p("t.parquet") + ":title_vec?ids=id", 2, rowIDs, keys},
		{p("keys.npz") + "?ids=doc_ids", 2, ids, nil},
		{p("two.npz") + ":emb?ids=ids", 2, ids, nil},
		{p("ids.safetensors") + "?ids=pid", 2, ids, nil},
	} {
		col, err := retrieve.ReadCollection(c.spec)
		if err != nil {
			t.Errorf("%s: %v", c.spec, err)
			continue
		}
		if col.D != c.d || !slices.Equal(col.Rows, flat) || !slices.Equal(col.IDs, c.ids) || !slices.Equal(col.Keys, c.keys) {
			t.Errorf("%s: N=%d D=%d rows %v ids %v keys %q", c.spec, col.N, col.D, col.Rows, col.IDs, col.Keys)
		}
	}
	for _, c := range []struct{ spec, want string }{
		{p("two.npz"), `: want an array "embeddings" (or "anchors") of float32 (n, d), or name it (FILE:ARRAY); have emb float32 (3, 2), emb2 float32 (2, 3), ids int64 (3,)`},
		{p("two.npz") + ":vec", `two.npz: no array "vec"; have emb float32 (3, 2)`},
		{p("two.npz") + ":ids", `two.npz: array "ids" is int64 (3,): want float32 (n, d)`},
		{p("rows.npy") + ":x", "rows.npy: an .npy file holds one array: give the file without :x"},
		{p("st.safetensors") + ":c", `st.safetensors: no tensor "c"; have a, b`},
		{p("t.parquet") + ":vec", `t.parquet: no column "vec"`},
		{p("absent.npz") + ":emb", "absent.npz:emb"},
		{p("seq.parquet") + "?ids=sequence_id", `seq.parquet: no column "sequence_id" for the ids (the columns: "seq_id" utf8, "emb" list<element: float32, nullable>)`},
		{p("keys.npz") + "?ids=doc_id", `keys.npz: no array "doc_id" for the ids (?ids=doc_id); have doc_ids int64 (3,), embeddings float32 (3, 2), ids int64 (3,)`},
		{p("two.npz") + ":emb?ids=emb2", `two.npz: array "emb2" must be int64 or strings (3,), got float32 (2, 3)`},
		{p("rows.npy") + "?ids=x", "rows.npy: an .npy file holds one array, the embeddings, and no ids"},
		{p("seq.parquet") + "?ids=", `seq.parquet?ids=: ?ids= names no column`},
	} {
		if _, err := retrieve.ReadCollection(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.spec, err, c.want)
		}
	}
}

// TestReadTableColumn: reading one column of a Parquet file (labels or
// ids beside the embeddings) reads that column alone — a protein user's
// 246 MB file of 1280-d embeddings was read whole for its family column,
// twice the time and memory of the embeddings alone — and gives the same
// values as the whole table's column, for a plain column with nulls, a
// list column (several labels a row) and the embeddings themselves; the
// picker's error is returned. TestReadTableColumnArrow reads Arrow's.
func TestReadTableColumn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	rows := [][]float32{{1, 2}, {3, 4}, {5, 6}, {7, 8}}
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.BinaryTypes.String)
	for i := range 4 {
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"a", "b", "c"}[:i%3+1], nil)
	}
	writeParquet(t, path, []string{"embedding", "family", "tags", "length"},
		[]arrow.Array{lists(rows, 0), strs([]string{"PF1", "", "PF2", "PF1"}, 1), lb.NewArray(), int64s([]int64{10, 20, 30, 40})}, 3)
	whole, err := ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	for want := range 4 {
		name := whole.Schema().Field(want).Name
		tbl, col, err := ReadTableColumn(path, func(s *arrow.Schema) (int, error) {
			if s.NumFields() != 4 {
				t.Errorf("%s: the picker saw %d fields", name, s.NumFields())
			}
			return want, nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tbl.NumCols() != 1 || col != 0 || tbl.Schema().Field(0).Name != name || tbl.NumRows() != 4 {
			t.Fatalf("%s: %d columns, col %d, %v, %d rows", name, tbl.NumCols(), col, tbl.Schema(), tbl.NumRows())
		}
		a, b := whole.Column(want).Data(), tbl.Column(0).Data()
		if !array.ChunkedEqual(a, b) {
			t.Errorf("%s: %v, whole table's %v", name, b, a)
		}
		tbl.Release()
	}
	if _, _, err := ReadTableColumn(path, func(*arrow.Schema) (int, error) { return 0, errors.New("no such column") }); err == nil || err.Error() != "no such column" {
		t.Errorf("the picker's error: %v", err)
	}
}
