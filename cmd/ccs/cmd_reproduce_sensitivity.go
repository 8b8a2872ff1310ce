package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

// reproduceSensitivityOptions are ccs reproduce sensitivity's inputs.
type reproduceSensitivityOptions struct {
	tableOptions
	realOptions
	Sim         simOptions
	Data        string // fmnist or sim
	Sweeps      string // comma-separated parameters
	Recipe      train.Config
	recipeFlags *recipeFlags
	set         map[string]bool // flags given on the command line
}

// supervisedModel is the supervised encoder alone, the sensitivity
// analysis's default.
const supervisedModel = "supervised=encoders/fmnist-supervised.onnx"

func reproduceSensitivityCommand() *command {
	return newCommand("sensitivity", "[-data fmnist|sim] [-sweeps alpha,T,lambda_infonce,tau,lambda,k] [-seeds 3] [-models NAME=FILE.onnx] [-train-anchors 12000] [-test-anchors 10000] [-k 20] [-embed-seed S] [-cache DIR] [-per-class 5000] [-data-seed S] [-alpha 0.05] [-calibration one|pac|pooled [-delta δ]] [-T 7] [-infonce-weight 1] [-tau 0.1] [-lambda 0.05] [training flags] [-out DIR] [-plots DIR] [-json] [-quiet]",
		"the paper's sensitivity analysis: the generalized ball (Neg+Vol+InfoNCE) with α, T, λ_InfoNCE, τ, λ and k swept one at a time, on Fashion-MNIST (supervised encoder) or the simulation",
		func(fs *flag.FlagSet, o *reproduceSensitivityOptions) func() error {
			addTableFlags(fs, &o.tableOptions, 3, keepsCells)
			addRealFlags(fs, &o.realOptions, supervisedModel)
			fs.IntVar(&o.Sim.PerClass, "per-class", 5000, "points per class (-data sim)")
			fs.Uint64Var(&o.Sim.DataSeed, "data-seed", sim.PaperDataSeed, "`seed` of the point cloud (-data sim; the default is the draw closest to the paper's Table 1, docs/simulation.md)")
			fs.StringVar(&o.Data, "data", "fmnist", "data: fmnist (the Fashion-MNIST embeddings of the -models encoder) or sim (the 3-D simulation)")
			fs.StringVar(&o.Sweeps, "sweeps", "alpha,T,lambda_infonce,tau,lambda,k", "parameters to sweep, each over the paper's values")
			o.recipeFlags = addRecipeFlags(fs, "embedding")
			// The help's defaults are this table's: the recipe by the data,
			// λ the paper's sensitivity base point (the flag's own default
			// is the other tables').
			r := fs.Lookup("recipe")
			r.DefValue, r.Usage = "", r.Usage+" (default: sim with -data sim, embedding with -data fmnist)"
			fs.Lookup("lambda").DefValue = fmt.Sprint(experiment.PaperSensitivity.Lambda)
			return func() error {
				o.set = map[string]bool{}
				fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
				if o.Data == "sim" && !o.set["recipe"] {
					o.recipeFlags.name = "sim"
				}
				var err error
				o.Recipe, err = o.recipeFlags.recipe("reproduce sensitivity")
				return err
			}
		}, runReproduceSensitivity)
}

func runReproduceSensitivity(ctx context.Context, o reproduceSensitivityOptions, out *output) error {
	c, err := o.tableOptions.config(o.Recipe)
	if err != nil {
		return err
	}
	// The base point: the paper's sensitivity defaults, which differ from
	// the tables' recipe in λ (0.05, not 0.001), unless given.
	base := experiment.PaperSensitivity
	base.Alpha, base.T = o.Alpha, o.Recipe.Objective.T
	base.LambdaInfoNCE, base.Tau = o.recipeFlags.infoNCE.Weight, o.recipeFlags.infoNCE.Tau
	if o.set["lambda"] {
		base.Lambda = o.Recipe.Objective.Lambda
	}
	sweeps := map[string][]float64{}
	for _, name := range strings.Split(o.Sweeps, ",") {
		v, ok := experiment.PaperSweeps[name]
		if !ok {
			return usagef("reproduce sensitivity: -sweeps: unknown parameter %q (want alpha, T, lambda_infonce, tau, lambda or k)", name)
		}
		sweeps[name] = v
	}
	if o.set["k"] {
		if o.K < 1 {
			return usagef("reproduce sensitivity: -k %d: want at least 1", o.K)
		}
		base.K = o.K
	}
	var ms []model
	switch o.Data {
	case "sim":
	case "fmnist":
		if ms, err = o.realOptions.check(); err != nil {
			return err
		}
		if len(ms) != 1 {
			return usagef("reproduce sensitivity: -models names %d encoders, want one", len(ms))
		}
		// The embeddings hold -k views per anchor; a point at k uses the
		// first k.
		for _, v := range append(sweeps["k"], float64(base.K)) {
			if v > float64(o.K) {
				return usagef("reproduce sensitivity: k = %v exceeds -k %d, the views embedded per anchor", v, o.K)
			}
		}
	default:
		return usagef("reproduce sensitivity: -data %q: want fmnist or sim", o.Data)
	}
	res, err := newResults(out, o.tableOptions, "sensitivity", true, modelInputs(ms, false)...)
	if err != nil {
		return err
	}
	c.Cells = res.cells
	var data experiment.SensitivityData
	if o.Data == "sim" {
		data = experiment.SimSensitivityData(experiment.SimConfig{PerClass: o.Sim.PerClass, DataSeed: o.Sim.DataSeed})
	} else {
		e, _, err := o.realOptions.embed(ctx, out, o.Quiet, ms[0])
		if err != nil {
			return err
		}
		data = experiment.RealSensitivityData(e, 0)
	}
	t, err := experiment.Sensitivity(ctx, data, experiment.SensitivityConfig{Config: c, Base: base, Sweeps: sweeps},
		newProgress(out, o.Quiet, "run").step)
	if err != nil {
		return fmt.Errorf("sensitivity: %w", err)
	}
	if err := res.add(t); err != nil {
		return err
	}
	return res.done()
}
