// Package arrowtest writes Arrow IPC data for tests: the files a Hugging
// Face dataset's save_to_disk, Polars or pandas' to_feather would write,
// made in memory.
package arrowtest

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// Write returns columns (arrays of equal length) named names as Arrow
// IPC in record batches of batch rows: the stream format (save_to_disk's)
// or, with file, the file format (Feather v2's).
func Write(t testing.TB, names []string, cols []arrow.Array, batch int, file bool) []byte {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	var buf bytes.Buffer
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if file {
		fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	} else {
		w = ipc.NewWriter(&buf, ipc.WithSchema(schema))
	}
	n := cols[0].Len()
	for lo := 0; lo < n; lo += batch {
		hi := min(n, lo+batch)
		part := make([]arrow.Array, len(cols))
		for i, c := range cols {
			part[i] = array.NewSlice(c, int64(lo), int64(hi))
		}
		rec := array.NewRecordBatch(schema, part, int64(hi-lo))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		for _, p := range part {
			p.Release()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
