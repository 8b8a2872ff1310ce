package retrieve_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/retrieve"
)

func user47Unit(rng *rand.Rand, n, d int) []float32 {
	x := make([]float32, n*d)
	for i := range n {
		var s float64
		for j := range d {
			v := rng.NormFloat64()
			x[i*d+j] = float32(v)
			s += v * v
		}
		for j := range d {
			x[i*d+j] = float32(float64(x[i*d+j]) / math.Sqrt(s))
		}
	}
	return x
}

func user47UnitSet(t *testing.T, d int) (*conformal.Set, []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 800
	rows := user47Unit(rng, 2*n, d)
	b := &bundle.Bundle{N: n, K: 1, D: d, Anchors: rows[:n*d], Positives: rows[n*d:]}
	set, err := conformal.Calibrate(geometry.Ball{D: d}, b, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !set.Calibration.UnitNorm {
		t.Fatal("not a unit-norm set")
	}
	return set, rows
}

// TestUser47GoSearchBatchNormErrorRow (a Go library user, failed at
// a9ad8e8): docs/go.md: a row not of unit norm is a
// *conformal.NormError "(its Row and Norm)". SearchBatch's message says
// "anchor 5", but the NormError's Row is 0: a service that answers 400
// naming err.Row names the wrong anchor (ood's Answer sets Row right).
func TestUser47GoSearchBatchNormErrorRow(t *testing.T) {
	const d = 8
	set, rows := user47UnitSet(t, d)
	c, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	anchors := append([]float32{}, rows[:8*d]...)
	for j := 5 * d; j < 6*d; j++ {
		anchors[j] *= 2
	}
	for name, call := range map[string]func() error{
		"SearchBatch": func() error {
			_, _, err := retrieve.SearchBatch(context.Background(), set, anchors, c, 5, nil)
			return err
		},
		"CountBatch": func() error { _, err := retrieve.CountBatch(context.Background(), set, anchors, c, nil); return err },
	} {
		err := call()
		var ne *conformal.NormError
		if !errors.As(err, &ne) {
			t.Fatalf("%s: %v, want a *conformal.NormError", name, err)
		}
		if ne.Row != 5 {
			t.Errorf("%s: NormError.Row = %d for anchor 5 (%v)", name, ne.Row, err)
		}
	}
}

// TestUser47GoSearchUnnormalisedCollection: docs/go.md said a unit-norm
// set "refuses an anchor or point whose norm is not 1 … in retrieve.Search";
// Members refuses such points, and Search over a collection whose items
// all have norm 2 answered without an error or a word. The items are not
// checked on every search (docs/go.md now says so); UnitNormWarning, which
// it names, says how many are off.
func TestUser47GoSearchUnnormalisedCollection(t *testing.T) {
	const d = 8
	set, rows := user47UnitSet(t, d)
	long := make([]float32, len(rows))
	for i, v := range rows {
		long[i] = 2 * v
	}
	_, err := set.Members(nil, rows[:d], long, nil)
	var ne *conformal.NormError
	if !errors.As(err, &ne) {
		t.Fatalf("Members: %v, want a NormError", err)
	}
	c, err := retrieve.NewCollection(long, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := retrieve.Search(context.Background(), set, rows[:d], c, 5); err != nil {
		t.Fatalf("Search: %v (the collection's items are not checked on every search)", err)
	}
	if w := retrieve.UnitNormWarning("items", c); !strings.Contains(w, "1600") {
		t.Errorf("UnitNormWarning of 1600 rows of norm 2: %q", w)
	}
}
