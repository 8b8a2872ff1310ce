package ood

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// ballSet is an ℓ2 ball of radius q in d dimensions, as if calibrated.
func ballSet(d int, q float64) *conformal.Set {
	return &conformal.Set{Geometry: geometry.Ball{D: d}, Threshold: q, Alpha: 0.05,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 100, Rank: 96}}
}

// TestCCSBatchByHand: anchors on a line, each with the other two as
// negatives; under the ℓ2 ball of radius 2 the score is −mean distance / 2.
func TestCCSBatchByHand(t *testing.T) {
	t.Parallel()
	b := &bundle.Bundle{N: 3, K: 1, D: 2, KNeg: 2,
		Anchors:       []float32{0, 0, 3, 0, 0, 4},
		Positives:     []float32{0, 0, 3, 0, 0, 4},
		NegativeIndex: []int64{1, 2, 0, 2, 0, 1}}
	got, err := CCSBatch(ballSet(2, 2), b)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-(3 + 4) / 2.0 / 2, -(3 + 5) / 2.0 / 2, -(4 + 5) / 2.0 / 2}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("anchor %d: score %v, want %v", i, got[i], want[i])
		}
	}
}

// TestCCSReference: by hand, and a query's score does not depend on the
// other queries it is scored with.
func TestCCSReference(t *testing.T) {
	t.Parallel()
	s := ballSet(2, 0.5)
	s.Reference = &conformal.Reference{N: 2, Rows: []float32{0, 0, 6, 8}}
	queries := []float32{0, 0, 3, 4, 6, 8, -1, 0}
	got, err := CCSReference(s, queries)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-(0 + 10) / 2.0 / 0.5, -(5 + 5) / 2.0 / 0.5, -(10 + 0) / 2.0 / 0.5, -(1 + math.Sqrt(49+64)) / 2 / 0.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("query %d: score %v, want %v", i, got[i], want[i])
		}
		alone, err := CCSReference(s, queries[2*i:2*i+2])
		if err != nil || alone[0] != got[i] {
			t.Errorf("query %d alone: %v (%v), in a batch %v", i, alone, err, got[i])
		}
	}
}

func TestCCSErrors(t *testing.T) {
	t.Parallel()
	b := &bundle.Bundle{N: 2, K: 1, D: 2, Anchors: []float32{0, 0, 1, 1}, Positives: []float32{0, 0, 1, 1}}
	inf := ballSet(2, math.Inf(1))
	uncal := conformal.Uncalibrated(geometry.Ball{D: 2}, nil)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{second(CCSBatch(ballSet(2, 1), b)), "no negatives"},
		{second(CCSBatch(ballSet(3, 1), b)), "dimension 3, the embeddings 2"},
		{second(CCSBatch(inf, b)), "positive, finite q̂"},
		{second(CCSBatch(uncal, b)), "not calibrated"},
		{second(CCSReference(ballSet(2, 1), []float32{1, 2})), "no reference pool"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want %q", tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestReferenceRoundTrip: the pool is drawn from distinct anchors, saved
// with the set, validated on load.
func TestReferenceRoundTrip(t *testing.T) {
	t.Parallel()
	b := &bundle.Bundle{N: 5, K: 1, D: 2, Anchors: []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Positives: make([]float32, 10)}
	r, err := conformal.NewReference(b, 3, 7, "calibration anchors")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[float32]bool{}
	for i := range 3 {
		x := r.Rows[2*i]
		if seen[x] || int(x)%2 != 0 || r.Rows[2*i+1] != x+1 {
			t.Fatalf("reference rows %v are not distinct anchors", r.Rows)
		}
		seen[x] = true
	}
	s := ballSet(2, 1)
	s.Reference = r
	path := filepath.Join(t.TempDir(), "set.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	s2, err := conformal.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Reference == nil || s2.Reference.N != 3 || s2.Reference.Source != "calibration anchors" || len(s2.Reference.Rows) != 6 {
		t.Fatalf("reference after a round trip: %+v", s2.Reference)
	}
	for i := range r.Rows {
		if s2.Reference.Rows[i] != r.Rows[i] {
			t.Fatalf("reference row value %d: %v, saved %v", i, s2.Reference.Rows[i], r.Rows[i])
		}
	}
	s.Reference.Rows = s.Reference.Rows[:5]
	if err := s.Save(path); err == nil || !strings.Contains(err.Error(), "ood_reference") {
		t.Errorf("short pool saved: %v", err)
	}
	if _, err := conformal.NewReference(b, 6, 1, ""); err == nil {
		t.Error("a pool larger than the bundle was drawn")
	}
}
