package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccsets/ccs/baseline"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/retrieve"
)

// calibrateOptions are ccs.calibrate's keywords: ccs calibrate's flags.
// A pool or OOD calibration given as an array comes apart (calibrateInputs).
type calibrateOptions struct {
	Geometry      string   `json:"geometry"` // ball or ellipsoid, without a fitted set
	Alpha         *float64 `json:"alpha"`
	Calibration   string   `json:"calibration"`
	Delta         float64  `json:"delta"`
	Seed          uint64   `json:"seed"`
	Ridge         *float64 `json:"ridge"`
	AllowInfinite bool     `json:"allow_infinite"`
	// Shift centres a baseline's sets at anchor + the fit split's mean
	// offset (ccs calibrate -shift).
	Shift bool `json:"shift"`
	// Reference keeps that many calibration anchors as the OOD reference
	// pool; ReferenceDB every row of a collection file instead;
	// ReferenceSource names a pool given as an array.
	Reference       int    `json:"reference"`
	ReferenceDB     string `json:"reference_db"`
	ReferenceSource string `json:"reference_source"`
	// OODCal is a features file calibrating the per-input OOD test;
	// OODCalSource names inputs given as an array.
	OODCal       string `json:"ood_cal"`
	OODCalSource string `json:"ood_cal_source"`
	OODK         *int   `json:"ood_k"`
	// Label, if not "", calibrates on cal's anchors of that class alone
	// (its name for string labels, else its integer), with one threshold
	// (ccs calibrate -class).
	Label string `json:"label"`
	// OODCalBundle is the handle of an ood_cal given as a Bundle (0:
	// none), whose labels OODClass picks the inputs of.
	OODCalBundle uintptr `json:"ood_cal_bundle"`
	// OODClass is ccs calibrate -ood-class: the per-input test of one
	// class alone, its pool Reference of cal's anchors of the class and
	// its calibration ood_cal's inputs of it ("": every class).
	OODClass classLabel `json:"ood_class"`
}

// classLabel is a class as the caller names it: an integer, or a string
// when the labels are strings.
type classLabel string

// UnmarshalJSON takes an integer or a string.
func (c *classLabel) UnmarshalJSON(b []byte) error {
	var l classList
	if err := l.UnmarshalJSON(append(append([]byte("["), b...), ']')); err != nil {
		return err
	}
	*c = classLabel(l[0])
	return nil
}

// calibrateInputs are what ccs.calibrate may take besides the bundle: the
// split the ellipsoid's Σ comes from, a reference pool's rows and the OOD
// calibration inputs (nil: not given).
type calibrateInputs struct {
	Fit               *bundleObj
	Reference, OODCal *rawArray
}

