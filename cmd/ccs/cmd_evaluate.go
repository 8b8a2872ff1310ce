package main

import (
	"context"
	"flag"
	"fmt"
	"math"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
)

// evaluateOptions are ccs evaluate's inputs.
type evaluateOptions struct {
	Set, Test string // files
	JSON      bool
}

func evaluateCommand() *command {
	return newCommand("evaluate", "-set SET.json -test FILE [-json]",
		"measure a fitted set's coverage, exclusion and LogVol/d on a test bundle",
		func(fs *flag.FlagSet, o *evaluateOptions) func() error {
			fs.StringVar(&o.Set, "set", "", "fitted set `file` (.json)")
			fs.StringVar(&o.Test, "test", "", "test bundle `file` (.npz)")
			fs.BoolVar(&o.JSON, "json", false, "print JSON instead of text")
			return nil
		}, runEvaluate)
}

func runEvaluate(_ context.Context, o evaluateOptions, out *output) error {
	if err := required("evaluate", "set", o.Set, "test", o.Test); err != nil {
		return err
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	test, err := readBundle(out, o.Test)
	if err != nil {
		return err
	}
	r, err := eval.Evaluate(set, test)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", o.Set, o.Test, err)
	}
	if o.JSON {
		return writeEvalJSON(out, set, r)
	}
	fmt.Fprintf(out.stdout, "set        %s\n", describe(set))
	fmt.Fprintf(out.stdout, "coverage   %.2f%% of %d test positives\n", 100*r.Coverage, r.Positives)
	if math.IsNaN(r.Exclusion) {
		fmt.Fprintf(out.stdout, "exclusion  n/a (the test bundle has no negatives)\n")
	} else {
		fmt.Fprintf(out.stdout, "exclusion  %.2f%% of %d test negatives\n", 100*r.Exclusion, r.Negatives)
	}
	fmt.Fprintf(out.stdout, "LogVol/d   %.4g\n", r.LogVolPerDim)
	for _, w := range set.Warnings() {
		out.warn(w)
	}
	return nil
}

func writeEvalJSON(out *output, set *conformal.Set, r eval.Result) error {
	type jsonResult struct {
		Geometry    string         `json:"geometry"`
		Dim         int            `json:"dim"`
		Alpha       float64        `json:"alpha"`
		Threshold   any            `json:"threshold"`
		Calibration conformal.Info `json:"calibration"`
		Coverage    float64        `json:"coverage"`
		Exclusion   *float64       `json:"exclusion"`      // null without negatives
		LogVolPerD  any            `json:"logvol_per_dim"` // "+Inf" for a whole-space set
		Positives   int            `json:"positives"`
		Negatives   int            `json:"negatives"`
		Warnings    []string       `json:"warnings"`
	}
	j := jsonResult{Geometry: set.Geometry.Kind().String(), Dim: set.Geometry.Dim(), Alpha: set.Alpha,
		Threshold: set.Threshold, Calibration: set.Calibration, Coverage: r.Coverage,
		LogVolPerD: r.LogVolPerDim, Positives: r.Positives, Negatives: r.Negatives, Warnings: set.Warnings()}
	if math.IsInf(set.Threshold, 1) { // JSON has no +Inf
		j.Threshold, j.LogVolPerD = "+Inf", "+Inf"
	}
	if !math.IsNaN(r.Exclusion) {
		j.Exclusion = &r.Exclusion
	}
	if j.Warnings == nil {
		j.Warnings = []string{}
	}
	return writeJSON(out.stdout, j)
}

// describe is a one-line account of a set.
func describe(s *conformal.Set) string {
	c := s.Calibration
	mode := c.Mode.String() + " calibration"
	if c.Mode == conformal.PAC {
		mode = fmt.Sprintf("pac calibration, δ=%v: coverage ≥ 1−α with probability ≥ 1−δ over the calibration draw", c.Delta)
	}
	return fmt.Sprintf("%v set, d=%d, α=%v, threshold %.6g (rank %d of n=%d, %s)",
		geometry.Describe(s.Geometry), s.Geometry.Dim(), s.Alpha, s.Threshold, c.Rank, c.N, mode)
}
