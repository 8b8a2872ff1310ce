package main

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/retrieve"
)

// TestTransformClassSet: ccs_collection_transform (its body,
// collectionTransform, on handles) takes a class-conditional set (it once
// refused one), and each of its one-class sets (ForClass: what
// retrieve(label=) and retrieve_many(labels=) search with) then searches
// that transform, with the plain scan's hits; a set of another family is
// refused, saying so.
func TestTransformClassSet(t *testing.T) {
	t.Parallel()
	const n, d = 3000, 4
	cal := gauss(5, 300, 4, d)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i % 3)
	}
	nm, err := geometry.NewNorm(d, []float64{1, 0.3, 0, 0, 0, 2, 0.1, 0, 0, 0, 0.5, 0, 0.2, 0, 0, 1}, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	el, err := geometry.NewEllipsoid(d, []float64{1, 0.3, 0, 0, 0.3, 2, 0.1, 0, 0, 0.1, 0.5, 0, 0, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	rows := normals(6, n*d, 1.5)
	anchor := raw("anchor", normals(7, d, 1), d)
	tests := []struct {
		name string
		g    geometry.Geometry
		want string // the refusal; "": transformed
	}{
		{"single-norm", nm, ""},
		{"ellipsoid", el, ""},
		{"ball", geometry.Ball{D: d}, "only a single-norm or ellipsoid set is transformed"},
	}
	for _, tt := range tests {
		set, err := conformal.Calibrate(tt.g, cal, 0.1, conformal.Options{Mode: conformal.Class})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := retrieve.NewCollection(rows, d, nil)
		plain, _ := retrieve.NewCollection(rows, d, nil)
		ch, sh := newHandle(&collectionObj{c: c}), newHandle(&setObj{s: set})
		err = collectionTransform(ch, sh, 0)
		closeHandle(ch)
		closeHandle(sh)
		if tt.want != "" {
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: transform: %v, want %q", tt.name, err, tt.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: transform of a class-conditional set: %v", tt.name, err)
		}
		for _, cl := range set.Classes {
			fc, err := set.ForClass(cl.Label)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Transformed(fc) {
				t.Errorf("%s: class %d's set does not search the class-conditional set's transform", tt.name, cl.Label)
			}
			got, err := search(context.Background(), fc, c, anchor, 0)
			if err != nil {
				t.Fatal(err)
			}
			want, err := search(context.Background(), fc, plain, anchor, 0)
			if err != nil {
				t.Fatal(err)
			}
			if want.Total == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: class %d: %d hits transformed, %d by the plain scan (or other hits)", tt.name, cl.Label, got.Total, want.Total)
			}
		}
	}
}
