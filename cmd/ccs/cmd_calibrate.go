package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/ccsets/ccs/baseline"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// calibrateOptions are ccs calibrate's inputs: a baseline family or a
// fitted set, and the calibration.
type calibrateOptions struct {
	Geometry      string // ball or ellipsoid
	Fitted        string // a fitted set's file
	Cal, Out      string // files
	Alpha         float64
	Calibration   string // one or pooled
	Seed          uint64
	Ridge         float64 // the ellipsoid's
	Reference     int     // anchors kept as the OOD reference pool
	AllowInfinite bool
}

func calibrateCommand() *command {
	return newCommand("calibrate", "-geometry ball|ellipsoid | -set FITTED.json  -cal FILE -out SET.json [-alpha A] [-calibration one|pooled] [-seed S] [-reference N]",
		"calibrate a baseline set, or a fitted geometry, on a calibration bundle and save it",
		func(fs *flag.FlagSet, o *calibrateOptions) func() error {
			fs.StringVar(&o.Geometry, "geometry", "", "baseline set family: ball or ellipsoid")
			fs.StringVar(&o.Fitted, "set", "", "fitted set `file` (from ccs fit) whose geometry to calibrate")
			fs.StringVar(&o.Cal, "cal", "", "calibration bundle `file` (.npz)")
			fs.StringVar(&o.Out, "out", "", "fitted set `file` to write (.json)")
			fs.Float64Var(&o.Alpha, "alpha", defaultAlpha, "miscoverage level α in (0,1): the set holds positives with probability ≥ 1−α")
			fs.StringVar(&o.Calibration, "calibration", "one", "calibration `mode`: one (one positive per anchor: the guarantee) or pooled (approximate)")
			fs.Uint64Var(&o.Seed, "seed", 0, "`seed` choosing each anchor's positive and the ellipsoid's half split")
			fs.Float64Var(&o.Ridge, "ridge", baseline.DefaultRidge, "ellipsoid: ridge added to Σ's diagonal, relative to tr(Σ)/d")
			fs.IntVar(&o.Reference, "reference", 0, "keep `N` calibration anchors with the set as the reference pool of the per-sample CCS OOD score (0: none)")
			fs.BoolVar(&o.AllowInfinite, "allow-infinite", false, "accept a whole-space set (threshold +Inf) when the calibration split is too small")
			return nil
		}, runCalibrate)
}

func runCalibrate(_ context.Context, o calibrateOptions, out *output) error {
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
	if o.Reference < 0 {
		return usagef("calibrate: -reference %d must be ≥ 0", o.Reference)
	}
	if !(o.Ridge > 0) {
		return usagef("calibrate: -ridge %v must be positive", o.Ridge)
	}
	cal, err := bundle.Read(o.Cal)
	if err != nil {
		return err
	}
	opt := baseline.Options{Calibration: conformal.Options{Mode: m, Seed: o.Seed, AllowInfinite: o.AllowInfinite},
		Ridge: o.Ridge, SplitSeed: o.Seed}
	var set *conformal.Set
	switch {
	case fitted != nil:
		if set, err = conformal.Calibrate(fitted.Geometry, cal, o.Alpha, opt.Calibration); err == nil {
			set.Fit = fitted.Fit
		}
	case kind == geometry.KindBall:
		set, err = baseline.Ball(cal, o.Alpha, opt)
	default:
		set, err = baseline.Ellipsoid(cal, o.Alpha, opt)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.Cal, err)
	}
	if o.Reference > 0 {
		if set.Reference, err = conformal.NewReference(cal, o.Reference, o.Seed, "calibration anchors"); err != nil {
			return fmt.Errorf("%s: %w", o.Cal, err)
		}
	}
	if err := set.Save(o.Out); err != nil {
		return err
	}
	fmt.Fprintf(out.stdout, "wrote %s: %s\n", o.Out, describe(set))
	for _, w := range set.Warnings() {
		out.warn(w)
	}
	return nil
}
