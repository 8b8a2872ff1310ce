package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/train"
)

// reproduceOODOptions are ccs reproduce ood's inputs.
type reproduceOODOptions struct {
	tableOptions
	realOptions
	Rows          string // all or baselines
	FPR           string // FPR95's convention
	OODSets       string // mnist, noise[:N], comma-separated
	Reference     int    // calibration anchors kept as the per-sample score's pool
	CiderEpochs   int
	BaselineTrain int // training images the baselines are fitted on; 0: all
	Recipe        train.Config
}

// oodRows are the row sets -rows names, for the OOD table.
var oodRows = map[string]func() []experiment.Method{
	"all":       experiment.OODMethods,
	"baselines": func() []experiment.Method { return []experiment.Method{experiment.Ball()} }, // the untrained ℓ2 ball: no training
}

func reproduceOODCommand() *command {
	return newCommand("ood", "[-models NAME=FILE.onnx,…] [-seeds 6] [-train-anchors 12000] [-test-anchors 10000] [-k 20] [-embed-seed S] [-ood-sets mnist,noise] [-reference 256] [-baseline-train 0] [-cider-epochs 100] [-fpr id-positive|ood-positive] [-rows all|baselines] [-alpha 0.05] [-calibration one|pac|pooled [-delta δ]] [-cache DIR] [training flags] [-out DIR] [-plots DIR] [-json] [-quiet]",
		"OOD detection, Fashion-MNIST against MNIST digits and noise: the CCS scores and the baselines",
		func(fs *flag.FlagSet, o *reproduceOODOptions) func() error {
			addTableFlags(fs, &o.tableOptions, 6, keepsCells)
			addRealFlags(fs, &o.realOptions, defaultModels)
			fs.StringVar(&o.Rows, "rows", "all", "rows: all (the ℓ2 ball, Single (Neg) and Generalized (Neg), and the baselines) or baselines (the untrained ℓ2 ball and the baselines)")
			fs.StringVar(&o.FPR, "fpr", "id-positive", "FPR95 `convention`: id-positive (the paper's text) or ood-positive (OpenOOD)")
			fs.StringVar(&o.OODSets, "ood-sets", "mnist,noise", "OOD image `sets` (mnist, noise[:N])")
			fs.IntVar(&o.Reference, "reference", 256, "calibration anchors kept as the reference pool of the per-sample CCS score")
			fs.IntVar(&o.CiderEpochs, "cider-epochs", 100, "CIDER's training epochs (the paper: 100)")
			fs.IntVar(&o.BaselineTrain, "baseline-train", 0, "training images the baselines are fitted on (0: all 60 000, as the paper)")
			return recipeOption(fs, "embedding", "reproduce", &o.Recipe)
		}, runReproduceOOD)
}

// runReproduceOOD embeds (or reads from the cache) each encoder's
// Fashion-MNIST splits and the OOD image sets, and prints one OOD table per
// encoder.
func runReproduceOOD(ctx context.Context, o reproduceOODOptions, out *output) error {
	c, err := o.tableOptions.config(o.Recipe)
	if err != nil {
		return err
	}
	conv, err := ood.ParseConvention(o.FPR)
	if err != nil {
		return usagef("reproduce: -fpr: %v", err)
	}
	rows, ok := oodRows[o.Rows]
	if !ok {
		return usagef("reproduce: -rows %q: ood takes all or baselines", o.Rows)
	}
	ms, err := o.realOptions.check()
	if err != nil {
		return err
	}
	if o.Reference < 1 || o.CiderEpochs < 1 {
		return usagef("reproduce: want -reference and -cider-epochs at least 1")
	}
	if o.BaselineTrain < 0 {
		return usagef("reproduce: -baseline-train %d: want ≥ 0", o.BaselineTrain)
	}
	tables, err := newResults(out, o.tableOptions, "ood", true, modelInputs(ms, true)...)
	if err != nil {
		return err
	}
	c.Cells, c.OutDir = tables.cells, tables.sets
	for _, m := range ms {
		e, emb, err := o.realOptions.embed(ctx, out, o.Quiet, m)
		if err != nil {
			return err
		}
		cfg := experiment.OODConfig{RealConfig: experiment.RealConfig{Config: c}, Reference: o.Reference, Convention: conv}
		// The baselines are fitted on the whole training split (one view
		// each: they need only the anchors).
		if cfg.BaselineTrain, err = emb("fashion-mnist:train", o.BaselineTrain, 1); err != nil {
			return err
		}
		var sets []experiment.OODSet
		for _, name := range strings.Split(o.OODSets, ",") {
			// One view each: the OOD samples need only their anchors.
			b, err := emb(name, 0, 1)
			if err != nil {
				return err
			}
			sets = append(sets, experiment.OODSet{Name: name, B: b})
		}
		if cfg.OutDir != "" {
			cfg.OutDir = filepath.Join(c.OutDir, m.name)
		}
		cl, err := classifierFor(m.file)
		if err != nil {
			return err
		}
		cfg.Baselines = ood.Baselines(ood.BaselineOptions{Classifier: cl, Epochs: o.CiderEpochs})
		runs := newProgress(out, o.Quiet, "run")
		t, err := experiment.OOD(ctx, e, sets, cfg, rows(), runs.step)
		if err != nil {
			return fmt.Errorf("ood, %s: %w", m.name, err)
		}
		if err := tables.add(t); err != nil {
			return err
		}
	}
	return tables.done()
}
