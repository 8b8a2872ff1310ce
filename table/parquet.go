package table

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
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
// "ids" or "_id"); a column of that name must be there. The file is read
// a record batch at a time, each converted into the float32 rows and let
// go, the ids kept as they come with their rows: the peak is the rows and
// a batch, not the table. Of a Parquet file (or a dataset's Parquet
// shards) the embeddings' and ids' columns alone are read, a page at a
// time (a float16 file of 200 000 × 384 read whole took its float16
// values, a float32 copy of the row group and then the rows: 1.65 GB for
// 307 MB of rows); the ids come in the same batches as their rows, from
// one open of the file, so that a file replaced while it is read cannot
// pair one file's rows with another's ids.
func ReadParquetColumns(path, column, idColumn string) (*retrieve.Collection, error) {
	var g *gatherer
	err := scanTable(path, true, func(schema *arrow.Schema, rows int64) ([]int, error) {
		emb, id, err := collectionColumns(path, schema, column, idColumn)
		if err != nil {
			return nil, err
		}
		g = newGatherer(path, schema, emb, id, rows)
		if id < 0 {
			return []int{emb}, nil
		}
		return []int{emb, id}, nil // the batches' column 0, the ids' 1
	}, func(rec arrow.RecordBatch, _ int, shared bool) error {
		var ids arrow.Array
		if g.hasIDs {
			ids = rec.Column(1)
		}
		return g.add(rec.Column(0), ids, shared)
	})
	if err != nil {
		if g != nil {
			g.release()
		}
		return nil, err
	}
	return g.collection()
}

// gatherer gathers a collection from record batches: the embeddings'
// column converted into float32 rows a batch at a time (rowReader), the
// ids' column's chunks kept as they come.
type gatherer struct {
	rows    *rowReader
	hasIDs  bool        // whether the batches carry ids (column 1)
	idField arrow.Field // theirs, when they do
	ids     []arrow.Array
	gc      collector
}

// newGatherer gathers the columns emb and id (−1: none) of schema, read
// from path, of rows rows in all (−1: not known ahead).
func newGatherer(path string, schema *arrow.Schema, emb, id int, rows int64) *gatherer {
	g := &gatherer{rows: &rowReader{path: path, name: schema.Field(emb).Name, n: int(max(rows, 0))}, hasIDs: id >= 0}
	if id >= 0 {
		g.idField = schema.Field(id)
	}
	return g
}

// add converts a batch's embeddings and keeps its ids (nil for none),
// copied where the batch's arrays are shared (scanTable's).
func (g *gatherer) add(emb, ids arrow.Array, shared bool) error {
	if err := g.rows.add(emb); err != nil {
		return err
	}
	if ids != nil {
		// A copy where shared: an Arrow IPC batch's arrays are slices of
		// one buffer, its message's body, which ids kept as they are
		// would keep whole (the embeddings too: a 200 000 × 384 Arrow
		// file read at 645 MB, twice its rows), as would string_view ids
		// concatenated. A Parquet batch's ids are arrays of their own.
		own, err := keepColumn(ids, shared)
		if err != nil {
			return fmt.Errorf("%s: column %q: %w", g.rows.path, g.idField.Name, err)
		}
		g.ids = append(g.ids, own)
	}
	// The batches' buffers are garbage once converted: the rows are
	// pointer-free, a cycle takes milliseconds.
	for _, b := range emb.Data().Children()[0].Buffers() {
		if b != nil {
			g.gc.read(b.Len())
		}
	}
	return nil
}

// release lets go of the ids' chunks.
func (g *gatherer) release() {
	for _, a := range g.ids {
		a.Release()
	}
	g.ids = nil
}

// collection is the rows gathered, with their ids.
func (g *gatherer) collection() (*retrieve.Collection, error) {
	defer g.release()
	var ids []int64
	var keys []string
	name := ""
	if g.hasIDs {
		name = g.idField.Name
		fld := g.idField
		if len(g.ids) > 0 { // the batches' own type (a dictionary's, as read)
			fld.Type = g.ids[0].DataType()
		}
		chunks := arrow.NewChunked(fld.Type, g.ids)
		defer chunks.Release()
		col := arrow.NewColumn(fld, chunks)
		defer col.Release()
		tbl := array.NewTable(arrow.NewSchema([]arrow.Field{fld}, nil), []arrow.Column{*col}, -1)
		defer tbl.Release()
		var err error
		if ids, keys, err = ColumnValues(g.rows.path, tbl, 0, "integer or string ids"); err != nil {
			return nil, err
		}
	}
	return g.rows.collection(ids, keys, name)
}

// leaves are the leaf columns of a Parquet field.
func leaves(f pqarrow.SchemaField) []int {
	if f.IsLeaf() {
		return []int{f.ColIndex}
	}
	var out []int
	for _, c := range f.Children {
		out = append(out, leaves(c)...)
	}
	return out
}

