// Package table reads tables of embeddings: Parquet files, Arrow IPC files
// (Feather v2, and the stream format a Hugging Face dataset's save_to_disk
// writes) and such datasets' directories, through Apache Arrow's Go
// module; and writes a collection as Parquet. It is apart from retrieve so
// that a program that reads no tables does not link Arrow: importing it
// makes retrieve.ReadCollection and retrieve.Open read tables
// (retrieve.RegisterTables), as importing retrieve/clickhouse makes
// retrieve.Open read ClickHouse URLs.
package table

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ccsets/ccs/internal/suggest"
	"github.com/ccsets/ccs/retrieve"
)

func init() { retrieve.RegisterTables(ReadParquetColumns) }

// ReadTable reads a columnar file whole: Parquet (.parquet), or Arrow IPC
// (.arrow, .feather) in the stream format — what a Hugging Face dataset's
// save_to_disk writes, data-00000-of-00001.arrow — or the file format
// (Feather v2); or such a dataset's directory, its shards (DatasetFiles)
// in order as one table, a DatasetDict's splits one after another. The
// caller releases the table.
func ReadTable(path string) (arrow.Table, error) {
	if strings.ToLower(filepath.Ext(path)) == ".parquet" {
		if st, err := os.Stat(path); err != nil || !st.IsDir() {
			return readParquetTable(path)
		}
	}
	return collect(func(start func(*arrow.Schema, int64) error, batch func(arrow.RecordBatch) error) error {
		return scanTable(path, false, func(s *arrow.Schema, rows int64) ([]int, error) { return nil, start(s, rows) },
			func(rec arrow.RecordBatch, _ int, _ bool) error { return batch(rec) })
	})
}

// collect keeps every record batch a scan (scanTable's, or scanArrow's)
// gives, as one table.
func collect(scan func(start func(*arrow.Schema, int64) error, batch func(arrow.RecordBatch) error) error) (arrow.Table, error) {
	var schema *arrow.Schema
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	err := scan(func(s *arrow.Schema, _ int64) error {
		schema = s
		return nil
	}, func(rec arrow.RecordBatch) error {
		rec.Retain()
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return array.NewTableFromRecords(schema, recs), nil
}

// ReadTableColumn reads the column of path's table that pick chooses from
// its schema, that column alone, returned as a table of one column, col
// 0 (its schema's metadata, a Hugging Face dataset's features, kept): of
// a Parquet file its leaf columns alone (a 1280-d embeddings column
// beside it is not read); of an Arrow IPC file or stream (a dataset
// directory's Arrow shards) a record batch at a time, the column copied
// out of each and the batch let go (an embeddings column beside it is
// read, a batch at a time, not kept: the peak is the column and a batch,
// not the table); of a dataset directory's Parquet shards the column's
// leaf columns alone, a few thousand rows at a time, kept as read. pick's
// error is returned as it is.
func ReadTableColumn(path string, pick func(*arrow.Schema) (int, error)) (tbl arrow.Table, col int, err error) {
	tbl, err = readColumns(path, func(s *arrow.Schema) ([]int, error) {
		c, err := pick(s)
		return []int{c}, err
	})
	return tbl, 0, err
}

// readColumns reads the columns of path's table that pick chooses from
// its schema (distinct, in ascending order), those alone, as
// ReadTableColumn reads one: a table of them in that order, its schema's
// metadata kept. pick's error is returned as it is.
func readColumns(path string, pick func(*arrow.Schema) ([]int, error)) (tbl arrow.Table, err error) {
	st, statErr := os.Stat(path)
	if strings.ToLower(filepath.Ext(path)) != ".parquet" || statErr == nil && st.IsDir() {
		return scanColumns(path, pick)
	}
	var d damaged
	defer d.recover(path, &err)
	p, err := openParquet(path, false, 0)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	pf, fr, schema := p.pf, p.fr, p.schema
	var cols []int
	d.caller(func() { cols, err = pick(schema) })
	if err != nil {
		return nil, err
	}
	var leafCols []int
	for _, c := range cols {
		leafCols = append(leafCols, leaves(fr.Manifest.Fields[c])...)
	}
	groups := make([]int, pf.NumRowGroups())
	for i := range groups {
		groups[i] = i
	}
	tbl, err = fr.ReadRowGroups(context.Background(), leafCols, groups)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, columnNames(schema, cols), err)
	}
	if err := validTable(path, tbl); err != nil {
		tbl.Release()
		return nil, err
	}
	return withMetadata(tbl, schema.Metadata()), nil
}

// columnNames names schema's columns cols in a message: column "a", or
// columns "a", "b".
func columnNames(schema *arrow.Schema, cols []int) string {
	names := make([]string, len(cols))
	for j, c := range cols {
		names[j] = strconv.Quote(schema.Field(c).Name)
	}
	return map[bool]string{true: "column ", false: "columns "}[len(cols) == 1] + strings.Join(names, ", ")
}

// parquetMetadata is a Parquet file's key-value metadata, but the Arrow
// schema pyarrow stores in it: a Hugging Face dataset's features (key
// "huggingface") among them, which pqarrow (arrow-go v18.8.0) leaves out
// of the schema it reads.
func parquetMetadata(pf *file.Reader) arrow.Metadata {
	var keys, values []string
	for _, kv := range pf.MetaData().KeyValueMetadata() {
		if kv.Key != "ARROW:schema" && kv.Value != nil {
			keys, values = append(keys, kv.Key), append(values, *kv.Value)
		}
	}
	return arrow.NewMetadata(keys, values)
}

// withMetadata is tbl with md as its schema's metadata, tbl released;
// tbl itself where md is empty.
func withMetadata(tbl arrow.Table, md arrow.Metadata) arrow.Table {
	if md.Len() == 0 {
		return tbl
	}
	defer tbl.Release()
	cols := make([]arrow.Column, tbl.NumCols())
	for i := range cols {
		cols[i] = *tbl.Column(i)
	}
	return array.NewTable(arrow.NewSchema(tbl.Schema().Fields(), &md), cols, tbl.NumRows())
}

