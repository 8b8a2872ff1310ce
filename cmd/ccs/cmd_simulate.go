package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/sim"
)

func init() {
	register(&command{
		name:  "simulate",
		args:  "-out DIR [-seed S] [-data-seed S] [-k K]",
		short: "write the paper's 3-D mixed simulation as DIR/{fit,val,cal,test}.npz",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			dir := fs.String("out", "", "output `directory` (created if missing)")
			seed := fs.Uint64("seed", 0, "`seed` of the split and the pairs")
			dataSeed := fs.Uint64("data-seed", sim.PaperDataSeed, "`seed` of the point cloud (default: the draw closest to the paper's Table 1, docs/simulation.md)")
			k := fs.Int("k", 500, "positives and negatives per anchor")
			perClass := fs.Int("per-class", sim.PerClass, "points per class")
			return func([]string) error {
				if err := required("simulate", "out", *dir); err != nil {
					return err
				}
				if *k < 1 || *perClass < 2 {
					return usagef("simulate: -k %d and -per-class %d must be positive (per-class at least 2)", *k, *perClass)
				}
				if err := os.MkdirAll(*dir, 0o755); err != nil {
					return err
				}
				data := sim.Mixed(*dataSeed, *perClass)
				split := data.Split(*seed)
				for _, part := range []struct {
					name string
					idx  []int
				}{{"fit", split.Fit}, {"val", split.Val}, {"cal", split.Cal}, {"test", split.Test}} {
					b, err := data.Pairs(part.idx, *k, *seed, part.name)
					if err != nil {
						return err
					}
					path := filepath.Join(*dir, part.name+".npz")
					if err := bundle.Write(path, b); err != nil {
						return err
					}
					fmt.Fprintf(out.stdout, "wrote %s: %d anchors, %d positives and %d negatives each, d=%d\n",
						path, b.N, b.K, b.KNeg, b.D)
				}
				return nil
			}
		},
	})
}
