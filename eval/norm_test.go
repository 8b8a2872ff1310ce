package eval

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// unitRows scales every row of x (rows of d) to norm 1, in place.
func unitRows(x []float32, d int) {
	for i := 0; i < len(x); i += d {
		n := float32(conformal.RowNorm(x[i : i+d]))
		for j := range d {
			x[i+j] /= n
		}
	}
}

// TestUnnormalisedTestRefused: a set calibrated on unit-norm embeddings
// refuses, in every judgement of a test bundle, test anchors not
// normalised alike, with ccs evaluate's message (a *conformal.NormError
// naming the anchor): Evaluate reported coverage 0 with no error (trial
// 31, finding 1). A NaN anchor is named as a NaN; a set of other
// embeddings, and the normalised bundle, are judged.
func TestUnnormalisedTestRefused(t *testing.T) {
	t.Parallel()
	const d = 4
	rng := rand.New(rand.NewPCG(31, 1))
	cal, test := classBundle(rng, 300, 2, d), classBundle(rng, 300, 2, d)
	for _, b := range []*bundle.Bundle{cal, test} {
		unitRows(b.Anchors, d)
		unitRows(b.Positives, d)
		unitRows(b.Negatives, d)
	}
	scaled := func(b *bundle.Bundle, f func(a []float32)) *bundle.Bundle {
		c := *b
		c.Anchors = slices.Clone(b.Anchors)
		f(c.Anchors)
		return &c
	}
	twice := scaled(test, func(a []float32) {
		for i := range a {
			a[i] *= 2
		}
	})
	nan := scaled(test, func(a []float32) { a[5*d+1] = float32(math.NaN()) })
	const want = "eval: test bundle: anchor 0: norm 2: the set was calibrated on unit-norm embeddings"
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, geometry.UnitGenBall(d, 1.5)} {
		s, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{})
		if err != nil || !s.Calibration.UnitNorm {
			t.Fatalf("%v: %v, unit norm %v", g.Kind(), err, err == nil && s.Calibration.UnitNorm)
		}
		class, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{Mode: conformal.Class})
		if err != nil {
			t.Fatal(err)
		}
		raw := *s
		raw.Calibration.UnitNorm = false
		for _, c := range []struct {
			name  string
			judge func(s *conformal.Set, test *bundle.Bundle) error
		}{
			{"Evaluate", func(s *conformal.Set, b *bundle.Bundle) error { return second(Evaluate(s, b)) }},
			{"Evaluate of a class set", func(_ *conformal.Set, b *bundle.Bundle) error { return second(Evaluate(class, b)) }},
			{"ByClass", func(s *conformal.Set, b *bundle.Bundle) error { return third(ByClass(s, b)) }},
			{"WithClasses", func(s *conformal.Set, b *bundle.Bundle) error { return third(WithClasses(s, b)) }},
			{"WithLabels", func(s *conformal.Set, b *bundle.Bundle) error {
				_, _, err := WithLabels(s, b)
				if err != nil && strings.Contains(err.Error(), "carries no labels of its positives") {
					return nil // judged as far as these bundles go
				}
				return err
			}},
			{"WithCurve", func(s *conformal.Set, b *bundle.Bundle) error {
				_, _, err := WithCurve(s, cal, b, []float64{0.2})
				return err
			}},
			{"Recalibrated", func(s *conformal.Set, b *bundle.Bundle) error { return second(Recalibrated(s, cal, b, []float64{0.2})) }},
			{"Scored.Evaluate", func(s *conformal.Set, b *bundle.Bundle) error {
				sc, err := Score(s, b)
				if err != nil {
					return err
				}
				return second(sc.Evaluate())
			}},
			{"Scored.ByClass", func(s *conformal.Set, b *bundle.Bundle) error {
				sc, err := Score(s, b)
				if err != nil {
					return err
				}
				return third(sc.ByClass())
			}},
		} {
			var ne *conformal.NormError
			if err := c.judge(s, twice); err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &ne) || ne.Row != 0 {
				t.Errorf("%v, %s, anchors ×2: %v, want %q", g.Kind(), c.name, err, want)
			}
			if err := c.judge(s, nan); err == nil || err.Error() != "eval: test bundle: anchors[5][1] is NaN" || errors.As(err, &ne) {
				t.Errorf("%v, %s, a NaN anchor: %v, want it named", g.Kind(), c.name, err)
			}
			if err := c.judge(s, test); err != nil {
				t.Errorf("%v, %s, normalised: %v", g.Kind(), c.name, err)
			}
			if c.name != "Evaluate of a class set" {
				if err := c.judge(&raw, twice); err != nil {
					t.Errorf("%v, %s, a set of raw embeddings: %v", g.Kind(), c.name, err)
				}
			}
		}
	}
}

// TestNilAndDimension: nil arguments are errors, never a panic, and a test
// bundle of another dimension matches conformal.ErrDimension and reads as
// a *conformal.DimError of its shape (trial 31, findings 3 and 5).
func TestNilAndDimension(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 2))
	cal := classBundle(rng, 100, 2, 3)
	s, err := conformal.Calibrate(geometry.Ball{D: 3}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	other := classBundle(rng, 40, 2, 2)
	for _, c := range []struct {
		name string
		call func() error
		dim  bool
	}{
		{"WithClasses, no test", func() error { return third(WithClasses(s, nil)) }, false},
		{"WithLabels, no test", func() error { return third(WithLabels(s, nil)) }, false},
		{"WithLabels, no set", func() error { return third(WithLabels(nil, cal)) }, false},
		{"ByClass, no set", func() error { return third(ByClass(nil, cal)) }, false},
		{"Score, no set", func() error { return second(Score(nil, cal)) }, false},
		{"Recalibrated, no calibration", func() error { return second(Recalibrated(s, nil, cal, []float64{0.1})) }, false},
		{"Evaluate, d = 2", func() error { return second(Evaluate(s, other)) }, true},
		{"ByClass, d = 2", func() error { return third(ByClass(s, other)) }, true},
		{"WithClasses, d = 2", func() error { return third(WithClasses(s, other)) }, true},
		{"Score, d = 2", func() error { return second(Score(s, other)) }, true},
		{"Resplits, d = 2", func() error { return second(Resplits(s, other, 10, 0.5, 1)) }, true},
	} {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = errors.New("panic")
				}
			}()
			return c.call()
		}()
		var de *conformal.DimError
		switch {
		case err == nil || err.Error() == "panic" || !strings.HasPrefix(err.Error(), "eval: "):
			t.Errorf("%s: %v, want an error of eval's", c.name, err)
		case c.dim && (!errors.Is(err, conformal.ErrDimension) || !errors.As(err, &de) || de.Dim != 3 || !slices.Equal(de.Shape, []int{40, 2})):
			t.Errorf("%s: %v (*DimError %+v), want ErrDimension and a *DimError of shape (40, 2), dimension 3", c.name, err, de)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func third[T, U any](_ T, _ U, err error) error { return err }
