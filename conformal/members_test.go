package conformal

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// TestMembersMatchesContains: Set.Members decides every point as Contains
// does, and as the exact scores of the differences anchor − point made by
// hand, for a generalized ball (the fast path where the build has it) and
// the ℓ2 ball, over more rows than one parallel block.
func TestMembersMatchesContains(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 41))
	const n, d = 2500, 17
	anchor, points, x := make([]float32, d), make([]float32, n*d), make([]float32, n*d)
	for j := range anchor {
		anchor[j] = float32(rng.NormFloat64())
	}
	for i := range points {
		points[i] = float32(rng.NormFloat64())
		x[i] = anchor[i%d] - points[i]
	}
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j], p[j] = math.Exp(rng.NormFloat64()), 0.5+2*rng.Float64()
	}
	gb, err := geometry.NewGenBall(m, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []geometry.Geometry{gb, geometry.Ball{D: d}} {
		scores := g.Scores(nil, x)
		s := &Set{Geometry: g, Threshold: scores[0], Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor}}
		in, err := s.Members(nil, anchor, points, nil)
		if err != nil {
			t.Fatal(err)
		}
		inside := 0
		for i := range n {
			want, err := s.Contains(anchor, points[i*d:(i+1)*d], nil)
			if err != nil || in[i] != want || want != (scores[i] <= s.Threshold) {
				t.Fatalf("%v row %d: Members %v, Contains %v (%v), score %v against %v", g.Kind(), i, in[i], want, err, scores[i], s.Threshold)
			}
			if in[i] {
				inside++
			}
		}
		if inside == 0 || inside == n || !in[0] {
			t.Fatalf("%v: %d of %d inside (row 0 on the boundary: %v); the test decides nothing", g.Kind(), inside, n, in[0])
		}
	}
}

// TestMembersRefuses: what a service may be sent — an uncalibrated set,
// embeddings of another dimension, an output of another length, a NaN or
// infinite coordinate — is an error naming it, never a panic or a silent
// false.
func TestMembersRefuses(t *testing.T) {
	t.Parallel()
	const d = 4
	s := &Set{Geometry: geometry.Ball{D: d}, Threshold: 2, Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor}}
	anchor := make([]float32, d)
	points := make([]float32, 3*d)
	nan := func(x []float32, i int, v float64) []float32 {
		x = slices.Clone(x)
		x[i] = float32(v)
		return x
	}
	for _, c := range []struct {
		name          string
		set           *Set
		dst           []bool
		anchor, point []float32
		want          string
	}{
		{"uncalibrated", Uncalibrated(geometry.Ball{D: d}, nil), nil, anchor, points, "not calibrated"},
		{"an anchor of another dimension", s, nil, make([]float32, d+1), points, "an anchor of 5 values, the set's dimension is 4"},
		{"points of another dimension", s, nil, anchor, make([]float32, 2*d+1), "9 point values are not rows of the set's dimension 4"},
		{"an output of another length", s, make([]bool, 2), anchor, points, "an output of 2 for 3 points"},
		{"a NaN anchor", s, nil, nan(anchor, 2, math.NaN()), points, "anchor[2] is NaN"},
		{"a NaN point", s, nil, anchor, nan(points, 2*d+1, math.NaN()), "points[2][1] is NaN"},
		{"an infinite point", s, nil, anchor, nan(points, d+3, math.Inf(-1)), "points[1][3] is -Inf"},
	} {
		_, err := c.set.Members(c.dst, c.anchor, c.point, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Members, %s: %v, want %q", c.name, err, c.want)
		}
		if dim := strings.Contains(c.name, "dimension"); errors.Is(err, ErrDimension) != dim {
			t.Errorf("Members, %s: errors.Is(ErrDimension) %v, want %v", c.name, !dim, dim)
		}
	}
	for _, c := range []struct {
		name          string
		set           *Set
		anchor, point []float32
		want          string
	}{
		{"uncalibrated", Uncalibrated(geometry.Ball{D: d}, nil), anchor, anchor, "not calibrated"},
		{"two points", s, anchor, points[:2*d], "a point of 8 values, the set's dimension is 4"},
		{"a short anchor", s, anchor[:d-1], anchor, "an anchor of 3 values"},
		{"a NaN point", s, anchor, nan(anchor, 0, math.NaN()), "points[0][0] is NaN"},
	} {
		if _, err := c.set.Contains(c.anchor, c.point, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Contains, %s: %v, want %q", c.name, err, c.want)
		}
	}
	if in, err := s.Members(nil, anchor, nil, nil); err != nil || len(in) != 0 {
		t.Errorf("no points: %v, %v", in, err)
	}
}

