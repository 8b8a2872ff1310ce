package main

import (
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/retrieve"
)

// TestBatchTransformSharedByClasses: ccs retrieve's transform of a batch's
// collection, made once for a class-conditional set, is the one that
// every class's set (-anchor-labels' groups, -label's) and the set over
// all classes (-unlabeled marginal) search; below retrieveTransformMin
// anchors, or for a set that no transform serves, there is none.
func TestBatchTransformSharedByClasses(t *testing.T) {
	t.Parallel()
	const n, k, d, classes = 300, 2, 3, 3
	rng := rand.New(rand.NewPCG(11, 12))
	cal := &bundle.Bundle{N: n, K: k, D: d, Labels: make([]int64, n), Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d)}
	for i := range n {
		cal.Labels[i] = int64(i % classes)
		sigma := 0.5 + float64(i%classes) // a class's positives nearer than another's
		for j := range d {
			cal.Anchors[i*d+j] = float32(rng.NormFloat64())
			for a := range k {
				cal.Positives[(i*k+a)*d+j] = cal.Anchors[i*d+j] + float32(sigma*rng.NormFloat64())
			}
		}
	}
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
