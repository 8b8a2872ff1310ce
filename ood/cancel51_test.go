package ood

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestKNNDetectorsStopOnCancel checks that the k-NN detectors' searches
// stop when their context is done, a block of inputs at a time, and return
// its error instead of scores (failed at 648e135: DetectorScore looked at
// ctx before a detector scored and not again, and D-KNN's fit, which
// searches every training feature's neighbours, had no context: Ctrl-C
// in ccs ood -train waited for the whole search).
func TestKNNDetectorsStopOnCancel(t *testing.T) {
	const n, m, d = 600, 16 * queryBlock, 8
	rng := rand.New(rand.NewPCG(5, 1))
	train := Sample{N: n, D: d, Features: randRows(rng, n, d)}
	x := Sample{N: m, D: d, Features: randRows(rng, m, d)}
	blocks := (m + queryBlock - 1) / queryBlock

	// cancelling returns a context cancelled at a Steps report, and a
	// Steps that counts the reports.
	cancelling := func() (context.Context, Steps, *atomic.Int32) {
		ctx, cancel := context.WithCancel(context.Background())
		var reports atomic.Int32
		return ctx, func(string, int, int) {
			reports.Add(1)
			cancel()
		}, &reports
	}

	knn := &KNN{K: 5}
	if err := knn.Fit(train); err != nil {
		t.Fatal(err)
	}
	ctx, steps, reports := cancelling()
	knn.Progress = steps
	anchors := make([]float32, len(x.Features))
	for i, v := range x.Features {
		anchors[i] = float32(v)
	}
	r, err := DetectorScore(knn)(ctx, &bundle.Bundle{N: m, D: d, Anchors: anchors}, nil)
	if !errors.Is(err, context.Canceled) || r != nil {
		t.Errorf("KNN through DetectorScore, cancelled at its first block: %d scores, error %v; want none and context.Canceled", len(r), err)
	}
	if got := int(reports.Load()); got >= blocks/2 {
		t.Errorf("KNN: %d of %d blocks searched after the cancel at the first", got, blocks)
	}

	dk := &DKNN{K: 5}
	ctx, steps, reports = cancelling()
	dk.Progress = steps
	if err := Fit(ctx, dk, Sample{N: m, D: d, Features: x.Features}); !errors.Is(err, context.Canceled) {
		t.Errorf("D-KNN fit cancelled at its first block: %v, want context.Canceled", err)
	}
	if got := int(reports.Load()); got >= blocks/2 {
		t.Errorf("D-KNN fit: %d of %d blocks searched after the cancel at the first", got, blocks)
	}
	if _, err := dk.Score(x); err == nil {
		t.Error("D-KNN scored after a cancelled fit; want \"not fitted\"")
	}
	dk.Progress = nil
	if err := dk.Fit(train); err != nil {
		t.Fatal(err)
	}
	ctx, steps, _ = cancelling()
	dk.Progress = steps
	if r, err := dk.ScoreContext(ctx, x); !errors.Is(err, context.Canceled) || r != nil {
		t.Errorf("D-KNN score cancelled: %d scores, %v; want none and context.Canceled", len(r), err)
	}
	// Not cancelled: the same scores as Score.
	dk.Progress = nil
	want, err := dk.Score(x)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dk.ScoreContext(context.Background(), x)
	if err != nil || len(got) != len(want) || got[0] != want[0] || got[m-1] != want[m-1] {
		t.Errorf("D-KNN ScoreContext without a cancel differs from Score: %v", err)
	}
}
