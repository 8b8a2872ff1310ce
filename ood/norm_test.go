package ood

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// circle is n unit rows of dimension 2 at angles a0, a0+step, ….
func circle(n int, a0, step float64) []float32 {
	x := make([]float32, 0, 2*n)
	for i := range n {
		a := a0 + float64(i)*step
		x = append(x, float32(math.Cos(a)), float32(math.Sin(a)))
	}
	return x
}

// TestUnnormalisedInputsRefused: a set calibrated on unit-norm embeddings
// refuses, in its OOD scores and tests (Nearest.Scores and Calibrate,
// Conformal.Answer, CCSReference, CCSBatch), an input whose norm is not 1
// with a *conformal.NormError naming it by its row in the whole batch (past
// Answer's first chunk), as ccs ood refuses its inputs: such an input was
// flagged OOD with no hint why (trial 31, finding 2). A NaN is named as a
// NaN, not as a row to normalise, by its row in the whole batch (Answer
// named it by its row in its chunk); a set of other embeddings takes any
// norm.
func TestUnnormalisedInputsRefused(t *testing.T) {
	t.Parallel()
	const bad = 1050 // past the first chunk of Answer
	set := func(unit bool) *conformal.Set {
		s := ballSet(2, 0.5)
		s.Calibration.UnitNorm = unit
		var err error
		if s.Reference, err = conformal.NewReferenceRows(circle(20, 0, 0.1), 2, "test pool"); err != nil {
			t.Fatal(err)
		}
		n, err := NewNearest(s, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if s.OOD, err = n.Calibrate(circle(99, 0.013, 0.02), "held-out"); err != nil {
			t.Fatal(err)
		}
		return s
	}
	unit, raw := set(true), set(false)
	rows := circle(1100, 0.0005, 0.001)
	long, nan := slices.Clone(rows), slices.Clone(rows)
	long[2*bad], long[2*bad+1] = 3*long[2*bad], 3*long[2*bad+1]
	nan[2*bad+1] = float32(math.NaN())
	calls := []struct {
		name string
		call func(s *conformal.Set, rows []float32) error
		one  string // how the error names an input
	}{
		{"Nearest.Scores", func(s *conformal.Set, rows []float32) error {
			n, err := NewNearest(s, nil, 1)
			if err != nil {
				return err
			}
			return second(n.Scores(rows))
		}, "query"},
		{"Nearest.Calibrate", func(s *conformal.Set, rows []float32) error {
			n, err := NewNearest(s, nil, 1)
			if err != nil {
				return err
			}
			return second(n.Calibrate(rows, "held-out"))
		}, "calibration input"},
		{"Conformal.Answer", func(s *conformal.Set, rows []float32) error {
			c, err := NewConformal(s, Test{Alpha: 0.05})
			if err != nil {
				return err
			}
			return second(c.Answer(context.Background(), rows, 0.1))
		}, "query"},
		{"CCSReference", func(s *conformal.Set, rows []float32) error { return second(CCSReference(s, rows)) }, "query"},
		{"CCSBatch", func(s *conformal.Set, rows []float32) error {
			return second(CCSBatch(s, &bundle.Bundle{N: len(rows) / 2, D: 2, Anchors: rows}))
		}, "anchor"},
	}
	for _, c := range calls {
		var ne *conformal.NormError
		want := "ood: " + c.one + " 1050: norm 3: the set was calibrated on unit-norm embeddings"
		if err := c.call(unit, long); err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &ne) || ne.Row != bad {
			t.Errorf("%s, a long input: %v, want %q", c.name, err, want)
		}
		if err := c.call(unit, nan); err == nil || !strings.Contains(err.Error(), "[1050][1] is NaN") || errors.As(err, &ne) {
			t.Errorf("%s, a NaN input: %v, want it named", c.name, err)
		}
		if err := c.call(unit, rows); err != nil {
			t.Errorf("%s, unit inputs: %v", c.name, err)
		}
		if err := c.call(raw, long); err != nil {
			t.Errorf("%s, a set of raw embeddings: %v", c.name, err)
		}
		if err := c.call(raw, nan); err == nil || !strings.Contains(err.Error(), "[1050][1] is NaN") {
			t.Errorf("%s, a NaN input, a set of raw embeddings: %v, want it named by its row in the batch", c.name, err)
		}
	}
	// The rows of another dimension, and no set.
	c, err := NewConformal(unit, Test{Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := NewNearest(unit, nil, 1)
	for _, e := range []struct {
		name string
		err  error
		want string
	}{
		{"Answer, 3 values", second(c.Answer(context.Background(), rows[:3], 0)), "ood: 3 query values are not rows of dimension 2"},
		{"Scores, 3 values", second(n.Scores(rows[:3])), "ood: 3 query values are not rows of dimension 2"},
		{"Calibrate, 3 values", second(n.Calibrate(rows[:3], "x")), "ood: 3 calibration input values are not rows of dimension 2"},
	} {
		if e.err == nil || e.err.Error() != e.want || !errors.Is(e.err, conformal.ErrDimension) {
			t.Errorf("%s: %v, want %q matching ErrDimension", e.name, e.err, e.want)
		}
	}
	for _, e := range []struct {
		name string
		call func() error
	}{
		{"NewNearest", func() error { return second(NewNearest(nil, rows, 1)) }},
		{"NewConformal", func() error { return second(NewConformal(nil, Test{Alpha: 0.05})) }},
	} {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = errors.New("panic")
				}
			}()
			return e.call()
		}()
		if err == nil || err.Error() != "ood: no set (nil)" {
			t.Errorf("%s, no set: %v", e.name, err)
		}
	}
}
