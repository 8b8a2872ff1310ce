package conformal

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// TestNilInputs: a nil geometry (a variable a switch left unset, or the
// nil pointer of a constructor whose error was dropped), a nil
// calibration bundle and a nil fitted set are errors naming what is
// missing, never a nil-pointer panic (trial 31, finding 3).
func TestNilInputs(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(1, 2)), 50, 2)
	var unset geometry.Geometry
	var dropped *geometry.Ellipsoid // NewEllipsoid's result beside an ignored error
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"Calibrate, no geometry", func() error { return second(Calibrate(unset, cal, 0.1, Options{})) }, "conformal: no geometry (nil)"},
		{"Calibrate, a nil *Ellipsoid", func() error { return second(Calibrate(dropped, cal, 0.1, Options{})) }, "conformal: no geometry (a nil *geometry.Ellipsoid)"},
		{"Calibrate, no bundle", func() error { return second(Calibrate(geometry.Ball{D: 2}, nil, 0.1, Options{})) }, "conformal: no calibration bundle (nil)"},
		{"Calibrate by class, no bundle", func() error { return second(Calibrate(geometry.Ball{D: 2}, nil, 0.1, Options{Mode: Class})) }, "conformal: no calibration bundle (nil)"},
		{"Scores, no geometry", func() error { return second(Scores(unset, cal, OnePerAnchor, 0)) }, "conformal: no geometry (nil)"},
		{"CalibrateFitted, no set", func() error { return second(CalibrateFitted(nil, cal, 0.1, Options{})) }, "conformal: no fitted set (nil)"},
		{"CalibrateFitted, a set of no geometry", func() error { return second(CalibrateFitted(&Set{}, cal, 0.1, Options{})) }, "conformal: no geometry (nil)"},
		{"CalibrateFitted, no bundle", func() error {
			return second(CalibrateFitted(Uncalibrated(geometry.Ball{D: 2}, nil), nil, 0.1, Options{}))
		}, "conformal: no calibration bundle (nil)"},
		{"NewReference, no bundle", func() error { return second(NewReference(nil, 10, 1, CalibrationAnchors)) }, "conformal: no bundle for the reference pool (nil)"},
	} {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return c.call()
		}()
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestNonFiniteBeforeNorm: a NaN or infinite coordinate given to a set
// calibrated on unit-norm embeddings is named, row and coordinate, as it
// is for any other set, not refused as a row to normalise (a *NormError):
// normalising would not mend it (trial 31, finding 4). The finiteness of
// all the rows comes first: a NaN after an unnormalised row is the one
// named. Rows of another norm alone are still a *NormError naming the row.
func TestNonFiniteBeforeNorm(t *testing.T) {
	t.Parallel()
	s := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor, UnitNorm: true}}
	raw := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor}}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	unit := []float32{0.6, 0.8}
	for _, c := range []struct {
		name   string
		set    *Set
		points []float32
		want   string
		norm   bool // a *NormError
	}{
		{"a NaN point", s, []float32{0.6, nan}, "conformal: points[0][1] is NaN", false},
		{"an infinite point", s, []float32{inf, 0.8}, "conformal: points[0][0] is +Inf", false},
		{"a NaN third point", s, []float32{0.6, 0.8, 1, 0, nan, 0}, "conformal: points[2][0] is NaN", false},
		{"a long point, then a NaN", s, []float32{6, 8, nan, 0}, "conformal: points[1][0] is NaN", false},
		{"a long second point", s, []float32{0.6, 0.8, 6, 8}, "conformal: points[1]: norm 10: the set was calibrated on unit-norm embeddings", true},
		{"a NaN point, raw embeddings", raw, []float32{0.6, 0.8, 0.6, nan}, "conformal: points[1][1] is NaN", false},
	} {
		for _, call := range []struct {
			name string
			err  error
		}{
			{"Members", second(c.set.Members(nil, unit, c.points, nil))},
			{"Scores", second(c.set.Scores(nil, unit, c.points))},
		} {
			var ne *NormError
			if err := call.err; err == nil || !strings.HasPrefix(err.Error(), c.want) || errors.As(err, &ne) != c.norm {
				t.Errorf("%s, %s: %v (a *NormError: %v), want %q (a *NormError: %v)", call.name, c.name, err, errors.As(err, &ne), c.want, c.norm)
			}
		}
		if len(c.points) == 2 {
			var ne *NormError
			if _, err := c.set.Contains(unit, c.points, nil); err == nil || !strings.HasPrefix(err.Error(), c.want) || errors.As(err, &ne) != c.norm {
				t.Errorf("Contains, %s: %v, want %q", c.name, err, c.want)
			}
		}
	}
	// CheckRows and CheckAnchorRows directly, and a bundle's anchors.
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"CheckRows", s.CheckRows("queries", []float32{3, 4, 0.6, nan}), "queries[1][1] is NaN"},
		{"CheckAnchorRows", s.CheckAnchorRows("queries", []float32{inf, 0}), "queries[0][0] is +Inf"},
		{"CheckBundleNorms", s.CheckBundleNorms(&bundle.Bundle{N: 2, D: 2, Anchors: []float32{0.6, 0.8, nan, 0}}), "anchors[1][0] is NaN"},
		{"CheckRows, long", s.CheckRows("queries", []float32{0.6, 0.8, 3, 4}), "norm 5: "},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
	if err := s.CheckRows("queries", []float32{0.6, 0.8, 1, 0}); err != nil {
		t.Errorf("unit rows: %v", err)
	}
}