// TestMembersOfClassSet: a class-conditional set judges with the anchor's
// class's threshold, refuses without a label (ErrNoLabel), and a set with
// one threshold refuses a label (ErrLabel): no caller can fall back on the
// threshold over all classes by forgetting the label.
func TestMembersOfClassSet(t *testing.T) {
	t.Parallel()
	x := []float32{0.5, 0, 1.5, 0, 2.5, 0} // scores 0.5, 1.5, 2.5 under the ℓ2 ball, around the origin
	zero := make([]float32, 2)
	class := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 2, Alpha: 0.1, Calibration: Info{Mode: Class},
		Classes: []ClassThreshold{{Label: 3, Threshold: 1}, {Label: 7, Threshold: 3}}}
	for _, c := range []struct {
		label int64
		want  []bool
	}{{3, []bool{true, false, false}}, {7, []bool{true, true, true}}} {
		in, err := class.Members(nil, zero, x, &c.label)
		if err != nil || !slices.Equal(in, c.want) {
			t.Errorf("class %d: %v, %v; want %v", c.label, in, err, c.want)
		}
		if got, err := class.Contains(zero, x[2:4], &c.label); err != nil || got != c.want[1] {
			t.Errorf("class %d: Contains %v, %v", c.label, got, err)
		}
	}
	if _, err := class.Members(nil, zero, x, nil); !errors.Is(err, ErrNoLabel) {
		t.Errorf("no label: %v, want ErrNoLabel", err)
	}
	if _, err := class.Contains(zero, x[:2], nil); !errors.Is(err, ErrNoLabel) {
		t.Errorf("Contains without a label: %v, want ErrNoLabel", err)
	}
	if err := class.OneThreshold(); !errors.Is(err, ErrNoLabel) {
		t.Errorf("OneThreshold: %v", err)
	}
	unknown := int64(5)
	if _, err := class.Members(nil, zero, x, &unknown); err == nil || !strings.Contains(err.Error(), "class 5 has no threshold") {
		t.Errorf("unknown class: %v", err)
	}
	marginal := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 2, Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor}}
	if _, err := marginal.Members(nil, zero, x, &unknown); !errors.Is(err, ErrLabel) {
		t.Errorf("a label for a marginal set: %v, want ErrLabel", err)
	}
	if err := marginal.OneThreshold(); err != nil {
		t.Errorf("marginal OneThreshold: %v", err)
	}
}

// TestClassAtMaximumWarned: a class whose rank is n (its threshold its
// largest score) is warned about, with the calibration size that lifts it.
func TestClassAtMaximumWarned(t *testing.T) {
	t.Parallel()
	r30, _ := Rank(30, 0.05)
	r45, _ := Rank(45, 0.05)
	s := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 2, Alpha: 0.05, Calibration: Info{Mode: Class},
		Classes: []ClassThreshold{{Label: 1, N: 30, Rank: r30, Threshold: 3}, {Label: 2, N: 45, Rank: r45, Threshold: 3}}}
	w := strings.Join(s.Warnings(), "\n")
	if r30 != 30 || !strings.Contains(w, "class 1: its 30 calibration anchors give rank n = 30") || !strings.Contains(w, "39 would lift it off the maximum") {
		t.Errorf("rank %d of 30; warnings:\n%s", r30, w)
	}
	if r45 == 45 || strings.Contains(w, "class 2") {
		t.Errorf("rank %d of 45: class 2 warned:\n%s", r45, w)
	}
}

// TestScores: Set.Scores is the geometry's score of anchor − point, as
// Members compares it with the threshold, over more rows than one
// parallel block; it refuses what Members refuses, and a set calibrated on
// unit-norm embeddings refuses an anchor or point not of unit norm (a
// *NormError), in Members and Scores alike.
func TestScores(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(43, 43))
	const n, d = 2100, 6
	anchor, points, x := make([]float32, d), make([]float32, n*d), make([]float32, n*d)
	for j := range anchor {
		anchor[j] = float32(rng.NormFloat64())
	}
	for i := range points {
		points[i] = float32(rng.NormFloat64())
		x[i] = anchor[i%d] - points[i]
	}
	shifted, err := geometry.NewShifted(geometry.UnitGenBall(d, 1.5), []float64{0.3, 0, 0, -0.2, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, shifted} {
		want := g.Scores(nil, x)
		s := &Set{Geometry: g, Threshold: want[0], Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor}}
		got, err := s.Scores(nil, anchor, points)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%v: %v; scores differ from the geometry's", g.Kind(), err)
		}
		in, _ := s.Members(nil, anchor, points, nil)
		for i := range n {
			if in[i] != (got[i] <= s.Threshold) {
				t.Fatalf("%v row %d: Members %v, score %v against %v", g.Kind(), i, in[i], got[i], s.Threshold)
			}
		}
	}
	s := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor, UnitNorm: true}}
	unit, long := []float32{0.6, 0.8}, []float32{6, 8}
	var ne *NormError
	for _, c := range []struct {
		name          string
		anchor, point []float32
	}{{"a long anchor", long, unit}, {"a long point", unit, long}} {
		_, err := s.Members(nil, c.anchor, c.point, nil)
		_, err2 := s.Scores(nil, c.anchor, c.point)
		if !errors.As(err, &ne) || !errors.As(err2, &ne) || ne.Norm != 10 {
			t.Errorf("%s: Members %v, Scores %v, want a *NormError of norm 10", c.name, err, err2)
		}
	}
	if _, err := s.Scores(nil, unit, []float32{0.6, 0.8, 0, 1}); err != nil {
		t.Errorf("unit rows: %v", err)
	}
	if _, err := s.Scores(nil, unit, []float32{1, 0, 0}); !errors.Is(err, ErrDimension) {
		t.Errorf("3 point values for dimension 2: %v, want ErrDimension", err)
	}
}
