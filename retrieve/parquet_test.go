package retrieve

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// writeParquet writes columns (arrays of equal length) to a Parquet file,
// in row groups of chunk rows.
func writeParquet(t *testing.T, path string, names []string, cols []arrow.Array, chunk int64) {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(cols[0].Len()))
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

func int64s(v []int64) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
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
	for _, tc := range []struct {
		name    string
		cols    []string
		arrs    []arrow.Array
		chunk   int64 // rows per row group
		wantIDs []int64
	}{
		{"list with ids", []string{"id", "embedding"}, []arrow.Array{int64s(ids), lists(rows, 0)}, 10, ids},
		// One row group: pqarrow v18.8.0's writer repeats the first rows of
		// a fixed-size-list column in every later row group (its reader
		// reads what was written, checked on the column's raw values).
		{"fixed-size list, no ids", []string{"title_vec"}, []arrow.Array{lists(rows, 3)}, 100, nil},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".parquet")
		writeParquet(t, path, tc.cols, tc.arrs, tc.chunk)
		c, err := ReadCollection(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := tc.wantIDs
		if want == nil {
			for i := range rows {
				want = append(want, int64(i))
			}
		}
		if c.N != len(rows) || c.D != 3 || !slices.Equal(c.Rows, flat) || !slices.Equal(c.IDs, want) {
			t.Errorf("%s: read N=%d D=%d ids %v", tc.name, c.N, c.D, c.IDs)
		}
	}

	ragged := slices.Clone(rows)
	ragged[12] = []float32{1, 2}
	withNull := slices.Clone(rows)
	withNull[4] = nil
	f64 := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Float64)
	f64.Append(true)
	f64.ValueBuilder().(*array.Float64Builder).Append(1)
	for _, tc := range []struct {
		name string
		cols []string
		arrs []arrow.Array
		want string
	}{
		{"ragged", []string{"emb"}, []arrow.Array{lists(ragged, 0)}, `column "emb", row 12 has 2 values, row 0 has 3`},
		{"null row", []string{"emb"}, []arrow.Array{lists(withNull, 0)}, `column "emb", row 4 is null`},
		{"float64", []string{"emb"}, []arrow.Array{f64.NewArray()}, "want one column of float32 lists"},
		{"two lists", []string{"a", "b"}, []arrow.Array{lists(rows, 0), lists(rows, 0)}, "found 2"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".parquet")
		writeParquet(t, path, tc.cols, tc.arrs, 10)
		_, err := ReadCollection(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want an error naming %s and %q", tc.name, err, path, tc.want)
		}
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
	c, err := NewCollection(rows, d, ids)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.parquet")
	if err := WriteParquet(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCollection(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.N != n || got.D != d || !slices.Equal(got.Rows, rows) || !slices.Equal(got.IDs, ids) {
		t.Errorf("read back N=%d D=%d, rows equal %v, ids equal %v", got.N, got.D, slices.Equal(got.Rows, rows), slices.Equal(got.IDs, ids))
	}
}
