package main

import (
	"flag"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/images"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/sim"
)

func init() {
	register(&command{
		name:       "reproduce",
		args:       "sim|sim-draws|sim-threshold|fmnist|ood [-seeds N] [-k K] [-alpha A] [-data-seed S] [-rows all|baselines|learned|infonce|all+infonce] [-out DIR] [-draws N] [-calibration one|pooled] [training flags] [-json] [-quiet]",
		short:      "reproduce a table of the paper (sim: the 3-D simulation, Table 1; sim-draws: the survey of point clouds behind -data-seed; sim-threshold: the threshold-mode comparison; fmnist: Fashion-MNIST with the project's encoders, Table 2's layout; ood: OOD detection, Fashion-MNIST against MNIST digits and noise)",
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
			models := fs.String("models", defaultModels, "fmnist: encoders, `NAME=FILE.onnx,…`")
			trainAnchors := fs.Int("train-anchors", 12000, "fmnist: anchors drawn from the training split (the paper: 20%)")
			testAnchors := fs.Int("test-anchors", 10000, "fmnist: anchors of the test split, halved into calibration and test")
			embedSeed := fs.Uint64("embed-seed", 0, "fmnist: `seed` of the anchors' subsets and their augmented views (fixed over seeds)")
			hullTable := fs.Bool("hull", true, "fmnist: also the convex-hull comparison (75 views of each test anchor: 25 build the hull, 50 are held out)")
			hullAnchors := fs.Int("hull-anchors", 1000, "fmnist: test anchors whose convex hull is measured")
			cacheDir := fs.String("cache", filepath.Join(images.CacheDir(), "embeddings"), "fmnist: `directory` keeping the embeddings between runs")
			fpr := fs.String("fpr", "id-positive", "ood: FPR95 `convention`: id-positive (the paper's text) or ood-positive (OpenOOD)")
			oodSets := fs.String("ood-sets", "mnist,noise", "ood: OOD image `sets` (mnist, noise[:N])")
			reference := fs.Int("reference", 256, "ood: calibration anchors kept as the reference pool of the per-sample CCS score")
			ciderEpochs := fs.Int("cider-epochs", 100, "ood: CIDER's training epochs (the paper: 100)")
			baselineTrain := fs.Int("baseline-train", 0, "ood: training images the baselines are fitted on (0: all 60 000, as the paper)")
			asJSON := fs.Bool("json", false, "print JSON instead of the table")
			quiet := fs.Bool("quiet", false, "no progress on stderr")
			return func(pos []string) error {
				if !slices.Contains([]string{"sim", "sim-draws", "sim-threshold", "fmnist", "ood"}, pos[0]) {
					return usagef("reproduce: unknown table %q (want sim, sim-draws, sim-threshold, fmnist or ood)", pos[0])
				}
				real := pos[0] == "fmnist" || pos[0] == "ood"
				if real {
					if !isSet(fs, "recipe") {
						*rec.name = "embedding"
					}
					if !isSet(fs, "seeds") {
						*seeds = 6
					}
					if !isSet(fs, "k") {
						*k = 20
					}
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
				if pos[0] == "ood" {
					conv, err := ood.ParseConvention(*fpr)
					if err != nil {
						return usagef("reproduce: -fpr: %v", err)
					}
					methods := experiment.OODMethods()
					switch *rows {
					case "all":
					case "baselines":
						methods = methods[:1] // the untrained ℓ2 ball: no training
					default:
						return usagef("reproduce: -rows %q: ood takes all or baselines", *rows)
					}
					ms, err := parseModels(*models)
					if err != nil {
						return err
					}
					if *trainAnchors < 2 || *testAnchors < 4 || *reference < 1 || *ciderEpochs < 1 {
						return usagef("reproduce: -train-anchors must be at least 2, -test-anchors at least 4, -reference and -cider-epochs at least 1")
					}
					cfg := experiment.OODConfig{RealConfig: experiment.RealConfig{SimConfig: experiment.SimConfig{Seeds: *seeds, Alpha: *alpha, Calibration: m, Train: tc, OutDir: *outDir}},
						Reference: *reference, Convention: conv}
					if *baselineTrain < 0 {
						return usagef("reproduce: -baseline-train must be ≥ 0")
					}
					return reproduceOOD(out, ms, cfg, methods, strings.Split(*oodSets, ","), *ciderEpochs, *baselineTrain,
						*trainAnchors, *testAnchors, *k, *embedSeed, *cacheDir, *quiet, *asJSON)
				}
				if pos[0] == "fmnist" {
					all := experiment.RealMethods()
					var methods []experiment.Method
					switch *rows {
					case "all", "all+infonce":
						methods = all
					case "baselines":
						methods = all[:2]
					case "learned":
						methods = all[2:8]
					case "infonce":
						methods = all[8:]
					default:
						return usagef("reproduce: -rows %q: want all, baselines, learned or infonce", *rows)
					}
					ms, err := parseModels(*models)
					if err != nil {
						return err
					}
					if *trainAnchors < 2 || *testAnchors < 4 {
						return usagef("reproduce: -train-anchors must be at least 2 and -test-anchors at least 4")
					}
					cfg := experiment.RealConfig{SimConfig: experiment.SimConfig{Seeds: *seeds, Alpha: *alpha, Calibration: m, Train: tc, OutDir: *outDir}}
					if *hullAnchors < 1 {
						return usagef("reproduce: -hull-anchors must be at least 1")
					}
					hc := &experiment.HullConfig{RealConfig: cfg, Anchors: *hullAnchors}
					if !*hullTable {
						hc = nil
					}
					return reproduceFMNIST(out, ms, cfg, hc, methods, *trainAnchors, *testAnchors, *k, *embedSeed, *cacheDir, *quiet, *asJSON)
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
