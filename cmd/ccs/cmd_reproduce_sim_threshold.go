package main

import (
	"context"

	"github.com/ccsets/ccs/experiment"
)

func reproduceSimThresholdCommand() *command {
	return newCommand("sim-threshold", "[-seeds 3] [-k 500] [-per-class 5000] [-data-seed S] [training flags] [-json] [-quiet]",
		"the batch threshold's gradient modes (soft, order-statistic, detached) under both optimisers, on the learned rows",
		declareSim(3, false, keepsNothing), runReproduceSimThreshold)
}

func runReproduceSimThreshold(ctx context.Context, o reproduceSimOptions, out *output) error {
	cfg, err := o.simOptions.config(o.tableOptions, o.Recipe)
	if err != nil {
		return err
	}
	runs, err := experiment.ThresholdModes(ctx, cfg, newProgress(out, o.Quiet, "run").step)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(out.stdout, runs)
	}
	return experiment.WriteModes(out.stdout, runs)
}
