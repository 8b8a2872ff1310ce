package retrieve

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ccsets/ccs/bundle"
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
		{"ids of another length", []sttest.Tensor{sttest.T("embeddings", "F32", []int{3, 2}, sttest.LE(flat...)), sttest.T("ids", "I64", []int{2}, sttest.LE[int64](1, 2))}, `array "ids" must be int64 or strings (3,)`},
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
	} {
		col, err := ReadCollection(c.spec)
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
	} {
		if _, err := ReadCollection(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.spec, err, c.want)
		}
	}
}
