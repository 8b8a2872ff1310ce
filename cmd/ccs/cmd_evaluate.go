package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/retrieve"
)

// evaluateOptions are ccs evaluate's inputs.
type evaluateOptions struct {
	Set, Test string // files
	// Trials, Embeddings and IDs: a speaker-verification trial list, the
	// embeddings of its utterances and their ids (runEvaluateTrials).
	Trials, Embeddings, IDs string
	PerClass                bool
	Unlabeled               string // error or marginal
	JSON                    bool
	Out                     string // the JSON document's file, as -json prints it
	sizeFlags
	// Baseline lists the certified top-k baselines to measure beside the
	// set on the -db collection (topk, topk-l2), calibrated on Cal, the
	// set's calibration bundle.
	Baseline, Cal string
}

// baselines parses -baseline: its distances, in the order given, each
// once.
func (o evaluateOptions) baselines() ([]string, error) {
	if o.Baseline == "" {
		if o.Cal != "" {
			return nil, usagef("evaluate: -cal is the set's calibration bundle for -baseline; give -baseline topk")
		}
		return nil, nil
	}
	var out []string
	for _, v := range strings.Split(o.Baseline, ",") {
		d, ok := eval.BaselineDistance(strings.TrimSpace(v))
		if !ok {
			return nil, usagef("evaluate: -baseline %q: want topk (by the set's distance), topk-l2 (by the Euclidean one) or both, comma-separated", v)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	switch {
	case o.DB == "":
		return nil, usagef("evaluate: -baseline counts the nearest items of a collection: give -db")
	case o.Cal == "":
		return nil, usagef("evaluate: -baseline calibrates k on the set's own calibration units: give -cal, the calibration bundle the set was calibrated on")
	}
	return out, nil
}

// sizeFlags are -db and -size-anchors (ccs evaluate's and ccs compare's):
// DB, when given, is a collection whose items the sets hold around the
// first SizeAnchors test anchors are counted (eval.SetSizes).
type sizeFlags struct {
	DB          string
	SizeAnchors int
	anchorsSet  bool // -size-anchors was given
}

// add defines the two flags on fs, -db with its usage dbUsage.
func (z *sizeFlags) add(fs *flag.FlagSet, dbUsage, anchorsUsage string) {
	fs.StringVar(&z.DB, "db", "", dbUsage)
	fs.IntVar(&z.SizeAnchors, "size-anchors", eval.DefaultSizeAnchors, anchorsUsage)
}

// visit notes a flag given on the command line (flag.FlagSet.Visit's).
func (z *sizeFlags) visit(f *flag.Flag) {
	z.anchorsSet = z.anchorsSet || f.Name == "size-anchors"
}

// check refuses what the command named cmd cannot do with the flags.
func (z *sizeFlags) check(cmd string) error {
	switch {
	case z.SizeAnchors < 0:
		return usagef("%s: -size-anchors %d: want ≥ 0 (0: all)", cmd, z.SizeAnchors)
	case z.DB == "" && z.anchorsSet:
		return usagef("%s: -size-anchors counts items of the -db collection; give -db", cmd)
	}
	return nil
}

func evaluateCommand() *command {
	return newCommand("evaluate", "-set SET.json (-test FILE [-per-class] [-unlabeled error|marginal] [-db FILE|URL [-size-anchors N] [-baseline topk[,topk-l2] -cal FILE]] | -trials FILE -embeddings FILE -ids FILE [-unlabeled error|marginal]) [-json] [-out FILE]",
		"measure a fitted set's coverage, exclusion and LogVol/d on a test bundle, or its misses and false acceptances on a speaker-verification trial list",
		func(fs *flag.FlagSet, o *evaluateOptions) func() error {
			fs.StringVar(&o.Set, "set", "", "fitted set `file` (.json)")
			fs.StringVar(&o.Test, "test", "", "test bundle `file` (.npz)")
			fs.StringVar(&o.Trials, "trials", "", "a speaker-verification trial list `FILE` instead of -test: target 1 or 0, enrolment, test a line (VoxCeleb's), or enrolment, test, target|nontarget (Kaldi's); with -embeddings and -ids")
			fs.StringVar(&o.Embeddings, "embeddings", "", "with -trials: the utterances' embeddings `FILE`, as ccs bundle reads them")
			fs.StringVar(&o.IDs, "ids", "", "with -trials: the utterances' ids `FILE` (utt.txt: one path a line, in the embeddings' row order), as the trial list names them")
			fs.BoolVar(&o.PerClass, "per-class", false, "also coverage and exclusion per class of the test bundle's labels, and the worst class (several labels a row: each label's coverage of the positives that share it)")
			fs.StringVar(&o.Unlabeled, "unlabeled", "error", "a class-conditional set on a test bundle without labels, or on a trial list: error, or marginal (judge every anchor with the threshold over all classes, which has no class guarantee)")
			o.sizeFlags.add(fs, "also count the items of this collection inside the set around test anchors (a class-conditional set's at each anchor's class's threshold) — what a retrieval returns, and what coverage costs on your corpus: a `file` or ClickHouse table, as ccs retrieve's -db",
				"count around the test bundle's first `N` anchors (0: all)")
			fs.StringVar(&o.Baseline, "baseline", "", "with -db: also a certified top-k beside the set, k calibrated on the set's own calibration units (-cal) at its α (and δ): `topk` ranks the collection by the set's distance, topk-l2 by the Euclidean one; comma-separated for both")
			fs.StringVar(&o.Cal, "cal", "", "with -baseline: the calibration bundle `file` the set was calibrated on (its digest is checked)")
			fs.BoolVar(&o.JSON, "json", false, "print JSON instead of text")
			fs.StringVar(&o.Out, "out", "", outUsage)
			return func() error {
				fs.Visit(o.sizeFlags.visit)
				return nil
			}
		}, runEvaluate)
}

func runEvaluate(ctx context.Context, o evaluateOptions, out *output) error {
	if o.Unlabeled != "" && o.Unlabeled != "error" && o.Unlabeled != "marginal" { // a test bundle's or a trial list's
		return usagef("evaluate: -unlabeled %q: want error or marginal", o.Unlabeled)
	}
	if err := checkOut("evaluate", "evaluate", o.Out); err != nil {
		return err
	}
	if o.Trials != "" || o.Embeddings != "" || o.IDs != "" {
		return runEvaluateTrials(o, out)
	}
	if err := required("evaluate", "set", o.Set, "test", o.Test); err != nil {
		return err
	}
	if err := o.sizeFlags.check("evaluate"); err != nil {
		return err
	}
	distances, err := o.baselines()
	if err != nil {
		return err
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	test, err := readBundleFor(out, o.Test, set)
	if err != nil {
		return err
	}
	// A class-conditional set judges each anchor by its class: match the
	// test bundle's classes to the set's by name, not by number.
	names := bundle.ManifestLabelNames(o.Test, test)
	test, names, note, err := experiment.ClassesByName(set, test, names)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", o.Set, o.Test, err)
	}
	if note != "" {
		fmt.Fprintf(out.stderr, "note: %s: %s\n", o.Test, note)
	}
	byNumber := note != "" // the classes matched by number
	if err := set.CheckBundleNorms(test); err != nil {
		return fmt.Errorf("%s: %w", o.Test, err)
	}
	// What this reading of the set must be told: on stderr, and in the
	// JSON document's warnings beside the set's own.
	var situational []string
	if w := set.OwnSplitWarning(test, false); w != "" {
		situational = append(situational, o.Test+": "+w)
		out.warn(o.Test + ": " + w)
	}
	// A set for one class's anchors (calibrate -class) is judged on the
	// test anchors of that class.
	var warn string
	test, note, warn, err = experiment.OfSetClass(set, test, names)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", o.Set, o.Test, err)
	}
	if note != "" {
		fmt.Fprintf(out.stderr, "note: %s: %s\n", o.Test, note)
	}
	if warn != "" {
		situational = append(situational, o.Test+": "+warn)
		out.warn(o.Test + ": " + warn)
	}
	if set.ClassConditional() && test.Labels == nil {
		if o.Unlabeled != "marginal" {
			return fmt.Errorf("%s on %s: %w: the test bundle has no labels (-unlabeled marginal judges every anchor with the threshold over all classes)", o.Set, o.Test, conformal.ErrNoLabel)
		}
		w := "the test bundle has no labels: every anchor is judged with the threshold over all classes, which has no class-conditional guarantee"
		situational = append(situational, w)
		out.warn(w)
		set = set.OverAllClasses()
	}
	// A class-conditional set's size around an anchor is its class's
	// threshold's (setSizes); a top-k certified at its α would be
	// calibrated over all its units, for no class.
	if set.ClassConditional() && distances != nil {
		return usagef("evaluate: -baseline: %s is class-conditional, and a top-k certified beside it would be a class's (each class's own units, its own k); compare a set of one threshold (-calibration one or pac), or leave -baseline out for the class set's sizes", o.Set)
	}
	if l := bundle.ManifestOneLabelName(o.Test, test); l != "" {
		fmt.Fprintf(out.stderr, "note: %s: %s\n", o.Test, bundle.OneLabelNote(l))
	}
	if w := bundle.OneLabelMismatch(set.Calibration.OneLabel, bundle.ManifestOneLabelName(o.Test, test)); w != "" {
		out.warn(o.Test + ": " + w)
	}
	byLabel := o.PerClass && test.SeveralLabels() // several labels a row
	if o.PerClass && test.Labels == nil && !byLabel {
		if err := bundle.OneLabelPerClassError(bundle.ManifestOneLabelName(o.Test, test), "-per-class"); err != nil {
			return fmt.Errorf("%s: %w", o.Test, err)
		}
		return fmt.Errorf("%s: -per-class: the test bundle has no labels (%s)", o.Test, bundle.NoLabelsAdvice(test, "-per-class"))
	}
	var r eval.Result
	var classes []eval.ClassResult
	var labels []eval.LabelResult
	stop := heartbeat(out, fmt.Sprintf("evaluate: scoring %d test anchors' %d positives and %d negatives (a single-norm set at high d takes minutes: each pair through its d × d matrix)",
		test.N, test.N*test.K, test.N*test.KNeg), 10*time.Second, 30*time.Second)
	switch {
	case byLabel:
		r, labels, err = eval.WithLabelsContext(ctx, set, test)
	case o.PerClass:
		r, classes, err = eval.WithClassesContext(ctx, set, test)
	default:
		r, err = eval.EvaluateContext(ctx, set, test)
	}
	stop()
	if err != nil {
		return fmt.Errorf("%s on %s: %w", o.Set, o.Test, err)
	}
	var labelNames []string
	if byLabel {
		labelNames = bundle.ManifestLabelSetNames(o.Test, test)
	}
	// Whether the test anchors leave the set more often than chance allows.
	shift, w, err := experiment.CheckShift(set, test, o.Test)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", o.Set, o.Test, err)
	}
	if w != "" {
		if byNumber && set.ClassConditional() {
			// A test bundle numbered otherwise looks like a shift class
			// by class: each class judged by another's threshold.
			w += "; or, its classes having been matched by number (the note above), a test bundle numbered otherwise than the set's calibration bundle, each class judged by another's threshold: keep ccs bundle's manifest.json beside it"
		}
		situational = append(situational, w)
		out.warn(w)
	}
	if classes != nil && names == nil {
		names = set.ClassNames() // as calibrated on string labels
	}
	var sizes *eval.Sizes
	var classSizes []eval.ClassSizes
	var baselines []eval.TopK
	if o.DB != "" {
		if sizes, classSizes, baselines, err = setSizes(ctx, o, distances, set, test, names, out); err != nil {
			return err
		}
	}
	// Whether a class falls short of 1 − α beyond chance under the one
	// threshold of a marginal or PAC set.
	var classChecks []conformal.ClassCheck
	if classes != nil {
		var w string
		if classChecks, w, err = experiment.ClassShortfalls(set, test, names, o.Test); err != nil {
			return fmt.Errorf("%s on %s: %w", o.Set, o.Test, err)
		}
		if w != "" {
			situational = append(situational, w)
			out.warn(w)
		}
	}
	// Ctrl-C during the checks after the scores: no result, written or
	// printed.
	if err := ctx.Err(); err != nil {
		return err
	}
	negativesAre := bundle.ManifestNegatives(o.Test, test)
	if o.JSON || o.Out != "" {
		e := experiment.NewEvaluation(set, r, classes)
		e.Exchangeability, e.NegativesAre, e.ClassChecks = shift, negativesAre, classChecks
		if classes != nil { // the names of the per-class rows, as Python's
			e.Name(names)
		}
		if labels != nil {
			e.WithLabels(labels, labelNames)
		}
		if sizes != nil {
			e.Collection, e.Sizes, e.ClassSizes = o.DB, sizes, classSizes
		}
		if baselines != nil {
			e.Baselines, e.BaselineCalibration = baselines, o.Cal
		}
		e.Warnings = append(append([]string{}, situational...), e.Warnings...)
		if err := saveDocument(out, "evaluate", "evaluate", e, o.JSON, o.Out); err != nil || o.JSON {
			return err
		}
	}
	name := func(l int64) string { return experiment.ClassName(names, l) }
	fmt.Fprintf(out.stdout, "set        %s\n", describe(set))
	distinct := ""
	if n := test.DistinctPositives(); n < r.Positives {
		distinct = fmt.Sprintf(" (%d distinct: its anchors repeat their few positives, -allow-fewer, and weigh them more)", n)
	}
	// The split's name where it is one the set has seen (warned of
	// above): its figures are no test's.
	of := "test"
	if role := set.OwnSplit(test); role != "" {
		of = role + "-split"
	}
	fmt.Fprintf(out.stdout, "coverage   %s of %d %s positives%s\n", experiment.Percent(r.Coverage), r.Positives, of, distinct)
	if math.IsNaN(r.Exclusion) {
		fmt.Fprintf(out.stdout, "exclusion  n/a (the test bundle has no negatives)\n")
	} else {
		are := ""
		if negativesAre != "" {
			are = " (the manifest's: " + negativesAre + ")"
		}
		fmt.Fprintf(out.stdout, "exclusion  %s of %d %s negatives%s\n", experiment.Percent(r.Exclusion), r.Negatives, of, are)
	}
	if shift != nil {
		fmt.Fprintf(out.stdout, "check      %s\n", experiment.ShiftText(shift, of))
	}
	fmt.Fprintf(out.stdout, "LogVol/d   %.4g\n", r.LogVolPerDim)
	if sizes != nil {
		fmt.Fprintf(out.stdout, "set size   %s\n", experiment.SetSizeText(o.DB, *sizes, set.ClassConditional()))
	}
	fmt.Fprint(out.stdout, experiment.BaselinesText(baselines, o.Cal))
	if classes != nil {
		grid := [][]string{{"class", "anchors", "threshold", "coverage", "exclusion"}}
		for _, c := range classes {
			grid = append(grid, []string{name(c.Label), fmt.Sprint(c.Anchors), fmt.Sprintf("%.6g", c.Threshold),
				experiment.Percent(c.Coverage), experiment.Percent(c.Exclusion)})
		}
		fmt.Fprintf(out.stdout, "\n%s", experiment.Grid(grid))
		fmt.Fprintf(out.stdout, "\nworst class %s\n", experiment.WorstClassText(classes, names, set.Alpha))
	}
	if classSizes != nil {
		fmt.Fprintf(out.stdout, "\n%s", experiment.ClassSizesText(sizes.Anchors, classSizes))
	}
	if labels != nil {
		labelName := func(l int64) string { return experiment.ClassName(labelNames, l) }
		grid := [][]string{{"label", "anchors", "positives sharing it", "coverage"}}
		for _, l := range labels {
			grid = append(grid, []string{labelName(l.Label), fmt.Sprint(l.Anchors), fmt.Sprint(l.Positives), experiment.Percent(l.Coverage)})
		}
		fmt.Fprintf(out.stdout, "\n%s", experiment.Grid(grid))
		fmt.Fprintf(out.stdout, "\nworst label %s\n", experiment.WorstLabelText(labels, labelName, set.Alpha))
	}
	wroteOut(out, o.Out)
	for _, w := range set.Warnings() {
		out.warn(w)
	}
	return nil
}