// calibrate is ccs calibrate: the fitted geometry of fitted (nil for a
// baseline family, o.Geometry) calibrated on cal, with the OOD reference
// pool and calibration asked for.
func calibrate(fitted *conformal.Set, cal *bundleObj, o calibrateOptions, in calibrateInputs) (*conformal.Set, error) {
	if (o.Geometry == "") == (fitted == nil) {
		return nil, fmt.Errorf("calibrate: give a fitted set or a baseline geometry (ball or ellipsoid), not both")
	}
	alpha, m, err := calibration("calibrate", o.Alpha, o.Calibration, o.Delta)
	if err != nil {
		return nil, err
	}
	var kind geometry.Kind
	if fitted == nil {
		if kind, err = geometry.ParseKind(o.Geometry); err != nil {
			return nil, fmt.Errorf("calibrate: geometry: %v", err)
		}
		if kind.Learnable() {
			return nil, fmt.Errorf("calibrate: geometry %s is learned: fit it with ccs.fit, then calibrate the fitted set", kind)
		}
	}
	if o.Shift && fitted != nil {
		return nil, fmt.Errorf("calibrate: shift is for \"ball\" and \"ellipsoid\": a fitted set's shift is fitted with it (ccs.fit(..., shift=True))")
	}
	if o.Shift && kind == geometry.KindBall && in.Fit == nil {
		return nil, fmt.Errorf("calibrate: shift=True needs fit= (the fit split) for the ball: its mean offset is estimated there, never on cal")
	}
	if in.Fit != nil && kind != geometry.KindEllipsoid && !(o.Shift && kind == geometry.KindBall) {
		return nil, fmt.Errorf("calibrate: fit is for the ellipsoid (its Σ), or the ball's shift")
	}
	if in.Fit != nil && in.Fit.b.D != cal.b.D {
		return nil, fmt.Errorf("calibrate: %s: embeddings of dimension %d, %s's is %d", in.Fit.name("fit"), in.Fit.b.D, cal.name("cal"), cal.b.D)
	}
	refArray := in.Reference != nil
	if o.Reference < 0 {
		return nil, fmt.Errorf("calibrate: reference=%d: want ≥ 0", o.Reference)
	}
	if btoi(o.Reference > 0)+btoi(o.ReferenceDB != "")+btoi(refArray) > 1 {
		return nil, fmt.Errorf("calibrate: give one reference pool: a number of calibration anchors, a file or an array")
	}
	hasOODCal := o.OODCal != "" || in.OODCal != nil || o.OODCalBundle != 0
	if hasOODCal && o.Reference == 0 && o.ReferenceDB == "" && !refArray {
		return nil, fmt.Errorf("calibrate: ood_cal needs a reference pool: give reference")
	}
	if o.OODClass != "" && (!hasOODCal || o.Reference == 0) {
		return nil, fmt.Errorf("calibrate: ood_class=%s picks a class's pool and calibration inputs: give reference=N (a number of its calibration anchors) and ood_cal with it", o.OODClass)
	}
	if o.OODClass != "" && in.OODCal != nil {
		return nil, fmt.Errorf("calibrate: ood_class=%s: ood_cal is an array, with no labels to pick the class's inputs by: give ccs.bundle's \"ood-cal\" split or its file", o.OODClass)
	}
	oodK := 1
	if o.OODK != nil {
		oodK = *o.OODK
	}
	if hasOODCal && oodK < 1 {
		return nil, fmt.Errorf("calibrate: ood_k=%d: want at least 1", oodK)
	}
	ridge := baseline.DefaultRidge
	if o.Ridge != nil {
		ridge = *o.Ridge
	}
	if !(ridge > 0) {
		return nil, fmt.Errorf("calibrate: ridge=%v: want a positive number", ridge)
	}
	calName := cal.name("cal")
	if err := bundle.OneLabelClassError(cal.oneLabel, `calibration="one"`); err != nil && (m == conformal.Class || o.Label != "") {
		asked := `calibration="class"`
		if o.Label != "" {
			asked = "label=" + o.Label
		}
		return nil, fmt.Errorf("calibrate: %s: %s: %w", asked, calName, err)
	}
	var label *int64
	if o.Label != "" {
		if label, err = ofLabel(cal, calName, o.Label, m); err != nil {
			return nil, err
		}
	}
	if fitted != nil {
		if err := checkDim(calName, cal.b, fitted); err != nil {
			return nil, err
		}
	}
	opt := baseline.Options{Calibration: conformal.Options{Mode: m, Seed: o.Seed, Delta: o.Delta, AllowInfinite: o.AllowInfinite, OneLabel: cal.oneLabel},
		Ridge: ridge, SplitSeed: o.Seed, Shift: o.Shift}
	opt.Calibration.LabelNames = cal.names // a class set's, a trim's class names
	opt.Calibration.Label = label
	var set *conformal.Set
	switch {
	case fitted != nil:
		set, err = conformal.CalibrateFitted(fitted, cal.b, alpha, opt.Calibration)
	case kind == geometry.KindBall && in.Fit != nil:
		set, err = baseline.BallFrom(in.Fit.b, cal.b, alpha, opt)
	case kind == geometry.KindBall:
		set, err = baseline.Ball(cal.b, alpha, opt)
	case in.Fit != nil:
		set, err = baseline.EllipsoidFrom(context.Background(), in.Fit.b, cal.b, alpha, opt)
	default:
		set, err = baseline.Ellipsoid(context.Background(), cal.b, alpha, opt)
	}
	if err != nil {
		if m == conformal.Class && errors.Is(err, conformal.ErrTooFewCalibration) {
			return nil, fmt.Errorf("%s: %w (allow_infinite=True makes that class's set the whole space; calibration=\"one\" calibrates over every class)", calName, err)
		}
		if errors.Is(err, conformal.ErrTooFewCalibration) {
			return nil, fmt.Errorf("%s: %w (allow_infinite=True keeps the whole-space set, with a warning on every use)", calName, err)
		}
		if errors.Is(err, baseline.ErrSharedRows) {
			return nil, fmt.Errorf("%s: %w; estimate Σ on a split of other items: fit=the fit split (ccs.bundle's \"fit\")", calName, err)
		}
		return nil, fmt.Errorf("%s: %w", calName, err)
	}
	set.KeepRows(cal.b) // for evaluate to know these rows in another bundle
	if set.ClassConditional() && !hasOODCal && (o.Reference > 0 || o.ReferenceDB != "" || refArray) {
		// The pool serves the per-input OOD test alone, which a class
		// set cannot have (ood_cal with it is refused below).
		return nil, fmt.Errorf("calibrate: reference: %s: its pool would serve no test; calibrate with calibration=\"one\" (or \"pac\") for an OOD test, or leave reference out", strings.TrimPrefix(ood.ErrClassConditional.Error(), "ood: "))
	}
	switch {
	case o.Reference > 0:
		pool, source, of := cal.b, conformal.CalibrationAnchors, ""
		if o.OODClass != "" {
			if pool, err = ofClass(cal.b, calName, cal.names, string(o.OODClass), cal.b.SeveralLabels()); err != nil {
				return nil, err
			}
			source = fmt.Sprintf("%s of class %q", conformal.CalibrationAnchors, o.OODClass)
			of = fmt.Sprintf(" of class %q", o.OODClass)
		}
		if o.Reference > pool.N {
			return nil, fmt.Errorf("calibrate: reference=%d: %s has %d anchors%s; give at most %d", o.Reference, calName, pool.N, of, pool.N)
		}
		if set.Reference, err = conformal.NewReference(pool, o.Reference, o.Seed, source); err != nil {
			return nil, fmt.Errorf("calibrate: reference=%d: %s: %w", o.Reference, calName, err)
		}
	case o.ReferenceDB != "":
		c, err := retrieve.ReadCollection(o.ReferenceDB)
		if err != nil {
			return nil, err
		}
		if set.Reference, err = referenceRows(set, c.Rows, c.N, c.D, o.ReferenceDB); err != nil {
			return nil, err
		}
	case refArray:
		source := cmp.Or(o.ReferenceSource, "reference")
		rows, n, d, err := matrix(*in.Reference, source)
		if err != nil {
			return nil, err
		}
		if set.Reference, err = referenceRows(set, rows, n, d, source); err != nil {
			return nil, err
		}
	}
	if hasOODCal {
		if err := set.OneThreshold(); err != nil {
			return nil, fmt.Errorf("calibrate: ood_cal: %s: a class-conditional set and an OOD test are two sets: calibrate a second set with calibration=\"one\" (or \"pac\"), reference= and ood_cal= on the same split for the OOD test", strings.TrimPrefix(ood.ErrClassConditional.Error(), "ood: "))
		}
		var rows []float32
		var index []int64                // the inputs' source rows, where their bundle records them
		var embeddings string            // what index numbers the rows of
		var oodClass *conformal.OODClass // ood_class's, where given
		source := o.OODCal
		if o.OODCal != "" || o.OODCalBundle != 0 {
			var f *bundle.Bundle
			var names []string
			// The file and the manifest beside it, which says its split.
			path, m := o.OODCal, (*bundle.Manifest)(nil)
			if o.OODCal != "" {
				if f, err = bundle.ReadFeatures(o.OODCal); err != nil {
					return nil, err
				}
				m = bundle.ReadManifest(filepath.Dir(o.OODCal))
				names = m.LabelNamesOf(o.OODCal, f)
			} else {
				b, err := lookup[*bundleObj](o.OODCalBundle, "a bundle")
				if err != nil {
					return nil, fmt.Errorf("calibrate: ood_cal: %w", err)
				}
				f, names, source, path, m = b.b, b.names, cmp.Or(o.OODCalSource, b.name("ood_cal")), b.path, b.manifest
			}
			if err := checkDim(source, f, set); err != nil {
				return nil, err
			}
			if err := m.CheckInDistribution(path, f); err != nil {
				return nil, fmt.Errorf("calibrate: ood_cal: %w", err)
			}
			if o.OODClass != "" {
				var c conformal.OODClass
				if f, c, err = ofClassLabel(f, source, names, string(o.OODClass), cal.b.SeveralLabels()); err != nil {
					return nil, err
				}
				source, oodClass = fmt.Sprintf("%s (class %q)", source, o.OODClass), &c
			}
			if err := set.CheckOODInputs(f); err != nil {
				return nil, fmt.Errorf("calibrate: ood_cal: %s: %w", source, err)
			}
			rows, index, embeddings = f.Anchors, f.Index, f.Embeddings
		} else {
			source = cmp.Or(o.OODCalSource, "ood_cal")
			var n, d int
			if rows, n, d, err = matrix(*in.OODCal, source); err != nil {
				return nil, err
			}
			if err := set.CheckDim(source, n, d); err != nil {
				return nil, err
			}
			if err := set.CheckOODInputs(&bundle.Bundle{N: n, D: d, Anchors: rows}); err != nil {
				return nil, fmt.Errorf("calibrate: %s: %w", source, err)
			}
		}
		n, err := ood.NewNearest(set, nil, oodK)
		switch {
		case errors.Is(err, conformal.ErrNoLabel):
			return nil, fmt.Errorf("calibrate: ood_cal: %w", err)
		case err != nil:
			return nil, fmt.Errorf("ood_k=%d: %w", oodK, err)
		}
		if set.OOD, err = n.CalibrateIndexed(rows, index, embeddings, source); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		set.OOD.Class = oodClass
	}
	return set, nil
}

