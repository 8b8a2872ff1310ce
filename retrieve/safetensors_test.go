package retrieve

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/internal/sttest"
)

// TestReadSafetensorsCollection: a .safetensors file is a collection as an
// .npz is — "embeddings" (or "anchors") with "ids" (or "index"), other
// tensors ignored, or a lone tensor of embeddings with the row numbers as
// ids — and what lies is refused naming the file and the tensor.
func TestReadSafetensorsCollection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rows := []float64{1, 2, 3, 4, 5, 6.5}
	flat := []float32{1, 2, 3, 4, 5, 6.5}
	ids := []int64{40, 7, 99}
	for _, tc := range []struct {
		name    string
		tensors []sttest.Tensor
		wantIDs []int64
		conv    string
	}{
		{"embeddings and ids", []sttest.Tensor{sttest.T("ids", "I64", []int{3}, sttest.LE(ids...)), sttest.T("embeddings", "F32", []int{3, 2}, sttest.LE(flat...)),
			sttest.T("labels", "I64", []int{3}, sttest.LE[int64](0, 1, 0))}, ids, ""},
		{"a bundle's anchors and index", []sttest.Tensor{sttest.T("anchors", "F64", []int{3, 2}, sttest.LE(rows...)), sttest.T("index", "I32", []int{3}, sttest.LE[int32](40, 7, 99))}, ids, "float64 → float32"},
		{"one tensor", []sttest.Tensor{sttest.T("sentence_embeddings", "F32", []int{3, 2}, sttest.LE(flat...))}, []int64{0, 1, 2}, ""},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".safetensors")
		sttest.Write(t, path, tc.tensors...)
		c, err := ReadCollection(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.N != 3 || c.D != 2 || !slices.Equal(c.Rows, flat) || !slices.Equal(c.IDs, tc.wantIDs) || c.Converted != tc.conv {
			t.Errorf("%s: N=%d D=%d rows %v ids %v converted %q", tc.name, c.N, c.D, c.Rows, c.IDs, c.Converted)
		}
	}
	for _, tc := range []struct {
		name    string
		tensors []sttest.Tensor
		want    string
	}{
		{"no embeddings", []sttest.Tensor{sttest.T("a", "F32", []int{3, 2}, sttest.LE(flat...)), sttest.T("b", "F32", []int{3, 2}, sttest.LE(flat...))}, `want an array "embeddings" (or "anchors")`},
		{"integer embeddings", []sttest.Tensor{sttest.T("embeddings", "I64", []int{3}, sttest.LE(ids...))}, `array "embeddings" is int64 (3,): want float32 (n, d)`},
		{"ids of another length", []sttest.Tensor{sttest.T("embeddings", "F32", []int{3, 2}, sttest.LE(flat...)), sttest.T("ids", "I64", []int{2}, sttest.LE[int64](1, 2))}, `array "ids": 2 ids for the 3 rows of the collection (the embeddings are 3 rows of 2 values, and 2 is their columns' count: transposed? Rows are embeddings: give x.T (np.save(path, x.T) for a file))`},
		{"repeated ids", []sttest.Tensor{sttest.T("embeddings", "F32", []int{3, 2}, sttest.LE(flat...)), sttest.T("ids", "I64", []int{3}, sttest.LE[int64](1, 2, 1))}, "rows 0 and 2 have the same id 1"},
		{"NaN", []sttest.Tensor{sttest.T("embeddings", "F32", []int{3, 2}, sttest.LE[float32](1, 2, 3, float32(math.NaN()), 5, 6))}, "row 1, coordinate 1 is NaN"},
		{"float64 overflow", []sttest.Tensor{sttest.T("embeddings", "F64", []int{1, 2}, sttest.LE(1, 1e300))}, `tensor "embeddings": element [0][1] = 1e+300 overflows float32`},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".safetensors")
		sttest.Write(t, path, tc.tensors...)
		_, err := ReadCollection(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want an error naming %s and %q", tc.name, err, path, tc.want)
		}
	}
}

// TestReadCollectionTable: a Parquet or Arrow file, or a dataset's
// directory, is package table's to read: ErrTable, naming it.
func TestReadCollectionTable(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"docs.parquet", "data.arrow", "x.feather"} {
		if _, err := ReadCollection(path); !errors.Is(err, ErrTable) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: %v, want ErrTable", path, err)
		}
	}
}
