package main

import (
	"flag"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

// reproduceCommand chooses a table of the paper; each is a command of its
// own (cmd_reproduce_TABLE.go) with its flags and defaults.
func reproduceCommand() *command {
	return &command{
		name:    "reproduce",
		args:    "TABLE [flags]",
		short:   "reproduce a table of the paper (sim: the 3-D simulation, Table 1; sim-draws: the survey of point clouds behind -data-seed; sim-threshold: the threshold-mode comparison; pnorm: the isotropic p-ball at fixed coverage and fixed volume; sensitivity: the sensitivity analysis; fmnist: Fashion-MNIST with the project's encoders, Table 2's layout; ood: OOD detection, Fashion-MNIST against MNIST digits and noise)",
		subName: "TABLE",
		sub: []*command{
			reproduceSimCommand(),
			reproduceSimDrawsCommand(),
			reproduceSimThresholdCommand(),
			reproducePNormCommand(),
			reproduceSensitivityCommand(),
			reproduceFMNISTCommand(),
			reproduceOODCommand(),
		},
	}
}

// tableOptions are what every table takes.
type tableOptions struct {
	Seeds       int     // seeds 0..Seeds−1
	Alpha       float64 // miscoverage level
	Calibration string  // one, pac or pooled
	Delta       float64 // pac's δ
	Out         string  // the results directory: the document, the cells, every fitted set
	Plots       string  // draws the figures there
	JSON, Quiet bool
}

// What a table command's -out keeps (addTableFlags): a results directory
// with its cells and sets, the document alone, or nothing (no -out, no
// -plots: the table keeps no results and has no figures).
const (
	keepsCells = iota
	keepsDocument
	keepsNothing
)

func addTableFlags(fs *flag.FlagSet, o *tableOptions, seeds, keeps int) {
	fs.IntVar(&o.Seeds, "seeds", seeds, "number of seeds (0..N−1)")
	fs.Float64Var(&o.Alpha, "alpha", defaultAlpha, "miscoverage level α in (0,1)")
	fs.StringVar(&o.Calibration, "calibration", "one", "calibration `mode`: one, pac (with -delta) or pooled")
	fs.Float64Var(&o.Delta, "delta", 0, "δ of -calibration pac, in (0, 0.5): the chance over the calibration draw that the guarantee fails (0.05 or 0.1)")
	switch keeps {
	case keepsCells:
		fs.StringVar(&o.Out, "out", "", "results `DIR`: the result as DIR/TABLE.json, each finished (row, seed) cell in DIR/cells (a rerun with the same flags and code reads them back), every fitted set as DIR/sets/TABLE/[ENCODER/]seed-S/METHOD.json")
	case keepsDocument:
		fs.StringVar(&o.Out, "out", "", "results `DIR`: the result as DIR/TABLE.json (no cells: a rerun computes the table again)")
	}
	if keeps != keepsNothing {
		fs.StringVar(&o.Plots, "plots", "", "draw the table's figures in `DIR` (PNG and SVG)")
	}
	fs.BoolVar(&o.JSON, "json", false, "print JSON instead of the table")
	fs.BoolVar(&o.Quiet, "quiet", false, "no progress on stderr")
}

// config checks the options (usage errors) and returns the table
// configuration they give, with the learned rows' recipe.
func (o tableOptions) config(recipe train.Config) (experiment.Config, error) {
	return o.configFor("reproduce", recipe, false)
}

// configFor is config for the command cmd, which may take class-conditional
// calibration when class is true (compare does; the paper's tables not).
func (o tableOptions) configFor(cmd string, recipe train.Config, class bool) (experiment.Config, error) {
	if err := checkAlpha(cmd, o.Alpha); err != nil {
		return experiment.Config{}, err
	}
	if o.Seeds < 1 {
		return experiment.Config{}, usagef("%s: -seeds %d: want at least 1", cmd, o.Seeds)
	}
	m, err := conformal.ParseMode(o.Calibration)
	if err != nil {
		return experiment.Config{}, usagef("%s: -calibration: %v", cmd, err)
	}
	if err := checkDelta(cmd, m, o.Delta); err != nil {
		return experiment.Config{}, err
	}
	if m == conformal.Class && !class {
		return experiment.Config{}, usagef("%s: -calibration class is for ccs calibrate, evaluate and compare; the paper's tables do not take it", cmd)
	}
	return experiment.Config{Seeds: o.Seeds, Alpha: o.Alpha, Calibration: m, Delta: o.Delta, Train: recipe, OutDir: o.Out}, nil
}

// checkDelta requires -delta in (0, MaxDelta) with -calibration pac, allows it
// with class (PAC per class), and refuses it otherwise (usage errors).
func checkDelta(cmd string, m conformal.Mode, delta float64) error {
	switch {
	case m == conformal.PAC && delta == 0:
		return usagef("%s: -calibration pac needs a -delta above 0 (none given, or 0): give -delta 0.05 or 0.1 (%s)", cmd, conformal.DeltaHint)
	case m == conformal.PAC && !(delta >= conformal.MinDelta && delta < conformal.MaxDelta):
		return usagef("%s: -calibration pac needs %v ≤ -delta < %v, got %v (%s)", cmd, conformal.MinDelta, conformal.MaxDelta, delta, conformal.DeltaHint)
	case m == conformal.Class && !(delta == 0 || delta >= conformal.MinDelta && delta < conformal.MaxDelta):
		return usagef("%s: -delta %v: want %v ≤ δ < %v, or 0: marginal per class (%s)", cmd, delta, conformal.MinDelta, conformal.MaxDelta, conformal.DeltaHint)
	case m != conformal.PAC && m != conformal.Class && delta != 0:
		return usagef("%s: -delta is for -calibration pac or class", cmd)
	}
	return nil
}

// simOptions are what the simulation's tables share.
type simOptions struct {
	K        int    // positives and negatives per anchor
	PerClass int    // points per class
	DataSeed uint64 // the point cloud
}

func addSimFlags(fs *flag.FlagSet, o *simOptions, dataSeed bool) {
	fs.IntVar(&o.K, "k", sim.K, "positives and negatives per anchor")
	fs.IntVar(&o.PerClass, "per-class", sim.PerClass, "points per class")
	if dataSeed {
		fs.Uint64Var(&o.DataSeed, "data-seed", sim.PaperDataSeed, "`seed` of the point cloud, fixed over seeds as in the paper (the default is the draw closest to the paper's Table 1, docs/simulation.md)")
	}
}

// minPerClass is the fewest points per class a simulation table takes.
const minPerClass = 50

// config checks the options (usage errors) and returns the simulation
// table's configuration they give, with the learned rows' recipe.
func (o simOptions) config(t tableOptions, recipe train.Config) (experiment.SimConfig, error) {
	c, err := t.config(recipe)
	if err != nil {
		return experiment.SimConfig{}, err
	}
	if o.K < 1 {
		return experiment.SimConfig{}, usagef("reproduce: -k %d: want at least 1", o.K)
	}
	if o.PerClass < minPerClass {
		// The validation split holds about a tenth of each class, drawn
		// at random: -per-class 10 left a class one point, and k = 0.
		return experiment.SimConfig{}, usagef("reproduce: -per-class %d: want at least %d (the validation split holds about a tenth of each class, and every split needs two points of each: an anchor and a positive)", o.PerClass, minPerClass)
	}
	c.K = o.K
	return experiment.SimConfig{Config: c, PerClass: o.PerClass, DataSeed: o.DataSeed}, nil
}
