package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/ood"
)

// oodOptions are ccs ood's inputs.
type oodOptions struct {
	Set, ID      string   // files
	OOD          []string // [NAME=]FILE
	Train        string   // fits the baselines
	Classifier   string   // the encoder's last layer, for ViM
	OODCal       string   // held-out ID inputs calibrating the baselines' conformal tests
	Mode         string   // conformal, batch, reference, both or all; "": the set's best
	FPR          string   // FPR95's convention
	AlphaOOD     float64  // the conformal tests' level
	Delta        float64  // calibration-conditional, when positive
	Simultaneous bool     // Bates et al.'s correction, valid at every level
	FDR          float64  // Benjamini–Hochberg level over each OOD set mixed with the ID inputs; 0: none
	CiderEpochs  int
	Seed         uint64 // CIDER's
	Quiet        bool
	JSON         bool
}

func oodCommand() *command {
	return newCommand("ood", "-set SET.json -id FILE -ood [NAME=]FILE [-ood …] [-train FILE [-classifier FILE.npz] [-ood-cal FILE]] [-mode conformal|batch|reference|both|all] [-alpha-ood 0.05] [-delta δ [-simultaneous]] [-fdr Q] [-fpr id-positive|ood-positive] [-json]",
		"score in-distribution and OOD inputs with a set's OOD scores (and, given training features, the eight baselines): AUROC, FPR95 and the conformal tests' alarm rates",
		func(fs *flag.FlagSet, o *oodOptions) func() error {
			fs.StringVar(&o.Set, "set", "", "calibrated set `file` (.json)")
			fs.StringVar(&o.ID, "id", "", "in-distribution test `file` (.npz: a bundle, or \"embeddings\"/\"anchors\" with optional labels, logits, activations); the batch mode needs its negatives")
			fs.Var((*listFlag)(&o.OOD), "ood", "OOD `[NAME=]FILE` (.npz, as -id); repeat for several")
			fs.StringVar(&o.Train, "train", "", "training features `file` (as -id: features, labels, logits, activations) that fit the baselines; slow: CIDER trains for -cider-epochs over it")
			fs.StringVar(&o.Classifier, "classifier", "", "the encoder's last layer, `FILE.npz` with weight (C, D) and bias (C,), for ViM")
			fs.StringVar(&o.OODCal, "ood-cal", "", "held-out in-distribution `file` (as -id) calibrating the baselines' conformal tests (the set's own is stored with it)")
			fs.StringVar(&o.Mode, "mode", "", "CCS score `mode`: conformal (the per-input score with its certified test), batch (negatives from the evaluated file, the paper's protocol), reference (the paper's score against the set's pool), both (batch and reference) or all; default: conformal when the set has an OOD calibration, else both when it has a pool, else batch")
			fs.StringVar(&o.FPR, "fpr", "id-positive", "FPR95 `convention`: id-positive (the paper's text) or ood-positive (OpenOOD)")
			fs.Float64Var(&o.AlphaOOD, "alpha-ood", 0.05, "the conformal tests' `level`: an in-distribution input is flagged with probability at most α_ood")
			fs.Float64Var(&o.Delta, "delta", 0, "make the conformal tests calibration-conditional: with probability ≥ 1−`δ` over the calibration draw the false-alarm rate is ≤ α_ood (0: marginal)")
			fs.BoolVar(&o.Simultaneous, "simultaneous", false, "with -delta, correct the p-values as Bates et al. (2023), valid at every level at once, instead of exactly at α_ood (needs more calibration inputs, flags fewer)")
			fs.Float64Var(&o.FDR, "fdr", 0, "also flag each OOD file mixed with the ID inputs as one batch by Benjamini–Hochberg at false discovery rate `Q` (0: no)")
			fs.IntVar(&o.CiderEpochs, "cider-epochs", 100, "CIDER's training epochs (the slow part: minutes for 60 000 features)")
			fs.Uint64Var(&o.Seed, "seed", 0, "CIDER's `seed`")
			fs.BoolVar(&o.Quiet, "quiet", false, "no progress on stderr")
			fs.BoolVar(&o.JSON, "json", false, "print JSON instead of the table")
			return nil
		}, runOOD)
}

