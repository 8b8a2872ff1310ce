package main

import (
	"context"
	"flag"
	"strings"

	"github.com/ccsets/ccs/experiment"
)

func reproduceSimThresholdCommand() *command {
	return newCommand("sim-threshold", "[-seeds 3] [-k 500] [-per-class 5000] [-data-seed S] [-alpha 0.05] [-calibration one|pac|pooled [-delta δ]] [training flags] [-json] [-quiet]",
		"the batch threshold's gradient modes (soft, order-statistic, detached) under both optimisers, on the learned rows",
		declareSimThreshold, runReproduceSimThreshold)
}

// declareSimThreshold is sim's flags, refusing those the table sweeps
// itself — -threshold and the optimiser's, every mode under both recipes'
// SGD — which it accepted and ignored, printing the table of a run
// without them.
func declareSimThreshold(fs *flag.FlagSet, o *reproduceSimOptions) func() error {
	check := declareSim(3, false, keepsNothing)(fs, o)
	return func() error {
		var swept []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "threshold", "recipe", "lr", "momentum", "weight-decay", "cosine":
				swept = append(swept, "-"+f.Name)
			}
		})
		if len(swept) > 0 {
			return usagef("reproduce sim-threshold: %s: the table runs every threshold mode (soft, order-statistic, detached) under both recipes' optimisers (sim, embedding: -lr, -momentum, -weight-decay and -cosine) itself; the other training flags (-T, -epochs, -batch, …) apply to every run", strings.Join(swept, ", "))
		}
		return check()
	}
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
