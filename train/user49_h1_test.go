package train

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
)

// TestUser49CancelDuringPreparation (an ML-infrastructure user, forty-ninth
// round; failed at c4cca8c): README says Ctrl-C stops a run "within a
// second", docs/your-data.md that it stops training "before the next batch".
// A 150 000 × 768 bundle spends ~2 minutes making its difference rows before
// epoch 0; SIGINT 20 s in took 58 s to stop, after the rows were made and
// epoch 0 was validated and reported. Here the context is cancelled right
// after Train's first check: nothing after should be computed or reported.
func TestUser49CancelDuringPreparation(t *testing.T) {
	fit, val := smallSim(t, 200, 5, 9)
	ctx := &countdown{Context: context.Background(), n: 1}
	reported := -1
	obs := ObserverFunc(func(p Progress) { reported = p.Epoch })
	_, err := Train(ctx, geometry.UnitGenBall(3, 2), fit, val, Config{Objective: objective.Config{Objective: objective.Neg}, MaxEpochs: 5}, obs)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if reported != -1 {
		t.Errorf("cancelled before the rows were prepared, yet the rows were prepared, epoch 0 validated and epoch %d reported: the preparation (minutes at 150 000 × 768) ignores the context", reported)
	}
}

// TestUser49AllExcludedSkipsFitRows (the same user; failed at c4cca8c): when the initial geometry already excludes
// every validation negative no epoch runs, yet the fit split's difference
// rows (8.6 of the 10.3 GB at 69 877 anchors × 20 × 768, ~2 min) are made
// first. Only the validation rows are needed to find that out.
func TestUser49AllExcludedSkipsFitRows(t *testing.T) {
	fit, val := smallSim(t, 200, 5, 4)
	far := *val
	if far.Negatives != nil {
		far.Negatives = slices.Clone(val.Negatives)
		for i := range far.Negatives {
			far.Negatives[i] += 1000
		}
	} else {
		far.Pool = slices.Clone(val.Pool)
		if far.Pool == nil {
			far.Pool = slices.Clone(val.Anchors)
		}
		for i := range far.Pool {
			far.Pool[i] += 1000
		}
	}
	g := geometry.UnitGenBall(3, 2)
	rows := &Rows{}
	res, err := Train(context.Background(), g, fit, &far, Config{Objective: objective.Config{Objective: objective.Neg}, MaxEpochs: 5, Rows: rows}, nil)
	if err != nil || res.StopReason != AllExcluded {
		t.Fatalf("%v, %+v", err, res)
	}
	if e := rows.m[rowsKey{fit, reflect.TypeOf(g)}]; e != nil {
		t.Errorf("no epoch could run, yet the fit split's difference rows were prepared")
	}
}