// collectionColumns picks a collection's columns in schema: the
// embeddings' (column, or the one of embeddingNames, or the only column
// of float lists) and the ids' (idColumn, or else "id", "ids" or "_id";
// −1 for none).
func collectionColumns(path string, schema *arrow.Schema, column, idColumn string) (emb, id int, err error) {
	emb, id = -1, -1
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
				return 0, 0, fmt.Errorf("%s: column %q is %v, want integer or string ids", path, fld.Name, fld.Type)
			}
			id = i
		}
	}
	if idColumn != "" && id < 0 {
		return 0, 0, fmt.Errorf("%s: no column %q for the ids (the columns: %s)%s", path, idColumn, Columns(schema), didYouMean(idColumn, schema))
	}
	if column != "" {
		emb = slices.IndexFunc(schema.Fields(), func(f arrow.Field) bool { return f.Name == column })
		if emb < 0 {
			return 0, 0, NoColumn(path, column, schema)
		}
		if !isFloatList(schema.Field(emb).Type) {
			return 0, 0, fmt.Errorf("%s: column %q is %v, want float16, float32 or float64 lists (the embeddings)", path, column, schema.Field(emb).Type)
		}
	}
	if emb < 0 {
		if len(lists) != 1 {
			return 0, 0, fmt.Errorf("%s: want one column of float16, float32 or float64 lists (the embeddings; or one named %v), found %d among the columns %s", path, embeddingNames, len(lists), Columns(schema))
		}
		emb = lists[0]
	}
	return emb, id, nil
}

// rowReader gathers a column of float lists, a chunk at a time, into
// float32 rows, checking them.
type rowReader struct {
	path, name string
	n, d, row  int
	rows       []float32
	converted  string
}

// add appends a chunk of the column.
func (r *rowReader) add(chunk arrow.Array) error {
	path, name := r.path, r.name
	values, offsets, _ := listParts(chunk)
	var f32 []float32
	var f64 []float64
	var f16 []float16.Num
	switch v := values.(type) {
	case *array.Float32:
		f32 = v.Float32Values()
	case *array.Float64:
		f64, r.converted = v.Float64Values(), "float64 → float32"
	case *array.Float16: // a half-precision model's embeddings (datasets' Value("float16"))
		f16, r.converted = v.Values(), "float16 → float32"
	default:
		return fmt.Errorf("%s: column %q: want float16, float32 or float64 lists", path, name)
	}
	for i := range chunk.Len() {
		if chunk.IsNull(i) {
			return fmt.Errorf("%s: column %q, %s is null", path, name, rowName(path, r.row))
		}
		lo, hi := offsets(i)
		if r.rows == nil {
			r.d = int(hi - lo)
			if r.d < 1 {
				return fmt.Errorf("%s: column %q, %s is empty", path, name, rowName(path, r.row))
			}
			r.rows = make([]float32, 0, r.n*r.d)
		}
		if int(hi-lo) != r.d {
			return fmt.Errorf("%s: column %q, %s has %d values, row 0 has %d", path, name, rowName(path, r.row), hi-lo, r.d)
		}
		for j := lo; j < hi && values.NullN() > 0; j++ {
			if values.IsNull(int(j)) {
				return fmt.Errorf("%s: column %q, %s, coordinate %d is null", path, name, rowName(path, r.row), j-lo)
			}
		}
		switch {
		case f32 != nil:
			r.rows = append(r.rows, f32[lo:hi]...)
		case f16 != nil:
			for _, h := range f16[lo:hi] {
				r.rows = append(r.rows, h.Float32())
			}
		default:
			for j, x := range f64[lo:hi] {
				v, err := bundle.Narrow(x)
				if err != nil {
					return fmt.Errorf("%s: column %q, %s, coordinate %d: %v %w", path, name, rowName(path, r.row), j, x, err)
				}
				r.rows = append(r.rows, v)
			}
		}
		r.row++
	}
	return nil
}

// collection is the rows read, with the ids (or keys) of the column
// idName.
func (r *rowReader) collection(ids []int64, keys []string, idName string) (*retrieve.Collection, error) {
	if r.row == 0 {
		return nil, fmt.Errorf("%s: no rows", r.path)
	}
	c, err := retrieve.NewCollection(r.rows, r.d, ids)
	if err != nil {
		col := r.name // the embeddings' column, or else the ids' (two rows with one)
		if ids != nil && strings.Contains(err.Error(), "the same id") {
			col = idName
		}
		return nil, fmt.Errorf("%s: column %q: %w", r.path, col, err)
	}
	c.Converted = r.converted
	if keys != nil {
		if err := c.SetKeys(keys); err != nil {
			return nil, fmt.Errorf("%s: column %q: %w", r.path, idName, err)
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
