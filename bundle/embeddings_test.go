package bundle

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestInputs: embeddings are checked as arrays (dtype, shape, emptiness,
// NaN by row and coordinate), the inputs against each other (a label or a
// group per row, a label per item with views, queries of the embeddings'
// dimension), and views become groups and per-row labels.
func TestInputs(t *testing.T) {
	emb := func(shape ...int) Array {
		a := Array{Shape: shape, F32: make([]float32, 1)}
		n := 1
		for _, s := range shape {
			n *= s
		}
		a.F32 = make([]float32, n)
		return a
	}
	nan := emb(3, 2)
	nan.F32[5] = float32(math.NaN())
	many := emb(10, 2) // rows 1, 3, 4, 6, 8, 9 not finite
	for _, i := range []int{3, 6, 9, 12, 16, 18, 19} {
		many.F32[i] = float32(math.Inf(1 - 2*(i%2)))
	}
	nanViews := emb(4, 2, 3) // items 1 and 3
	nanViews.F32[9], nanViews.F32[23] = float32(math.NaN()), float32(math.NaN())
	for _, c := range []struct {
		name  string
		a     Array
		views bool
		want  string
	}{
		{"integers", Array{Shape: []int{2, 2}, I64: make([]int64, 4), Dtype: "int32"}, false, "e.npy: dtype int32, want floating point"},
		{"views not allowed", emb(2, 3, 4), false, "e.npy: shape (2, 3, 4), want (n, d)"},
		{"a vector", emb(4), true, "e.npy: shape (4,), want (n, v, d) views"},
		{"no rows", emb(0, 4), false, "e.npy: no embeddings (0 rows of dimension 4)"},
		{"NaN", nan, false, "e.npy: row 2, coordinate 1 is NaN (1 row of 3 holds NaN or ±Inf)"},
		{"rows not finite", many, false, "e.npy: row 1, coordinate 1 is -Inf; 6 rows of 10 hold NaN or ±Inf (rows 1, 3, 4, 6, 8, …): leave them out first, with their labels (or ids, and pairs renumbered), keep = np.isfinite(X).all(axis=1); X, y = X[keep], y[keep]"},
		{"views not finite", nanViews, true, "e.npy: item 1, view 1, coordinate 0 is NaN; 2 items of 4 hold NaN or ±Inf (items 1, 3): leave them out first, with their labels (or ids, and pairs renumbered), keep = np.isfinite(X).all(axis=(1, 2))"},
	} {
		if _, err := EmbeddingsOf(c.a, "e.npy", c.views); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}

	rows, err := EmbeddingsOf(emb(4, 2), "e.npy", false)
	if err != nil {
		t.Fatal(err)
	}
	views, err := EmbeddingsOf(emb(2, 3, 2), "v.npy", true)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := EmbeddingsOf(emb(2, 1, 2), "v1.npy", true)
	q3, _ := EmbeddingsOf(emb(2, 3), "q.npy", false)
	q34, _ := EmbeddingsOf(emb(3, 4), "q.npy", false)
	for _, c := range []struct {
		name string
		in   Inputs
		want string
	}{
		{"labels per row", Inputs{Embeddings: rows, Labels: []int64{1, 2, 3}, LabelsSource: "l.npy"}, "l.npy: 3 labels for the 4 rows of e.npy"},
		{"labels per item", Inputs{Embeddings: views, Labels: []int64{1, 2, 3}, LabelsSource: "l.npy"}, "l.npy: 3 labels for 2 items of v.npy"},
		{"one view", Inputs{Embeddings: one}, "v1.npy: 1 views per item: want at least 2"},
		{"groups", Inputs{Embeddings: rows, Groups: []int64{1}, GroupsSource: "g.npy"}, "g.npy: 1 group ids for the 4 rows of e.npy"},
		{"groups with views", Inputs{Embeddings: views, Groups: make([]int64, 6), GroupsSource: "g.npy"}, "g.npy: views are their items' groups"},
		{"queries transposed", Inputs{Embeddings: rows, Queries: &q3}, "q.npy: queries of dimension 3; e.npy: embeddings of dimension 2 (the queries' 2 rows are the embeddings' dimension: transposed? Rows are embeddings: give x.T (np.save(path, x.T) for a file))"},
		{"embeddings transposed", Inputs{Embeddings: rows, Queries: &q34}, "q.npy: queries of dimension 4; e.npy: embeddings of dimension 2 (the embeddings' 4 rows are the queries' dimension: transposed?"},
	} {
		if _, err := c.in.Items(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	it, err := Inputs{Embeddings: views, Labels: []int64{7, 9}, LabelsSource: "l.npy"}.Items()
	if err != nil {
		t.Fatal(err)
	}
	if it.N != 6 || !slices.Equal(it.Groups, []int64{0, 0, 0, 1, 1, 1}) || !slices.Equal(it.Labels, []int64{7, 7, 7, 9, 9, 9}) {
		t.Errorf("views: %+v", it)
	}
}