// ofClass is the bundle of b's anchors (named what in messages) of class
// label — a name where names names b's labels, an integer otherwise —,
// refused when b has no labels or none of that class, as ccs calibrate
// -ood-class refuses them; several says that the calibration bundle gives
// several labels a row (severalLabels), which its ood_cal inputs cannot
// tell.
func ofClass(b *bundle.Bundle, what string, names []string, label string, several bool) (*bundle.Bundle, error) {
	sub, _, err := ofClassLabel(b, what, names, label, several)
	return sub, err
}

// ofClassLabel is ofClass, with the class it picked.
func ofClassLabel(b *bundle.Bundle, what string, names []string, label string, several bool) (*bundle.Bundle, conformal.OODClass, error) {
	var none conformal.OODClass
	if b.Labels == nil && several {
		return nil, none, fmt.Errorf("calibrate: ood_class=%s: %s: %s", label, what, conformal.SeveralLabelsOODClassMessage("ood_class=", "ood_cal's"))
	}
	if b.Labels == nil {
		return nil, none, fmt.Errorf("calibrate: ood_class=%s: %s has no labels to pick its inputs by (ccs.bundle's splits have them)", label, what)
	}
	c, err := bundle.ClassesNamed([]string{label}, names)
	if err != nil {
		if names == nil {
			err = fmt.Errorf("%w: its labels are numbers, named by no manifest.json (ccs.bundle(out=) writes one beside its files; Bundle.save does not): give the class's number, or bundles written with their manifest", err)
		}
		return nil, none, fmt.Errorf("calibrate: ood_class: %s: %v", what, err)
	}
	rows, classes := bundle.ClassRows(b.Labels, c[0], names)
	if len(rows) == 0 {
		return nil, none, fmt.Errorf("calibrate: ood_class=%s: %s has no anchors of it (its classes: %s)", label, what, classes)
	}
	class := conformal.OODClass{Label: c[0]}
	if c[0] >= 0 && c[0] < int64(len(names)) {
		class.Name = names[c[0]]
	}
	return b.Subset(rows), class, nil
}

