package main

import (
	"context"
	"flag"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/train"
)

// reproducePNormOptions are ccs reproduce pnorm's inputs.
type reproducePNormOptions struct {
	tableOptions
	simOptions
}

func reproducePNormCommand() *command {
	return newCommand("pnorm", "[-seeds 20] [-alpha 0.05] [-calibration one|pac|pooled [-delta δ]] [-k 500] [-per-class 5000] [-data-seed N] [-out DIR] [-plots DIR] [-json] [-quiet]",
		"the paper's p-norm table: the isotropic p-ball on the simulation at p = 2, 1, 0.9 … 0.5, at fixed coverage and at the ℓ2 ball's volume",
		func(fs *flag.FlagSet, o *reproducePNormOptions) func() error {
			addTableFlags(fs, &o.tableOptions, 20, keepsDocument)
			addSimFlags(fs, &o.simOptions, true)
			return nil
		}, runReproducePNorm)
}

func runReproducePNorm(ctx context.Context, o reproducePNormOptions, out *output) error {
	cfg, err := o.simOptions.config(o.tableOptions, train.Config{}) // nothing is trained
	if err != nil {
		return err
	}
	bar := newProgress(out, o.Quiet, "seed")
	t, err := experiment.PNorm(ctx, cfg, experiment.PNormPs, func(done, total int) { bar.step(done, total, "") })
	if err != nil {
		return err
	}
	res, err := newResults(out, o.tableOptions, "pnorm", false)
	if err != nil {
		return err
	}
	if err := res.add(t); err != nil {
		return err
	}
	return res.done()
}
