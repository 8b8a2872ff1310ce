package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/retrieve"
)

// classCalibration is a calibration bundle of n anchors in classes
// labelled 0 to classes−1 (anchor i's is i % classes), a class's
// positives nearer their anchors than another's.
func classCalibration(rng *rand.Rand, n, k, d, classes int) *bundle.Bundle {
	cal := &bundle.Bundle{N: n, K: k, D: d, Labels: make([]int64, n), Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d)}
	for i := range n {
		cal.Labels[i] = int64(i % classes)
		sigma := 0.5 + float64(i%classes)
		for j := range d {
			cal.Anchors[i*d+j] = float32(rng.NormFloat64())
			for a := range k {
				cal.Positives[(i*k+a)*d+j] = cal.Anchors[i*d+j] + float32(sigma*rng.NormFloat64())
			}
		}
	}
	return cal
}

// TestBatchTransformSharedByClasses: ccs retrieve's transform of a batch's
// collection, made once for a class-conditional set, is the one that
// every class's set (-anchor-labels' groups, -label's) and the set over
// all classes (-unlabeled marginal) search; below retrieveTransformMin
// anchors (a set behind a head: retrieve.HeadTransformMin), or for a set
// that no transform serves, there is none.
func TestBatchTransformSharedByClasses(t *testing.T) {
	t.Parallel()
	const n, k, d, classes = 300, 2, 3, 3
	rng := rand.New(rand.NewPCG(11, 12))
	cal := classCalibration(rng, n, k, d, classes)
	rows := make([]float32, 500*d)
	for i := range rows {
		rows[i] = float32(2 * rng.NormFloat64())
	}
	nm, err := geometry.NewNorm(d, []float64{1, 0.3, 0, 0, 2, 0.1, 0, 0, 0.5}, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	el, err := geometry.NewEllipsoid(d, []float64{1, 0.3, 0, 0.3, 2, 0.1, 0, 0.1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	gb, err := geometry.NewGenBall([]float64{1, 0.7}, []float64{1.5, 2})
	if err != nil {
		t.Fatal(err)
	}
	hg, err := head.NewProjected(&head.Linear{In: d, Out: 2, W: []float64{1, 0.2, 0, -0.1, 1, 0.3}, B: make([]float64, 2)}, gb)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		g    geometry.Geometry
		m    int
		want bool
	}{
		{"single-norm", nm, retrieveTransformMin, true},
		{"ellipsoid", el, 100, true},
		{"single-norm, too few anchors", nm, retrieveTransformMin - 1, false},
		{"ball", geometry.Ball{D: d}, 100, false},
		// Behind a head the transform costs about one plain scan: from two
		// anchors on (retrieve.HeadTransformMin).
		{"generalized ball behind a head", hg, retrieve.HeadTransformMin, true},
		{"generalized ball behind a head, one anchor", hg, retrieve.HeadTransformMin - 1, false},
	}
	for _, tt := range tests {
		set, err := conformal.Calibrate(tt.g, cal, 0.1, conformal.Options{Mode: conformal.Class})
		if err != nil {
			t.Fatal(err)
		}
		c, err := retrieve.NewCollection(rows, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		batchTransform(c, set, tt.m)
		searched := []*conformal.Set{set.OverAllClasses()}
		for _, cl := range set.Classes {
			s, err := set.ForClass(cl.Label)
			if err != nil {
				t.Fatal(err)
			}
			searched = append(searched, s)
		}
		for i, s := range searched {
			if got := c.Transformed(s); got != tt.want {
				t.Errorf("%s: set %d (0: over all classes, then the classes'): transformed %v, want %v", tt.name, i, got, tt.want)
			}
		}
	}
}

// transformSpy is a collection (-db transformspy://NAME) that records the
// sets it is transformed for.
type transformSpy struct {
	*retrieve.Collection
	mu   sync.Mutex
	sets []*conformal.Set
}

// Transform implements retrieve.Transformer.
func (c *transformSpy) Transform(s *conformal.Set, maxBytes int64) error {
	c.mu.Lock()
	c.sets = append(c.sets, s)
	c.mu.Unlock()
	return c.Collection.Transform(s, maxBytes)
}

// transformSpies are the collections of transformspy://NAME, by NAME.
var transformSpies sync.Map

func init() {
	retrieve.Register("transformspy", func(_ context.Context, u string) (retrieve.Store, error) {
		c, ok := transformSpies.Load(strings.TrimPrefix(u, "transformspy://"))
		if !ok {
			return nil, fmt.Errorf("no collection %s", u)
		}
		return c.(*transformSpy), nil
	})
}

// TestRetrieveTransformsForClassSet: ccs retrieve with a class-conditional
// set transforms a batch's collection once, for the class-conditional set
// itself (whose threshold over all classes keeps the float32 product), not
// for the first anchor's class's set — with -anchor-labels, -label and
// -unlabeled marginal alike.
func TestRetrieveTransformsForClassSet(t *testing.T) {
	t.Parallel()
	const n, k, d, classes, m = 300, 2, 3, 3, retrieveTransformMin + 2
	rng := rand.New(rand.NewPCG(13, 14))
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	nm, err := geometry.NewNorm(d, []float64{1, 0.3, 0, 0, 2, 0.1, 0, 0, 0.5}, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	set, err := conformal.Calibrate(nm, classCalibration(rng, n, k, d, classes), 0.1, conformal.Options{Mode: conformal.Class})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Save(p("class.json")); err != nil {
		t.Fatal(err)
	}
	anchors := make([]float32, m*d)
	for i := range anchors {
		anchors[i] = float32(rng.NormFloat64())
	}
	if err := bundle.WriteNPY(p("a.npy"), bundle.Float32(anchors, m, d)); err != nil {
		t.Fatal(err)
	}
	var labels strings.Builder
	for i := range m {
		fmt.Fprintln(&labels, (i+2)%classes) // the first anchor's class is 2
	}
	if err := os.WriteFile(p("labels.txt"), []byte(labels.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := make([]float32, 500*d)
	for i := range rows {
		rows[i] = float32(2 * rng.NormFloat64())
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"anchor-labels", []string{"-anchor-labels", p("labels.txt")}},
		{"label", []string{"-label", "2"}},
		{"unlabeled marginal", []string{"-unlabeled", "marginal"}},
	} {
		c, err := retrieve.NewCollection(rows, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		spy := &transformSpy{Collection: c}
		name := strings.ReplaceAll(t.Name()+"/"+tt.name, " ", "-")
		transformSpies.Store(name, spy)
		var stdout, stderr bytes.Buffer
		args := append([]string{"retrieve", "-set", p("class.json"), "-db", "transformspy://" + name, "-anchor", p("a.npy"), "-limit", "3"}, tt.args...)
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatalf("%s: %v\n%s", tt.name, err, stderr.String())
		}
		transformSpies.Delete(name)
		if len(spy.sets) != 1 || !spy.sets[0].ClassConditional() || spy.sets[0].Threshold != set.Threshold {
			var got []string
			for _, s := range spy.sets {
				got = append(got, fmt.Sprintf("(class-conditional %v, threshold %v)", s.ClassConditional(), s.Threshold))
			}
			t.Errorf("%s: transformed for %v, want once for the class-conditional set (threshold %v)", tt.name, got, set.Threshold)
		}
	}
}
