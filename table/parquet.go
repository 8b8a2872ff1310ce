package table

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/atomicfile"
	"github.com/ccsets/ccs/retrieve"
)

// embeddingNames are the column names ReadParquet looks for first.
var embeddingNames = []string{"embedding", "embeddings", "emb", "vector"}

// ReadParquet reads a collection from a Parquet file (or an Arrow IPC
// file: any file ReadTable reads): the embeddings from a
// column of float16, float32 or float64 lists or fixed-size lists — the one named
// embedding, embeddings, emb or vector, or else the only such column —
// every row of the same length and none null (float64 values are
// converted to float32, as bundle.Narrow converts them, and Converted
// says so); the ids from an integer column "id" (or "ids", or "_id" as
// BEIR's corpora name it), or else the row numbers; a string column
// there gives the collection's Keys instead (its IDs the row numbers).
// Either may be a dictionary (pandas' category dtype).
func ReadParquet(path string) (*retrieve.Collection, error) { return ReadParquetColumn(path, "") }

// ReadParquetColumn is ReadParquet with the embeddings from the named
// column ("" chooses as ReadParquet does).
func ReadParquetColumn(path, column string) (*retrieve.Collection, error) {
	return ReadParquetColumns(path, column, "")
}

// ReadParquetColumns is ReadParquetColumn with the ids from the column
// named idColumn, integers or strings ("" chooses as ReadParquet does: "id",
// "ids" or "_id"); a column of that name must be there.
func ReadParquetColumns(path, column, idColumn string) (*retrieve.Collection, error) {
	tbl, err := ReadTable(path)
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	schema := tbl.Schema()
	emb, id := -1, -1
	var lists []int
	for i, fld := range schema.Fields() {
		switch {
		case isFloatList(fld.Type):
			lists = append(lists, i)
			for _, n := range embeddingNames {
				if fld.Name == n && emb < 0 {
					emb = i
				}
			}
		case idColumn != "" && fld.Name == idColumn,
			idColumn == "" && (fld.Name == "id" || ((fld.Name == "ids" || fld.Name == "_id") && (id < 0 || schema.Field(id).Name == "_id"))):
			t := fld.Type
			if dict, ok := t.(*arrow.DictionaryType); ok { // pandas' category dtype
				t = dict.ValueType
			}
			if t := t.ID(); !arrow.IsInteger(t) && t != arrow.STRING && t != arrow.LARGE_STRING && t != arrow.STRING_VIEW {
				return nil, fmt.Errorf("%s: column %q is %v, want integer or string ids", path, fld.Name, fld.Type)
			}
			id = i
		}
	}
	if idColumn != "" && id < 0 {
		return nil, fmt.Errorf("%s: no column %q for the ids (the columns: %s)%s", path, idColumn, Columns(schema), didYouMean(idColumn, schema))
	}
	if column != "" {
		emb = slices.IndexFunc(schema.Fields(), func(f arrow.Field) bool { return f.Name == column })
		if emb < 0 {
			return nil, NoColumn(path, column, schema)
		}
		if !isFloatList(schema.Field(emb).Type) {
			return nil, fmt.Errorf("%s: column %q is %v, want float16, float32 or float64 lists (the embeddings)", path, column, schema.Field(emb).Type)
		}
	}
	if emb < 0 {
		if len(lists) != 1 {
			return nil, fmt.Errorf("%s: want one column of float16, float32 or float64 lists (the embeddings; or one named %v), found %d among the columns %s", path, embeddingNames, len(lists), Columns(schema))
		}
		emb = lists[0]
	}
	name := schema.Field(emb).Name
	n := int(tbl.NumRows())
	d := -1
	rows := []float32(nil)
	row := 0
	converted := ""
	for _, chunk := range tbl.Column(emb).Data().Chunks() {
		var values arrow.Array
		var offsets func(i int) (int64, int64)
		switch a := chunk.(type) {
		case *array.List:
			values, offsets = a.ListValues(), a.ValueOffsets
		case *array.FixedSizeList:
			values, offsets = a.ListValues(), a.ValueOffsets
		case *array.LargeList:
			values, offsets = a.ListValues(), a.ValueOffsets
		}
		var f32 []float32
		var f64 []float64
		switch v := values.(type) {
		case *array.Float32:
			f32 = v.Float32Values()
		case *array.Float64:
			f64, converted = v.Float64Values(), "float64 → float32"
		case *array.Float16: // a half-precision model's embeddings (datasets' Value("float16"))
			f32, converted = make([]float32, v.Len()), "float16 → float32"
			for j, h := range v.Values() {
				f32[j] = h.Float32()
			}
		default:
			return nil, fmt.Errorf("%s: column %q: want float16, float32 or float64 lists", path, name)
		}
		for i := range chunk.Len() {
			if chunk.IsNull(i) {
				return nil, fmt.Errorf("%s: column %q, row %d is null", path, name, row)
			}
			lo, hi := offsets(i)
			if d < 0 {
				d = int(hi - lo)
				if d < 1 {
					return nil, fmt.Errorf("%s: column %q, row %d is empty", path, name, row)
				}
				rows = make([]float32, 0, n*d)
			}
			if int(hi-lo) != d {
				return nil, fmt.Errorf("%s: column %q, row %d has %d values, row 0 has %d", path, name, row, hi-lo, d)
			}
			for j := lo; j < hi && values.NullN() > 0; j++ {
				if values.IsNull(int(j)) {
					return nil, fmt.Errorf("%s: column %q, row %d, coordinate %d is null", path, name, row, j-lo)
				}
			}
			if f32 != nil {
				rows = append(rows, f32[lo:hi]...)
			} else {
				for j, x := range f64[lo:hi] {
					v, err := bundle.Narrow(x)
					if err != nil {
						return nil, fmt.Errorf("%s: column %q, row %d, coordinate %d: %v %w", path, name, row, j, x, err)
					}
					rows = append(rows, v)
				}
			}
			row++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	var ids []int64
	var keys []string
	if id >= 0 {
		if ids, keys, err = ColumnValues(path, tbl, id, "integer or string ids"); err != nil {
			return nil, err
		}
	}
	c, err := retrieve.NewCollection(rows, d, ids)
	if err != nil {
		col := name // the embeddings' column, or else the ids' (two rows with one)
		if ids != nil && strings.Contains(err.Error(), "the same id") {
			col = schema.Field(id).Name
		}
		return nil, fmt.Errorf("%s: column %q: %w", path, col, err)
	}
	c.Converted = converted
	if id >= 0 && ids == nil {
		if err := c.SetKeys(keys); err != nil {
			return nil, fmt.Errorf("%s: column %q: %w", path, schema.Field(id).Name, err)
		}
	}
	return c, nil
}

func isFloatList(t arrow.DataType) bool {
	var elem arrow.DataType
	switch t := t.(type) {
	case *arrow.ListType:
		elem = t.Elem()
	case *arrow.LargeListType:
		elem = t.Elem()
	case *arrow.FixedSizeListType:
		elem = t.Elem()
	default:
		return false
	}
	return elem.ID() == arrow.FLOAT32 || elem.ID() == arrow.FLOAT64 || elem.ID() == arrow.FLOAT16
}

// WriteParquet writes c as a Parquet file ReadParquet reads back: columns
// id (int64, or the Keys as strings) and embedding (list<float32>), in row
// groups of 65 536 rows, written to a temporary file and renamed.
func WriteParquet(path string, c *retrieve.Collection) error {
	mem := memory.DefaultAllocator
	var ib array.Builder
	idType := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if c.Keys != nil {
		sb := array.NewStringBuilder(mem)
		sb.AppendValues(c.Keys, nil)
		ib, idType = sb, arrow.BinaryTypes.String
	} else {
		b := array.NewInt64Builder(mem)
		b.AppendValues(c.IDs, nil)
		ib = b
	}
	defer ib.Release()
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Float32)
	defer lb.Release()
	vb := lb.ValueBuilder().(*array.Float32Builder)
	vb.Reserve(len(c.Rows))
	for i := range c.N {
		lb.Append(true)
		vb.AppendValues(c.Rows[i*c.D:(i+1)*c.D], nil)
	}
	ids, embs := ib.NewArray(), lb.NewArray()
	defer ids.Release()
	defer embs.Release()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: idType},
		{Name: "embedding", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
	}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{ids, embs}, int64(c.N))
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	return atomicfile.Write(path, func(w io.Writer) error {
		return pqarrow.WriteTable(tbl, w, 1<<16, nil, pqarrow.DefaultWriterProps())
	})
}
