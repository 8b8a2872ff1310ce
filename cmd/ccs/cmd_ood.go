package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
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
	ByClass      bool     // each OOD file one sample per label
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
	Out          string // the JSON document's file, as -json prints it
}

func oodCommand() *command {
	return newCommand("ood", "-set SET.json -id FILE [-ood [NAME=]FILE [-ood …] [-ood-by-class]] [-train FILE [-classifier FILE.npz] [-ood-cal FILE] [-cider-epochs 100] [-seed S]] [-mode conformal|batch|reference|both|all] [-alpha-ood 0.05] [-delta δ [-simultaneous]] [-fdr Q] [-fpr id-positive|ood-positive] [-json] [-out FILE] [-quiet]",
		"score in-distribution and OOD inputs with a set's OOD scores (and, given training features, the eight baselines): AUROC, FPR95 and the conformal tests' alarm rates",
		func(fs *flag.FlagSet, o *oodOptions) func() error {
			fs.StringVar(&o.Set, "set", "", "calibrated set `file` (.json)")
			fs.StringVar(&o.ID, "id", "", "in-distribution test `file` (.npz: a bundle, or \"embeddings\"/\"anchors\" with optional labels, logits, activations; or an .npy of embeddings); the batch mode draws negatives among its inputs when it stores none")
			fs.Var((*listFlag)(&o.OOD), "ood", "OOD `[NAME=]FILE` (.npz or .npy, as -id); repeat for several")
			fs.BoolVar(&o.ByClass, "ood-by-class", false, "judge each -ood file's labels apart: one OOD sample per label, named NAME:LABEL (ccs bundle's ood.npz of several -ood-classes: one column per fault type, say)")
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
			fs.StringVar(&o.Out, "out", "", outUsage)
			return nil
		}, runOOD)
}

func runOOD(ctx context.Context, o oodOptions, out *output) error {
	if err := required("ood", "set", o.Set, "id", o.ID); err != nil {
		return err
	}
	if _, ok := experiment.OODModes[o.Mode]; !ok && o.Mode != "" {
		return usagef("ood: -mode %q: want conformal, batch, reference, both or all", o.Mode)
	}
	if o.FDR != 0 && !(o.FDR > 0 && o.FDR < 1) {
		return usagef("ood: -fdr %v: want 0 < Q < 1 (or 0: none)", o.FDR)
	}
	if len(o.OOD) == 0 && o.Mode != "" && o.Mode != "conformal" {
		return usagef("ood: -mode %s without -ood: its rows are AUROC and FPR95 against an OOD sample; the -id inputs alone are checked by the per-input test (-mode conformal, or no -mode)", o.Mode)
	}
	if len(o.OOD) == 0 && o.FDR != 0 {
		return usagef("ood: -fdr without -ood: Benjamini–Hochberg's share of false discoveries is of inputs of both kinds; the -id inputs alone give the false-alarm rate")
	}
	if len(o.OOD) == 0 && o.ByClass {
		return usagef("ood: -ood-by-class splits an OOD sample by its labels: give one (-ood FILE)")
	}
	if len(o.OOD) == 0 && o.Train != "" {
		return usagef("ood: -train's baselines are measured against an OOD sample: give at least one -ood FILE (without -ood and -train, the per-input test checks the -id inputs alone: its false-alarm rate and the shift warning)")
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
	if err := checkOut("ood", "ood-detection", o.Out); err != nil {
		return err
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	if err := set.OneThreshold(); err != nil {
		return fmt.Errorf("%s: %w: %s", o.Set, err, conformal.OODOneThreshold)
	}
	d := experiment.OODDetection{Set: set, SetName: o.Set, IDName: o.ID, Mode: o.Mode, Test: test, FDR: o.FDR,
		Convention: conv, CiderEpochs: o.CiderEpochs, Seed: o.Seed}
	if d.ID, err = readFeaturesFor(out, o.ID, set); err != nil {
		return err
	}
	if err := set.CheckBundleNorms(d.ID); err != nil {
		return fmt.Errorf("%s: %w", o.ID, err)
	}
	d.LabelNames = bundle.ManifestLabelNames(o.ID, d.ID)
	d.IDBlocks = bundle.ManifestBlocks(o.ID, d.ID)
	named := map[string]string{} // a column's name: its -ood
	for _, p := range o.OOD {
		name, file, ok := strings.Cut(p, "=")
		if !ok {
			name, file = strings.TrimSuffix(filepath.Base(p), ".npz"), p
		}
		if first, ok := named[name]; ok {
			return usagef("ood: -ood %s and -ood %s both name a column %q: give each its own name (-ood NAME=FILE)", first, p, name)
		}
		named[name] = p
		if _, err := os.Stat(file); err != nil && strings.Contains(p, ",") {
			return usagef("ood: -ood %s: one file a flag: repeat -ood for each (-ood %s)", p, strings.Join(strings.Split(p, ","), " -ood "))
		}
		b, err := readFeaturesFor(out, file, set)
		if err != nil {
			return err
		}
		if err := set.CheckBundleNorms(b); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if !o.ByClass {
			d.OOD, d.OODNames = append(d.OOD, b), append(d.OODNames, name)
			continue
		}
		held, _ := bundle.ManifestSeveralLabelsOOD(file, b) // ood.npz of labels of several a row: the labels held out
		subs, names, err := experiment.OODByClass(b, name, bundle.ManifestLabelNames(file, b), held, file, "-ood-by-class")
		if err != nil {
			return err
		}
		d.OOD, d.OODNames = append(d.OOD, subs...), append(d.OODNames, names...)
	}
	if o.Train != "" {
		if d.Train, err = readFeaturesFor(out, o.Train, set); err != nil {
			return err
		}
		d.TrainName = "-train " + o.Train
		if o.OODCal != "" {
			if d.OODCal, err = readFeaturesFor(out, o.OODCal, set); err != nil {
				return err
			}
			d.OODCalName, d.OODCalLabelNames = o.OODCal, bundle.ManifestLabelNames(o.OODCal, d.OODCal)
		}
		if o.Classifier != "" {
			if d.Classifier, err = ood.ReadClassifier(o.Classifier); err != nil {
				return err
			}
			d.ClassifierName = "-classifier " + o.Classifier
		}
		bar := newProgress(out, o.Quiet, "CIDER epoch")
		d.Progress = func(e, n int) { bar.step(e, n, "") }
	}
	// Each CCS row's scoring and each of the baselines' searches: a line
	// off a terminal for a part that took a second or more.
	d.Steps = newParts(out, o.Quiet).step
	t, warnings, err := experiment.DetectOOD(ctx, d)
	for _, w := range warnings {
		out.warn(w)
	}
	if err != nil {
		return err
	}
	if times := t.Times(); times != "" && !o.Quiet && o.Train != "" {
		fmt.Fprintf(out.stderr, "ccs ood: each row's fit and scores took %s\n", times)
	}
	if err := saveDocument(out, "ood", "ood-detection", t, o.JSON, o.Out); err != nil || o.JSON {
		return err
	}
	// The warnings, said on stderr, stay in the document (-json, -out:
	// ccs report shows them under the table), not again in the text.
	shown := *t
	shown.Warnings = nil
	if err := shown.WriteText(out.stdout); err != nil {
		return err
	}
	wroteOut(out, o.Out)
	return nil
}
