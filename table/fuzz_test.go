package table

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// FuzzReadParquet: a damaged Parquet file is an error, never a panic or
// a runaway allocation, whichever reader takes it (a collection's
// embeddings column, the whole table, one column a batch at a time).
func FuzzReadParquet(f *testing.F) {
	dir := f.TempDir()
	for i, chunk := range []int64{2, 4} {
		p := filepath.Join(dir, "seed.parquet")
		writeParquet(f, p, []string{"embedding", "id", "n"},
			[]arrow.Array{lists([][]float32{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {1, 0, 1}}, i*3), strs([]string{"a", "b", "", "d"}, 2), int64s([]int64{1, 2, 3, 4})}, chunk)
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.parquet")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if c, err := ReadParquetColumns(p, "embedding", "id"); err == nil && c == nil {
			t.Fatal("no collection and no error")
		}
		if tbl, err := ReadTable(p); err == nil {
			tbl.Release()
		}
		if tbl, _, err := ReadTableColumn(p, func(s *arrow.Schema) (int, error) { return s.NumFields() - 1, nil }); err == nil {
			tbl.Release()
		}
	})
}

// TestParquetCallerPanic checks that a panic of the caller's function,
// not of the Parquet reader, is not read as a damaged file: it goes on,
// as it was.
func TestParquetCallerPanic(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, p, []string{"embedding"}, []arrow.Array{lists([][]float32{{1, 2}, {3, 4}}, 0)}, 2)
	for name, scan := range map[string]func() error{
		"start": func() error {
			return scanParquet(p, func(*arrow.Schema, int64) ([]int, error) { panic("boom") }, nil)
		},
		"batch": func() error {
			return scanParquet(p, func(*arrow.Schema, int64) ([]int, error) { return []int{0}, nil },
				func(arrow.RecordBatch) error { panic("boom") })
		},
		"pick": func() error {
			_, err := readColumns(p, func(*arrow.Schema) ([]int, error) { panic("boom") })
			return err
		},
	} {
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("%s: recovered %v, want the caller's panic", name, r)
				}
			}()
			err := scan()
			t.Errorf("%s: returned %v, want the caller's panic", name, err)
		}()
	}
}