// referenceRows checks rows (n×d) against the set and makes them its pool.
func referenceRows(set *conformal.Set, rows []float32, n, d int, source string) (*conformal.Reference, error) {
	if err := set.CheckDim(source, n, d); err != nil {
		return nil, err
	}
	r, err := conformal.NewReferenceRows(rows, d, source)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return r, nil
}

// matrix reads an (n, d) floating-point array with every value finite (a
// copy: what it is made into is kept).
func matrix(r rawArray, source string) (rows []float32, n, d int, err error) {
	r.Name = source
	a, err := decode(r)
	if err != nil {
		return nil, 0, 0, err
	}
	switch {
	case a.F32 != nil && len(a.Shape) == 1:
		return nil, 0, 0, fmt.Errorf("%s: shape %s: want (n, d), a row each (one row? x[None])", source, bundle.FormatShape(a.Shape))
	case a.F32 != nil && (len(a.Shape) != 2 || a.Shape[0] < 1 || a.Shape[1] < 1):
		return nil, 0, 0, fmt.Errorf("%s: shape %s: want (n, d), n, d ≥ 1", source, bundle.FormatShape(a.Shape))
	case a.F32 == nil:
		return nil, 0, 0, fmt.Errorf("%s: dtype %s, shape %s: want floating point (n, d), n, d ≥ 1", source, a.Kind(), bundle.FormatShape(a.Shape))
	}
	n, d = a.Shape[0], a.Shape[1]
	return a.F32, n, d, finiteRows(source, a.F32, d)
}

