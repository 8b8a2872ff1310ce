package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"

	"github.com/ccsets/ccs/baseline"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/retrieve"
)

// calibrateOptions are ccs calibrate's inputs: a baseline family or a
// fitted set, and the calibration.
type calibrateOptions struct {
	Geometry      string // ball or ellipsoid
	Fitted        string // a fitted set's file
	Cal, Out      string // files
	Alpha         float64
	Calibration   string  // one, pooled or pac
	Delta         float64 // pac's δ
	Seed          uint64
	Ridge         float64 // the ellipsoid's
	Fit           string  // the ellipsoid's Σ from this bundle instead of half of Cal
	Shift         bool    // centre the sets at anchor + the fit split's mean offset
	Reference     int     // anchors kept as the OOD reference pool
	ReferenceDB   string  // or a file's rows as the pool
	OODCal        string  // held-out ID inputs calibrating the per-input OOD test
	OODK          int     // the per-input score's neighbour; 0 means 1
	OODClass      string  // the per-input test of one class alone: its pool and calibration inputs
	Class         string  // calibrate on -cal's anchors of this class alone: one threshold for its anchors
	AllowInfinite bool
}

func calibrateCommand() *command {
	return newCommand("calibrate", "-geometry ball|ellipsoid [-fit FILE [-shift]] | -set FITTED.json  -cal FILE -out SET.json [-ridge 1e-6] [-alpha A] [-calibration one|pac|pooled|class] [-delta δ] [-class LABEL] [-seed S] [-reference N | -reference-db FILE] [-ood-cal FILE [-ood-k K] [-ood-class LABEL]] [-allow-infinite]",
		"calibrate a baseline set, or a fitted geometry, on a calibration bundle and save it",
		func(fs *flag.FlagSet, o *calibrateOptions) func() error {
			fs.StringVar(&o.Geometry, "geometry", "", "baseline set family: ball or ellipsoid")
			fs.StringVar(&o.Fitted, "set", "", "fitted set `file` (from ccs fit) whose geometry to calibrate")
			fs.StringVar(&o.Cal, "cal", "", "calibration bundle `file` (.npz)")
			fs.StringVar(&o.Out, "out", "", "fitted set `file` to write (.json)")
			fs.Float64Var(&o.Alpha, "alpha", defaultAlpha, "miscoverage level α in (0,1): the set holds positives with probability ≥ 1−α")
			fs.StringVar(&o.Calibration, "calibration", "one", "calibration `mode`: one (one positive per anchor: the guarantee, on average over calibration draws), pac (one per anchor, training-conditional: coverage ≥ 1−α with probability ≥ 1−δ over the draw), pooled (approximate) or class (one threshold per class of the bundle's labels: every class gets 1−α; with -delta, PAC per class)")
			fs.Float64Var(&o.Delta, "delta", 0, "δ of -calibration pac (or class), in (0, 0.5): the chance over the calibration draw that the guarantee fails (0.05 or 0.1)")
			fs.Uint64Var(&o.Seed, "seed", 0, "`seed` choosing each anchor's positive and the ellipsoid's half split")
			fs.Float64Var(&o.Ridge, "ridge", baseline.DefaultRidge, "ellipsoid: ridge added to Σ's diagonal, relative to tr(Σ)/d")
			fs.StringVar(&o.Fit, "fit", "", "the fit split's bundle `file`: the ellipsoid estimates Σ on it and calibrates on the whole -cal bundle, instead of halving -cal (whose halves share rows where positives are other items of the split, as in bundles made from labels); with -shift, the ball and the ellipsoid take their offset from it")
			fs.BoolVar(&o.Shift, "shift", false, "centre the set at anchor + the mean offset of positive − anchor over the -fit bundle, not at the anchor: for anchors and positives from two encoders (a dual encoder's queries and passages, captions and images); the ellipsoid without -fit takes it from its half of -cal")
			fs.IntVar(&o.Reference, "reference", 0, "keep `N` calibration anchors with the set as the reference pool of the per-input OOD scores (0: none)")
			fs.StringVar(&o.ReferenceDB, "reference-db", "", "keep every row of `FILE` (a collection: .npz or .safetensors with \"embeddings\" or \"anchors\", .npy or .parquet) as the reference pool instead")
			fs.StringVar(&o.OODCal, "ood-cal", "", "calibrate the per-input OOD test on the in-distribution inputs of `FILE` (.npz: \"embeddings\" or \"anchors\"), held out from the pool and from everything the set was fitted on")
			fs.StringVar(&o.OODClass, "ood-class", "", "the per-input OOD test of one class (an operating mode) alone: the pool is -reference N of -cal's anchors of `LABEL` (a name for string labels) and the test is calibrated on -ood-cal's inputs of it, so that inputs of that class are flagged at most α_ood of the time; one set file a class, chosen by the input's class when it is judged")
			fs.StringVar(&o.Class, "class", "", "calibrate on -cal's anchors of class `LABEL` alone (a name for string labels: a query's language, with ccs bundle -query-labels): a set of one threshold whose guarantee is for anchors of that class, its file recording the class (calibration.class); a -calibration class set holds every class's threshold in one file, which ccs retrieve -label and serve's /retrieve with \"label\" take as well")
			fs.IntVar(&o.OODK, "ood-k", 1, "the per-input OOD score's neighbour: the `K`-th smallest φ(a − x)/q̂ over the pool")
			fs.BoolVar(&o.AllowInfinite, "allow-infinite", false, "accept a whole-space set (threshold +Inf) when the calibration split is too small")
			return nil
		}, runCalibrate)
}