// scanColumns is readColumns of any table but a Parquet file: the chosen
// columns of each record batch scanTable reads, copied (ownColumn) where
// the batch's arrays are shared, kept as read where not (a dataset
// directory's Parquet shards), as one chunk of each of the table's
// columns.
func scanColumns(path string, pick func(*arrow.Schema) ([]int, error)) (arrow.Table, error) {
	var schema *arrow.Schema
	var chunks [][]arrow.Array // a column's
	defer func() {
		for _, cs := range chunks {
			for _, c := range cs {
				c.Release()
			}
		}
	}()
	var gc collector
	err := scanTable(path, false, func(s *arrow.Schema, _ int64) ([]int, error) {
		cols, err := pick(s)
		if err != nil {
			return nil, err
		}
		fields := make([]arrow.Field, len(cols))
		for j, c := range cols {
			fields[j] = s.Field(c)
		}
		md := s.Metadata()
		schema, chunks = arrow.NewSchema(fields, &md), make([][]arrow.Array, len(cols))
		return cols, nil
	}, func(rec arrow.RecordBatch, read int, shared bool) error {
		for j := range chunks {
			own, err := keepColumn(rec.Column(j), shared)
			if err != nil {
				return fmt.Errorf("%s: column %q: %w", path, schema.Field(j).Name, err)
			}
			chunks[j] = append(chunks[j], own)
		}
		// A shared batch is garbage once its columns are copied out (the
		// embeddings read beside them: a 200 000 × 384 file's labels
		// read at 662 MB, 447 MB with the cycles); a batch kept as read
		// stays live, and a cycle would free nothing.
		if shared {
			gc.read(read)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Column, len(chunks))
	for j := range chunks {
		chunked := arrow.NewChunked(schema.Field(j).Type, chunks[j])
		c := arrow.NewColumn(schema.Field(j), chunked)
		chunked.Release()
		defer c.Release()
		cols[j] = *c
	}
	return array.NewTable(schema, cols, -1), nil
}

// keepColumn is a, a column of a record batch, to keep past the batch:
// copied (ownColumn) where shared (scanTable's), else a itself, retained.
func keepColumn(a arrow.Array, shared bool) (arrow.Array, error) {
	if shared {
		return ownColumn(a)
	}
	a.Retain()
	return a, nil
}

// ownColumn copies a, a column of a record batch, into memory of its
// own: an array read from an Arrow IPC record batch is a slice of the
// batch's body, which keeping it keeps whole, the embeddings beside it
// included. array.Concatenate copies the rows' range of each buffer
// (of a batch that is a slice of a larger table, too) but shares a
// string_view's data buffers, and a dictionary, which ownViews then
// copies: each byte is copied once.
func ownColumn(a arrow.Array) (arrow.Array, error) {
	own, err := array.Concatenate([]arrow.Array{a}, memory.DefaultAllocator)
	if err != nil || !hasView(own.DataType()) {
		return own, err
	}
	d := ownViews(own.Data())
	defer d.Release()
	own.Release()
	return array.MakeFromData(d), nil
}

// hasView says whether a column of type t holds a binary or string view
// array, itself or among its children or dictionary.
func hasView(t arrow.DataType) bool {
	switch t := t.(type) {
	case arrow.BinaryViewDataType:
		return true
	case *arrow.DictionaryType:
		return hasView(t.ValueType)
	case arrow.NestedType:
		for _, f := range t.Fields() {
			if hasView(f.Type) {
				return true
			}
		}
	}
	return false
}

// ownViews is d, made by array.Concatenate, with what it shares with the
// array concatenated copied (copyData): a view array's data buffers (its
// own and its children's) and a dictionary, whole; the buffers
// Concatenate made are kept.
func ownViews(d arrow.ArrayData) *array.Data { return copyData(d, false) }

// copyData copies d's buffers (all of them, or else a view array's data
// buffers alone), its children's so, and its dictionary's, all of them,
// into memory of their own, whole (the offset kept).
func copyData(d arrow.ArrayData, all bool) *array.Data {
	bufs := slices.Clone(d.Buffers())
	_, view := d.DataType().(arrow.BinaryViewDataType)
	for i, b := range bufs {
		if b != nil && (all || view && i >= 2) {
			bufs[i] = memory.NewBufferBytes(slices.Clone(b.Bytes()))
		}
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		dict := copyData(d.Dictionary(), true)
		defer dict.Release()
		return array.NewDataWithDictionary(d.DataType(), d.Len(), bufs, d.NullN(), d.Offset(), dict)
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = copyData(c, all)
	}
	out := array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), d.Offset())
	for _, c := range children {
		c.Release()
	}
	return out
}

