package experiment

import (
	"context"
	"fmt"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/retrieve"
)

// CollectionOptions say what OnCollection measures beside an evaluation
// (ccs evaluate -db, -size-anchors, -per-class, -baseline and -cal;
// Python's Set.evaluate collection=, size_anchors=, per_class=,
// baseline= and cal=).
type CollectionOptions struct {
	// Anchors is how many of the test bundle's first anchors are
	// searched around (0, or more than it has: all).
	Anchors int
	// PerClass counts the sizes class by class too, where the test
	// bundle has labels, each class named by Names (label i is
	// Names[i]; nil: numbers alone).
	PerClass bool
	Names    []string
	// Distances are the certified top-k baselines' (eval.DistanceSet,
	// eval.DistanceL2, each once; none: no baseline), calibrated on Cal,
	// the split the set was calibrated on (CalibrationSplit).
	Distances []string
	Cal       *bundle.Bundle
	// Progress, where not nil, is told how far each stage is
	// (StageSizes, then StageBaselines): eval.AnchorSizes' and
	// eval.TopKBaselines' progress.
	Progress func(stage string, done, total int)
}

// OnCollection's stages (CollectionOptions.Progress).
const (
	StageSizes     = "set sizes"
	StageBaselines = "top-k baselines"
)

// BaselineError is an error of OnCollection's top-k baselines, which a
// caller names by its own flag or keyword (the sizes' errors are returned
// as they are).
type BaselineError struct{ Err error }

func (e *BaselineError) Error() string { return e.Err.Error() }

// Unwrap is the error of the baselines.
func (e *BaselineError) Unwrap() error { return e.Err }

// OnCollection is what an evaluation measures of set on a collection,
// store, around test's first o.Anchors anchors: how many items the set
// holds around each, summarized (eval.AnchorSizes, eval.SummarizeSizes),
// with o.PerClass class by class (eval.SizesByClass, named), and the
// top-k baselines of o.Distances beside it (eval.TopKBaselines), nil
// without them — an Evaluation's Sizes, ClassSizes and Baselines, the same
// for ccs evaluate and Python's Set.evaluate.
func OnCollection(ctx context.Context, set *conformal.Set, test *bundle.Bundle, store retrieve.Store, o CollectionOptions) (*eval.Sizes, []eval.ClassSizes, []eval.TopK, error) {
	progress := func(stage string) func(done, total int) {
		if o.Progress == nil {
			return nil
		}
		return func(done, total int) { o.Progress(stage, done, total) }
	}
	each, items, err := eval.AnchorSizes(ctx, set, test, store, o.Anchors, progress(StageSizes))
	if err != nil {
		return nil, nil, nil, err
	}
	z := eval.SummarizeSizes(each, items)
	var classes []eval.ClassSizes
	if o.PerClass && test.Labels != nil {
		if classes, err = eval.SizesByClass(each, test.Labels, items); err != nil {
			return nil, nil, nil, err
		}
		for i := range classes {
			if o.Names != nil {
				classes[i].Name = ClassName(o.Names, classes[i].Label)
			}
		}
	}
	var baselines []eval.TopK
	if len(o.Distances) > 0 {
		if o.Cal == nil {
			return nil, nil, nil, &BaselineError{fmt.Errorf("experiment: top-k baselines %v without the calibration split", o.Distances)}
		}
		if baselines, err = eval.TopKBaselines(ctx, set, o.Distances, o.Cal, test, store, o.Anchors, progress(StageBaselines)); err != nil {
			return nil, nil, nil, &BaselineError{err}
		}
	}
	return &z, classes, baselines, nil
}