func runCalibrate(ctx context.Context, o calibrateOptions, out *output) error {
	if (o.Geometry == "") == (o.Fitted == "") {
		return usagef("calibrate: give one of -geometry and -set")
	}
	if err := required("calibrate", "cal", o.Cal, "out", o.Out); err != nil {
		return err
	}
	if err := checkAlpha("calibrate", o.Alpha); err != nil {
		return err
	}
	m, err := conformal.ParseMode(o.Calibration)
	if err != nil {
		return usagef("calibrate: -calibration: %v", err)
	}
	if err := checkDelta("calibrate", m, o.Delta); err != nil {
		return err
	}
	if o.Shift && o.Fitted != "" {
		return usagef("calibrate: -shift is for -geometry: a fitted set's shift is fitted with it (ccs fit -shift)")
	}
	var kind geometry.Kind
	var fitted *conformal.Set
	if o.Geometry != "" {
		if kind, err = geometry.ParseKind(o.Geometry); err != nil {
			return usagef("calibrate: -geometry: %v", err)
		}
		if kind.Learnable() {
			return usagef("calibrate: -geometry %s is learned: fit it with ccs fit, then calibrate with -set", kind)
		}
	} else if fitted, err = conformal.Load(o.Fitted); err != nil {
		return err
	}
	if o.Shift && kind == geometry.KindBall && o.Fit == "" {
		return usagef("calibrate: -shift needs -fit FILE (the fit split) for the ball: its mean offset is estimated there, never on -cal")
	}
	if o.Fit != "" && kind != geometry.KindEllipsoid && !(o.Shift && kind == geometry.KindBall) {
		return usagef("calibrate: -fit is for -geometry ellipsoid (its Σ), or the ball's -shift")
	}
	if o.Reference < 0 {
		return usagef("calibrate: -reference %d: want ≥ 0", o.Reference)
	}
	if o.Reference > 0 && o.ReferenceDB != "" {
		return usagef("calibrate: give one of -reference and -reference-db")
	}
	if o.OODCal != "" && o.Reference == 0 && o.ReferenceDB == "" {
		return usagef("calibrate: -ood-cal needs a reference pool: give -reference N or -reference-db FILE")
	}
	if o.Class != "" && m == conformal.Class {
		return usagef("calibrate: -class %s calibrates one class's anchors alone, with one threshold: give -calibration one or pac with it (-calibration class gives every class its own threshold in one set)", o.Class)
	}
	if o.Class != "" && o.OODClass != "" && o.OODClass != o.Class {
		return usagef("calibrate: -class %s and -ood-class %s: the set is calibrated on one class's anchors; its OOD test is of that class too (give -class alone)", o.Class, o.OODClass)
	}
	if o.OODClass != "" && (o.OODCal == "" || o.Reference == 0) {
		return usagef("calibrate: -ood-class %s picks a class's pool and calibration inputs: give -reference N and -ood-cal FILE with it", o.OODClass)
	}
	if m == conformal.Class && o.OODCal == "" && (o.Reference > 0 || o.ReferenceDB != "") {
		// The pool serves the per-input OOD test alone, which a class
		// set cannot have (-ood-cal with it is refused as ood says).
		return usagef("calibrate: -reference and -reference-db keep the pool of the per-input OOD test, and a class-conditional set has none (its score divides by one threshold): give -calibration one or pac for an OOD test, or leave the pool out")
	}
	if o.OODCal != "" && o.OODK < 1 {
		return usagef("calibrate: -ood-k %d: want at least 1", o.OODK)
	}
	if !(o.Ridge > 0) {
		return usagef("calibrate: -ridge %v: want a positive number", o.Ridge)
	}
	cal, err := readBundle(out, o.Cal)
	if err == nil && fitted != nil {
		err = checkDim(o.Cal, cal, fitted)
	}
	if err != nil {
		return err
	}
	// Names for a class-conditional set's classes, for the class a
	// marginal calibration's trim names, and for -class.
	labelNames := bundle.ManifestLabelNames(o.Cal, cal)
	if o.Class != "" && conformal.DisjointPairs(cal) != nil {
		return fmt.Errorf("calibrate: -class %s: %s's positives are its own anchors (ccs bundle -labels), calibrated on disjoint pairs of the whole split, which one class's anchors alone would not keep: calibrate with -calibration class instead (a threshold a class, in one set)", o.Class, o.Cal)
	}
	oneLabel := bundle.ManifestOneLabelName(o.Cal, cal) // ccs bundle -one-label's
	if m == conformal.Class || o.Class != "" {
		if err := bundle.OneLabelClassError(oneLabel, "-calibration one"); err != nil {
			flag := "-calibration class"
			if o.Class != "" {
				flag = "-class " + o.Class
			}
			return fmt.Errorf("calibrate: %s: %s: %w", flag, o.Cal, err)
		}
	}
	if oneLabel != "" {
		fmt.Fprintf(out.stderr, "note: %s: %s\n", o.Cal, bundle.OneLabelNote(oneLabel))
	}
	var classLabel *int64 // -class's
	if o.Class != "" {
		of, err := ofClass(cal, o.Cal, o.Class, "-class") // refused where the class is unknown or absent
		if err != nil {
			return err
		}
		c, _ := bundle.ClassesNamed([]string{o.Class}, labelNames)
		classLabel = &c[0]
		if o.Reference > 0 {
			o.OODClass = o.Class // the OOD test's pool and inputs of the class too
		}
		fmt.Fprintf(out.stderr, "note: %s: calibrating on its %d anchors of class %q (of %d), each with the positive the whole split's calibration draws for it: the set's guarantee is for anchors of that class\n", o.Cal, of.N, o.Class, cal.N)
	}
	opt := baseline.Options{Calibration: conformal.Options{Mode: m, Seed: o.Seed, Delta: o.Delta, AllowInfinite: o.AllowInfinite, OneLabel: oneLabel},
		Ridge: o.Ridge, SplitSeed: o.Seed, Shift: o.Shift}
	opt.Calibration.LabelNames, opt.Calibration.Label = labelNames, classLabel
	var set *conformal.Set
	var fit *bundle.Bundle // -fit's
	switch {
	case fitted != nil:
		set, err = conformal.CalibrateFitted(fitted, cal, o.Alpha, opt.Calibration)
	case kind == geometry.KindBall && o.Fit == "":
		set, err = baseline.Ball(cal, o.Alpha, opt)
	case o.Fit != "":
		if fit, err = readBundle(out, o.Fit); err != nil {
			return err
		}
		if fit.D != cal.D {
			return fmt.Errorf("%s: embeddings of dimension %d, %s's is %d", o.Fit, fit.D, o.Cal, cal.D)
		}
		if kind == geometry.KindBall {
			set, err = baseline.BallFrom(fit, cal, o.Alpha, opt)
		} else {
			set, err = baseline.EllipsoidFrom(ctx, fit, cal, o.Alpha, opt)
		}
	default:
		set, err = baseline.Ellipsoid(ctx, cal, o.Alpha, opt)
	}
	if err != nil {
		if m == conformal.Class && errors.Is(err, conformal.ErrTooFewCalibration) {
			return fmt.Errorf("%s: %w (-allow-infinite makes that class's set the whole space; -calibration one calibrates over every class)", o.Cal, err)
		}
		if errors.Is(err, conformal.ErrTooFewCalibration) {
			return fmt.Errorf("%s: %w (-allow-infinite keeps the whole-space set, with a warning on every use)", o.Cal, err)
		}
		if errors.Is(err, baseline.ErrSharedRows) {
			return fmt.Errorf("%s: %w; estimate Σ on a split of other items: -fit FIT.npz (ccs bundle's fit.npz)", o.Cal, err)
		}
		return fmt.Errorf("%s: %w", o.Cal, err)
	}
	set.KeepRows(cal) // for evaluate to know these rows in another bundle
	if o.Reference > 0 {
		pool, source, of := cal, conformal.CalibrationAnchors, ""
		if o.OODClass != "" {
			if pool, err = ofClass(cal, o.Cal, o.OODClass, "-ood-class"); err != nil {
				return err
			}
			source = fmt.Sprintf("%s of class %q", conformal.CalibrationAnchors, o.OODClass)
			of = fmt.Sprintf(" of class %q", o.OODClass)
		}
		if o.Reference > pool.N {
			return fmt.Errorf("calibrate: -reference %d: %s has %d anchors%s; give at most %d", o.Reference, o.Cal, pool.N, of, pool.N)
		}
		if set.Reference, err = conformal.NewReference(pool, o.Reference, o.Seed, source); err != nil {
			return fmt.Errorf("calibrate: -reference %d: %s: %w", o.Reference, o.Cal, err)
		}
	}
	if o.ReferenceDB != "" {
		if set.Reference, err = referenceRows(o.ReferenceDB, set); err != nil {
			return err
		}
	}
	if o.OODCal != "" {
		if set.OOD, err = oodCalibration(out, set, o.OODCal, o.OODK, o.OODClass); err != nil {
			return err
		}
	}
	if err := set.Save(o.Out); err != nil {
		return err
	}
	fmt.Fprintf(out.stdout, "wrote %s: %s\n", o.Out, describe(set))
	if o.Shift {
		b, path := cal, o.Cal // the ellipsoid's half of it without -fit
		if fit != nil {
			b, path = fit, o.Fit
		}
		fmt.Fprintf(out.stdout, "shift: %s (%s)\n", shiftNote(set.Geometry, b), path)
	}
	if c := set.OOD; c != nil {
		n1 := float64(c.N + 1)
		steps := "in steps of 1/(n+1)"
		if c.TieWarning("", conformal.FlaggedRankAt(conformal.DefaultOODAlpha, c.N)) != "" {
			steps = "in steps of 1/(n+1) for scores without ties (these tie: below)"
		}
		fmt.Fprintf(out.stdout, "per-input OOD test: the %s nearest of %d pool rows, calibrated on %d inputs of %s; it certifies α_ood ≥ 1/(n+1) = %.4g, %s: α_ood = 0.05 flags at most ⌊0.05·(n+1)⌋/(n+1) = %.4g of in-distribution inputs\n",
			experiment.Ordinal(c.K), set.Reference.N, c.N, c.Source, 1/n1, steps, math.Floor(0.05*n1)/n1)
	}
	for _, w := range set.CalibrateWarnings() {
		out.warn(w)
	}
	return nil
}

