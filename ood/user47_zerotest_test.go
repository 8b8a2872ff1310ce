package ood_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/ood"
)

// user47toy is n anchors in d dimensions with one positive each at N(0, 1)
// from its anchor.
func user47toy(rng *rand.Rand, n, d int) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: 1, D: d, Anchors: make([]float32, n*d), Positives: make([]float32, n*d)}
	for i := range b.Anchors {
		b.Anchors[i] = float32(rng.NormFloat64())
		b.Positives[i] = b.Anchors[i] + float32(rng.NormFloat64())
	}
	return b
}

// TestUser47GoZeroTestFlagsNothing (a Go library user, failed at a9ad8e8): NewConformal(set, ood.Test{}) is accepted
// ("a zero test leaves the level to With"), and Answer then answers every
// input, however far, OOD: false with no error — its p-value 1/(n+1) is
// not ≤ α = 0. A service that builds the test with the zero value (as the
// library's other zero values mean defaults: Options, Config, Split)
// never flags anything. Answer should refuse a test without a level (or
// take DefaultAlpha).
func TestUser47GoZeroTestFlagsNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d = 4
	cal, oodCal := user47toy(rng, 1000, d), user47toy(rng, 600, d)
	set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if set.Reference, err = conformal.NewReference(cal, 300, 1, conformal.CalibrationAnchors); err != nil {
		t.Fatal(err)
	}
	near, err := ood.NewNearest(set, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if set.OOD, err = near.Calibrate(oodCal.Anchors, "ood-cal"); err != nil {
		t.Fatal(err)
	}
	test, err := ood.NewConformal(set, ood.Test{})
	if err != nil {
		t.Fatal(err)
	}
	far := []float32{1000, 1000, 1000, 1000}
	a, err := test.Answer(context.Background(), far, 0)
	if err == nil && !a.Results[0].OOD {
		t.Errorf("an input 1000 away (score %.0f, p-value %.4f) is answered OOD: false without an error: the zero Test's α = 0 flags nothing", a.Results[0].Score, a.Results[0].PValue)
	}
	if !errors.Is(err, ood.ErrNoLevel) {
		t.Errorf("Answer of a zero Test: %v, want ErrNoLevel", err)
	}
	if at, err := test.With(ood.Test{Alpha: ood.DefaultAlpha}); err != nil {
		t.Fatal(err)
	} else if a, err := at.Answer(context.Background(), far, 0); err != nil || !a.Results[0].OOD {
		t.Errorf("at α_ood = 0.05: %+v, %v", a, err)
	}
	// A pool of another dimension matches ErrDimension.
	if _, err := ood.NewNearest(set, make([]float32, 10), 1); !errors.Is(err, conformal.ErrDimension) {
		t.Errorf("a pool of 10 values for dimension %d: %v, want ErrDimension", d, err)
	}
}

// TestUser47GoCCSBatchDimError: docs/go.md: a dimension that is not the set's is
// a *conformal.DimError (Shape, Dim, read with errors.As) "where the shape
// is known: ... a bundle". conformal.Calibrate and eval.Evaluate give one
// for a bundle of another dimension; ood.CCSBatch matches ErrDimension but
// is no *DimError.
func TestUser47GoCCSBatchDimError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	set, err := conformal.Calibrate(geometry.Ball{D: 4}, user47toy(rng, 500, 4), 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b3 := user47toy(rng, 50, 3)
	b3.KNeg, b3.Negatives = 1, append([]float32{}, b3.Positives...)
	_, err = ood.CCSBatch(set, b3)
	var de *conformal.DimError
	if !errors.As(err, &de) {
		t.Errorf("CCSBatch of a bundle of dimension 3 for a set of 4: %v, not a *conformal.DimError", err)
	}
}
