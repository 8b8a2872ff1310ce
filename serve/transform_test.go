package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/retrieve"
)

// transformable are a single-norm and an ellipsoid geometry (d = 3), the
// kinds whose collections are transformed.
func transformable(t *testing.T) []geometry.Geometry {
	nm, err := geometry.NewNorm(3, []float64{1, 0.3, 0, 0, 2, 0.1, 0, 0, 0.5}, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	el, err := geometry.NewEllipsoid(3, []float64{1, 0.3, 0, 0.3, 2, 0.1, 0, 0.1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	return []geometry.Geometry{nm, el}
}

// TestTransforms: a served single-norm or ellipsoid set, or a set behind a
// head (a generalized ball behind a 3 → 2 head, a single-norm behind a
// square one), gets its in-memory collection transformed at load (GET
// /v1/sets says so, with the bytes), its hits are the plain scan's; under
// a smaller -transform-memory the transform is refused with the reason
// and the hits stay the same.
func TestTransforms(t *testing.T) {
	gb, err := geometry.NewGenBall([]float64{1, 0.5}, []float64{1.5, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	nm, err := geometry.NewNorm(3, []float64{1, 0.2, 0, 0, 1.5, 0.1, 0.3, 0, 0.5}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var heads []geometry.Geometry
	for _, c := range []struct {
		w     []float64
		inner geometry.Geometry
	}{{[]float64{1, 0.2, -0.1, 0.3, 0.9, 0.4}, gb}, {[]float64{1, 0.1, 0, -0.2, 1, 0.3, 0, 0.4, 0.8}, nm}} {
		out := c.inner.Dim()
		g, err := head.NewProjected(&head.Linear{In: 3, Out: out, W: c.w, B: make([]float64, out)}, c.inner)
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, g)
	}
	for _, g := range append(transformable(t), heads...) {
		testTransforms(t, g)
	}
}

func testTransforms(t *testing.T, g geometry.Geometry) {
	dir := t.TempDir()
	name := g.Kind().String()
	set := &conformal.Set{Geometry: g, Threshold: 2.5, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90}}
	path := filepath.Join(dir, "set.json")
	if err := set.Save(path); err != nil {
		t.Fatal(err)
	}
	rows := make([]float32, 3*500)
	for i := range rows {
		rows[i] = float32(i%17)/4 - 2
	}
	db := filepath.Join(dir, "db.npz")
	if err := bundle.WriteNPZ(db, map[string]bundle.Array{"embeddings": bundle.Float32(rows, 500, 3)}); err != nil {
		t.Fatal(err)
	}
	plain, _ := retrieve.NewCollection(rows, 3, nil)
	loaded, err := conformal.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want, total, err := retrieve.Search(context.Background(), loaded, []float32{0.1, 0.2, -0.3}, plain, 0)
	if err != nil || total == 0 {
		t.Fatalf("%s: plain scan: %d hits, %v", name, total, err)
	}
	for _, tc := range []struct {
		budget  int64
		refused string
	}{{0, ""}, {100, "needs 0 MiB, 0 MiB left"}} {
		s, err := New(Config{Sets: map[string]string{name: path}, Collections: map[string]string{"db": db}, MaxResults: 1000, TransformBytes: tc.budget})
		if err != nil {
			t.Fatal(err)
		}
		var sets struct {
			Sets []setInfo `json:"sets"`
		}
		if err := json.Unmarshal(do(t, s.Handler(), "GET", "/v1/sets", "", "").Body.Bytes(), &sets); err != nil {
			t.Fatal(err)
		}
		tr := sets.Sets[0].Transforms
		if len(tr) != 1 || tr[0].Collection != "db" || (tc.refused == "") != (tr[0].Bytes == retrieve.TransformBytesOf(g, 500)) ||
			!strings.Contains(tr[0].Refused, tc.refused) {
			t.Errorf("%s, budget %d: transforms %+v", name, tc.budget, tr)
		}
		rec := do(t, s.Handler(), "POST", "/v1/sets/"+name+"/retrieve", "", `{"anchor": [0.1, 0.2, -0.3], "collection": "db"}`)
		var got struct {
			Total int            `json:"total"`
			Hits  []retrieve.Hit `json:"hits"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if got.Total != total || !slices.Equal(got.Hits, want) {
			t.Errorf("%s, budget %d: %d hits, want the plain scan's %d", name, tc.budget, got.Total, total)
		}
		s.Close()
	}
}

// TestCollectionIDsNamed: a collection spec FILE?ids=NAME takes the ids
// from the array of that name (a table's column likewise, in package
// table's tests); a name that is not there fails the load, naming the
// collection and the arrays there are.
func TestCollectionIDsNamed(t *testing.T) {
	dir := t.TempDir()
	set := &conformal.Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90}}
	path := filepath.Join(dir, "set.json")
	if err := set.Save(path); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "db.npz")
	if err := bundle.WriteNPZ(db, map[string]bundle.Array{"embeddings": bundle.Float32([]float32{0, 0, 5, 5, 0.5, 0}, 3, 2),
		"pid": bundle.Int64([]int64{70, 80, 90}, 3)}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Sets: map[string]string{"ball": path}, Collections: map[string]string{"db": db + "?ids=pid"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, ok := s.state.Load().colls["db"].(*retrieve.Collection)
	if !ok || !slices.Equal(c.IDs, []int64{70, 80, 90}) {
		t.Errorf("ids %v, want pid's [70 80 90]", c.IDs)
	}
	_, err = New(Config{Sets: map[string]string{"ball": path}, Collections: map[string]string{"db": db + "?ids=pids"}})
	if want := `db.npz: no array "pids" for the ids (?ids=pids); have embeddings float32 (3, 2), pid int64 (3,)`; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `collection "db"`) {
		t.Errorf("a missing ids array: %v, want %q", err, want)
	}
}

// TestClassTransforms: a class-conditional single-norm or ellipsoid set's
// collection is transformed at load, and its /retrieve with a label — a
// class's set made for the request (conformal.Set.ForClass) — searches
// that one transform (the class's sets share the set's geometry), with
// the plain scan's hits for every class; under a budget that refuses the
// transform the hits are the same, scanned plainly. A reload's sets have
// geometries of their own: the old generation's transforms do not serve
// them, the new generation's do.
func TestClassTransforms(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const n, k, d = 200, 2, 3
	cal := &bundle.Bundle{N: n, K: k, D: d, Labels: make([]int64, n)}
	cal.Anchors, cal.Positives = make([]float32, n*d), make([]float32, n*k*d)
	for i := range n {
		cal.Labels[i] = int64(i % 2)
		sigma := 0.5 + float64(i%2) // class 1 three times wider
		for j := range d {
			cal.Anchors[i*d+j] = float32(rng.NormFloat64())
			for a := range k {
				cal.Positives[(i*k+a)*d+j] = cal.Anchors[i*d+j] + float32(sigma*rng.NormFloat64())
			}
		}
	}
	rows := make([]float32, d*3000)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64() * 2)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "db.npz")
	if err := bundle.WriteNPZ(db, map[string]bundle.Array{"embeddings": bundle.Float32(rows, 3000, d)}); err != nil {
		t.Fatal(err)
	}
	plain, _ := retrieve.NewCollection(rows, d, nil)
	anchor := []float32{0.1, 0.2, -0.3}
	for _, g := range transformable(t) {
		name := g.Kind().String()
		set, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{Mode: conformal.Class})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		if err := set.Save(path); err != nil {
			t.Fatal(err)
		}
		for _, budget := range []int64{0, 100} {
			s, err := New(Config{Sets: map[string]string{name: path}, Collections: map[string]string{"db": db}, MaxResults: 3000, TransformBytes: budget})
			if err != nil {
				t.Fatal(err)
			}
			st := s.state.Load()
			coll := st.colls["db"].(*retrieve.Collection)
			for _, c := range set.Classes {
				fc, err := st.sets[name].ForClass(c.Label)
				if err != nil {
					t.Fatal(err)
				}
				if got := coll.Transformed(fc); got != (budget == 0) {
					t.Errorf("%s, budget %d, class %d: searches the transform: %v, want %v", name, budget, c.Label, got, budget == 0)
				}
				want, total, err := retrieve.Search(context.Background(), fc, anchor, plain, 0)
				if err != nil || total == 0 || total == 3000 {
					t.Fatalf("%s, class %d: plain scan: %d hits, %v", name, c.Label, total, err)
				}
				rec := do(t, s.Handler(), "POST", "/v1/sets/"+name+"/retrieve", "", fmt.Sprintf(`{"anchor": [0.1, 0.2, -0.3], "collection": "db", "label": %d}`, c.Label))
				var got struct {
					Total int            `json:"total"`
					Hits  []retrieve.Hit `json:"hits"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatalf("%s: %v: %s", name, err, rec.Body)
				}
				if got.Total != total || !slices.Equal(got.Hits, want) {
					t.Errorf("%s, budget %d, class %d: %d hits, want the plain scan's %d", name, budget, c.Label, got.Total, total)
				}
			}
			if budget == 0 {
				if err := s.Reload("test"); err != nil {
					t.Fatal(err)
				}
				next := s.state.Load()
				fc, err := next.sets[name].ForClass(set.Classes[0].Label)
				if err != nil {
					t.Fatal(err)
				}
				if coll.Transformed(fc) || !next.colls["db"].(*retrieve.Collection).Transformed(fc) {
					t.Errorf("%s: after a reload, the old collection's transform serves the new set: %v, the new one's: %v",
						name, coll.Transformed(fc), next.colls["db"].(*retrieve.Collection).Transformed(fc))
				}
			}
			s.Close()
		}
	}
}
