package main

import (
	"flag"
	"fmt"

	"github.com/ccsets/ccs/baseline"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

func init() {
	register(&command{
		name:  "calibrate",
		args:  "-geometry ball|ellipsoid | -set FITTED.json  -cal FILE -out SET.json [-alpha A] [-calibration one|pooled] [-seed S] [-reference N]",
		short: "calibrate a baseline set, or a fitted geometry, on a calibration bundle and save it",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			geom := fs.String("geometry", "", "baseline set family: ball or ellipsoid")
			fitted := fs.String("set", "", "fitted set `file` (from ccs fit) whose geometry to calibrate")
			calPath := fs.String("cal", "", "calibration bundle `file` (.npz)")
			setPath := fs.String("out", "", "fitted set `file` to write (.json)")
			alpha := fs.Float64("alpha", 0.05, "miscoverage level α in (0,1): the set holds positives with probability ≥ 1−α")
			mode := fs.String("calibration", "one", "calibration `mode`: one (one positive per anchor: the guarantee) or pooled (approximate)")
			seed := fs.Uint64("seed", 0, "`seed` choosing each anchor's positive and the ellipsoid's half split")
			ridge := fs.Float64("ridge", baseline.DefaultRidge, "ellipsoid: ridge added to Σ's diagonal, relative to tr(Σ)/d")
			reference := fs.Int("reference", 0, "keep `N` calibration anchors with the set as the reference pool of the per-sample CCS OOD score (0: none)")
			allowInf := fs.Bool("allow-infinite", false, "accept a whole-space set (threshold +Inf) when the calibration split is too small")
			return func([]string) error {
				if (*geom == "") == (*fitted == "") {
					return usagef("calibrate: give one of -geometry and -set")
				}
				if err := required("calibrate", "cal", *calPath, "out", *setPath); err != nil {
					return err
				}
				if err := checkAlpha("calibrate", *alpha); err != nil {
					return err
				}
				m, err := conformal.ParseMode(*mode)
				if err != nil {
					return usagef("calibrate: -calibration: %v", err)
				}
				var kind geometry.Kind
				var fittedSet *conformal.Set
				if *geom != "" {
					if kind, err = geometry.ParseKind(*geom); err != nil {
						return usagef("calibrate: -geometry: %v", err)
					}
					if kind != geometry.KindBall && kind != geometry.KindEllipsoid {
						return usagef("calibrate: -geometry %s is learned: fit it with ccs fit, then calibrate with -set", kind)
					}
				} else if fittedSet, err = conformal.Load(*fitted); err != nil {
					return err
				}
				if *reference < 0 {
					return usagef("calibrate: -reference %d must be ≥ 0", *reference)
				}
				if !(*ridge > 0) {
					return usagef("calibrate: -ridge %v must be positive", *ridge)
				}
				cal, err := bundle.Read(*calPath)
				if err != nil {
					return err
				}
				opt := baseline.Options{Calibration: conformal.Options{Mode: m, Seed: *seed, AllowInfinite: *allowInf},
					Ridge: *ridge, SplitSeed: *seed}
				var set *conformal.Set
				switch {
				case fittedSet != nil:
					if set, err = conformal.Calibrate(fittedSet.Geometry, cal, *alpha, opt.Calibration); err == nil {
						set.Fit = fittedSet.Fit
					}
				case kind == geometry.KindBall:
					set, err = baseline.Ball(cal, *alpha, opt)
				default:
					set, err = baseline.Ellipsoid(cal, *alpha, opt)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", *calPath, err)
				}
				if *reference > 0 {
					if set.Reference, err = conformal.NewReference(cal, *reference, *seed, "calibration anchors"); err != nil {
						return fmt.Errorf("%s: %w", *calPath, err)
					}
				}
				if err := set.Save(*setPath); err != nil {
					return err
				}
				fmt.Fprintf(out.stdout, "wrote %s: %s\n", *setPath, describe(set))
				for _, w := range set.Warnings() {
					out.warn(w)
				}
				return nil
			}
		},
	})
}

// describe is a one-line account of a set.
func describe(s *conformal.Set) string {
	c := s.Calibration
	return fmt.Sprintf("%v set, d=%d, α=%v, threshold %.6g (rank %d of n=%d, %v calibration)",
		geometry.Describe(s.Geometry), s.Geometry.Dim(), s.Alpha, s.Threshold, c.Rank, c.N, c.Mode)
}
