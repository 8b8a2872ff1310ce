package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/sim"
)

// simulateOptions are ccs simulate's inputs.
type simulateOptions struct {
	Out      string // directory
	Seed     uint64 // the split and the pairs
	DataSeed uint64 // the point cloud
	K        int    // positives and negatives per anchor
	PerClass int    // points per class
}

func simulateCommand() *command {
	return newCommand("simulate", "-out DIR [-seed S] [-data-seed S] [-k K] [-per-class 5000]",
		"write the paper's 3-D mixed simulation as DIR/{fit,val,cal,test}.npz",
		func(fs *flag.FlagSet, o *simulateOptions) func() error {
			fs.StringVar(&o.Out, "out", "", "output `directory` (created if missing)")
			fs.Uint64Var(&o.Seed, "seed", 0, "`seed` of the split and the pairs")
			fs.Uint64Var(&o.DataSeed, "data-seed", sim.PaperDataSeed, "`seed` of the point cloud (default: the draw closest to the paper's Table 1, docs/simulation.md)")
			fs.IntVar(&o.K, "k", sim.K, "positives and negatives per anchor")
			fs.IntVar(&o.PerClass, "per-class", sim.PerClass, "points per class")
			return nil
		}, runSimulate)
}

func runSimulate(_ context.Context, o simulateOptions, out *output) error {
	if err := required("simulate", "out", o.Out); err != nil {
		return err
	}
	if o.K < 1 || o.PerClass < 2 {
		return usagef("simulate: -k %d and -per-class %d: want -k at least 1 and -per-class at least 2", o.K, o.PerClass)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	data := sim.Mixed(o.DataSeed, o.PerClass)
	split := data.Split(o.Seed)
	for _, part := range []struct {
		name string
		idx  []int
	}{{"fit", split.Fit}, {"val", split.Val}, {"cal", split.Cal}, {"test", split.Test}} {
		b, err := data.Pairs(part.idx, o.K, o.Seed, part.name)
		if err != nil {
			return err
		}
		path := filepath.Join(o.Out, part.name+".npz")
		if err := bundle.Write(path, b); err != nil {
			return err
		}
		fmt.Fprintf(out.stdout, "wrote %s: %d anchors, %d positives and %d negatives each, d=%d\n",
			path, b.N, b.K, b.KNeg, b.D)
	}
	return nil
}
