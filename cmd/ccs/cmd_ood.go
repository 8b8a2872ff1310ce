package main

import (
	"context"
	"flag"
	"fmt"
	"math"
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
			fs.StringVar(&o.ID, "id", "", "in-distribution test `file` (.npz: a bundle, or \"embeddings\"/\"anchors\" with optional labels, logits, activations; or an .npy of embeddings); the batch mode draws negatives among its inputs when it stores none")
			fs.Var((*listFlag)(&o.OOD), "ood", "OOD `[NAME=]FILE` (.npz or .npy, as -id); repeat for several")
			fs.StringVar(&o.Train, "train", "", "training features `file` (as -id: features, labels, logits, activations) that fit the baselines; slow: CIDER trains for -cider-epochs over it")
			fs.StringVar(&o.Classifier, "classifier", "", "the encoder's last layer, `FILE.npz` with weight (C, D) and bias (C,), for ViM")
			fs.StringVar(&o.OODCal, "ood-cal", "", "held-out in-distribution `file` (as -id) calibrating the baselines' conformal tests (the set's own is stored with it)")
			fs.StringVar(&o.Mode, "mode", "", "CCS score `mode`: conformal (the per-input score with its certified test), batch (negatives from the evaluated file, the paper's protocol), reference (the paper's score against the set's pool), both (batch and reference) or all; default: conformal when the set has an OOD calibration, else both when it has a pool, else batch")
			fs.StringVar(&o.FPR, "fpr", "id-positive", "FPR95 `convention`: id-positive (the paper's text) or ood-positive (OpenOOD)")
			fs.Float64Var(&o.AlphaOOD, "alpha-ood", ood.DefaultAlpha, "the conformal tests' `level`: an in-distribution input is flagged with probability at most α_ood")
			fs.Float64Var(&o.Delta, "delta", 0, "make the conformal tests calibration-conditional: with probability ≥ 1−`δ` over the calibration draw the false-alarm rate is ≤ α_ood, δ below 0.5 (0: marginal)")
			fs.BoolVar(&o.Simultaneous, "simultaneous", false, "with -delta, correct the p-values as Bates et al. (2023), valid at every level at once, instead of exactly at α_ood (needs more calibration inputs, flags fewer)")
			fs.Float64Var(&o.FDR, "fdr", 0, "also flag each OOD file mixed with the ID inputs as one batch by Benjamini–Hochberg at false discovery rate `Q` (0: no)")
			fs.IntVar(&o.CiderEpochs, "cider-epochs", 100, "CIDER's training epochs (the slow part: minutes for 60 000 features); 0 leaves CIDER out")
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

func runOOD(ctx context.Context, o oodOptions, out *output) error {
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
	if o.CiderEpochs < 0 {
		return usagef("ood: -cider-epochs %d: want at least 1, or 0 to leave CIDER out", o.CiderEpochs)
	}
	if (o.Classifier != "" || o.OODCal != "") && o.Train == "" {
		return usagef("ood: -classifier and -ood-cal are for the baselines: give -train too")
	}
	test := ood.Test{Alpha: o.AlphaOOD, Delta: o.Delta, Simultaneous: o.Simultaneous}
	if o.Simultaneous && o.Delta == 0 {
		return usagef("ood: -simultaneous needs -delta")
	}
	if err := test.Check(1 << 40); err != nil {
		return usagef("ood: %s", strings.TrimPrefix(err.Error(), "ood: "))
	}
	if o.FDR != 0 && !(o.FDR > 0 && o.FDR < 1) {
		return usagef("ood: -fdr %v: want 0 < Q < 1 (or 0: none)", o.FDR)
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	if err := set.OneThreshold(); err != nil {
		return fmt.Errorf("%s: %w", o.Set, err)
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
			// Without a pool or its calibration there is no per-input
			// test: say what the table is, and how to get one.
			out.warn(fmt.Sprintf("%s has no reference pool or OOD calibration: only the paper's batch score (how tightly each batch clusters), which certifies no input; for a per-input test with a false-alarm rate, calibrate with -reference N -ood-cal HELD-OUT-ID.npz", o.Set))
		}
	}
	ms, ok := oodModes[mode]
	if !ok {
		return usagef("ood: -mode %q: want conformal, batch, reference, both or all", mode)
	}
	if slices.Contains(ms, "reference") && set.Reference == nil {
		return fmt.Errorf("%s: no reference pool for -mode %s (calibrate with -reference N)", o.Set, mode)
	}
	var near *ood.Nearest
	if slices.Contains(ms, "conformal") {
		cc, err := ood.NewConformal(set, test)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Set, err)
		}
		near = cc.Score
	}
	id, err := readFeaturesFor(out, o.ID, set)
	if err != nil {
		return err
	}
	if w := set.OODTestWarning(id); w != "" && (near != nil || o.OODCal != "") {
		out.warn(o.ID + ": " + w)
	}
	t := &experiment.OODTable{Title: "OOD detection", Runs: 1,
		Config: fmt.Sprintf("set %s, ID %s, FPR95 %v", o.Set, o.ID, conv)}
	if near != nil || o.OODCal != "" {
		t.AlphaOOD, t.Guarantee, t.FDRLevel = test.Alpha, test.String(), o.FDR
	}
	if c := set.OOD; c != nil && o.FDR > 0 && near != nil && 1/float64(c.N+1) > o.FDR {
		// Benjamini–Hochberg flags none when even the smallest p-value
		// the calibration can give is above Q.
		out.warn(fmt.Sprintf("-fdr %v: the set's OOD calibration has %d inputs, so the smallest p-value is 1/(n+1) = %.3g, above Q: nothing can be flagged (FDP and power read 0); calibrate on at least %d held-out inputs",
			o.FDR, c.N, 1/float64(c.N+1), int(math.Ceil(1/o.FDR))-1))
	}
	ev := ood.Evaluation{ID: id, Convention: conv, Test: test, FDR: o.FDR}
	for _, p := range o.OOD {
		name, file, ok := strings.Cut(p, "=")
		if !ok {
			name, file = strings.TrimSuffix(filepath.Base(p), ".npz"), p
		}
		b, err := readFeaturesFor(out, file, set)
		if err != nil {
			return err
		}
		ev.OOD, ev.Names = append(ev.OOD, b), append(ev.Names, name)
		t.Sets = append(t.Sets, name)
	}
	for _, m := range ms {
		mode, err := ood.ParseMode(m)
		if err != nil {
			return err
		}
		score, err := ood.CCS(set, mode, near)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Set, err)
		}
		name := "CCS (" + m + ")"
		var cal []float64 // the per-input score's calibration, stored with the set
		if m == "conformal" {
			name = fmt.Sprintf("CCS (per input, %s nearest of %d)", experiment.Ordinal(near.K()), set.Reference.N)
			cal = set.OOD.Scores
		}
		r, err := ev.Measure(ctx, score, cal)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := t.AddMeasured(name, r, nil); err != nil {
			return err
		}
	}
	if o.Train != "" {
		if err := runBaselines(ctx, o, out, set, t, ev); err != nil {
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
func runBaselines(ctx context.Context, o oodOptions, out *output, set *conformal.Set, t *experiment.OODTable, ev ood.Evaluation) error {
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
	// The baselines' inputs against their training features: the logits
	// (and activations) of one classifier, and the calibration inputs
	// held out from what the baselines were fitted on.
	inputs := append([]*bundle.Bundle{ev.ID, calB}, ev.OOD...)
	names := append([]string{o.ID, o.OODCal}, ev.Names...)
	for i, b := range inputs {
		switch {
		case b == nil:
		case b.C > 0 && tr.C > 0 && b.C != tr.C:
			return fmt.Errorf("%s: logits of %d classes, and -train %s has %d: the baselines read one classifier's logits", names[i], b.C, o.Train, tr.C)
		case b.A > 0 && tr.A > 0 && b.A != tr.A:
			return fmt.Errorf("%s: %d activation summaries a row, and -train %s has %d: the baselines read one encoder's", names[i], b.A, o.Train, tr.A)
		}
	}
	seen := bundle.NewRowFilter(tr)
	if calB != nil {
		if m := seen.Count(calB); m >= 2 && 10*m >= calB.N {
			return fmt.Errorf("%s: %d of its %d inputs are rows of -train %s, which the baselines are fitted on: their scores are not a new input's, so a false-alarm rate calibrated on them would not hold; give held-out in-distribution inputs (ccs bundle's ood-cal.npz)", o.OODCal, m, calB.N, o.Train)
		}
	}
	if m := seen.Count(ev.ID); m >= 2 && 10*m >= ev.ID.N {
		out.warn(fmt.Sprintf("%s: %d of its %d inputs are rows of -train %s, which the baselines are fitted on: the baselines' figures on them are optimistic, no test; give in-distribution inputs held out from it (ccs bundle's test.npz)", o.ID, m, ev.ID.N, o.Train))
	}
	var cl *ood.Classifier
	if o.Classifier != "" {
		if cl, err = ood.ReadClassifier(o.Classifier); err != nil {
			return err
		}
	}
	train := ood.SampleOf(tr)
	bar := newProgress(out, o.Quiet, "CIDER epoch")
	for _, det := range ood.Baselines(ood.BaselineOptions{Classifier: cl, Epochs: o.CiderEpochs, Seed: o.Seed,
		Progress: func(e, n int) { bar.step(e, n, "") }}) {
		var r *ood.Measured
		if _, ok := det.(*ood.CIDER); ok && o.CiderEpochs == 0 {
			if err := t.AddMeasured(det.Name(), nil, fmt.Errorf("%s: %w: left out (-cider-epochs 0)", det.Name(), ood.ErrUnavailable)); err != nil {
				return err
			}
			continue
		}
		err := ood.Fit(ctx, det, train)
		if err == nil {
			score := ood.DetectorScore(det)
			var cal []float64
			if calB != nil {
				cal, err = score(calB)
			}
			if err == nil {
				r, err = ev.Measure(ctx, score, cal)
			}
		}
		if err := t.AddMeasured(det.Name(), r, err); err != nil {
			return fmt.Errorf("%s: %w", det.Name(), err)
		}
	}
	return nil
}