// oodModes are the CCS rows each -mode prints.
var oodModes = map[string][]string{
	"conformal": {"conformal"},
	"batch":     {"batch"},
	"reference": {"reference"},
	"both":      {"batch", "reference"},
	"all":       {"batch", "reference", "conformal"},
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
	if (o.Classifier != "" || o.OODCal != "") && o.Train == "" {
		return usagef("ood: -classifier and -ood-cal are for the baselines: give -train too")
	}
	test := ood.Test{Alpha: o.AlphaOOD, Delta: o.Delta, Simultaneous: o.Simultaneous}
	if o.Simultaneous && o.Delta == 0 {
		return usagef("ood: -simultaneous needs -delta")
	}
	if err := test.Check(1 << 40); err != nil {
		return usagef("ood: -alpha-ood, -delta: %v", err)
	}
	if o.FDR != 0 && !(o.FDR > 0 && o.FDR < 1) {
		return usagef("ood: -fdr %v: want 0 < Q < 1 (or 0: none)", o.FDR)
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	if set.ClassConditional() {
		return fmt.Errorf("%s: %s takes sets with one threshold; a class-conditional set's membership needs each anchor's label", o.Set, "ood")
	}
	mode := o.Mode
	if mode == "" {
		switch {
		case set.OOD != nil:
			mode = "conformal"
		case set.Reference != nil:
			mode = "both"
		default:
			mode = "batch"
		}
	}
	ms, ok := oodModes[mode]
	if !ok {
		return usagef("ood: -mode %q: want conformal, batch, reference, both or all", mode)
	}
	if slices.Contains(ms, "reference") && set.Reference == nil {
		return fmt.Errorf("%s: no reference pool for -mode %s (calibrate with -reference N)", o.Set, mode)
	}
	var cc *ood.Conformal
	if slices.Contains(ms, "conformal") {
		if cc, err = ood.NewConformal(set, test); err != nil {
			return fmt.Errorf("%s: %w", o.Set, err)
		}
	}
	id, err := readFeaturesFor(out, o.ID, set)
	if err != nil {
		return err
	}
	t := &experiment.OODTable{Title: "OOD detection", Runs: 1,
		Config: fmt.Sprintf("set %s, ID %s, FPR95 %v", o.Set, o.ID, conv)}
	if cc != nil || o.OODCal != "" {
		t.AlphaOOD, t.Guarantee, t.FDRLevel = test.Alpha, test.String(), o.FDR
	}
	var oodFiles []*bundle.Bundle
	for _, p := range o.OOD {
		name, file, ok := strings.Cut(p, "=")
		if !ok {
			name, file = strings.TrimSuffix(filepath.Base(p), ".npz"), p
		}
		b, err := readFeaturesFor(out, file, set)
		if err != nil {
			return err
		}
		oodFiles = append(oodFiles, b)
		t.Sets = append(t.Sets, name)
	}
	scoreAll := func(f func(b *bundle.Bundle) ([]float64, error)) ([]float64, [][]float64, error) {
		ids, err := f(id)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", o.ID, err)
		}
		var scores [][]float64
		for j, b := range oodFiles {
			s, err := f(b)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", t.Sets[j], err)
			}
			scores = append(scores, s)
		}
		return ids, scores, nil
	}
	// alarms tests the scores against a calibration: the rates, and
	// Benjamini–Hochberg over each OOD file mixed with the ID inputs.
	alarms := func(cal *ood.Calibration, ids []float64, oods [][]float64) (*experiment.Alarms, error) {
		if err := test.Check(cal.N()); err != nil {
			return nil, err
		}
		rate := func(s []float64) float64 {
			return share(test.Flags(test.PValues(cal, s)))
		}
		a := &experiment.Alarms{FAR: rate(ids)}
		for _, s := range oods {
			a.TAR = append(a.TAR, rate(s))
		}
		if o.FDR > 0 {
			// On the marginal p-values, whose positive dependence (PRDS)
			// BH's guarantee rests on.
			idP := cal.PValues(ids)
			for _, s := range oods {
				fdp, power, err := bhMixed(idP, cal.PValues(s), o.FDR)
				if err != nil {
					return nil, err
				}
				a.FDP, a.Power = append(a.FDP, fdp), append(a.Power, power)
			}
		}
		return a, nil
	}
	for _, m := range ms {
		var f func(b *bundle.Bundle) ([]float64, error)
		switch m {
		case "batch":
			f = func(b *bundle.Bundle) ([]float64, error) { return ood.CCSBatch(set, b) }
		case "reference":
			f = func(b *bundle.Bundle) ([]float64, error) { return ood.CCSReference(set, b.Anchors) }
		case "conformal":
			f = func(b *bundle.Bundle) ([]float64, error) { return cc.Score.Scores(b.Anchors) }
		}
		ids, oods, err := scoreAll(f)
		if err != nil {
			return fmt.Errorf("CCS (%s): %w", m, err)
		}
		var a *experiment.Alarms
		name := "CCS (" + m + ")"
		if m == "conformal" {
			name = fmt.Sprintf("CCS (per input, %d-th nearest of %d)", cc.Score.K(), set.Reference.N)
			if a, err = alarms(cc.Cal, ids, oods); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if err := t.AddTest(name, ids, oods, conv, a, nil); err != nil {
			return err
		}
	}
	if o.Train != "" {
		if err := runBaselines(o, out, set, t, scoreAll, alarms, conv); err != nil {
			return err
		}
	}
	if o.JSON {
		return writeDocument(out, "ood-detection", t)
	}
	return t.WriteText(out.stdout)
}