// TestDimErrors: a dimension that is not the set's, where its shape is
// known — an anchor, a point, a calibration bundle — matches ErrDimension
// and reads as a *DimError of that shape and the set's dimension, as
// docs/go.md says (trial 31, finding 5); values that are not rows match
// ErrDimension alone. The messages are unchanged.
func TestDimErrors(t *testing.T) {
	t.Parallel()
	s := &Set{Geometry: geometry.Ball{D: 4}, Threshold: 1, Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor}}
	a4, p4 := make([]float32, 4), make([]float32, 8)
	cal := synthetic(rand.New(rand.NewPCG(1, 2)), 50, 2) // d = 2
	for _, c := range []struct {
		name  string
		err   error
		want  string
		shape []int // nil: no *DimError
		dim   int
	}{
		{"Contains, a short point", second(s.Contains(a4, a4[:3], nil)), "conformal: a point of 3 values, the set's dimension is 4", []int{3}, 4},
		{"Contains, a short anchor", second(s.Contains(a4[:3], a4, nil)), "conformal: an anchor of 3 values, the set's dimension is 4", []int{3}, 4},
		{"Members, a long anchor", second(s.Members(nil, make([]float32, 5), p4, nil)), "conformal: an anchor of 5 values, the set's dimension is 4", []int{5}, 4},
		{"Scores, a short anchor", second(s.Scores(nil, a4[:2], p4)), "conformal: an anchor of 2 values, the set's dimension is 4", []int{2}, 4},
		{"Members, values not rows", second(s.Members(nil, a4, p4[:7], nil)), "conformal: 7 point values are not rows of the set's dimension 4", nil, 0},
		{"Calibrate, a bundle of another dimension", second(Calibrate(geometry.Ball{D: 3}, cal, 0.1, Options{})), "conformal: geometry has dimension 3, calibration embeddings 2", []int{50, 2}, 3},
	} {
		if c.err == nil || c.err.Error() != c.want || !errors.Is(c.err, ErrDimension) {
			t.Errorf("%s: %v, want %q matching ErrDimension", c.name, c.err, c.want)
			continue
		}
		var de *DimError
		switch ok := errors.As(c.err, &de); {
		case ok != (c.shape != nil):
			t.Errorf("%s: a *DimError %v, want %v", c.name, ok, c.shape != nil)
		case ok && (fmt.Sprint(de.Shape) != fmt.Sprint(c.shape) || de.Dim != c.dim):
			t.Errorf("%s: *DimError of shape %v and dimension %d, want %v and %d", c.name, de.Shape, de.Dim, c.shape, c.dim)
		}
	}
}
