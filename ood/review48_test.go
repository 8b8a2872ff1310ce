package ood_test

// Findings of a review of the forty-eighth round's change: the data's own
// exact copies in the per-input OOD test's calibration. Allowed first by
// a formula on the inputs' own copies (which refused a right split with a
// recurring value and let the pool given again through: each test failed
// then), now by the rows' source rows.

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/ood"
)

// review48Data is n rows of d = 4, one value recurring in every 20th row
// (a blank record), and a set calibrated on 1 000 of them whose reference
// pool is 200 others, drawn from a bundle recording their source rows; it
// returns the rows, the set and the source rows of the rest.
func review48Data(t *testing.T, n int) (x []float32, set *conformal.Set, rest []int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(48, 7))
	const d = 4
	x = make([]float32, n*d)
	for i := range n {
		for j := range d {
			if i%20 == 0 {
				x[i*d+j] = 0.5
				continue
			}
			x[i*d+j] = float32(rng.NormFloat64())
		}
	}
	perm := rng.Perm(n)
	split := func(idx []int) *bundle.Bundle {
		b := &bundle.Bundle{N: len(idx), K: 1, D: d, Index: make([]int64, len(idx)), Embeddings: "sha256:review48"}
		for i, r := range idx {
			b.Anchors = append(b.Anchors, x[r*d:(r+1)*d]...)
			b.Index[i] = int64(r)
		}
		for _, v := range b.Anchors {
			b.Positives = append(b.Positives, v+float32(rng.NormFloat64()))
		}
		return b
	}
	cal, fit := split(perm[:1000]), split(perm[1000:1200])
	set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if set.Reference, err = conformal.NewReference(fit, 200, 1, "fit anchors"); err != nil {
		t.Fatal(err)
	}
	return x, set, perm[1200:]
}

func rowsOf(x []float32, idx []int) ([]float32, []int64) {
	const d = 4
	rows, index := make([]float32, 0, len(idx)*d), make([]int64, len(idx))
	for i, r := range idx {
		rows, index[i] = append(rows, x[r*d:(r+1)*d]...), int64(r)
	}
	return rows, index
}

// TestReview48OODRecurringRowRightSplit: held-out inputs of one bundling
// whose recurring value equals pool rows (2 000 inputs, a pool of 200)
// calibrate; the pool's rows given again with their source rows are
// refused, as are equal rows where nothing records the source rows.
func TestReview48OODRecurringRowRightSplit(t *testing.T) {
	x, set, rest := review48Data(t, 3200)
	nn, err := ood.NewNearest(set, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	in, index := rowsOf(x, rest)
	if _, err := nn.CalibrateIndexed(in, index, "sha256:review48", "inputs"); err != nil {
		t.Errorf("disjoint splits of one data set (%d copies among the inputs): refused: %v", bundle.CountCopies(in, 4), err)
	}
	pool, poolIndex := set.Reference.Rows, set.Reference.Index
	if _, err := nn.CalibrateIndexed(pool, poolIndex, "sha256:review48", "pool"); err == nil || !strings.Contains(err.Error(), "200 of the 200 inputs are pool rows") {
		t.Errorf("the pool's own rows as calibration inputs: %v", err)
	}
	if _, err := nn.Calibrate(in, "inputs.npy"); err == nil || !strings.Contains(err.Error(), "make the splits with ccs bundle") {
		t.Errorf("equal rows, no source rows: %v, want refused, saying how to tell copies apart", err)
	}
	// The same rows numbered in other embeddings (a re-export in another
	// order): refused, saying so.
	if _, err := nn.CalibrateIndexed(in, index, "sha256:another-export", "inputs"); err == nil || !strings.Contains(err.Error(), "other embeddings than the pool's") {
		t.Errorf("equal rows of other embeddings: %v, want refused", err)
	}
}
