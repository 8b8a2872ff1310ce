package main

import (
	"flag"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/sim"
)

func init() {
	register(&command{
		name:       "reproduce",
		args:       "sim|sim-draws|sim-threshold [-seeds N] [-k K] [-alpha A] [-data-seed S] [-rows all|baselines|learned|infonce|all+infonce] [-out DIR] [-draws N] [-calibration one|pooled] [training flags] [-json] [-quiet]",
		short:      "reproduce a table of the paper (sim: the 3-D simulation, Table 1; sim-draws: the survey of point clouds behind -data-seed; sim-threshold: the threshold-mode comparison)",
		positional: "TABLE",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			seeds := fs.Int("seeds", 20, "number of seeds (0..N−1)")
			k := fs.Int("k", 500, "positives and negatives per anchor")
			alpha := fs.Float64("alpha", 0.05, "miscoverage level α in (0,1)")
			dataSeed := fs.Uint64("data-seed", sim.PaperDataSeed, "`seed` of the point cloud, fixed over seeds as in the paper (default: the draw closest to the paper's Table 1, docs/simulation.md)")
			draws := fs.Int("draws", 200, "sim-draws: number of point clouds (data seeds 0..N−1)")
			perClass := fs.Int("per-class", 5000, "points per class")
			mode := fs.String("calibration", "one", "calibration `mode`: one or pooled")
			rows := fs.String("rows", "all", "rows: all (the paper's eight), baselines (the two vanilla sets), learned (the six trained ones), infonce (the six with the InfoNCE head) or all+infonce")
			outDir := fs.String("out", "", "keep every fitted set as `DIR`/seed-S/METHOD.json")
			rec := recipeFlags(fs, "sim")
			asJSON := fs.Bool("json", false, "print JSON instead of the table")
			quiet := fs.Bool("quiet", false, "no progress on stderr")
			return func(pos []string) error {
				if pos[0] != "sim" && pos[0] != "sim-draws" && pos[0] != "sim-threshold" {
					return usagef("reproduce: unknown table %q (want sim, sim-draws or sim-threshold)", pos[0])
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
				tc, err := rec.config()
				if err != nil {
					return err
				}
				var methods []experiment.Method
				switch *rows {
				case "all":
					methods = experiment.SimMethods()
				case "baselines":
					methods = experiment.SimBaselines()
				case "learned":
					methods = experiment.SimMethods()[2:]
				case "infonce":
					methods = experiment.SimInfoNCE()
				case "all+infonce":
					methods = append(experiment.SimMethods(), experiment.SimInfoNCE()...)
				default:
					return usagef("reproduce: -rows %q: want all, baselines, learned, infonce or all+infonce", *rows)
				}
				bar := newProgress(out, *quiet, "run")
				cfg := experiment.SimConfig{Seeds: *seeds, K: *k, Alpha: *alpha, DataSeed: *dataSeed,
					PerClass: *perClass, Calibration: m, Train: tc, OutDir: *outDir}
				if pos[0] == "sim-draws" {
					if !isSet(fs, "seeds") {
						cfg.Seeds = 2
					}
					ds, err := experiment.SimDraws(cfg, *draws, func(done, total int) { bar.step(done, total, "") })
					if err != nil {
						return err
					}
					if *asJSON {
						return writeJSON(out.stdout, ds)
					}
					return experiment.WriteDraws(out.stdout, ds)
				}
				if pos[0] == "sim-threshold" {
					if !isSet(fs, "seeds") {
						cfg.Seeds = 3
					}
					runs, err := experiment.ThresholdModes(cfg, bar.step)
					if err != nil {
						return err
					}
					if *asJSON {
						return writeJSON(out.stdout, runs)
					}
					return experiment.WriteModes(out.stdout, runs)
				}
				t, err := experiment.Sim(cfg, methods, bar.step)
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
