package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/sim"
)

func init() {
	register(&command{
		name:       "reproduce",
		args:       "sim|sim-draws [-seeds N] [-k K] [-alpha A] [-data-seed S] [-draws N] [-calibration one|pooled] [-json] [-quiet]",
		short:      "reproduce a table of the paper (sim: the 3-D simulation, Table 1; sim-draws: the survey of point clouds behind -data-seed)",
		positional: "TABLE",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			seeds := fs.Int("seeds", 20, "number of seeds (0..N−1)")
			k := fs.Int("k", 500, "positives and negatives per anchor")
			alpha := fs.Float64("alpha", 0.05, "miscoverage level α in (0,1)")
			dataSeed := fs.Uint64("data-seed", sim.PaperDataSeed, "`seed` of the point cloud, fixed over seeds as in the paper (default: the draw closest to the paper's Table 1, docs/simulation.md)")
			draws := fs.Int("draws", 200, "sim-draws: number of point clouds (data seeds 0..N−1)")
			perClass := fs.Int("per-class", 5000, "points per class")
			mode := fs.String("calibration", "one", "calibration `mode`: one or pooled")
			asJSON := fs.Bool("json", false, "print JSON instead of the table")
			quiet := fs.Bool("quiet", false, "no progress on stderr")
			return func(pos []string) error {
				if pos[0] != "sim" && pos[0] != "sim-draws" {
					return usagef("reproduce: unknown table %q (want sim or sim-draws)", pos[0])
				}
				if err := checkAlpha("reproduce", *alpha); err != nil {
					return err
				}
				if *seeds < 1 || *k < 1 || *perClass < 2 || *draws < 1 {
					return usagef("reproduce: -seeds, -k and -draws must be at least 1 and -per-class at least 2")
				}
				m, err := conformal.ParseMode(*mode)
				if err != nil {
					return usagef("reproduce: -calibration: %v", err)
				}
				start := time.Now()
				var progress func(done, total int)
				if !*quiet && out.terminal() {
					progress = func(done, total int) {
						fmt.Fprintf(out.stderr, "\r%s %d/%d  %s", pos[0], done, total, time.Since(start).Round(time.Second))
						if done == total {
							fmt.Fprintln(out.stderr)
						}
					}
				}
				cfg := experiment.SimConfig{Seeds: *seeds, K: *k, Alpha: *alpha, DataSeed: *dataSeed,
					PerClass: *perClass, Calibration: m}
				if pos[0] == "sim-draws" {
					if !isSet(fs, "seeds") {
						cfg.Seeds = 2
					}
					ds, err := experiment.SimDraws(cfg, *draws, progress)
					if err != nil {
						return err
					}
					if *asJSON {
						return writeJSON(out.stdout, ds)
					}
					return experiment.WriteDraws(out.stdout, ds)
				}
				t, err := experiment.Sim(cfg, experiment.SimBaselines(), progress)
				if err != nil {
					return err
				}
				if *asJSON {
					return t.WriteJSON(out.stdout)
				}
				return t.WriteText(out.stdout)
			}
		},
	})
}