// recordBytes is the length of rec's columns' buffers (dataBytes).
func recordBytes(rec arrow.RecordBatch) int {
	n := 0
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

// dataBytes is the length of d's buffers, its children's and its
// dictionary's.
func dataBytes(d arrow.ArrayData) int {
	n := 0
	for _, b := range d.Buffers() {
		if b != nil {
			n += b.Len()
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}

// readParquetTable is ReadTable of a Parquet file.
func readParquetTable(path string) (tbl arrow.Table, err error) {
	var d damaged
	defer d.recover(path, &err)
	p, err := openParquet(path, false, 0)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	tbl, err = p.fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := validTable(path, tbl); err != nil {
		tbl.Release()
		return nil, err
	}
	return withMetadata(tbl, p.schema.Metadata()), nil
}

// parquetFile is a Parquet file open for reading as Arrow: its reader, and
// its schema with the file's key-value metadata (parquetMetadata).
type parquetFile struct {
	f      *os.File
	pf     *file.Reader
	fr     *pqarrow.FileReader
	schema *arrow.Schema
}

// openParquet opens the Parquet file at path; streamed reads a page at a
// time (not a column chunk), batch rows a record batch (0: pqarrow's
// default). The errors name the file. The caller closes it.
func openParquet(path string, streamed bool, batch int64) (*parquetFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var opts []file.ReadOption
	if streamed {
		props := parquet.NewReaderProperties(memory.DefaultAllocator)
		props.BufferedStreamEnabled, props.BufferSize = true, 1<<20
		opts = append(opts, file.WithReadProps(props))
	}
	pf, err := file.NewParquetReader(f, opts...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := &parquetFile{f: f, pf: pf}
	if p.fr, err = pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator); err == nil {
		p.schema, err = p.fr.Schema()
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	md := parquetMetadata(pf)
	p.schema = arrow.NewSchema(p.schema.Fields(), &md)
	return p, nil
}

// Close closes the file.
func (p *parquetFile) Close() {
	p.pf.Close()
	p.f.Close()
}

// scanTable reads what ReadTable reads a record batch at a time, so that
// a reader converting them keeps one batch at a time, not the table:
// start is given the schema and the number of rows — a Parquet file's
// from its footer always, an Arrow IPC file's or a dataset directory's
// where count asks for it (arrowRows, the shards' footers), −1 where
// they cannot be counted ahead or are not asked for —, and returns the
// columns it wants, distinct (nil: all); then batch each record batch in
// order, of those columns alone in that order, with the bytes read for it
// (all its columns, for a collector), which is released after batch
// returns (batch retains what it keeps). shared says the batch's arrays
// are slices of more than their own rows — an Arrow IPC batch's, of its
// message's body (the columns not wanted too); a Parquet file read whole's,
// of the table —, which batch copies what it keeps out of (ownColumn);
// a Parquet batch of the wanted columns is read into arrays of its own,
// kept as they are. Of a Parquet file the columns
// not wanted are not read (an embeddings column beside a label column:
// scanParquet), those wanted a few thousand rows at a time; with nil
// (all columns), it is read whole. A dataset
// directory's shards are read one after another, each of the first's
// columns; start is called once. Errors from start and batch are
// returned as they are; the reading's name the file.
func scanTable(path string, count bool, start func(*arrow.Schema, int64) ([]int, error), batch func(rec arrow.RecordBatch, read int, shared bool) error) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	var want []int
	var wanted *arrow.Schema // want's columns, nil for all
	pick := func(s *arrow.Schema, rows int64) ([]int, error) {
		w, err := start(s, rows)
		if err != nil || w == nil {
			return nil, err
		}
		fields := make([]arrow.Field, len(w))
		for i, c := range w {
			fields[i] = s.Field(c)
		}
		want, wanted = w, arrow.NewSchema(fields, nil)
		return w, nil
	}
	// read hands batch a batch read of the wanted columns alone
	// (scanParquet's), or of the whole file read as one table.
	read := func(rec arrow.RecordBatch) error { return batch(rec, recordBytes(rec), want == nil) }
	// project hands batch the wanted columns of a batch read whole (an
	// Arrow IPC batch's).
	project := func(rec arrow.RecordBatch) error {
		if want == nil {
			return read(rec)
		}
		cols := make([]arrow.Array, len(want))
		for i, c := range want {
			cols[i] = rec.Column(c)
		}
		p := array.NewRecordBatch(wanted, cols, rec.NumRows())
		defer p.Release()
		return batch(p, recordBytes(rec), true)
	}
	if !st.IsDir() {
		if strings.ToLower(filepath.Ext(path)) == ".parquet" {
			return scanParquet(path, pick, read)
		}
		return scanFile(path, count, pick, project)
	}
	_, shards, _, err := datasetFiles(path)
	if err != nil {
		return err
	}
	// Count the rows of every shard first (their messages' metadata
	// alone, a Parquet file's footer), so that the destination is made
	// once at its size.
	rows := int64(-1)
	if count {
		rows = shardsRows(shards)
	}
	var first *arrow.Schema
	for _, shard := range shards {
		check := func(s *arrow.Schema, _ int64) ([]int, error) {
			if first == nil {
				first = s
				return pick(s, rows)
			}
			if !s.Equal(first) {
				name, _ := filepath.Rel(path, shards[0])
				return nil, fmt.Errorf("%s: its columns (%s) differ from %s's (%s)%s", shard, Columns(s), name, Columns(first), columnDiff(s, first, name))
			}
			return want, nil
		}
		var err error
		if strings.ToLower(filepath.Ext(shard)) == ".parquet" {
			err = scanParquet(shard, check, read)
		} else {
			err = scanFile(shard, false, check, project) // counted above
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// scanParquet is scanTable of a Parquet file: start is given its schema
// (its key-value metadata kept: a Hugging Face dataset's features) and
// rows, and batch the columns start wants alone, in batches of 4096 rows
// read a page at a time; or, where start returns nil (all columns), the
// file read whole, in batches of 65 536 rows.
func scanParquet(path string, start func(*arrow.Schema, int64) ([]int, error), batch func(arrow.RecordBatch) error) (err error) {
	var d damaged
	defer d.recover(path, &err)
	p, err := openParquet(path, true, 4096)
	if err != nil {
		return err
	}
	defer p.Close()
	fr, schema := p.fr, p.schema
	var want []int
	rows := p.pf.NumRows()
	d.caller(func() { want, err = start(schema, rows) })
	if err != nil {
		return err
	}
	guarded := d.guard(batch)
	batch = func(rec arrow.RecordBatch) error {
		if err := array.ValidateRecordFull(rec); err != nil {
			return damagedErr(path, err)
		}
		return guarded(rec)
	}
	if want == nil {
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer tbl.Release()
		tr := array.NewTableReader(tbl, 1<<16)
		defer tr.Release()
		for tr.Next() {
			if err := batch(tr.RecordBatch()); err != nil {
				return err
			}
		}
		return nil
	}
	var cols []int
	for _, c := range want {
		cols = append(cols, leaves(fr.Manifest.Fields[c])...)
	}
	rr, err := fr.GetRecordReader(context.Background(), cols, nil)
	if err != nil {
		return fmt.Errorf("%s: column %q: %w", path, schema.Field(want[0]).Name, err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := batch(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: column %q: %w", path, schema.Field(want[0]).Name, err)
	}
	return nil
}

// scanFile is scanTable of an Arrow IPC file or stream: start is given
// its schema and rows as scanTable's is (the columns it wants are for
// batch to pick: an IPC batch is read whole), batch each batch read.
func scanFile(path string, count bool, start func(*arrow.Schema, int64) ([]int, error), batch func(arrow.RecordBatch) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	rows := int64(-1)
	if count {
		rows = arrowRows(f, size)
	}
	if err := scanArrow(f, size, 2*size+1<<20, func(s *arrow.Schema) error { _, err := start(s, rows); return err }, batch); err != nil {
		if ce := (callerError{}); errors.As(err, &ce) {
			return ce.error
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// callerError is an error of scanArrow's start or batch, returned as it
// is (not prefixed with the file, which it names already).
type callerError struct{ error }

// scanArrow reads an Arrow IPC stream or file of size bytes from r a
// record batch at a time (scanTable's start and batch; their errors come
// back as callerError), its record batches allocating at most limit
// bytes in all: no buffer of a well-formed file is larger than the file
// (uncompressed), so a header claiming more is refused before it is
// allocated, not obeyed.
func scanArrow(r io.ReaderAt, size, limit int64, start func(*arrow.Schema) error, batch func(arrow.RecordBatch) error) (err error) {
	mem := &boundedAllocator{limit: limit}
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(errOverLimit); ok {
				err = e
				return
			}
			err = fmt.Errorf("not a readable Arrow IPC file: %v", p)
		}
	}()
	head := make([]byte, len(ipc.Magic))
	if _, err := r.ReadAt(head, 0); err != nil && err != io.EOF {
		return err
	}
	// No message of a well-formed file or stream is larger than it: the
	// readers' own caps (arrow-go v18.8.0: 64 MiB of metadata, 256 MiB of
	// a record batch's body) would refuse an embeddings batch over 256 MiB
	// (65 536 rows of d = 1024 float32, pyarrow's Feather chunk), and the
	// stream's reader sets none of its own: the file's size is the cap.
	lim := max(size, 8)
	if bytes.Equal(head, ipc.Magic) { // the file format
		fr, err := ipc.NewFileReader(io.NewSectionReader(r, 0, size), ipc.WithAllocator(mem),
			ipc.WithMetadataSizeLimit(lim), ipc.WithBodySizeLimit(lim))
		if err != nil {
			return fmt.Errorf("not a readable Arrow IPC file: %w", err)
		}
		defer fr.Close()
		if err := start(fr.Schema()); err != nil {
			return callerError{err}
		}
		for i := range fr.NumRecords() {
			rec, err := fr.RecordBatchAt(i)
			if err != nil {
				return fmt.Errorf("record batch %d: %w", i, err)
			}
			err = batch(rec)
			rec.Release()
			if err != nil {
				return callerError{err}
			}
		}
		return nil
	}
	// A length prefix claiming more than the stream (a text file's
	// first 4 bytes read as one, 1.7 GB for "embe") is refused before
	// its buffer is made.
	mr := ipc.NewMessageReader(bufio.NewReader(io.NewSectionReader(r, 0, size)), ipc.WithAllocator(mem),
		ipc.WithMetadataSizeLimit(lim), ipc.WithBodySizeLimit(lim))
	sr, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(mem))
	if err != nil {
		return fmt.Errorf("not a readable Arrow IPC stream or file: %w", err)
	}
	defer sr.Release()
	if err := start(sr.Schema()); err != nil {
		return callerError{err}
	}
	i := 0
	for ; sr.Next(); i++ {
		if err := batch(sr.RecordBatch()); err != nil {
			return callerError{err}
		}
	}
	if err := sr.Err(); err != nil {
		return fmt.Errorf("record batch %d: %w", i, err)
	}
	return nil
}

// arrowRows counts the rows of an Arrow IPC stream or file of size bytes
// from its record batches' metadata alone, their bodies skipped (a few
// hundred bytes read a batch), so that a reader can make its destination
// once at its size; −1 for anything it does not read so (the reader then
// says what is wrong). The file format is its magic, then the stream.
func arrowRows(r io.ReaderAt, size int64) (rows int64) {
	defer func() {
		if recover() != nil { // a flatbuffer's offsets out of range
			rows = -1
		}
	}()
	off := int64(0)
	head := make([]byte, 8)
	if _, err := r.ReadAt(head, 0); err != nil {
		return -1
	}
	if bytes.Equal(head[:len(ipc.Magic)], ipc.Magic) {
		off = 8
	}
	var meta []byte
	for {
		if _, err := r.ReadAt(head, off); err != nil {
			return -1
		}
		n := int64(binary.LittleEndian.Uint32(head[4:]))
		off += 8
		switch binary.LittleEndian.Uint32(head) {
		case 0xFFFFFFFF:
		case 0: // the end of the stream
			return rows
		default: // before Arrow 0.15: no continuation marker
			n = int64(binary.LittleEndian.Uint32(head))
			off -= 4
		}
		if n == 0 {
			return rows
		}
		if n < 8 || n > size-off {
			return -1
		}
		meta = slices.Grow(meta[:0], int(n))[:n]
		if _, err := r.ReadAt(meta, off); err != nil {
			return -1
		}
		off += n
		// Message (Message.fbs): version, header_type, header, bodyLength;
		// a RecordBatch's first field is its length.
		msg := flatbuffers.Table{Bytes: meta, Pos: flatbuffers.GetUOffsetT(meta)}
		body := int64(0)
		if o := flatbuffers.UOffsetT(msg.Offset(10)); o != 0 {
			body = msg.GetInt64(o + msg.Pos)
		}
		if o := flatbuffers.UOffsetT(msg.Offset(6)); o != 0 && msg.GetByte(o+msg.Pos) == 3 { // MessageHeader RecordBatch
			o := flatbuffers.UOffsetT(msg.Offset(8))
			if o == 0 {
				return -1
			}
			var rb flatbuffers.Table
			msg.Union(&rb, o)
			length := int64(0)
			if o := flatbuffers.UOffsetT(rb.Offset(4)); o != 0 {
				length = rb.GetInt64(o + rb.Pos)
			}
			if length < 0 {
				return -1
			}
			rows += length
		}
		if body < 0 || body > size-off {
			return -1
		}
		off += body
	}
}

// errOverLimit is the panic of a boundedAllocator asked for too much.
type errOverLimit struct{ asked, limit int64 }

func (e errOverLimit) Error() string {
	return fmt.Sprintf("its record batches claim more than %d bytes (%d asked for), more than twice the file's size: a corrupt file, or one compressed more than 2:1 (pandas' to_feather compresses with LZ4 by default; mostly-zero features compress that much), which is not read: write it uncompressed (to_feather(…, compression=\"uncompressed\")), or as Parquet", e.limit, e.asked)
}

// boundedAllocator is Go's allocator with a total: past it, it panics with
// errOverLimit, which scanArrow turns into an error.
type boundedAllocator struct {
	memory.GoAllocator
	used, limit int64
}

func (a *boundedAllocator) Allocate(size int) []byte {
	if a.used += int64(size); a.used > a.limit {
		panic(errOverLimit{asked: a.used, limit: a.limit})
	}
	return a.GoAllocator.Allocate(size)
}

func (a *boundedAllocator) Reallocate(size int, b []byte) []byte {
	if a.used += int64(size - len(b)); a.used > a.limit {
		panic(errOverLimit{asked: a.used, limit: a.limit})
	}
	return a.GoAllocator.Reallocate(size, b)
}

// DatasetFiles are the files of a Hugging Face dataset's directory (what
// save_to_disk writes), in the order they are read: a Dataset's
// state.json, then the shards its _data_files lists, in that order; a
// DatasetDict's dataset_dict.json, then each split's files, in the order
// its "splits" lists them. DatasetSplits names the splits.
func DatasetFiles(dir string) ([]string, error) {
	files, _, _, err := datasetFiles(dir)
	return files, err
}

// shardsRows counts the rows of a dataset's shards from their messages'
// metadata alone (arrowRows) or a Parquet file's footer, −1 where one
// cannot be counted so.
func shardsRows(shards []string) int64 {
	rows := int64(0)
	for _, shard := range shards {
		n := int64(-1)
		if f, err := os.Open(shard); err == nil {
			switch st, err := f.Stat(); {
			case err != nil:
			case strings.ToLower(filepath.Ext(shard)) == ".parquet":
				n = parquetRows(f)
			default:
				n = arrowRows(f, st.Size())
			}
			f.Close()
		}
		if n < 0 {
			return -1
		}
		rows += n
	}
	return rows
}

// parquetRows is the number of rows a Parquet file's footer gives, −1
// where it cannot be read (the reader then says what is wrong).
func parquetRows(f *os.File) (rows int64) {
	defer func() {
		if recover() != nil { // a damaged footer (arrow-go panics on some)
			rows = -1
		}
	}()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return -1
	}
	return pf.NumRows()
}

// damaged turns a panic of the Parquet reader (arrow-go panics on some
// damaged files: a footer's negative count of a schema node's children
// made a slice of negative size) into the error that the file is not
// readable Parquet. A panic in a function of the caller's, run through
// caller or guard, is left to go on with its stack: a bug of ccs is not
// a damaged file (the batches it is given are validated first).
type damaged struct{ inCaller bool }

// recover, deferred, sets *err to the damaged file's error where the
// Parquet reader panicked.
func (d *damaged) recover(path string, err *error) {
	if d.inCaller {
		return // not recovered: the caller's panic goes on
	}
	if p := recover(); p != nil {
		*err = damagedErr(path, p)
	}
}

// damagedErr is the error of a Parquet file at path that is not
// readable: what the reader said (a panic's value, or the validation's
// error).
func damagedErr(path string, what any) error {
	return fmt.Errorf("%s: not a readable Parquet file (damaged or truncated?): %v", path, what)
}

// validTable checks every column of a table read from the Parquet file at
// path as arrow-go checks data from an untrusted source (ValidateFull):
// a damaged file's pages can decode to list offsets past their values,
// which the readers of the rows would index out of range.
func validTable(path string, tbl arrow.Table) error {
	for i := range int(tbl.NumCols()) {
		for _, c := range tbl.Column(i).Data().Chunks() {
			if err := array.ValidateFull(c); err != nil {
				return damagedErr(path, err)
			}
		}
	}
	return nil
}

// caller runs f, a function of the caller's.
func (d *damaged) caller(f func()) {
	d.inCaller = true
	f()
	d.inCaller = false
}

// guard is batch run through caller.
func (d *damaged) guard(batch func(arrow.RecordBatch) error) func(arrow.RecordBatch) error {
	return func(rec arrow.RecordBatch) (err error) {
		d.caller(func() { err = batch(rec) })
		return err
	}
}

// rowName names row (0-based) of the table at path in messages: "row 137",
// and in a DatasetDict's directory, read as one table of its splits, also
// the split it is in and its row there ("row 137 (split \"train\", its row
// 17)"), since a user looks for it in that split.
func rowName(path string, row int) string {
	name := fmt.Sprintf("row %d", row)
	splits, err := DatasetSplits(path)
	if err != nil || len(splits) == 0 {
		return name
	}
	at := row
	for _, s := range splits {
		_, shards, _, err := datasetFiles(filepath.Join(path, s))
		if err != nil {
			return name
		}
		n := int(shardsRows(shards)) // from the shards' metadata: no column read again
		if n < 0 {
			return name
		}
		if at < n {
			return fmt.Sprintf("%s (split %q, its row %d)", name, s, at)
		}
		at -= n
	}
	return name
}

// DatasetSplits are the splits of a DatasetDict's directory, in the order
// ReadTable reads them; none for a Dataset's directory.
func DatasetSplits(dir string) ([]string, error) {
	_, _, splits, err := datasetFiles(dir)
	return splits, err
}

// datasetFiles is DatasetFiles, with the shards alone and the splits.
func datasetFiles(dir string) (files, shards, splits []string, err error) {
	dict := filepath.Join(dir, "dataset_dict.json")
	if _, err := os.Stat(filepath.Join(dir, "state.json")); err != nil {
		if data, err := os.ReadFile(dict); err == nil {
			var dd struct {
				Splits []string `json:"splits"`
			}
			if err := json.Unmarshal(data, &dd); err != nil {
				return nil, nil, nil, fmt.Errorf("%s: %w", dict, err)
			}
			if len(dd.Splits) == 0 {
				return nil, nil, nil, fmt.Errorf("%s: lists no splits", dict)
			}
			files = []string{dict}
			for i, s := range dd.Splits {
				if !plainName(s) {
					return nil, nil, nil, fmt.Errorf("%s: splits names %q: want a directory in %s", dict, s, dir)
				}
				if slices.Contains(dd.Splits[:i], s) {
					return nil, nil, nil, fmt.Errorf("%s: splits names %q twice", dict, s)
				}
				f, sh, err := datasetShards(filepath.Join(dir, s))
				if err != nil {
					return nil, nil, nil, err
				}
				files = append(files, f...)
				shards = append(shards, sh...)
			}
			return files, shards, dd.Splits, nil
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state.json")); err != nil && strings.EqualFold(filepath.Ext(filepath.Clean(dir)), ".parquet") {
		shards, err := parquetParts(dir)
		return shards, shards, nil, err
	}
	files, shards, err = datasetShards(dir)
	return files, shards, nil, err
}

// parquetParts are the shards of a directory named *.parquet, as Dask
// (part.0.parquet, part.1.parquet …) and Spark (part-00000-….snappy.parquet
// beside a _SUCCESS) write a dataset: its .parquet files, in the natural
// order of their names (part.2 before part.10, as Dask numbers them). Its
// other entries are not read: _SUCCESS, _metadata, _common_metadata, and
// hidden or "_" files (Spark's .crc checksums), as pyarrow leaves them. An
// error says what the directory holds where it holds no .parquet file, or
// subdirectories (a partitioned dataset's key=value ones, whose values are
// columns no part holds).
func parquetParts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var parts, subdirs, others []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_"):
		case e.IsDir():
			subdirs = append(subdirs, name+"/")
		case strings.EqualFold(filepath.Ext(name), ".parquet"):
			parts = append(parts, name)
		default:
			others = append(others, name)
		}
	}
	const read = "a directory named *.parquet is read as a dataset of Parquet parts, its .parquet files (part.0.parquet …, as Dask and Spark write one); a Hugging Face dataset's directory has a state.json"
	if len(subdirs) > 0 {
		return nil, fmt.Errorf("%s: holds directories (%s), a partitioned dataset's (partition_cols, partitionBy): their key=value names are columns no part holds, which ccs does not read: write the dataset unpartitioned, or one file; %s", dir, nameList(subdirs), read)
	}
	if len(parts) == 0 {
		found := "is empty"
		if len(others) > 0 {
			found = "holds no .parquet file (it holds " + nameList(others) + ")"
		}
		return nil, fmt.Errorf("%s: %s: %s", dir, found, read)
	}
	slices.SortFunc(parts, naturalCompare)
	for i, p := range parts {
		parts[i] = filepath.Join(dir, p)
	}
	return parts, nil
}

// nameList is up to 5 names, and how many more.
func nameList(names []string) string {
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s … %d more", strings.Join(names[:5], ", "), len(names)-5)
}

// naturalCompare orders names as a person counts: each run of digits by
// its number ("part.2" before "part.10"), the rest byte by byte.
func naturalCompare(a, b string) int {
	tie := strings.Compare(a, b) // "part.01" and "part.1": byte order
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Or(cmp.Compare(len(a), len(b)), tie)
}

// digits is the length of the run of ASCII digits s begins with.
func digits(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}

// datasetShards are a Dataset directory's files: its state.json and
// shards, and the shards alone.
func datasetShards(dir string) (files, shards []string, err error) {
	state := filepath.Join(dir, "state.json")
	data, err := os.ReadFile(state)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: a directory is read as a Hugging Face dataset (save_to_disk), which has a state.json (a DatasetDict: a dataset_dict.json): %w", dir, err)
	}
	var st struct {
		Files []struct {
			Filename string `json:"filename"`
		} `json:"_data_files"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", state, err)
	}
	if len(st.Files) == 0 {
		return nil, nil, fmt.Errorf("%s: lists no _data_files", state)
	}
	files = []string{state}
	for _, f := range st.Files {
		if !plainName(f.Filename) {
			return nil, nil, fmt.Errorf("%s: _data_files names %q: want a file name in the directory", state, f.Filename)
		}
		shards = append(shards, filepath.Join(dir, f.Filename))
	}
	return append(files, shards...), shards, nil
}

// plainName says whether name is one entry of a directory: no separator,
// not empty, not . or ..
func plainName(name string) bool {
	return name != "" && filepath.Base(name) == name && name != "." && name != ".."
}

// NoColumn is the error for a column a user named (FILE:COLUMN) that
// schema, read from path, lacks: the columns there are, one line, each
// by its name and type (not arrow's multi-line dump with each field's
// metadata), and the nearest name when one is near.
func NoColumn(path, column string, schema *arrow.Schema) error {
	return fmt.Errorf("%s: no column %q (the columns: %s)%s", path, column, Columns(schema), didYouMean(column, schema))
}

// hfFeature is the feature of column in schema's Hugging Face metadata
// (key "huggingface": a JSON document, "info" → "features" → column):
// nil, nil where there is no such key or feature; an error where the
// metadata is no JSON document.
func hfFeature(schema *arrow.Schema, column string) (json.RawMessage, error) {
	md := schema.Metadata()
	raw, ok := md.GetValue("huggingface")
	if !ok {
		return nil, nil
	}
	var doc struct {
		Info struct {
			Features map[string]json.RawMessage `json:"features"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, fmt.Errorf("the schema's \"huggingface\" metadata is no JSON document of a dataset's info (%v)", err)
	}
	return doc.Info.Features[column], nil
}

// ClassLabelNames are the class names of column, a Hugging Face
// ClassLabel, that schema's metadata holds: the key "huggingface" of the
// Arrow files save_to_disk writes (and of the Parquet files to_parquet
// writes), a JSON document whose "info" → "features" → column is
// {"_type": "ClassLabel", "names": [...]}; class id i is names[i], in
// the dataset's order (not sorted). nil, nil where the metadata says
// nothing of column (no such key, no such feature, or a feature of
// another type); an error, saying what is wrong, where it calls column a
// ClassLabel but is no JSON or its names no list of distinct strings.
func ClassLabelNames(schema *arrow.Schema, column string) ([]string, error) {
	feat, err := hfFeature(schema, column)
	if feat == nil || err != nil {
		return nil, err
	}
	return classLabelFeature(feat, column)
}

// SequenceClassLabelNames are ClassLabelNames for a column of lists of
// class ids: a Hugging Face Sequence(ClassLabel), whose feature in the
// schema's "huggingface" metadata is {"_type": "Sequence", "feature":
// {"_type": "ClassLabel", "names": [...]}} ("List" from datasets 4 on;
// [{"_type": "ClassLabel", …}] where the features were given as a
// list). nil, nil where the metadata says nothing of such a column; an
// error as ClassLabelNames gives one.
func SequenceClassLabelNames(schema *arrow.Schema, column string) ([]string, error) {
	feat, err := hfFeature(schema, column)
	if feat == nil || err != nil {
		return nil, err
	}
	var seq struct {
		Type    string          `json:"_type"`
		Feature json.RawMessage `json:"feature"`
	}
	var list []json.RawMessage
	switch {
	case json.Unmarshal(feat, &seq) == nil && (seq.Type == "Sequence" || seq.Type == "List" || seq.Type == "LargeList") && seq.Feature != nil:
		return classLabelFeature(seq.Feature, column)
	case json.Unmarshal(feat, &list) == nil && len(list) == 1:
		return classLabelFeature(list[0], column)
	}
	return nil, nil
}

// classLabelFeature are the names of feat, column's feature (or its
// lists' elements'), where it is a ClassLabel: nil, nil for another type;
// an error where its names are no list of distinct strings.
func classLabelFeature(feat json.RawMessage, column string) ([]string, error) {
	var cl struct {
		Type  string          `json:"_type"`
		Names json.RawMessage `json:"names"`
	}
	if json.Unmarshal(feat, &cl) != nil || cl.Type != "ClassLabel" {
		return nil, nil
	}
	var names []string
	if err := json.Unmarshal(cl.Names, &names); err != nil || len(names) == 0 {
		got := string(cl.Names)
		if got == "" || got == "null" {
			got = "none"
		}
		return nil, fmt.Errorf("the ClassLabel feature %q of the schema's \"huggingface\" metadata has names %.40s, not a list of strings", column, got)
	}
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if j, dup := seen[n]; dup {
			return nil, fmt.Errorf("the ClassLabel feature %q of the schema's \"huggingface\" metadata names classes %d and %d both %q", column, j, i, n)
		}
		seen[n] = i
	}
	return names, nil
}

// Columns lists schema's columns, `"name" type` each, comma-separated.
func Columns(schema *arrow.Schema) string {
	each := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		each[i] = fmt.Sprintf("%q %v", f.Name, f.Type)
	}
	return strings.Join(each, ", ")
}

// columnDiff says which column of schema s first differs from first's
// (read from name), for a DatasetDict's or a sharded dataset's files
// that were to be one table: "" when the columns are not the same ones.
func columnDiff(s, first *arrow.Schema, name string) string {
	if s.NumFields() != first.NumFields() {
		return ""
	}
	for i, f := range s.Fields() {
		g := first.Field(i)
		if f.Name != g.Name {
			return ""
		}
		if !arrow.TypeEqual(f.Type, g.Type) {
			return fmt.Sprintf(": column %q is %v here and %v in %s — write them alike (a dataset's cast), or read one split's or shard's file alone", f.Name, f.Type, g.Type, name)
		}
	}
	return ""
}

// didYouMean is ": did you mean "NAME"?" for the column name nearest
// column, or "" when none is near.
func didYouMean(column string, schema *arrow.Schema) string {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	if near, ok := suggest.Nearest(column, names); ok {
		return fmt.Sprintf(": did you mean %q?", near)
	}
	return ""
}

// ColumnValues reads column col of tbl, read from path, as integers (any
// integer type; a uint64 above 2^63−1 is an error naming its row) or as
// strings (string, large_string, or Polars' string_view), or a dictionary
// of either (pandas' category dtype, as to_parquet and to_feather write
// it): one of ids and strs is set. A null row is an error naming the
// first and counting them (ids: an id says which row is which, and a row
// without one has none), as is a column of another type, naming the file
// and column; want says what the column should hold ("integer or string
// ids").
func ColumnValues(path string, tbl arrow.Table, col int, want string) (ids []int64, strs []string, err error) {
	ids, strs, nulls, err := ColumnValuesNull(path, tbl, col, want)
	if err != nil {
		return nil, nil, err
	}
	if first := slices.Index(nulls, true); first >= 0 {
		n := 0
		for _, null := range nulls {
			if null {
				n++
			}
		}
		if n == 1 {
			return nil, nil, fmt.Errorf("%s: column %q, %s is null (its one null among %d rows)", path, tbl.Schema().Field(col).Name, rowName(path, first), len(nulls))
		}
		return nil, nil, fmt.Errorf("%s: column %q, %s is null (%d of its %d rows are)", path, tbl.Schema().Field(col).Name, rowName(path, first), n, len(nulls))
	}
	return ids, strs, nil
}

// ColumnValuesNull reads column col of tbl as ColumnValues does, and a
// null row too — a labels column's row without a label (a Hugging Face
// dataset's None, pandas' None or NaN through to_parquet) — as 0 or "" in
// ids or strs, with nulls[i] true; nulls is nil when no row is null.
func ColumnValuesNull(path string, tbl arrow.Table, col int, want string) (ids []int64, strs []string, nulls []bool, err error) {
	fld := tbl.Schema().Field(col)
	rows := int(tbl.NumRows())
	for _, chunk := range tbl.Column(col).Data().Chunks() {
		// A dictionary's row is its index's entry.
		values, at := chunk, func(i int) int { return i }
		if dict, ok := chunk.(*array.Dictionary); ok {
			values, at = dict.Dictionary(), dict.GetValueIndex
		}
		for i := range chunk.Len() {
			if chunk.IsNull(i) {
				if nulls == nil {
					nulls = make([]bool, rows)
				}
				row := len(ids) + len(strs)
				nulls[row] = true
				switch kind := nullKind(values); kind {
				case idInt:
					ids = append(ids, 0)
				case idString:
					strs = append(strs, "")
				default:
					return nil, nil, nil, wrongType(path, fld, want)
				}
				continue
			}
			j := at(i)
			if a, ok := values.(*array.Uint64); ok {
				if v := a.Value(j); v > math.MaxInt64 {
					return nil, nil, nil, fmt.Errorf("%s: column %q, row %d is %d, above 2^63−1", path, fld.Name, len(ids), v)
				}
				ids = append(ids, int64(a.Value(j)))
				continue
			}
			switch v, str, kind := idValue(values, j); kind {
			case idInt:
				ids = append(ids, v)
			case idString:
				strs = append(strs, str)
			default:
				return nil, nil, nil, wrongType(path, fld, want)
			}
		}
	}
	if ids != nil && strs != nil { // a null row read before the column's kind was known
		return nil, nil, nil, wrongType(path, fld, want)
	}
	return ids, strs, nulls, nil
}

// wrongType is the error for column fld (of path) of another type than
// want; a float column's says how to write integers with missing values,
// which pandas stores as float64 (NaN), and to_parquet as float64 nulls.
func wrongType(path string, fld arrow.Field, want string) error {
	hint := ""
	switch fld.Type.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		hint = ` (pandas stores an integer column with a missing value as floats: write it as integers, df[col].astype("Int64"), its missing values then nulls)`
	}
	return fmt.Errorf("%s: column %q is %v, want %s%s", path, fld.Name, fld.Type, want, hint)
}

// nullKind is the kind of value (idInt, idString or idNone) an array of
// type values' holds, for its null rows.
func nullKind(values arrow.Array) int {
	switch values.DataType().ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return idInt
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return idString
	}
	return idNone
}

