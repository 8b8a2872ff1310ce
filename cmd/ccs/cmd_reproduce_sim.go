package main

import (
	"context"
	"flag"
	"maps"
	"slices"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/train"
)

// reproduceSimOptions are the inputs of ccs reproduce sim and
// sim-threshold.
type reproduceSimOptions struct {
	tableOptions
	simOptions
	Rows   string       // all, baselines, learned, infonce or all+infonce (sim only)
	Recipe train.Config // sim-threshold replaces each run's optimiser and threshold mode
}

func reproduceSimCommand() *command {
	return newCommand("sim", "[-seeds 20] [-rows all|baselines|learned|infonce|all+infonce] [-k 500] [-per-class 5000] [-data-seed S] [-alpha 0.05] [-calibration one|pac|pooled [-delta δ]] [-out DIR] [-plots DIR] [training flags] [-json] [-quiet]",
		"the 3-D simulation, the paper's Table 1", declareSim(20, true, keepsCells), runReproduceSim)
}

// declareSim declares the flags of the simulation's tables that train:
// seeds by default, -rows when rows, and -out as keeps says.
func declareSim(seeds int, rows bool, keeps int) func(fs *flag.FlagSet, o *reproduceSimOptions) func() error {
	return func(fs *flag.FlagSet, o *reproduceSimOptions) func() error {
		addTableFlags(fs, &o.tableOptions, seeds, keeps)
		addSimFlags(fs, &o.simOptions, true)
		if rows {
			fs.StringVar(&o.Rows, "rows", "all", "rows: all (the paper's eight), baselines (the two vanilla sets), learned (the six trained ones), infonce (the six with the InfoNCE head) or all+infonce")
		}
		return recipeOption(fs, "sim", "reproduce", &o.Recipe)
	}
}

func runReproduceSim(ctx context.Context, o reproduceSimOptions, out *output) error {
	cfg, err := o.simOptions.config(o.tableOptions, o.Recipe)
	if err != nil {
		return err
	}
	rows, ok := experiment.RowSets[o.Rows]
	if !ok {
		return usagef("reproduce: -rows %q: want all, baselines, learned, infonce or all+infonce%s", o.Rows, didYouMean(o.Rows, slices.Collect(maps.Keys(experiment.RowSets)), ""))
	}
	res, err := newResults(out, o.tableOptions, "sim", true)
	if err != nil {
		return err
	}
	cfg.Cells, cfg.OutDir = res.cells, res.sets
	methods := rows()
	runs := newProgress(out, o.Quiet, "run")
	runs.settle = len(methods) // the baselines' runs take a moment, the learned rows' seconds
	t, err := experiment.Sim(ctx, cfg, methods, runs.step)
	if err != nil {
		return err
	}
	if err := res.add(t); err != nil {
		return err
	}
	return res.done()
}
