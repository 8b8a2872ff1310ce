package retrieve

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestReview50BatchNamesTheCollectionsDimension checks that SearchBatch,
// CountBatch and CountWithin, given a collection of another dimension than
// the set's and anchors of the set's, say what Search says: "the set has
// dimension 4, the collection 3" (failed at 1c23c4e: the batches checked
// the anchors' length against the collection's dimension first and blamed
// the right anchors, "32 anchor values are not rows of dimension 3",
// unless their count happened to be a multiple of 3; and CountWithin
// with no set panicked on a nil dereference).
func TestReview50BatchNamesTheCollectionsDimension(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d = 4
	cal := &bundle.Bundle{N: 200, K: 1, D: d, Anchors: make([]float32, 200*d), Positives: make([]float32, 200*d)}
	for i := range cal.Anchors {
		cal.Anchors[i] = float32(rng.NormFloat64())
		cal.Positives[i] = cal.Anchors[i] + float32(rng.NormFloat64())
	}
	set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]float32, 50*3)
	for i := range items {
		items[i] = float32(rng.NormFloat64())
	}
	c3, err := NewCollection(items, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const want = "retrieve: the set has dimension 4, the collection 3"
	if _, _, err := Search(ctx, set, cal.Anchors[:d], c3, 5); err == nil || err.Error() != want {
		t.Fatalf("Search: %v, want %q", err, want)
	}
	// A nil set is named before anything else (CountWithin's set was read
	// before the nil check: a nil dereference).
	if _, err := CountWithin(ctx, nil, cal.Anchors[:2*d], make([]float64, 2), c3, nil); err == nil || err.Error() != "retrieve: no set (nil)" {
		t.Errorf("CountWithin with no set: %v", err)
	}
	for _, n := range []int{8, 12} { // 12 anchors are 48 values, a multiple of 3
		anchors := cal.Anchors[:n*d]
		_, _, err1 := SearchBatch(ctx, set, anchors, c3, 5, nil)
		_, err2 := CountBatch(ctx, set, anchors, c3, nil)
		_, err3 := CountWithin(ctx, set, anchors, make([]float64, n), c3, nil)
		for name, err := range map[string]error{"SearchBatch": err1, "CountBatch": err2, "CountWithin": err3} {
			if err == nil || err.Error() != want || !errors.Is(err, conformal.ErrDimension) {
				t.Errorf("%s with %d anchors of the set's dimension 4 and a collection of dimension 3: %v, want %q (Search's)", name, n, err, want)
			}
		}
	}
}

// TestReview50DuplicateIntegerIDsNameTheIDs checks that a collection .npz
// whose integer ids repeat one is refused naming the ids' array, as string
// ids are (failed at 1c23c4e: `coll.npz: array "embeddings": retrieve:
// collection: rows 0 and 2 have the same id 7`, the rows' array named,
// since ReadCollection wrapped NewCollection's error, which checks the
// ids, with the embeddings' name).
func TestReview50DuplicateIntegerIDsNameTheIDs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "coll.npz")
	err := bundle.WriteNPZ(p, map[string]bundle.Array{
		"embeddings": bundle.Float32([]float32{1, 2, 3, 4, 5, 6}, 3, 2),
		"ids":        bundle.Int64([]int64{7, 8, 7}, 3),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadCollection(p)
	if want := p + `: array "ids": retrieve: collection: rows 0 and 2 have the same id 7`; err == nil || err.Error() != want {
		t.Errorf("repeated integer ids: %v; want %q", err, want)
	}
}
