package main

import (
	"context"
	"flag"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/train"
)

// reproduceSimDrawsOptions are ccs reproduce sim-draws' inputs.
type reproduceSimDrawsOptions struct {
	tableOptions
	simOptions
	Draws int // point clouds: data seeds 0..Draws−1
}

func reproduceSimDrawsCommand() *command {
	return newCommand("sim-draws", "[-draws 200] [-seeds 2] [-k 500] [-per-class 5000] [-alpha 0.05] [-calibration one|pac|pooled [-delta δ]] [-json] [-quiet]",
		"the survey of point clouds behind -data-seed: the two baselines on each draw",
		func(fs *flag.FlagSet, o *reproduceSimDrawsOptions) func() error {
			addTableFlags(fs, &o.tableOptions, 2, keepsNothing)
			addSimFlags(fs, &o.simOptions, false)
			fs.IntVar(&o.Draws, "draws", 200, "number of point clouds (data seeds 0..N−1)")
			return nil
		}, runReproduceSimDraws)
}

func runReproduceSimDraws(ctx context.Context, o reproduceSimDrawsOptions, out *output) error {
	cfg, err := o.simOptions.config(o.tableOptions, train.Config{}) // the baselines train nothing
	if err != nil {
		return err
	}
	if o.Draws < 1 {
		return usagef("reproduce: -draws %d: want at least 1", o.Draws)
	}
	bar := newProgress(out, o.Quiet, "run")
	ds, err := experiment.SimDraws(ctx, cfg, o.Draws, func(done, total int) { bar.step(done, total, "") })
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(out.stdout, ds)
	}
	return experiment.WriteDraws(out.stdout, ds)
}
