package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/ood"
)

// oodOptions are ccs ood's inputs.
type oodOptions struct {
	Set, ID     string   // files
	OOD         []string // [NAME=]FILE
	Train       string   // fits the baselines
	Classifier  string   // the encoder's last layer, for ViM
	Mode        string   // batch, reference or both; "": both when the set has a pool
	FPR         string   // FPR95's convention
	CiderEpochs int
	Seed        uint64 // CIDER's
	JSON        bool
}

func oodCommand() *command {
	return newCommand("ood", "-set SET.json -id FILE -ood [NAME=]FILE [-ood …] [-train FILE [-classifier FILE.npz]] [-mode batch|reference|both] [-fpr id-positive|ood-positive] [-json]",
		"score in-distribution and OOD bundles with a set's CCS OOD score (and, given training features, the eight baselines): AUROC and FPR95",
		func(fs *flag.FlagSet, o *oodOptions) func() error {
			fs.StringVar(&o.Set, "set", "", "calibrated set `file` (.json)")
			fs.StringVar(&o.ID, "id", "", "in-distribution bundle `file` (.npz): anchors, and negatives for the batch mode")
			fs.Var((*listFlag)(&o.OOD), "ood", "OOD bundle `[NAME=]FILE` (.npz); repeat for several")
			fs.StringVar(&o.Train, "train", "", "training bundle `file` whose anchors (features, labels, logits, activations) fit the baselines")
			fs.StringVar(&o.Classifier, "classifier", "", "the encoder's last layer, `FILE.npz` with weight (C, D) and bias (C,), for ViM")
			fs.StringVar(&o.Mode, "mode", "", "CCS score `mode`: batch (negatives from the evaluated bundle, the paper), reference (the set's reference pool) or both; default: both when the set has a pool")
			fs.StringVar(&o.FPR, "fpr", "id-positive", "FPR95 `convention`: id-positive (the paper's text) or ood-positive (OpenOOD)")
			fs.IntVar(&o.CiderEpochs, "cider-epochs", 100, "CIDER's training epochs")
			fs.Uint64Var(&o.Seed, "seed", 0, "CIDER's `seed`")
			fs.BoolVar(&o.JSON, "json", false, "print JSON instead of the table")
			return nil
		}, runOOD)
}

func runOOD(_ context.Context, o oodOptions, out *output) error {
	if err := required("ood", "set", o.Set, "id", o.ID); err != nil {
		return err
	}
	if len(o.OOD) == 0 {
		return usagef("ood: give at least one -ood FILE")
	}
	conv, err := ood.ParseConvention(o.FPR)
	if err != nil {
		return usagef("ood: -fpr: %v", err)
	}
	if o.CiderEpochs < 1 {
		return usagef("ood: -cider-epochs must be at least 1")
	}
	if o.Classifier != "" && o.Train == "" {
		return usagef("ood: -classifier is for the baselines: give -train too")
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	mode := o.Mode
	if mode == "" {
		mode = "batch"
		if set.Reference != nil {
			mode = "both"
		}
	}
	ms, ok := map[string][]string{"batch": {"batch"}, "reference": {"reference"}, "both": {"batch", "reference"}}[mode]
	if !ok {
		return usagef("ood: -mode %q: want batch, reference or both", mode)
	}
	if mode != "batch" && set.Reference == nil {
		return fmt.Errorf("%s: no reference pool for -mode %s (calibrate with -reference N)", o.Set, mode)
	}
	id, err := bundle.Read(o.ID)
	if err != nil {
		return err
	}
	t := &experiment.OODTable{Title: "OOD detection", Runs: 1,
		Config: fmt.Sprintf("set %s, ID %s, FPR95 %v", o.Set, o.ID, conv)}
	var oodBundles []*bundle.Bundle
	for _, p := range o.OOD {
		name, file, ok := strings.Cut(p, "=")
		if !ok {
			name, file = strings.TrimSuffix(filepath.Base(p), ".npz"), p
		}
		b, err := bundle.Read(file)
		if err != nil {
			return err
		}
		oodBundles = append(oodBundles, b)
		t.Sets = append(t.Sets, name)
	}
	scoreAll := func(f func(b *bundle.Bundle) ([]float64, error)) ([]float64, [][]float64, error) {
		ids, err := f(id)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", o.ID, err)
		}
		var scores [][]float64
		for j, b := range oodBundles {
			s, err := f(b)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", t.Sets[j], err)
			}
			scores = append(scores, s)
		}
		return ids, scores, nil
	}
	for _, m := range ms {
		f := func(b *bundle.Bundle) ([]float64, error) { return ood.CCSBatch(set, b) }
		if m == "reference" {
			f = func(b *bundle.Bundle) ([]float64, error) { return ood.CCSReference(set, b.Anchors) }
		}
		ids, oods, err := scoreAll(f)
		if err != nil {
			return fmt.Errorf("CCS (%s): %w", m, err)
		}
		if err := t.AddRun("CCS ("+m+")", ids, oods, conv, nil); err != nil {
			return err
		}
	}
	if o.Train != "" {
		tr, err := bundle.Read(o.Train)
		if err != nil {
			return err
		}
		var cl *ood.Classifier
		if o.Classifier != "" {
			if cl, err = ood.ReadClassifier(o.Classifier); err != nil {
				return err
			}
		}
		train := ood.SampleOf(tr)
		for _, det := range ood.Baselines(cl) {
			if c, ok := det.(*ood.CIDER); ok {
				c.Epochs, c.Seed = o.CiderEpochs, o.Seed
			}
			var ids []float64
			var oods [][]float64
			err := det.Fit(train)
			if err == nil {
				ids, oods, err = scoreAll(func(b *bundle.Bundle) ([]float64, error) { return det.Score(ood.SampleOf(b)) })
			}
			if err := t.AddRun(det.Name(), ids, oods, conv, err); err != nil {
				return fmt.Errorf("%s: %w", det.Name(), err)
			}
		}
	}
	if o.JSON {
		return writeJSON(out.stdout, t)
	}
	return t.WriteText(out.stdout)
}