// name is how the bundle is named in messages: its file, or what the
// caller called it.
func (o *bundleObj) name(what string) string { return cmp.Or(o.path, what) }

// checkDim refuses a bundle whose embeddings are not of the set's
// dimension, as the CLI does.
func checkDim(path string, b *bundle.Bundle, set *conformal.Set) error {
	return set.CheckDim(fmt.Sprintf("%s: array %q", path, b.AnchorsArray()), b.N, b.D)
}

// evaluateOptions are the keywords of Set.evaluate: ccs evaluate's flags.
type evaluateOptions struct {
	PerClass    bool   `json:"per_class"`
	Unlabeled   string `json:"unlabeled"`
	sizeOptions        // ccs evaluate -db, -size-anchors
	// Baseline lists the top-k baselines to measure on the collection
	// ("topk", "topk-l2": -baseline's), calibrated on Cal, the handle of
	// the bundle the set was calibrated on (-cal).
	Baseline []string `json:"baseline"`
	Cal      uintptr  `json:"cal"`
}

// baselines checks baseline= and cal=: the distances, each once, the
// calibration split of the set (experiment.CalibrationSplit) and cal's
// name, prefixed to a note where the split is a half of cal.
func (o evaluateOptions) baselines(set *conformal.Set, coll *retrieve.Collection) (distances []string, split *bundle.Bundle, name, note string, err error) {
	if o.Baseline == nil {
		if o.Cal != 0 {
			return nil, nil, "", "", errors.New("evaluate: cal is the set's calibration bundle for baseline=; give baseline=\"topk\"")
		}
		return nil, nil, "", "", nil
	}
	var out []string
	for _, v := range o.Baseline {
		d, ok := eval.BaselineDistance(v)
		if !ok {
			return nil, nil, "", "", fmt.Errorf("evaluate: baseline=%q: want \"topk\" (by the set's distance), \"topk-l2\" (by the Euclidean one) or both", v)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	switch {
	case len(out) == 0:
		return nil, nil, "", "", errors.New("evaluate: baseline=[]: want \"topk\", \"topk-l2\" or both")
	case coll == nil:
		return nil, nil, "", "", errors.New("evaluate: baseline counts the nearest items of a collection: give collection=")
	case o.Cal == 0:
		return nil, nil, "", "", errors.New("evaluate: baseline calibrates k on the set's own calibration units: give cal=, the calibration bundle the set was calibrated on")
	}
	c, err := lookup[*bundleObj](o.Cal, "a bundle")
	if err != nil {
		return nil, nil, "", "", fmt.Errorf("evaluate: cal: %w", err)
	}
	name = c.name("cal")
	if err := checkDim(name, c.b, set); err != nil {
		return nil, nil, "", "", err
	}
	if split, note, err = experiment.CalibrationSplit(set, c.b); err != nil {
		return nil, nil, "", "", fmt.Errorf("evaluate: cal %s: %w", name, err)
	}
	if note != "" {
		note = name + ": " + note
	}
	return out, split, name, note, nil
}

// sizeOptions are the keywords that count the items of a collection a set
// holds (evaluate's and compare's): Collection, a collection's handle (0:
// none), named CollectionName, around the test bundle's first SizeAnchors
// anchors (nil: eval.DefaultSizeAnchors; 0: all).
type sizeOptions struct {
	Collection     uintptr `json:"collection"`
	CollectionName string  `json:"collection_name"`
	SizeAnchors    *int    `json:"size_anchors"`
}

// resolve checks o for the call named call, whose sets have dimension d
// (what names where d comes from) and whose test bundle has n anchors: the
// collection (nil where none is given), its name, and the anchors to
// search around, 1 … n.
func (o sizeOptions) resolve(call, what string, d, n int) (*retrieve.Collection, string, int, error) {
	if o.Collection == 0 {
		if o.SizeAnchors != nil {
			return nil, "", 0, fmt.Errorf("%s: size_anchors counts items of a collection; give collection=", call)
		}
		return nil, "", 0, nil
	}
	c, err := lookup[*collectionObj](o.Collection, "a collection")
	if err != nil {
		return nil, "", 0, fmt.Errorf("%s: collection: %w", call, err)
	}
	name := cmp.Or(o.CollectionName, "the collection")
	if c.c.D != d {
		return nil, "", 0, fmt.Errorf("%s: collection: %s has dimension %d, %s %d", call, name, c.c.D, what, d)
	}
	anchors := eval.DefaultSizeAnchors
	if o.SizeAnchors != nil {
		if anchors = *o.SizeAnchors; anchors < 0 {
			return nil, "", 0, fmt.Errorf("%s: size_anchors=%d: want ≥ 0 (0: all)", call, anchors)
		}
	}
	if anchors == 0 || anchors > n {
		anchors = n
	}
	return c.c, name, anchors, nil
}

// coverageCheckOptions are Set.coverage_check's keywords, ccs
// coverage-check's flags (a nil field takes the command's default).
type coverageCheckOptions struct {
	Resplits    *int     `json:"resplits"`
	CalFraction *float64 `json:"cal_fraction"`
	Seed        uint64   `json:"seed"`
	PerClass    bool     `json:"per_class"`
}

// coverageCheck is ccs coverage-check: the set's geometry recalibrated on
// resplits of test, and its own threshold's coverage of test, stopped with
// ctx's error when ctx is done.
func coverageCheck(ctx context.Context, set *conformal.Set, test *bundleObj, o coverageCheckOptions) (*experiment.CoverageCheck, []string, error) {
	resplits, fraction := 1000, 0.5
	if o.Resplits != nil {
		resplits = *o.Resplits
	}
	if o.CalFraction != nil {
		fraction = *o.CalFraction
	}
	if resplits < 1 {
		return nil, nil, fmt.Errorf("coverage_check: resplits=%d: want at least 1", resplits)
	}
	if !(fraction > 0 && fraction < 1) {
		return nil, nil, fmt.Errorf("coverage_check: cal_fraction=%v: want 0 < f < 1", fraction)
	}
	name, b, names, warnings, err := testOf(set, test, "coverage_check", true)
	if err != nil {
		return nil, nil, err
	}
	if err := bundle.OneLabelPerClassError(test.oneLabel, "per_class=True"); err != nil && o.PerClass && b.Labels == nil && !set.ClassConditional() {
		return nil, nil, fmt.Errorf("coverage_check: %s: %w", name, err)
	}
	check, more, err := experiment.CheckCoverage(ctx, set, b, resplits, fraction, o.Seed, o.PerClass, names)
	if err != nil {
		return nil, nil, fmt.Errorf("coverage_check: %s: %w", name, err)
	}
	if w := experiment.BlocksResplits(name, test.b, test.blocks); w != "" {
		more, check.Warnings = append(more, w), append(check.Warnings, w)
	}
	return check, append(warnings, more...), nil
}

// testOf is the test bundle as evaluate and coverage_check (what, in a
// refusal) judge set on it: its name in messages (its file, or "test"),
// checked against the set's dimension, its classes matched to the set's
// by name, not by number (experiment.ClassesByName), and the warnings of
// both, each naming it: a split the set has seen (Set.OwnSplitWarning,
// recalibrated for a check that recalibrates on it) and the match's note.
func testOf(set *conformal.Set, test *bundleObj, what string, recalibrated bool) (name string, b *bundle.Bundle, names, warnings []string, err error) {
	name = test.name("test")
	if err := checkDim(name, test.b, set); err != nil {
		return "", nil, nil, nil, err
	}
	if err := set.CheckBundleNorms(test.b); err != nil {
		return "", nil, nil, nil, fmt.Errorf("%s: %s: %w", what, name, err)
	}
	if w := set.OwnSplitWarning(test.b, recalibrated); w != "" {
		warnings = append(warnings, name+": "+w)
	}
	if w := bundle.OneLabelMismatch(set.Calibration.OneLabel, test.oneLabel); w != "" {
		warnings = append(warnings, name+": "+w)
	}
	b, names, note, err := experiment.ClassesByName(set, test.b, test.names)
	if err != nil {
		return "", nil, nil, nil, fmt.Errorf("%s: %s: %w", what, name, err)
	}
	if note != "" {
		warnings = append(warnings, name+": "+note)
	}
	return name, b, names, warnings, nil
}

// evaluate is ccs evaluate -json: the set's coverage, exclusion and
// LogVol/d on the test bundle (experiment.NewEvaluation), and the warning
// the CLI prints for a class-conditional set judged without labels.
func evaluate(ctx context.Context, set *conformal.Set, test *bundleObj, o evaluateOptions, progress func(stage string, done, total int)) (*experiment.Evaluation, []string, error) {
	if o.Unlabeled == "" {
		o.Unlabeled = "error"
	}
	if o.Unlabeled != "error" && o.Unlabeled != "marginal" {
		return nil, nil, fmt.Errorf("evaluate: unlabeled=%q: want error or marginal", o.Unlabeled)
	}
	if !set.Calibrated() { // the set's fault, not the test bundle's: said before the bundle is named
		return nil, nil, fmt.Errorf("evaluate: %w", conformal.ErrNotCalibrated)
	}
	name, tb, names, warnings, err := testOf(set, test, "evaluate", false)
	if err != nil {
		return nil, nil, err
	}
	// A set for one class's anchors (label= of calibrate) is judged on
	// the test anchors of that class.
	tb, note, w, err := experiment.OfSetClass(set, tb, names)
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate: %s: %w", name, err)
	}
	for _, m := range []string{note, w} {
		if m != "" {
			warnings = append(warnings, name+": "+m)
		}
	}
	if set.ClassConditional() && tb.Labels == nil {
		if o.Unlabeled != "marginal" {
			return nil, nil, fmt.Errorf("%s: %w: the test bundle has no labels (unlabeled=\"marginal\" judges every anchor with the threshold over all classes)", name, conformal.ErrNoLabel)
		}
		warnings = append(warnings, "the test bundle has no labels: every anchor is judged with the threshold over all classes, which has no class-conditional guarantee")
		set = set.OverAllClasses()
	}
	byLabel := o.PerClass && tb.SeveralLabels() // several labels a row
	if o.PerClass && tb.Labels == nil && !byLabel {
		if err := bundle.OneLabelPerClassError(test.oneLabel, "per_class=True"); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, nil, fmt.Errorf("%s: per_class: the test bundle has no labels (%s)", name, bundle.NoLabelsAdvice(tb, "per_class=True"))
	}
	coll, collName, anchors, err := o.resolve("evaluate", "the set", set.Geometry.Dim(), tb.N)
	if err != nil {
		return nil, nil, err
	}
	// A class-conditional set's size around an anchor is its class's
	// threshold's (eval.AnchorSizes); a top-k certified at its α would be
	// calibrated over all its units, for no class.
	if coll != nil && set.ClassConditional() && o.Baseline != nil {
		return nil, nil, fmt.Errorf("evaluate: baseline: the set is class-conditional, and a top-k certified beside it would be a class's: compare a set of one threshold (calibration \"one\" or \"pac\"), or leave baseline out for the class set's sizes")
	}
	distances, cal, calName, note, err := o.baselines(set, coll)
	if err != nil {
		return nil, nil, err
	}
	if note != "" {
		warnings = append(warnings, note)
	}
	var r eval.Result
	var classes []eval.ClassResult
	var labels []eval.LabelResult
	switch {
	case byLabel:
		r, labels, err = eval.WithLabelsContext(ctx, set, tb)
	case o.PerClass:
		r, classes, err = eval.WithClassesContext(ctx, set, tb)
	default:
		r, err = eval.EvaluateContext(ctx, set, tb)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	shift, w, err := experiment.CheckShift(set, tb, name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if w != "" {
		warnings = append(warnings, w)
	}
	if classes != nil && names == nil {
		names = set.ClassNames() // as calibrated on string labels
	}
	e := experiment.NewEvaluation(set, r, classes)
	e.Exchangeability = shift
	if classes != nil {
		checks, w, err := experiment.ClassShortfalls(set, tb, names, name)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if w != "" {
			warnings = append(warnings, w)
		}
		e.ClassChecks = checks
	}
	if labels != nil {
		e.WithLabels(labels, test.names)
	}
	if coll != nil && set.Calibration.UnitNorm {
		if w := retrieve.UnitNormWarning(collName, coll); w != "" {
			warnings = append(warnings, w) // its rows fall outside every set, as ccs evaluate -db warns
		}
	}
	if coll != nil {
		e.Collection = collName
		e.Sizes, e.ClassSizes, e.Baselines, err = experiment.OnCollection(ctx, set, tb, coll, experiment.CollectionOptions{
			Anchors: anchors, PerClass: o.PerClass, Names: names, Distances: distances, Cal: cal, Progress: progress})
		if be := (*experiment.BaselineError)(nil); errors.As(err, &be) {
			return nil, nil, fmt.Errorf("evaluate: baseline: %w", be.Err)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("evaluate: %w", err)
		}
		if distances != nil {
			e.BaselineCalibration = calName
		}
	}
	e.Warnings = append(append([]string{}, warnings...), e.Warnings...) // the result carries them too, as ccs evaluate -json's does
	if classes != nil {
		e.Name(names)
	}
	return e, warnings, nil
}

// setJSON is the set's file, as Save writes it.
func setJSON(s *conformal.Set) ([]byte, error) {
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// percentHint suggests the α an alpha given as a percentage meant
// (conformal.PercentAlpha), or is "".
func percentHint(alpha float64) string {
	if a, ok := conformal.PercentAlpha(alpha); ok {
		return fmt.Sprintf(", the share of positives a set may miss (a percentage? alpha=%v)", a)
	}
	return ""
}

// calibration checks the level, the calibration mode and its δ, as ccs
// calibrate and ccs compare check their flags; cmd names the call.
func calibration(cmd string, a *float64, mode string, d float64) (float64, conformal.Mode, error) {
	alpha := 0.05
	if a != nil {
		alpha = *a
	}
	if err := conformal.CheckAlpha(alpha); err != nil {
		return 0, 0, fmt.Errorf("%s: alpha=%v: want 0 < α < 1%s", cmd, alpha, percentHint(alpha))
	}
	m, err := conformal.ParseMode(cmp.Or(mode, "one"))
	if err != nil {
		return 0, 0, fmt.Errorf("%s: calibration: %v", cmd, err)
	}
	switch {
	case m == conformal.PAC && d == 0:
		return 0, 0, fmt.Errorf("%s: calibration=\"pac\" needs delta, not given: give delta=0.05 or 0.1 (%s)", cmd, conformal.DeltaHint)
	case m == conformal.PAC && !(d > 0 && d < conformal.MaxDelta):
		return 0, 0, fmt.Errorf("%s: calibration=\"pac\" needs delta in (0, %v), got %v (%s)", cmd, conformal.MaxDelta, d, conformal.DeltaHint)
	case m == conformal.Class && !(d >= 0 && d < conformal.MaxDelta):
		return 0, 0, fmt.Errorf("%s: delta=%v: want 0 < δ < %v, or 0: marginal per class (%s)", cmd, d, conformal.MaxDelta, conformal.DeltaHint)
	case m != conformal.PAC && m != conformal.Class && d != 0:
		return 0, 0, fmt.Errorf("%s: delta is for calibration \"pac\" or \"class\"", cmd)
	}
	return alpha, m, nil
}

// ofLabel is the class label names in cal (its name where cal has names,
// else its integer), whose anchors alone a set of one threshold is
// calibrated on (conformal.Options.Label; ccs calibrate -class).
func ofLabel(cal *bundleObj, calName, label string, m conformal.Mode) (*int64, error) {
	switch {
	case m == conformal.Class:
		return nil, fmt.Errorf("calibrate: label=%q calibrates one class's anchors alone, with one threshold: give calibration=\"one\" or \"pac\" with it (calibration=\"class\" gives every class its own threshold in one set)", label)
	case cal.b.Labels == nil:
		return nil, fmt.Errorf("calibrate: label=%q: %s has no labels to pick its anchors by (ccs.bundle's have them; query_labels= for relevance pairs)", label, calName)
	case conformal.DisjointPairs(cal.b) != nil:
		return nil, fmt.Errorf("calibrate: label=%q: %s's positives are its own anchors (ccs.bundle's labels), calibrated on disjoint pairs of the whole split, which one class's anchors alone would not keep: calibrate with calibration=\"class\" instead", label, calName)
	}
	c, err := bundle.ClassesNamed([]string{label}, cal.names)
	if err != nil {
		return nil, fmt.Errorf("calibrate: label: %s: %v", calName, err)
	}
	if !slices.Contains(cal.b.Labels, c[0]) {
		return nil, fmt.Errorf("calibrate: label=%q: %s has no anchors of it", label, calName)
	}
	return &c[0], nil
}
