package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
)

// coverageCheckOptions are ccs coverage-check's inputs.
type coverageCheckOptions struct {
	Set, Test   string
	Resplits    int
	CalFraction float64
	Seed        uint64
	PerClass    bool
	JSON        bool
	Out         string // the JSON document's file, as -json prints it
}

func coverageCheckCommand() *command {
	return newCommand("coverage-check", "-set SET.json -test FILE [-resplits 1000] [-cal-fraction 0.5] [-seed S] [-per-class] [-json] [-out FILE]",
		"resplit a bundle into calibration and test many times, recalibrate the set's geometry on each (its α, mode, δ) and print the distribution of coverage: the guarantee, draw by draw",
		func(fs *flag.FlagSet, o *coverageCheckOptions) func() error {
			fs.StringVar(&o.Set, "set", "", "calibrated set `file` (.json) whose geometry, α and calibration mode to use")
			fs.StringVar(&o.Test, "test", "", "bundle `file` (.npz) to resplit, disjoint from what chose the geometry")
			fs.IntVar(&o.Resplits, "resplits", 1000, "number of random resplits")
			fs.Float64Var(&o.CalFraction, "cal-fraction", 0.5, "share of the anchors that calibrate in each resplit")
			fs.Uint64Var(&o.Seed, "seed", 0, "`seed` of the resplits and of each anchor's calibration positive")
			fs.BoolVar(&o.PerClass, "per-class", false, "also each class's coverage over the resplits (the bundle's labels; with several labels a row, each label's); a class-conditional set is always resplit class by class")
			fs.BoolVar(&o.JSON, "json", false, "print JSON")
			fs.StringVar(&o.Out, "out", "", outUsage)
			return nil
		}, runCoverageCheck)
}