// listParts are a list chunk's values and each row's offsets into them;
// ok is false for a chunk of anything but lists.
func listParts(chunk arrow.Array) (values arrow.Array, offsets func(i int) (int64, int64), ok bool) {
	switch a := chunk.(type) {
	case *array.List:
		return a.ListValues(), a.ValueOffsets, true
	case *array.LargeList:
		return a.ListValues(), a.ValueOffsets, true
	case *array.FixedSizeList:
		return a.ListValues(), a.ValueOffsets, true
	}
	return nil, nil, false
}

// ColumnMultiHot reads a list column of integer lists that are a
// multi-hot matrix's rows — every row a list of one length c ≥ 2 holding
// 0s and 1s alone (integers, booleans, or floats exactly 0 and 1, as a
// BCE target's), no null among them, as a DataFrame of M.tolist()
// writes one; a null or empty row a row of no label, zeros — as
// that (n, c) matrix, row-major; ok is false for any other column, which
// ColumnLabelSets reads as each row's labels. Such lists are not the
// labels 0 and 1 of every row: Python's ccs.bundle reads them as the
// matrix too.
func ColumnMultiHot(tbl arrow.Table, col int) (m []int64, c int, ok bool) {
	fld := tbl.Schema().Field(col)
	l, isList := fld.Type.(arrow.ListLikeType)
	if !isList {
		return nil, 0, false
	}
	switch l.Elem().ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL,
		arrow.FLOAT32, arrow.FLOAT64: // floats exactly 0 and 1: a BCE target's rows
	default:
		return nil, 0, false
	}
	c = -1
	var holes []int // rows of no label (a null, an empty list): zeros, filled in once c is known
	rows := 0
	for _, chunk := range tbl.Column(col).Data().Chunks() {
		values, offsets, ok := listParts(chunk)
		if !ok {
			return nil, 0, false
		}
		for i := range chunk.Len() {
			rows++
			lo, hi := offsets(i)
			if chunk.IsNull(i) || hi == lo {
				holes = append(holes, rows-1)
				continue
			}
			if c == -1 {
				c = int(hi - lo)
			}
			if int(hi-lo) != c || c < 2 {
				return nil, 0, false
			}
			for j := int(lo); j < int(hi); j++ {
				if values.IsNull(j) {
					return nil, 0, false
				}
				var v int64
				switch a := values.(type) {
				case *array.Boolean:
					if a.Value(j) {
						v = 1
					}
				case *array.Float64:
					if v = int64(a.Value(j)); float64(v) != a.Value(j) {
						return nil, 0, false
					}
				case *array.Float32:
					if v = int64(a.Value(j)); float32(v) != a.Value(j) {
						return nil, 0, false
					}
				default:
					var kind int
					if v, _, kind = idValue(values, j); kind != idInt {
						return nil, 0, false
					}
				}
				if v != 0 && v != 1 {
					return nil, 0, false
				}
				m = append(m, v)
			}
		}
	}
	if c < 2 {
		return nil, 0, false
	}
	if len(holes) > 0 {
		full := make([]int64, 0, rows*c)
		for r, h, k := 0, 0, 0; r < rows; r++ {
			if h < len(holes) && holes[h] == r {
				full = append(full, make([]int64, c)...)
				h++
				continue
			}
			full = append(full, m[k*c:(k+1)*c]...)
			k++
		}
		m = full
	}
	return m, c, true
}

