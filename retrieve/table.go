package retrieve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// IsTable says whether path names a columnar file ReadTable reads: Parquet
// (.parquet), Arrow IPC (.arrow, .feather), or a directory a Hugging Face
// dataset's save_to_disk wrote (its state.json lists the shards).
func IsTable(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".arrow", ".feather":
		return true
	}
	st, err := os.Stat(filepath.Join(path, "state.json"))
	return err == nil && st.Mode().IsRegular()
}

// ReadTable reads a columnar file whole: Parquet (.parquet), or Arrow IPC
// (.arrow, .feather) in the stream format — what a Hugging Face dataset's
// save_to_disk writes, data-00000-of-00001.arrow — or the file format
// (Feather v2); or such a dataset's directory, its shards (DatasetFiles)
// in order as one table. The caller releases the table.
func ReadTable(path string) (arrow.Table, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return readDataset(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if strings.ToLower(filepath.Ext(path)) == ".parquet" {
		tbl, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return tbl, nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	tbl, err := readArrow(f, st.Size(), 2*st.Size()+1<<20)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tbl, nil
}

// readArrow reads an Arrow IPC stream or file of size bytes from r, its
// record batches allocating at most limit bytes in all: no buffer of a
// well-formed file is larger than the file (uncompressed), so a header
// claiming more is refused before it is allocated, not obeyed.
func readArrow(r io.ReaderAt, size, limit int64) (tbl arrow.Table, err error) {
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
		return nil, err
	}
	var schema *arrow.Schema
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	if bytes.Equal(head, ipc.Magic) { // the file format
		fr, err := ipc.NewFileReader(io.NewSectionReader(r, 0, size), ipc.WithAllocator(mem))
		if err != nil {
			return nil, fmt.Errorf("not a readable Arrow IPC file: %w", err)
		}
		defer fr.Close()
		schema = fr.Schema()
		for i := range fr.NumRecords() {
			rec, err := fr.RecordBatch(i)
			if err != nil {
				return nil, fmt.Errorf("record batch %d: %w", i, err)
			}
			rec.Retain()
			recs = append(recs, rec)
		}
	} else {
		sr, err := ipc.NewReader(bufio.NewReader(io.NewSectionReader(r, 0, size)), ipc.WithAllocator(mem))
		if err != nil {
			return nil, fmt.Errorf("not a readable Arrow IPC stream or file: %w", err)
		}
		defer sr.Release()
		schema = sr.Schema()
		for sr.Next() {
			rec := sr.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		if err := sr.Err(); err != nil {
			return nil, fmt.Errorf("record batch %d: %w", len(recs), err)
		}
	}
	return array.NewTableFromRecords(schema, recs), nil
}

// errOverLimit is the panic of a boundedAllocator asked for too much.
type errOverLimit struct{ asked, limit int64 }

func (e errOverLimit) Error() string {
	return fmt.Sprintf("its record batches claim more than %d bytes (%d asked for), more than the file can hold", e.limit, e.asked)
}

// boundedAllocator is Go's allocator with a total: past it, it panics with
// errOverLimit, which readArrow turns into an error.
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
// save_to_disk wrote): its state.json, then the shards its "_data_files"
// lists, in that order; each a plain file name in dir.
func DatasetFiles(dir string) ([]string, error) {
	state := filepath.Join(dir, "state.json")
	data, err := os.ReadFile(state)
	if err != nil {
		return nil, fmt.Errorf("%s: a directory is read as a Hugging Face dataset (save_to_disk), which has a state.json: %w", dir, err)
	}
	var st struct {
		Files []struct {
			Filename string `json:"filename"`
		} `json:"_data_files"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", state, err)
	}
	if len(st.Files) == 0 {
		return nil, fmt.Errorf("%s: lists no _data_files", state)
	}
	files := []string{state}
	for _, f := range st.Files {
		if f.Filename == "" || filepath.Base(f.Filename) != f.Filename || f.Filename == "." || f.Filename == ".." {
			return nil, fmt.Errorf("%s: _data_files names %q: want a file name in the directory", state, f.Filename)
		}
		files = append(files, filepath.Join(dir, f.Filename))
	}
	return files, nil
}

// readDataset reads a dataset directory's shards (DatasetFiles) as one
// table; every shard must have the first's columns.
func readDataset(dir string) (arrow.Table, error) {
	files, err := DatasetFiles(dir)
	if err != nil {
		return nil, err
	}
	var tables []arrow.Table
	var recs []arrow.RecordBatch
	defer func() {
		for _, t := range tables {
			t.Release()
		}
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, path := range files[1:] {
		t, err := ReadTable(path)
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
		if !t.Schema().Equal(tables[0].Schema()) {
			return nil, fmt.Errorf("%s: its columns %v differ from %s's %v", path, t.Schema(), filepath.Base(files[1]), tables[0].Schema())
		}
		tr := array.NewTableReader(t, 1<<16)
		for tr.Next() {
			rec := tr.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		tr.Release()
	}
	return array.NewTableFromRecords(tables[0].Schema(), recs), nil
}
