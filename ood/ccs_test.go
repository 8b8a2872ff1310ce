package ood

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
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

// TestCCSBatchOfAnchorsAlone: a sample stored without negatives (ccs
// bundle's ood.npz) draws 20 per anchor among its other anchors — distinct,
// never the anchor, the same on every call — and scores as a bundle given
// those negatives does; a sample of three takes the other two.
func TestCCSBatchOfAnchorsAlone(t *testing.T) {
	t.Parallel()
	const n = 40
	b := &bundle.Bundle{N: n, D: 2, Anchors: make([]float32, 2*n)}
	for i := range b.Anchors {
		b.Anchors[i] = float32(i%7) - float32(i%3)/2
	}
	got, err := CCSBatch(ballSet(2, 2), b)
	if err != nil {
		t.Fatal(err)
	}
	w := withBatchNegatives(b)
	if w.KNeg != BatchNegatives || len(w.NegativeIndex) != n*BatchNegatives {
		t.Fatalf("KNeg %d, %d indices", w.KNeg, len(w.NegativeIndex))
	}
	for i := range n {
		row := w.NegativeIndex[i*BatchNegatives : (i+1)*BatchNegatives]
		sorted := slices.Sorted(slices.Values(row))
		if slices.Contains(row, int64(i)) || len(slices.Compact(sorted)) != BatchNegatives || sorted[0] < 0 || sorted[len(sorted)-1] >= n {
			t.Fatalf("anchor %d: negatives %v", i, row)
		}
	}
	want, err := CCSBatch(ballSet(2, 2), w)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := CCSBatch(ballSet(2, 2), b)
	if !slices.Equal(got, want) || !slices.Equal(got, again) {
		t.Errorf("scores %v, with the drawn negatives %v, again %v", got[:3], want[:3], again[:3])
	}
	three := &bundle.Bundle{N: 3, D: 2, Anchors: []float32{0, 0, 3, 0, 0, 4}}
	if got, err := CCSBatch(ballSet(2, 2), three); err != nil || math.Abs(got[0]-(-(3+4)/2.0/2)) > 1e-12 {
		t.Errorf("three anchors: %v, %v", got, err)
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
		{second(CCSBatch(ballSet(2, 1), &bundle.Bundle{N: 1, D: 2, Anchors: []float32{0, 0}})), "one input: the batch score draws its negatives among the other inputs"},
		{second(CCSBatch(ballSet(3, 1), b)), "dimension 3, the embeddings 2"},
		{second(CCSBatch(inf, b)), "positive, finite q̂"},
		// The per-input test's refusal says its own score, as Load does
		// (at 2131dd3: the CCS score −s_n/q̂).
		{second(NewNearest(ballSet(2, 0), []float32{0, 0}, 1)), "ood: threshold 0: the set's OOD scores divide by its threshold q̂ (the per-input test's K-th smallest φ(a − x)/q̂ over the pool) and need a positive, finite q̂"},
		{second(CCSBatch(uncal, b)), "not calibrated"},
		{second(CCSReference(ballSet(2, 1), []float32{1, 2})), "no reference pool"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want %q", tc.err, tc.want)
		}
	}
	// A class-conditional set: ErrClassConditional, which a caller may
	// reword for its own terms (Python's calibration="one"), and
	// conformal's ErrNoLabel beneath it.
	class := ballSet(2, 1)
	class.Calibration.Mode = conformal.Class
	_, err := NewNearest(class, []float32{0, 0, 1, 1}, 1)
	if !errors.Is(err, ErrClassConditional) || !errors.Is(err, conformal.ErrNoLabel) || !strings.Contains(err.Error(), "calibrate a second set with -calibration one (or pac) on the same split for the OOD test") {
		t.Errorf("a class-conditional set: %v", err)
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
	s2, path := roundTrip(t, s)
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

// TestNearestByHand: pool anchors on a line under the ℓ2 ball of radius 2:
// the K-th nearest distance over 2; a query on a pool row scores 0, and is
// refused as a calibration input.
func TestNearestByHand(t *testing.T) {
	t.Parallel()
	s := ballSet(1, 2)
	pool := []float32{0, 1, 3, 7}
	for _, c := range []struct {
		k    int
		x    float32
		want float64
	}{{1, 2.5, 0.25}, {2, 2.5, 0.75}, {3, 2.5, 1.25}, {1, 10, 1.5}, {1, 1, 0}} {
		n, err := NewNearest(s, pool, c.k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := n.Scores([]float32{c.x})
		if err != nil || got[0] != c.want {
			t.Errorf("k=%d x=%v: %v, %v; want %v", c.k, c.x, got, err, c.want)
		}
	}
	n, _ := NewNearest(s, pool, 1)
	if _, err := n.Calibrate([]float32{5, 3}, "test"); err == nil || !strings.Contains(err.Error(), "pool row 2") {
		t.Errorf("a calibration input on the pool: %v", err)
	}
	if _, err := NewNearest(s, pool, 5); err == nil {
		t.Error("k = 5 of a pool of 4: no error")
	}
	// Inputs the set was fitted on, by the fit split's digest or by its
	// filter of rows: refused, as ccs calibrate -ood-cal refuses them.
	fitted := []float32{2, 4, 5, 6, 8, 9, 10, 11, 12, 13}
	fs := ballSet(1, 2)
	fs.Fit = &conformal.FitInfo{Splits: map[string]string{"fit": (&bundle.Bundle{N: 10, D: 1, Anchors: fitted}).Digest()},
		Seen: bundle.RowFilterOf(fitted, 1)}
	n, _ = NewNearest(fs, pool, 1)
	for _, rows := range [][]float32{fitted, fitted[:6]} {
		if _, err := n.Calibrate(rows, "mine"); err == nil || !strings.Contains(err.Error(), "ood: calibration inputs mine: conformal:") || !strings.Contains(err.Error(), "fitted") {
			t.Errorf("%d of the fit split's rows: %v, want a refusal", len(rows), err)
		}
	}
	if _, err := n.Calibrate([]float32{2.5, 4.5, 20}, "mine"); err != nil {
		t.Errorf("held-out inputs: %v", err)
	}
	if _, err := NewNearest(ballSet(1, 2), nil, 1); err == nil || !strings.Contains(err.Error(), "reference pool") {
		t.Errorf("no pool: %v", err)
	}
}

// TestConformalRoundTrip: a set calibrated for per-input OOD tests keeps
// its pool and calibration through its file, tests inputs at α_ood, and
// refuses what its file cannot hold or its calibration cannot certify.
func TestConformalRoundTrip(t *testing.T) {
	t.Parallel()
	s := ballSet(1, 1)
	ref, err := conformal.NewReferenceRows([]float32{0, 1, 2, 3}, 1, "test pool")
	if err != nil {
		t.Fatal(err)
	}
	s.Reference = ref
	n, err := NewNearest(s, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	cal := make([]float32, 99)
	for i := range cal {
		cal[i] = float32(i)/33 + 0.005 // 0.005 … 2.975: scores 0.005 … 0.5
	}
	if s.OOD, err = n.Calibrate(cal, "held-out"); err != nil {
		t.Fatal(err)
	}
	s2, path := roundTrip(t, s)
	if s2.OOD == nil || s2.OOD.N != 99 || s2.OOD.K != 1 || s2.OOD.Source != "held-out" {
		t.Fatalf("OOD calibration after a round trip: %+v", s2.OOD)
	}
	c, err := NewConformal(s2, Test{Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Answer(context.Background(), []float32{1.2, 30}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	res := a.Results
	if res[0].OOD || !res[1].OOD || res[1].PValue != 0.01 || res[1].Score != 27 || !slices.Equal(a.Flagged, []int{1}) {
		t.Errorf("answer %+v: want the input at 1.2 in distribution and the one at 30 flagged (p = 1/100, score 27), by BH too", a)
	}
	if a, err := c.Answer(context.Background(), []float32{1.2}, 0.1); err != nil || a.Flagged == nil || len(a.Flagged) != 0 {
		t.Errorf("nothing flagged by BH: %+v, %v; want an empty list, not none", a, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Answer(ctx, []float32{1.2, 30}, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if c2, err := c.With(Test{Alpha: 0.2}); err != nil || c2.Test.Alpha != 0.2 || c.Test.Alpha != 0.05 {
		t.Errorf("With: %+v, %v", c2, err)
	}
	if _, err := c.With(Test{Alpha: 0.001}); err == nil {
		t.Error("With: a level below 1/(n+1) accepted")
	}
	if _, err := NewConformal(s2, Test{Alpha: 0.005}); err == nil || !strings.Contains(err.Error(), "needs at least") {
		t.Errorf("α_ood below 1/(n+1): %v", err)
	}
	for name, bad := range map[string]func(*conformal.Set){
		"unsorted":   func(s *conformal.Set) { s.OOD.Scores[0], s.OOD.Scores[1] = s.OOD.Scores[1]+1, s.OOD.Scores[0] },
		"k too big":  func(s *conformal.Set) { s.OOD.K = 9 },
		"no pool":    func(s *conformal.Set) { s.Reference = nil },
		"n mismatch": func(s *conformal.Set) { s.OOD.N = 3 },
	} {
		s3, _ := conformal.Load(path)
		bad(s3)
		if err := s3.Save(filepath.Join(t.TempDir(), "bad.json")); err == nil || !strings.Contains(err.Error(), "ood_") {
			t.Errorf("%s: saved (%v)", name, err)
		}
	}
	if _, err := NewConformal(ballSet(1, 1), Test{Alpha: 0.05}); err == nil || !strings.Contains(err.Error(), "-ood-cal") {
		t.Errorf("no OOD calibration: %v", err)
	}
}

// roundTrip saves s to a temporary file and loads it back.
func roundTrip(t *testing.T, s *conformal.Set) (loaded *conformal.Set, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "set.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := conformal.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return loaded, path
}