// ColumnLabelSets reads column col of tbl (read from path) as several
// labels a row: a list column (list, large list or fixed-size list) of
// integers or strings, as a Hugging Face dataset stores a multi-label
// column (Sequence(ClassLabel)). Row i's labels are numbered 0 … C−1 in
// the sorted order of the distinct values, and names are the values
// (their decimal form for integers); a null row or value is no label. ok
// is false, with no error, for a column that is not a list.
func ColumnLabelSets(path string, tbl arrow.Table, col int) (sets [][]int32, names []string, ok bool, err error) {
	fld := tbl.Schema().Field(col)
	switch fld.Type.(type) {
	case *arrow.ListType, *arrow.LargeListType, *arrow.FixedSizeListType:
	default:
		return nil, nil, false, nil
	}
	var ints []int64
	var strs []string
	type row struct{ lo, hi int } // the row's labels in ints or strs
	var rows []row
	for _, chunk := range tbl.Column(col).Data().Chunks() {
		values, offsets, ok := listParts(chunk)
		if !ok {
			return nil, nil, false, fmt.Errorf("%s: column %q is %v, want lists of integer or string labels", path, fld.Name, fld.Type)
		}
		for i := range chunk.Len() {
			start := len(ints) + len(strs)
			if !chunk.IsNull(i) {
				lo, hi := offsets(i)
				for j := int(lo); j < int(hi); j++ {
					if values.IsNull(j) {
						continue
					}
					switch v, str, kind := idValue(values, j); kind {
					case idInt:
						ints = append(ints, v)
					case idString:
						strs = append(strs, str)
					default:
						return nil, nil, false, fmt.Errorf("%s: column %q is %v, want lists of integer or string labels", path, fld.Name, fld.Type)
					}
				}
			}
			rows = append(rows, row{start, len(ints) + len(strs)})
		}
	}
	// Number the distinct values in sorted order.
	code := map[string]int32{}
	var keys []string
	if strs != nil {
		keys = slices.Compact(slices.Sorted(slices.Values(strs)))
		names = keys
	} else {
		sorted := slices.Compact(slices.Sorted(slices.Values(ints)))
		for _, v := range sorted {
			keys = append(keys, strconv.FormatInt(v, 10))
		}
		names = keys
	}
	for j, k := range keys {
		code[k] = int32(j)
	}
	all := make([]int32, 0, len(ints)+len(strs))
	sets = make([][]int32, len(rows))
	for i, r := range rows {
		start := len(all)
		for j := r.lo; j < r.hi; j++ {
			var k string
			if strs != nil {
				k = strs[j]
			} else {
				k = strconv.FormatInt(ints[j], 10)
			}
			all = append(all, code[k])
		}
		set := all[start:len(all):len(all)]
		slices.Sort(set)
		sets[i] = slices.Compact(set) // a label listed twice is one
		all = all[:start+len(sets[i])]
	}
	return sets, names, true, nil
}

