package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/ood"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func init() {
	register(&command{
		name:  "ood",
		args:  "-set SET.json -id FILE -ood [NAME=]FILE [-ood …] [-train FILE [-classifier FILE.npz]] [-mode batch|reference|both] [-fpr id-positive|ood-positive] [-json]",
		short: "score in-distribution and OOD bundles with a set's CCS OOD score (and, given training features, the eight baselines): AUROC and FPR95",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			setPath := fs.String("set", "", "calibrated set `file` (.json)")
			idPath := fs.String("id", "", "in-distribution bundle `file` (.npz): anchors, and negatives for the batch mode")
			var oodPaths listFlag
			fs.Var(&oodPaths, "ood", "OOD bundle `[NAME=]FILE` (.npz); repeat for several")
			trainPath := fs.String("train", "", "training bundle `file` whose anchors (features, labels, logits, activations) fit the baselines")
			clPath := fs.String("classifier", "", "the encoder's last layer, `FILE.npz` with weight (C, D) and bias (C,), for ViM")
			mode := fs.String("mode", "", "CCS score `mode`: batch (negatives from the evaluated bundle, the paper), reference (the set's reference pool) or both; default: both when the set has a pool")
			fpr := fs.String("fpr", "id-positive", "FPR95 `convention`: id-positive (the paper's text) or ood-positive (OpenOOD)")
			ciderEpochs := fs.Int("cider-epochs", 100, "CIDER's training epochs")
			seed := fs.Uint64("seed", 0, "CIDER's `seed`")
			asJSON := fs.Bool("json", false, "print JSON instead of the table")
			return func([]string) error {
				if err := required("ood", "set", *setPath, "id", *idPath); err != nil {
					return err
				}
				if len(oodPaths) == 0 {
					return usagef("ood: give at least one -ood FILE")
				}
				conv, err := ood.ParseConvention(*fpr)
				if err != nil {
					return usagef("ood: -fpr: %v", err)
				}
				if *ciderEpochs < 1 {
					return usagef("ood: -cider-epochs must be at least 1")
				}
				if *clPath != "" && *trainPath == "" {
					return usagef("ood: -classifier is for the baselines: give -train too")
				}
				set, err := conformal.Load(*setPath)
				if err != nil {
					return err
				}
				modes := map[string][]string{"batch": {"batch"}, "reference": {"reference"}, "both": {"batch", "reference"}}
				if *mode == "" {
					*mode = "batch"
					if set.Reference != nil {
						*mode = "both"
					}
				}
				ms, ok := modes[*mode]
				if !ok {
					return usagef("ood: -mode %q: want batch, reference or both", *mode)
				}
				if *mode != "batch" && set.Reference == nil {
					return fmt.Errorf("%s: no reference pool for -mode %s (calibrate with -reference N)", *setPath, *mode)
				}
				id, err := bundle.Read(*idPath)
				if err != nil {
					return err
				}
				t := &experiment.OODTable{Title: "OOD detection", Runs: 1,
					Config: fmt.Sprintf("set %s, ID %s, FPR95 %v", *setPath, *idPath, conv)}
				var oodBundles []*bundle.Bundle
				for _, p := range oodPaths {
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
						return nil, nil, fmt.Errorf("%s: %w", *idPath, err)
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
				if *trainPath != "" {
					tr, err := bundle.Read(*trainPath)
					if err != nil {
						return err
					}
					var cl *ood.Classifier
					if *clPath != "" {
						if cl, err = ood.ReadClassifier(*clPath); err != nil {
							return err
						}
					}
					train := ood.SampleOf(tr)
					for _, det := range ood.Baselines(cl) {
						if c, ok := det.(*ood.CIDER); ok {
							c.Epochs, c.Seed = *ciderEpochs, *seed
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
				if *asJSON {
					return writeJSON(out.stdout, t)
				}
				return t.WriteText(out.stdout)
			}
		},
	})
}