// shiftNote says, for a geometry whose sets are centred at anchor + c,
// ‖c‖ and how far b's positives lie from their anchors and from anchor +
// c; "none" for another.
func shiftNote(g geometry.Geometry, b *bundle.Bundle) string {
	_, shift := geometry.Unshift(g)
	if shift == nil {
		return "none"
	}
	c := make([]float64, len(shift))
	for j, v := range shift {
		c[j] = float64(v)
	}
	return bundle.ShiftNote(b, c)
}

// referenceRows reads every row of a file of embeddings as a reference
// pool.
func referenceRows(path string, set *conformal.Set) (*conformal.Reference, error) {
	c, err := retrieve.ReadCollection(path) // .npz, .npy or .parquet
	if err != nil {
		return nil, err
	}
	if err := set.CheckDim(path, c.N, c.D); err != nil {
		return nil, err
	}
	r, err := conformal.NewReferenceRows(c.Rows, c.D, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ofClass is the bundle of b's anchors (read from path) of class label —
// a name where the manifest beside path names b's labels, an integer
// otherwise —, refused when b has no labels or none of that class.
func ofClass(b *bundle.Bundle, path, label, flag string) (*bundle.Bundle, error) {
	sub, _, err := ofClassLabel(b, path, label, flag)
	return sub, err
}

// ofClassLabel is ofClass, with the class it picked.
func ofClassLabel(b *bundle.Bundle, path, label, flag string) (*bundle.Bundle, conformal.OODClass, error) {
	var none conformal.OODClass
	if b.SeveralLabels() && flag == "-class" {
		return nil, none, fmt.Errorf("calibrate: %s %s: %s: %s", flag, label, path, conformal.SeveralLabelsReason)
	}
	if b.SeveralLabels() || bundle.ManifestSeveralLabels(path, b) {
		return nil, none, fmt.Errorf("calibrate: %s %s: %s: %s", flag, label, path, conformal.SeveralLabelsOODClassMessage(flag, "-ood-cal's"))
	}
	if b.Labels == nil {
		return nil, none, fmt.Errorf("calibrate: %s %s: %s has no labels to pick its inputs by (ccs bundle's files have them; -query-labels for relevance pairs)", flag, label, path)
	}
	names := bundle.ManifestLabelNames(path, b)
	c, err := bundle.ClassesNamed([]string{label}, names)
	if err != nil {
		if names == nil {
			// A file of named labels saved without its manifest
			// (Python's Bundle.save) has their numbers alone.
			err = fmt.Errorf("%w: its labels are numbers, named by no manifest.json beside it (ccs bundle -out and ccs.bundle(out=) write one; Bundle.save does not): give the class's number, or bundles written with their manifest", err)
		}
		return nil, none, fmt.Errorf("calibrate: %s: %s: %v", flag, path, err)
	}
	rows, classes := bundle.ClassRows(b.Labels, c[0], names)
	if len(rows) == 0 {
		return nil, none, fmt.Errorf("calibrate: %s %s: %s has no anchors of it (its classes: %s)", flag, label, path, classes)
	}
	class := conformal.OODClass{Label: c[0]}
	if c[0] >= 0 && c[0] < int64(len(names)) {
		class.Name = names[c[0]]
	}
	return b.Subset(rows), class, nil
}

// oodCalibration calibrates the set's per-input OOD score (the k-th
// nearest of its reference pool) on the in-distribution inputs of path
// (those of class, when it is not "").
func oodCalibration(out *output, set *conformal.Set, path string, k int, class string) (*conformal.OODCalibration, error) {
	f, err := readFeaturesFor(out, path, set)
	if err != nil {
		return nil, err
	}
	if err := bundle.CheckInDistribution(path, f); err != nil {
		return nil, fmt.Errorf("-ood-cal: %w", err)
	}
	source := path
	var of *conformal.OODClass
	if class != "" {
		var c conformal.OODClass
		if f, c, err = ofClassLabel(f, path, class, "-ood-class"); err != nil {
			return nil, err
		}
		source, of = fmt.Sprintf("%s (class %q)", path, class), &c
	}
	if err := set.CheckOODInputs(f); err != nil {
		return nil, fmt.Errorf("-ood-cal: %s: %w", path, err)
	}
	n, err := ood.NewNearest(set, nil, k)
	switch {
	case errors.Is(err, conformal.ErrNoLabel):
		return nil, fmt.Errorf("-ood-cal: %w", err)
	case err != nil && k != 1:
		return nil, fmt.Errorf("-ood-k %d: %w", k, err)
	case err != nil:
		return nil, fmt.Errorf("-ood-cal: %w", err)
	}
	c, err := n.CalibrateIndexed(f.Anchors, f.Index, f.Embeddings, source)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Class = of
	return c, nil
}