// describe is a one-line account of a set.
func describe(s *conformal.Set) string {
	c := s.Calibration
	mode := c.Mode.String() + " calibration"
	if c.Mode == conformal.Class {
		// The classes' thresholds decide; the one over all classes does
		// not, and is shown last.
		lo, hi, inf := math.Inf(1), math.Inf(-1), 0
		for _, k := range s.Classes {
			if math.IsInf(k.Threshold, 1) {
				inf++
			} else {
				lo, hi = min(lo, k.Threshold), max(hi, k.Threshold)
			}
		}
		th := fmt.Sprintf("thresholds %.6g to %.6g", lo, hi)
		switch {
		case inf == len(s.Classes):
			th = "every class's threshold +Inf (the whole space)"
		case lo == hi:
			th = fmt.Sprintf("threshold %.6g", lo)
		}
		if inf > 0 && inf < len(s.Classes) {
			th += fmt.Sprintf(", %d of the %d classes' +Inf (the whole space)", inf, len(s.Classes))
		}
		pac := ""
		if c.Delta > 0 {
			pac = fmt.Sprintf(", PAC per class at δ=%v", c.Delta)
		}
		all := s.OverAllClasses().Calibration // the threshold over all classes' own units
		return fmt.Sprintf("%v set, d=%d, α=%v, class-conditional calibration of %d classes%s: %s (the threshold over all classes, %.6g, rank %d of n=%d, decides nothing)",
			geometry.Describe(s.Geometry), s.Geometry.Dim(), s.Alpha, len(s.Classes), pac, th, s.Threshold, all.Rank, all.N)
	}
	if c.Mode == conformal.PAC {
		mode = fmt.Sprintf("pac calibration, δ=%v: coverage ≥ 1−α with probability ≥ 1−δ over the calibration draw", c.Delta)
	}
	if c.Class != nil {
		mode += fmt.Sprintf(" on %v's anchors alone", c.Class)
	}
	units := ""
	if c.Pairs {
		units = " disjoint pairs" // the bundle's positives are its own anchors
	}
	return fmt.Sprintf("%v set, d=%d, α=%v, threshold %.6g (rank %d of n=%d%s, %s)",
		geometry.Describe(s.Geometry), s.Geometry.Dim(), s.Alpha, s.Threshold, c.Rank, c.N, units, mode)
}