// runBaselines fits the baselines on -train and adds their rows, with their
// conformal tests calibrated on -ood-cal when it is given.
func runBaselines(o oodOptions, out *output, set *conformal.Set, t *experiment.OODTable,
	scoreAll func(func(*bundle.Bundle) ([]float64, error)) ([]float64, [][]float64, error),
	alarms func(*ood.Calibration, []float64, [][]float64) (*experiment.Alarms, error), conv ood.Convention) error {
	tr, err := readFeaturesFor(out, o.Train, set)
	if err != nil {
		return err
	}
	var calB *bundle.Bundle
	if o.OODCal != "" {
		if calB, err = readFeaturesFor(out, o.OODCal, set); err != nil {
			return err
		}
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
			bar := newProgress(out, o.Quiet, "CIDER epoch")
			c.Progress = func(e, n int) { bar.step(e, n, "") }
		}
		var ids []float64
		var oods [][]float64
		var a *experiment.Alarms
		err := det.Fit(train)
		if err == nil {
			ids, oods, err = scoreAll(func(b *bundle.Bundle) ([]float64, error) { return det.Score(ood.SampleOf(b)) })
		}
		if err == nil && calB != nil {
			var cs []float64
			var cal *ood.Calibration
			if cs, err = det.Score(ood.SampleOf(calB)); err == nil {
				if cal, err = ood.NewCalibration(cs); err == nil {
					a, err = alarms(cal, ids, oods)
				}
			}
		}
		if err := t.AddTest(det.Name(), ids, oods, conv, a, err); err != nil {
			return fmt.Errorf("%s: %w", det.Name(), err)
		}
	}
	return nil
}

// share is the fraction of true values.
func share(flags []bool) float64 {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return float64(n) / float64(len(flags))
}

// bhMixed runs Benjamini–Hochberg at level q over the p-values of ID and
// OOD inputs as one batch and returns the share of ID inputs among the
// flagged (the false discovery proportion) and the share of OOD inputs
// flagged.
func bhMixed(id, oodP []float64, q float64) (fdp, power float64, err error) {
	flagged, err := ood.BenjaminiHochberg(append(slices.Clone(id), oodP...), q)
	if err != nil {
		return 0, 0, err
	}
	falses, trues := 0, 0
	for _, i := range flagged {
		if i < len(id) {
			falses++
		} else {
			trues++
		}
	}
	if len(flagged) > 0 {
		fdp = float64(falses) / float64(len(flagged))
	}
	return fdp, float64(trues) / float64(len(oodP)), nil
}
