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
// does, for a generalized ball (the fast path where the build has it) and the
// ℓ2 ball, over more rows than one parallel block.
func TestMembersMatchesContains(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 41))
	const n, d = 2500, 17
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
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
		in, err := s.Members(nil, x, nil)
		if err != nil {
			t.Fatal(err)
		}
		inside := 0
		for i := range n {
			if want, _ := s.Contains(x[i*d:(i+1)*d], nil); in[i] != want {
				t.Fatalf("%v row %d: Members %v, Contains %v", g.Kind(), i, in[i], want)
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

// TestMembersOfClassSet: a class-conditional set judges with the anchor's
// class's threshold, refuses without a label (ErrNoLabel), and a set with
// one threshold refuses a label (ErrLabel): no caller can fall back on the
// threshold over all classes by forgetting the label.
func TestMembersOfClassSet(t *testing.T) {
	t.Parallel()
	x := []float32{0.5, 0, 1.5, 0, 2.5, 0} // scores 0.5, 1.5, 2.5 under the ℓ2 ball
	class := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 2, Alpha: 0.1, Calibration: Info{Mode: Class},
		Classes: []ClassThreshold{{Label: 3, Threshold: 1}, {Label: 7, Threshold: 3}}}
	for _, c := range []struct {
		label int64
		want  []bool
	}{{3, []bool{true, false, false}}, {7, []bool{true, true, true}}} {
		in, err := class.Members(nil, x, &c.label)
		if err != nil || !slices.Equal(in, c.want) {
			t.Errorf("class %d: %v, %v; want %v", c.label, in, err, c.want)
		}
		if got, err := class.Contains(x[2:4], &c.label); err != nil || got != c.want[1] {
			t.Errorf("class %d: Contains %v, %v", c.label, got, err)
		}
	}
	if _, err := class.Members(nil, x, nil); !errors.Is(err, ErrNoLabel) {
		t.Errorf("no label: %v, want ErrNoLabel", err)
	}
	if _, err := class.Contains(x[:2], nil); !errors.Is(err, ErrNoLabel) {
		t.Errorf("Contains without a label: %v, want ErrNoLabel", err)
	}
	if err := class.OneThreshold(); !errors.Is(err, ErrNoLabel) {
		t.Errorf("OneThreshold: %v", err)
	}
	unknown := int64(5)
	if _, err := class.Members(nil, x, &unknown); err == nil || !strings.Contains(err.Error(), "class 5 has no threshold") {
		t.Errorf("unknown class: %v", err)
	}
	marginal := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 2, Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor}}
	if _, err := marginal.Members(nil, x, &unknown); !errors.Is(err, ErrLabel) {
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
