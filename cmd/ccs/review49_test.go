package main

// A reviewer's tests of the forty-ninth round's changes on cmd/ccs: each
// failed at b029d1a for the reason in its comment (but those that say
// they pass: checks).

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ccsets/ccs/train"
)

// TestReview49SimThresholdSweptSGDFlags: ccs reproduce sim-threshold now refuses
// -threshold and -recipe, saying "the other training flags apply to every
// run" — but experiment.ThresholdModes replaces the whole train.SGD of
// every run (c.Train.SGD = SimRecipe.SGD / EmbeddingRecipe.SGD), so -lr,
// -momentum, -weight-decay and -cosine are accepted and ignored exactly as
// -recipe was: the same table, byte for byte.
func TestReview49SimThresholdSweptSGDFlags(t *testing.T) {
	small := []string{"reproduce", "sim-threshold", "-seeds", "1", "-epochs", "2", "-per-class", "60", "-k", "3", "-quiet"}
	var want, errs bytes.Buffer
	if err := run(&want, &errs, small); err != nil {
		t.Fatal(err)
	}
	var control bytes.Buffer // a training flag that does apply changes the table
	if err := run(&control, &errs, append(append([]string{}, small...), "-T", "2")); err != nil || control.String() == want.String() {
		t.Fatalf("control -T 2: %v, table unchanged %v: the runs train nothing", err, control.String() == want.String())
	}
	for _, extra := range [][]string{{"-lr", "0.001"}, {"-momentum", "0.5"}, {"-cosine"}, {"-weight-decay", "0.1"}} {
		var out, errs bytes.Buffer
		err := run(&out, &errs, append(append([]string{}, small...), extra...))
		if err == nil && out.String() == want.String() {
			t.Errorf("sim-threshold %s: accepted, and the table is byte for byte the one without it (the run's SGD is replaced by each recipe's), while the refusal of -recipe says the other training flags apply to every run", strings.Join(extra, " "))
		}
	}
}

// TestReview49FitSummaryPercent: commit 9120cba made ccs fit's stdout line say
// "best validation exclusion 99.996%" (experiment.Percent), but the same
// run's stderr summary, trainProgress's, still rounds to one decimal:
// "best validation exclusion 100.0% at epoch 3" — the rounding the commit
// set out to remove, one line above the figure that contradicts it.
func TestReview49FitSummaryPercent(t *testing.T) {
	var stderr bytes.Buffer
	p := trainProgress{newProgress(&output{stdout: &bytes.Buffer{}, stderr: &stderr}, false, "epoch")}
	p.Observe(train.Progress{Epoch: 5, MaxEpochs: 150, Done: true, StopReason: train.EarlyStop, ValExclusion: 0.99996, BestExclusion: 0.99996, BestEpoch: 3})
	if strings.Contains(stderr.String(), "100.0%") {
		t.Errorf("an exclusion of 99.996%% summarised as %q", strings.TrimSpace(stderr.String()))
	}
}
