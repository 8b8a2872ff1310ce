package experiment

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/sim"
)

// TestOnCollection: OnCollection's sizes are eval.SetSizes', its class
// sizes eval.SizesByClass' named by the names given (a label past them
// by its number), its baselines eval.TopKBaselines'; each stage's
// progress ends at its total; a baseline's error is a BaselineError, a
// size's is not.
func TestOnCollection(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 90))
	const d = 3
	cal, test := sim.Gauss(r, 100, 1, d), sim.Gauss(r, 60, 2, d)
	test.Labels = make([]int64, test.N)
	for i := range test.Labels {
		test.Labels[i] = int64(i % 3)
	}
	rows := make([]float32, 500*d)
	for i := range rows {
		rows[i] = float32(1.5 * r.NormFloat64())
	}
	c, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	distances := []string{eval.DistanceSet, eval.DistanceL2}
	last := map[string][2]int{}
	z, classes, baselines, err := OnCollection(ctx, set, test, c, CollectionOptions{Anchors: 40, PerClass: true, Names: []string{"a", "b"},
		Distances: distances, Cal: cal, Progress: func(stage string, done, total int) { last[stage] = [2]int{done, total} }})
	if err != nil {
		t.Fatal(err)
	}
	want, err := eval.SetSizes(ctx, set, test, c, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *z != want {
		t.Errorf("sizes %+v, eval.SetSizes %+v", *z, want)
	}
	each, items, err := eval.AnchorSizes(ctx, set, test, c, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantClasses, err := eval.SizesByClass(each, test.Labels, items)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a", "b", "2"} {
		wantClasses[i].Name = name
	}
	if !slices.Equal(classes, wantClasses) {
		t.Errorf("class sizes %+v, want %+v", classes, wantClasses)
	}
	wantBaselines, err := eval.TopKBaselines(ctx, set, distances, cal, test, c, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(baselines, wantBaselines) {
		t.Errorf("baselines %+v, want %+v", baselines, wantBaselines)
	}
	for _, stage := range []string{StageSizes, StageBaselines} {
		if p := last[stage]; p[1] == 0 || p[0] != p[1] {
			t.Errorf("%s: progress ended at %d of %d", stage, p[0], p[1])
		}
	}

	// Without -per-class and -baseline: the sizes alone.
	if _, classes, baselines, err := OnCollection(ctx, set, test, c, CollectionOptions{Anchors: 40}); err != nil || classes != nil || baselines != nil {
		t.Errorf("sizes alone: class sizes %v, baselines %v, error %v", classes, baselines, err)
	}
	var be *BaselineError
	other := sim.Gauss(r, 100, 1, d) // not the set's calibration split
	if _, _, _, err := OnCollection(ctx, set, test, c, CollectionOptions{Distances: distances, Cal: other}); !errors.As(err, &be) {
		t.Errorf("another calibration split: %v, want a BaselineError", err)
	}
	if _, _, _, err := OnCollection(ctx, set, test.Subset(nil), c, CollectionOptions{}); err == nil || errors.As(err, &be) {
		t.Errorf("no test anchors: %v, want a sizes error", err)
	}
}