// The kinds of value idValue reads.
const (
	idNone   = iota // neither
	idInt           // an integer of at most 63 bits
	idString        // a string
)

// idValue reads value j of a, an array of ids or labels: an integer of a
// type no wider than 63 bits, or a string; idNone for any other type.
func idValue(a arrow.Array, j int) (v int64, s string, kind int) {
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(j), "", idInt
	case *array.Int32:
		return int64(a.Value(j)), "", idInt
	case *array.Int16:
		return int64(a.Value(j)), "", idInt
	case *array.Int8:
		return int64(a.Value(j)), "", idInt
	case *array.Uint8:
		return int64(a.Value(j)), "", idInt
	case *array.Uint16:
		return int64(a.Value(j)), "", idInt
	case *array.Uint32:
		return int64(a.Value(j)), "", idInt
	case *array.String:
		return 0, a.Value(j), idString
	case *array.LargeString:
		return 0, a.Value(j), idString
	case *array.StringView:
		return 0, a.Value(j), idString
	}
	return 0, "", idNone
}

// collector runs a garbage collection cycle after each collectEvery bytes
// a reader has read and let go: the batches read are garbage once
// converted or copied, and the collector would let them pile up to what
// is live before a cycle (the heap's goal is twice what is live), the
// whole file's worth of batches beside the rows made of them.
type collector struct{ since int }

// collectEvery is the bytes read between a collector's cycles.
const collectEvery = 16 << 20

// read counts n bytes read, and runs a cycle once collectEvery are.
func (c *collector) read(n int) {
	if c.since += n; c.since > collectEvery {
		runtime.GC()
		c.since = 0
	}
}