// setSizes opens the -db collection and counts the items inside the set
// around the first -size-anchors test anchors: overall, and with
// -per-class on a labelled test bundle, class by class; and measures the
// -baseline top-k baselines on the same anchors.
func setSizes(ctx context.Context, o evaluateOptions, distances []string, set *conformal.Set, test *bundle.Bundle, names []string, out *output) (*eval.Sizes, []eval.ClassSizes, []eval.TopK, error) {
	var cal *bundle.Bundle
	if distances != nil { // before the collection: its scans take long
		if set.Calibration.Anchors == "" {
			return nil, nil, nil, fmt.Errorf("%s: -baseline: %w", o.Set, eval.ErrNoCalibrationSplit)
		}
		b, err := readBundleFor(out, o.Cal, set)
		if err != nil {
			return nil, nil, nil, err
		}
		var note string
		if cal, note, err = experiment.CalibrationSplit(set, b); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: -cal %s: %w", o.Set, o.Cal, err)
		}
		if note != "" {
			fmt.Fprintf(out.stderr, "note: %s: %s\n", o.Cal, note)
		}
	}
	store, err := retrieve.Open(ctx, o.DB)
	if err != nil {
		return nil, nil, nil, err
	}
	defer store.Close()
	noteStore(out, o.DB, store)
	n, err := store.Len(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := set.CheckDim(o.DB, n, store.Dim()); err != nil {
		return nil, nil, nil, err
	}
	if c, ok := store.(*retrieve.Collection); ok && set.Calibration.UnitNorm {
		if w := retrieve.UnitNormWarning(o.DB, c); w != "" {
			out.warn(w) // its rows fall outside every set (ccs retrieve says so too)
		}
	}
	m := o.SizeAnchors
	if m == 0 || m > test.N {
		m = test.N
	}
	// Progress once it has taken 10 seconds: a large collection's scans,
	// a second or more each on 2 cores at 10⁷ items.
	type stageBar struct {
		bar  *progress
		what string
	}
	bars := map[string]stageBar{}
	step := func(stage string, done, total int) {
		b, ok := bars[stage]
		if !ok {
			unit, what := "anchor", "set sizes on "+o.DB
			if _, ok := store.(*retrieve.Collection); ok {
				unit = "chunk" // one pass for every anchor (eval.SetSizes)
			}
			if stage == experiment.StageBaselines {
				unit, what = "rank", "top-k baselines on "+o.DB
			}
			b = stageBar{newProgress(out, false, unit), what}
			b.bar.lazy = true
			bars[stage] = b
		}
		b.bar.step(done, total, b.what)
	}
	z, classes, baselines, err := experiment.OnCollection(ctx, set, test, store, experiment.CollectionOptions{
		Anchors: m, PerClass: o.PerClass, Names: names, Distances: distances, Cal: cal, Progress: step})
	if be := (*experiment.BaselineError)(nil); errors.As(err, &be) {
		return nil, nil, nil, fmt.Errorf("%s on %s, -baseline: %w", o.Set, o.DB, be.Err)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s on %s: %w", o.Set, o.DB, err)
	}
	return z, classes, baselines, nil
}