func runCoverageCheck(ctx context.Context, o coverageCheckOptions, out *output) error {
	if err := required("coverage-check", "set", o.Set, "test", o.Test); err != nil {
		return err
	}
	if o.Resplits < 1 {
		return usagef("coverage-check: -resplits %d: want at least 1", o.Resplits)
	}
	if !(o.CalFraction > 0 && o.CalFraction < 1) {
		return usagef("coverage-check: -cal-fraction %v: want 0 < f < 1", o.CalFraction)
	}
	if err := checkOut("coverage-check", "coverage-check", o.Out); err != nil {
		return err
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	if !set.Calibrated() {
		return fmt.Errorf("%s: %w", o.Set, conformal.ErrNotCalibrated)
	}
	b, err := readBundleFor(out, o.Test, set)
	if err != nil {
		return err
	}
	// Resplits recalibrate, so the calibration split is a fair sample for
	// them; the file's own threshold on it is not (said beside its line).
	warnOwnSplit(out, o.Test, set, b, true)
	b, names, note, err := experiment.ClassesByName(set, b, bundle.ManifestLabelNames(o.Test, b))
	if err != nil {
		return fmt.Errorf("coverage-check: %s on %s: %w", o.Set, o.Test, err)
	}
	if note != "" {
		fmt.Fprintf(out.stderr, "note: %s: %s\n", o.Test, note)
	}
	if b.SeveralLabels() { // several labels a row: their names
		names = bundle.ManifestLabelSetNames(o.Test, b)
	}
	if o.PerClass && b.Labels == nil && !set.ClassConditional() {
		if err := bundle.OneLabelPerClassError(bundle.ManifestOneLabelName(o.Test, b), "-per-class"); err != nil {
			return fmt.Errorf("coverage-check: %s on %s: %w", o.Set, o.Test, err)
		}
	}
	check, warnings, err := experiment.CheckCoverage(ctx, set, b, o.Resplits, o.CalFraction, o.Seed, o.PerClass, names)
	if err != nil {
		return fmt.Errorf("coverage-check: %s on %s: %w", o.Set, o.Test, err)
	}
	if w := experiment.BlocksResplits(o.Test, b, bundle.ManifestBlocks(o.Test, b)); w != "" {
		warnings, check.Warnings = append(warnings, w), append(check.Warnings, w)
	}
	for _, w := range warnings {
		out.warn(w)
	}
	if w := bundle.OneLabelMismatch(set.Calibration.OneLabel, bundle.ManifestOneLabelName(o.Test, b)); w != "" {
		out.warn(o.Test + ": " + w)
	}
	r, stored, role, classes := check.ResplitResult, check.Stored, check.Stored.Split, check.Classes
	if err := saveDocument(out, "coverage-check", "coverage-check", check, o.JSON, o.Out); err != nil || o.JSON {
		return err
	}
	pct := experiment.Percent
	fmt.Fprintf(out.stdout, "set        %s\n", describe(set))
	own := "(ccs evaluate)"
	if role == "calibration" {
		own = "(ccs evaluate; this is the set's calibration split: near 1−α by construction, no test)"
	}
	fmt.Fprintf(out.stdout, "this set   its own threshold covers %s of %s's %d positives %s\n", pct(stored.Coverage), o.Test, stored.Positives, own)
	fmt.Fprintf(out.stdout, "resplits   %d of %s, the geometry recalibrated on each: %d calibration anchors, %d held out (%s each)\n", r.Resplits, o.Test, r.NCal, r.NTest, plural(b.K, "positive", "positives"))
	fmt.Fprintf(out.stdout, "coverage   mean %s ± %s (one resplit's spread; the mean's standard error %s), 5th percentile %s\n", pct(r.Coverage.Mean), pct(r.Coverage.Std), pct(r.Coverage.SE()), pct(r.P05))
	if t := check.WholeSpaceText(); t != "" {
		fmt.Fprintf(out.stdout, "whole      %s\n", t)
	}
	fmt.Fprintf(out.stdout, "below 1−α  %s of the resplits cover less than %s\n", pct(r.BelowShare), pct(1-r.Alpha))
	switch {
	case r.ByBlocks():
		fmt.Fprintf(out.stdout, "blocks     halved block by block: %d blocks, each whole on one side but the one a cut divides\n", r.Blocks)
	case r.Blocks == 1:
		fmt.Fprintf(out.stdout, "blocks     halved block by block: 1 block, all anchors: a halving of the anchors uniformly at random, as row by row\n")
	case r.Blocks > 1:
		fmt.Fprintf(out.stdout, "blocks     halved block by block: %d blocks of one anchor each: a halving of the anchors uniformly at random, as row by row\n", r.Blocks)
	}
	switch mode := set.Calibration.Mode; {
	case mode != conformal.Pooled && r.ByBlocks():
		// The modes' guarantees are over anchors exchangeable one by one.
		fmt.Fprintf(out.stdout, "guarantee  %s (docs/your-data.md)\n", strings.ReplaceAll(experiment.BlocksGuarantee, "1 − α", "1−α"))
	case mode == conformal.PAC:
		fmt.Fprintf(out.stdout, "guarantee  training-conditional: at most δ = %s of calibration draws cover less than 1−α — their true coverage; the share above is of %d held-out anchors' estimates, whose own sampling error lifts it above δ for sets near 1−α (docs/calibration.md)\n", pct(r.Delta), r.NTest)
	case mode == conformal.Pooled:
		fmt.Fprintf(out.stdout, "guarantee  none: pooled calibration is approximate\n")
	case mode == conformal.Class:
		if r.Delta > 0 {
			fmt.Fprintf(out.stdout, "guarantee  class-conditional, PAC per class: at most δ = %s of calibration draws leave a class's true coverage below 1−α (below, class by class: shares of held-out estimates, lifted above δ by their sampling error)\n", pct(r.Delta))
			break
		}
		fmt.Fprintf(out.stdout, "guarantee  class-conditional: each class's mean coverage over calibration draws is ≥ 1−α (below, class by class)\n")
	default:
		if r.Band[1] == 0 { // not made by one positive per anchor
			break
		}
		// A tied resplit covers at most 1, α above 1 − α: an excess over the
		// band's upper end larger than the tied share of that, beyond the
		// Monte-Carlo error, is not the ties'.
		if lift := r.TiedShare * r.Alpha; r.TiedShare > 0 && r.Coverage.Mean > r.Band[1] && r.Coverage.Mean-r.Band[1] <= lift+2*r.Coverage.SE() { // the band's upper end contradicted by ties: say so
			fmt.Fprintf(out.stdout, "guarantee  marginal: the mean over calibration draws is ≥ %s; its upper end, %[3]s, holds for scores without ties, and %[2]s of these resplits' thresholds tie other calibration scores: a set covers every score equal to its threshold at once; a single draw may cover less (%[4]s of these resplits did; -calibration pac bounds each draw)\n",
				pct(r.Band[0]), pct(r.TiedShare), pct(r.Band[1]), pct(r.BelowShare))
			break
		}
		fmt.Fprintf(out.stdout, "guarantee  marginal: the mean over calibration draws lies in [%s, %s]; a single draw may cover less (%s of these resplits did; -calibration pac bounds each draw)\n",
			pct(r.Band[0]), pct(r.Band[1]), pct(r.BelowShare))
	}
	if check.LabelBundle {
		fmt.Fprintf(out.stdout, "note       %s\n", experiment.LabelBundleResplits)
	}
	if !math.IsNaN(r.Exclusion.Mean) {
		fmt.Fprintf(out.stdout, "exclusion  mean %s ± %s\n", pct(r.Exclusion.Mean), pct(r.Exclusion.Std))
	}
	if classes != nil {
		fmt.Fprintln(out.stdout)
		if err := check.WriteClasses(out.stdout); err != nil {
			return err
		}
	} else if check.Labels != nil {
		fmt.Fprintln(out.stdout)
		if err := check.WriteLabels(out.stdout); err != nil {
			return err
		}
	}
	wroteOut(out, o.Out)
	return nil
}
