package bundle

import (
	"strings"
	"testing"
)

// TestPairingWarning: a bundle whose positives (rows of its anchors) do
// not share their anchors' labels is named — positive_index and
// negative_index swapped, or labels of other rows — and one as ccs bundle
// makes it, one of relevance pairs (another pool) or of no labels is not.
func TestPairingWarning(t *testing.T) {
	// 12 anchors in 3 classes of 4; positives the next of the class,
	// negatives the next of the next class.
	const n, k = 12, 1
	labels := make([]int64, n)
	pos, neg := make([]int64, n), make([]int64, n)
	for i := range n {
		labels[i] = int64(i / 4)
		pos[i] = int64(i/4*4 + (i+1)%4)
		neg[i] = int64((i + 4) % n)
	}
	base := func() *Bundle {
		return &Bundle{N: n, K: k, D: 1, Anchors: make([]float32, n), Labels: labels, PositiveIndex: pos, KNeg: 1, NegativeIndex: neg}
	}
	shuffled := append([]int64(nil), labels...)
	shuffled[0], shuffled[5], shuffled[10] = shuffled[5], shuffled[10], shuffled[0]
	for _, c := range []struct {
		name string
		b    func() *Bundle
		want string // "" for none
	}{
		{"as ccs bundle makes it", base, ""},
		{"swapped", func() *Bundle { b := base(); b.PositiveIndex, b.NegativeIndex = neg, pos; return b }, "only 0.0% of the positives (0 of 12, rows of the anchors by positive_index) share their anchor's label, and 100.0% of the negatives do: positive_index and negative_index swapped?"},
		{"labels of other rows", func() *Bundle {
			b := base()
			b.Labels = []int64{1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}
			return b
		}, "only 25.0% of the positives (3 of 12, rows of the anchors by positive_index) share their anchor's label — a set"},
		{"a few labels moved", func() *Bundle { b := base(); b.Labels = shuffled; return b }, ""},
		{"positives of another pool", func() *Bundle { b := base(); b.PositiveIndex, b.PositivePool = neg, make([]float32, n); return b }, ""},
		{"no labels", func() *Bundle { b := base(); b.Labels = nil; b.PositiveIndex = neg; return b }, ""},
		{"unlabelled anchors", func() *Bundle {
			b := base()
			b.Labels = []int64{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
			b.PositiveIndex = neg
			return b
		}, ""},
	} {
		got := c.b().PairingWarning()
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestIndexColumnWarning: a coordinate that holds n
// distinct integers of a contiguous range (pandas' index, ids counted
// up) is named; real coordinates, integer features with repeats and a
// range with gaps are not.
func TestIndexColumnWarning(t *testing.T) {
	const n, d = 50, 4
	rows := func(col func(i int) float32, at int) []float32 {
		x := make([]float32, n*d)
		for i := range n {
			for j := range d {
				x[i*d+j] = float32(i*7%13) / 10
			}
			x[i*d+at] = col(i)
		}
		return x
	}
	perm := func(i int) float32 { return float32(i * 17 % n) } // 17 prime to 50: each of 0 … 49 once
	for _, c := range []struct {
		name string
		x    []float32
		want string
	}{
		{"pandas' index first", rows(func(i int) float32 { return float32(i) }, 0), "coordinate 0 holds the integers 0 … 49, each once"},
		{"shuffled", rows(perm, 0), "coordinate 0 holds the integers 0 … 49, each once"},
		{"ids last", rows(func(i int) float32 { return float32(100000 + i) }, d-1), "coordinate 3 holds the integers 100000 … 100049, each once: a row index or an id saved with the embeddings (pandas' index, np.genfromtxt of a table), or an unscaled rank or time step? A set measures it as a distance, and its range of 49 outweighs the other coordinates: leave it out (X[:, :-1]"},
		{"real values", rows(func(i int) float32 { return float32(i) + 0.5 }, 0), ""},
		{"counts with repeats", rows(func(i int) float32 { return float32(i / 2) }, 0), ""},
		{"a range with gaps", rows(func(i int) float32 { return float32(2 * i) }, 0), ""},
		{"a rank in the middle", rows(func(i int) float32 { return float32(1 + i) }, 1), "coordinate 1 holds the integers 1 … 50, each once: a row index or an id saved with the embeddings (pandas' index, np.genfromtxt of a table), or an unscaled rank or time step? A set measures it as a distance, and its range of 49 outweighs the other coordinates: leave it out (np.delete(X, 1, axis=1)"},
		{"a count from 7, each once by chance", rows(func(i int) float32 { return float32(7 + i) }, 1), ""},
	} {
		got := IndexColumnWarning(c.x, n, d)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
