package serve

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestClassAndPACSets: a class-conditional set and a PAC set, calibrated,
// saved and served, decide on /score exactly as in memory: the class set
// with the label's threshold (JSON "label" or ?label= with .npy), refusing
// a missing or unknown label and the endpoints that have none; /retrieve
// takes the label as /score does and answers the collection's points
// /score finds inside, with the class and its threshold, as does the set
// of one class's anchors (its class in GET /v1/sets' calibration); GET
// /v1/sets says each set's guarantee.
func TestClassAndPACSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(50, 50))
	const n, k, d = 120, 2, 3
	cal := &bundle.Bundle{N: n, K: k, D: d, Labels: make([]int64, n)}
	cal.Anchors, cal.Positives = make([]float32, n*d), make([]float32, n*k*d)
	for i := range n {
		cal.Labels[i] = int64(i % 2)
		sigma := 1.0 + 2*float64(i%2) // class 1 three times wider
		for j := range d {
			cal.Anchors[i*d+j] = float32(rng.NormFloat64())
			for a := range k {
				cal.Positives[(i*k+a)*d+j] = cal.Anchors[i*d+j] + float32(sigma*rng.NormFloat64())
			}
		}
	}
	g := geometry.Ball{D: d}
	class, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{Mode: conformal.Class, LabelNames: []string{"ant", "bee"}})
	if err != nil {
		t.Fatal(err)
	}
	pac, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{Mode: conformal.PAC, Delta: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	// At α = 0.02 each class's 60 anchors give rank n: a warning per class.
	edge, err := conformal.Calibrate(g, cal, 0.02, conformal.Options{Mode: conformal.Class})
	if err != nil {
		t.Fatal(err)
	}
	// Names that read as the other class's integer label.
	swapped, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{Mode: conformal.Class, LabelNames: []string{"1", "0"}})
	if err != nil {
		t.Fatal(err)
	}
	// One class's set, calibrated on its anchors alone (ccs calibrate
	// -class bee): its file records the class.
	bee := int64(1)
	one, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{Label: &bee, LabelNames: []string{"ant", "bee"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths := map[string]string{"class": filepath.Join(dir, "class.json"), "pac": filepath.Join(dir, "pac.json"), "edge": filepath.Join(dir, "edge.json"), "swapped": filepath.Join(dir, "swapped.json"),
		"bee": filepath.Join(dir, "bee.json")}
	class.Save(paths["class"])
	pac.Save(paths["pac"])
	edge.Save(paths["edge"])
	swapped.Save(paths["swapped"])
	one.Save(paths["bee"])
	// A collection of the points at distances 0.5 … 7 from the origin,
	// ids 100 …, for /retrieve.
	coll := filepath.Join(dir, "coll.npz")
	var collRows []float32
	var collIDs []int64
	for i := range 14 {
		collRows = append(collRows, 0.5*float32(i+1), 0, 0)
		collIDs = append(collIDs, int64(100+i))
	}
	if err := bundle.WriteNPZ(coll, map[string]bundle.Array{"embeddings": bundle.Float32(collRows, 14, 3), "ids": bundle.Int64(collIDs, 14)}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Sets: paths, Collections: map[string]string{"c": coll}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 20})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	// Points at distances 0.5 … 7 from the anchor at the origin.
	var pts []string
	var diffs []float32
	for i := range 14 {
		r := 0.5 * float32(i+1)
		pts = append(pts, fmt.Sprintf("[%g, 0, 0]", r))
		diffs = append(diffs, -r, 0, 0)
	}
	body := func(label string) string {
		return `{"anchor": [0, 0, 0], "points": [` + strings.Join(pts, ", ") + `]` + label + `}`
	}
	decide := func(set *conformal.Set, label int64) []bool {
		q, err := set.ThresholdFor(label)
		if err != nil {
			t.Fatal(err)
		}
		var in []bool
		for _, v := range set.Geometry.Scores(nil, diffs) {
			in = append(in, v <= q)
		}
		return in
	}
	inside := func(rec *http.Response, raw []byte) []bool {
		var v struct{ Inside []bool }
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		return v.Inside
	}
	for _, label := range []int64{0, 1} {
		rec := do(t, h, "POST", "/v1/sets/class/score", "application/json", body(fmt.Sprintf(`, "label": %d`, label)))
		if rec.Code != 200 {
			t.Fatalf("label %d: %d %s", label, rec.Code, rec.Body)
		}
		got, want := inside(rec.Result(), rec.Body.Bytes()), decide(class, label)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("label %d: served %v, in memory %v", label, got, want)
		}
		rows := append([]float32{0, 0, 0}, make([]float32, 0)...)
		for i := range 14 {
			rows = append(rows, 0.5*float32(i+1), 0, 0)
		}
		rec = do(t, h, "POST", fmt.Sprintf("/v1/sets/class/score?label=%d", label), "application/x-npy", npyBody(t, rows, 15, 3))
		if got := inside(rec.Result(), rec.Body.Bytes()); rec.Code != 200 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("label %d, .npy: %d, %v, want %v", label, rec.Code, got, want)
		}
		// The class by its name: what GET /v1/sets lists beside the label.
		className := []string{"ant", "bee"}[label]
		rec = do(t, h, "POST", "/v1/sets/class/score", "application/json", body(fmt.Sprintf(`, "label": %q`, className)))
		if got := inside(rec.Result(), rec.Body.Bytes()); rec.Code != 200 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("class %q: %d %s, want %v", className, rec.Code, rec.Body, want)
		}
		// It names the class that judged, as /retrieve does.
		var named struct {
			Label *int64
			Class string
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &named); err != nil || named.Label == nil || *named.Label != label || named.Class != className {
			t.Errorf("class %q: /score answered label %v, class %q (%v), want %d, %q", className, named.Label, named.Class, err, label, className)
		}
		rec = do(t, h, "POST", "/v1/sets/class/score?label="+className, "application/x-npy", npyBody(t, rows, 15, 3))
		if got := inside(rec.Result(), rec.Body.Bytes()); rec.Code != 200 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("class %q, .npy: %d %s, want %v", className, rec.Code, rec.Body, want)
		}
		// "label": "0" is the class named "0", label 1; "label": 0 is label 0.
		rec = do(t, h, "POST", "/v1/sets/swapped/score", "application/json", body(fmt.Sprintf(`, "label": "%d"`, 1-label)))
		if got := inside(rec.Result(), rec.Body.Bytes()); rec.Code != 200 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("swapped names, class \"%d\": %d %s, want %v", 1-label, rec.Code, rec.Body, want)
		}
		rec = do(t, h, "POST", "/v1/sets/swapped/score", "application/json", body(fmt.Sprintf(`, "label": %d`, label)))
		if got := inside(rec.Result(), rec.Body.Bytes()); rec.Code != 200 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("swapped names, label %d: %d %s, want %v", label, rec.Code, rec.Body, want)
		}
		// /retrieve around the origin: the collection's points that
		// /score finds inside, by label or name, JSON or .npy, with the
		// class and its threshold.
		q, _ := class.ThresholdFor(label)
		var ids []int64
		for i, in := range want {
			if in {
				ids = append(ids, int64(100+i))
			}
		}
		for _, c := range []struct{ path, ctype, body string }{
			{"/v1/sets/class/retrieve", "application/json", fmt.Sprintf(`{"anchor": [0, 0, 0], "collection": "c", "label": %d}`, label)},
			{"/v1/sets/class/retrieve", "application/json", fmt.Sprintf(`{"anchor": [0, 0, 0], "collection": "c", "label": %q}`, className)},
			{"/v1/sets/class/retrieve?collection=c&label=" + className, "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3)},
			{fmt.Sprintf("/v1/sets/class/retrieve?collection=c&label=%d", label), "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3)},
		} {
			rec := do(t, h, "POST", c.path, c.ctype, c.body)
			var got struct {
				Label     *int64
				Class     string
				Threshold float64
				Total     int
				Hits      []struct{ ID int64 }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
				t.Fatalf("%s: %d %s", c.path, rec.Code, rec.Body)
			}
			var gotIDs []int64
			for _, h := range got.Hits {
				gotIDs = append(gotIDs, h.ID)
			}
			slices.Sort(gotIDs)
			if fmt.Sprint(gotIDs) != fmt.Sprint(ids) || got.Total != len(ids) || got.Label == nil || *got.Label != label || got.Class != className || got.Threshold != q {
				t.Errorf("%s %s: label %v, class %q, threshold %v, ids %v; want %d, %q, %v, %v", c.path, c.body, got.Label, got.Class, got.Threshold, gotIDs, label, className, q, ids)
			}
		}
	}
	rec := do(t, h, "POST", "/v1/sets/class/retrieve", "application/json", `{"anchor": [-0.5, 0, 0], "collection": "c", "label": "ant", "limit": 3}`)
	golden(t, "retrieve-class", rec.Body.Bytes())
	// The set of class bee alone retrieves as the class set's bee, and
	// says so.
	rec = do(t, h, "POST", "/v1/sets/bee/retrieve", "application/json", `{"anchor": [-0.5, 0, 0], "collection": "c", "limit": 3}`)
	golden(t, "retrieve-one-class", rec.Body.Bytes())
	byLabel := do(t, h, "POST", "/v1/sets/class/retrieve", "application/json", `{"anchor": [-0.5, 0, 0], "collection": "c", "label": "bee", "limit": 3}`)
	var alone, labelled struct {
		Threshold float64
		Total     int
		Hits      json.RawMessage
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &alone); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(byLabel.Body.Bytes(), &labelled); err != nil {
		t.Fatal(err)
	}
	if alone.Threshold != labelled.Threshold || alone.Total != labelled.Total || string(alone.Hits) != string(labelled.Hits) || alone.Total == 0 {
		t.Errorf("set bee: threshold %v, %d hits %s; the class set's bee: %v, %d hits %s", alone.Threshold, alone.Total, alone.Hits, labelled.Threshold, labelled.Total, labelled.Hits)
	}
	if a, b := decide(class, 0), decide(class, 1); fmt.Sprint(a) == fmt.Sprint(b) {
		t.Error("the two classes' thresholds decide alike: the test shows nothing")
	}
	rec = do(t, h, "POST", "/v1/sets/pac/score", "application/json", body(""))
	if got := inside(rec.Result(), rec.Body.Bytes()); rec.Code != 200 || fmt.Sprint(got) != fmt.Sprint(decide(pac, 0)) {
		t.Errorf("PAC: %d %v", rec.Code, got)
	}
	for _, c := range []struct {
		path, ctype, body string
		code              int
		want              string
	}{
		{"/v1/sets/class/score", "application/json", body(""), 422, "give the anchor's label"},
		{"/v1/sets/class/score", "application/json", body(`, "label": 7`), 422, `class 7 has no threshold: the calibration bundle had no anchor of it (the set's classes: 0 \"ant\", 1 \"bee\")`},
		{"/v1/sets/class/score?label=x", "application/x-npy", npyBody(t, []float32{0, 0, 0, 1, 0, 0}, 2, 3), 422, `set \"class\": no class is named \"x\" (the set's classes: 0 \"ant\", 1 \"bee\")`},
		{"/v1/sets/class/score", "application/json", body(`, "label": "Ant"`), 422, `set \"class\": no class is named \"Ant\" (the set's classes: 0 \"ant\", 1 \"bee\")`},
		{"/v1/sets/class/score", "application/json", body(`, "label": true`), 400, `want an integer label or a class's name, found`},
		{"/v1/sets/edge/score", "application/json", body(`, "label": "ant"`), 422, `no class is named \"ant\": the set was calibrated on integer labels, give the anchor's label as one (the set's classes: 0, 1)`},
		{"/v1/sets/pac/score", "application/json", body(`, "label": "ant"`), 422, "takes no label"},
		{"/v1/sets/pac/score?label=ant", "application/x-npy", npyBody(t, []float32{0, 0, 0, 1, 0, 0}, 2, 3), 422, "takes no label"},
		{"/v1/sets/swapped/score?label=1", "application/x-npy", npyBody(t, []float32{0, 0, 0, 1, 0, 0}, 2, 3), 422, `?label=1 reads as label 1 and names class 0: give it in a JSON body, where \"label\": 1 is the label and \"label\": \"1\" the name`},
		{"/v1/sets/class/ood", "application/json", `{"points": [[1, 0, 0]]}`, 422, "class-conditional"},
		{"/v1/sets/class/ood", "application/json", `{"points": [[1, 0, 0]]}`, 422, "calibrate a set of one threshold on the same split for them (ccs calibrate without -calibration class, with -ood-cal FILE -reference N for the per-input test; calibration=\\\"one\\\" in Python), and serve it beside this one (/score and /retrieve take a \\\"label\\\")"},
		{"/v1/sets/class/retrieve", "application/json", `{"anchor": [0, 0, 0], "collection": "c"}`, 422, `"message": "set \"class\": the set is class-conditional: its threshold depends on the anchor's class, so it needs the anchor's label: give the anchor's label (\"label\": its integer label or its class's name; ?label= with an .npy body)",` + "\n" + `    "field": "label"`},
		{"/v1/sets/class/retrieve?collection=c", "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3), 422, "give the anchor's label"},
		{"/v1/sets/class/retrieve", "application/json", `{"anchor": [0, 0, 0], "collection": "c", "label": 7}`, 422, `class 7 has no threshold: the calibration bundle had no anchor of it (the set's classes: 0 \"ant\", 1 \"bee\")`},
		{"/v1/sets/class/retrieve?collection=c&label=wasp", "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3), 422, `set \"class\": no class is named \"wasp\" (the set's classes: 0 \"ant\", 1 \"bee\")`},
		{"/v1/sets/class/retrieve?label=ant", "application/json", `{"anchor": [0, 0, 0], "collection": "c"}`, 400, `query parameter \"label\" goes with an .npy body; a JSON body gives it as the field \"label\"`},
		{"/v1/sets/class/retrieve", "application/json", `{"anchor": [0, 0, 0], "collection": "c", "label": [1]}`, 400, `want an integer label or a class's name, found`},
		{"/v1/sets/swapped/retrieve?collection=c&label=1", "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3), 422, `?label=1 reads as label 1 and names class 0`},
		{"/v1/sets/pac/retrieve", "application/json", `{"anchor": [0, 0, 0], "collection": "c", "label": "ant"}`, 422, "takes no label"},
		{"/v1/sets/bee/retrieve", "application/json", `{"anchor": [0, 0, 0], "collection": "c", "label": "bee"}`, 422, "takes no label"},
		{"/v1/sets/pac/retrieve?collection=c&label=0", "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3), 422, "takes no label"},
		{"/v1/sets/pac/score", "application/json", body(`, "label": 1`), 422, "takes no label"},
	} {
		rec := do(t, h, "POST", c.path, c.ctype, c.body)
		if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%s: %d %s, want %d mentioning %q", c.path, rec.Code, rec.Body, c.code, c.want)
		}
	}
	rec = do(t, h, "GET", "/v1/sets", "", "")
	// The classes come with their names, which a client maps to the label
	// /score takes.
	if b := rec.Body.String(); !strings.Contains(b, `"guarantee": "class-conditional"`) || !strings.Contains(b, `"guarantee": "training-conditional"`) ||
		!strings.Contains(b, `"label": 0,`+"\n"+`          "name": "ant",`) || !strings.Contains(b, `"class": {`+"\n"+`          "label": 1,`+"\n"+`          "name": "bee"`+"\n"+`        }`) {
		t.Errorf("/v1/sets:\n%s", b)
	}
	var listed struct {
		Sets []struct {
			Name     string   `json:"name"`
			Warnings []string `json:"warnings"`
		} `json:"sets"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &listed); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"class": class.Warnings(), "pac": pac.Warnings(), "edge": edge.Warnings(), "bee": one.Warnings()}
	if len(want["edge"]) != 2 {
		t.Fatalf("the edge set has %d warnings, want one per class: the test shows nothing", len(want["edge"]))
	}
	for _, l := range listed.Sets {
		if fmt.Sprint(l.Warnings) != fmt.Sprint(want[l.Name]) {
			t.Errorf("/v1/sets: set %s warns %q, want %q", l.Name, l.Warnings, want[l.Name])
		}
	}
}

// TestWholeSpaceClass: a class whose calibration was too small for α
// (-allow-infinite) is the whole space; /score and /retrieve with its
// label answer every point inside and every item a hit, and say why in
// the answer's warnings; another class's answers carry none.
func TestWholeSpaceClass(t *testing.T) {
	const n, d = 65, 3
	cal := &bundle.Bundle{N: n, K: 1, D: d, Labels: make([]int64, n), Anchors: make([]float32, n*d), Positives: make([]float32, n*d)}
	rng := rand.New(rand.NewPCG(51, 51))
	for i := range n {
		if i >= 60 {
			cal.Labels[i] = 1 // 5 anchors: α = 0.1 needs 9
		}
		for j := range d {
			cal.Anchors[i*d+j] = float32(rng.NormFloat64())
			cal.Positives[i*d+j] = cal.Anchors[i*d+j] + float32(rng.NormFloat64())
		}
	}
	set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{Mode: conformal.Class, AllowInfinite: true, LabelNames: []string{"ant", "bee"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, coll := filepath.Join(dir, "class.json"), filepath.Join(dir, "coll.npz")
	if err := set.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPZ(coll, map[string]bundle.Array{"embeddings": bundle.Float32([]float32{0, 0, 0, 50, 0, 0}, 2, 3)}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Sets: map[string]string{"class": path}, Collections: map[string]string{"c": coll}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 20})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	// The set's own path lists what it answers: no /ood for a class set.
	if rec := do(t, h, "GET", "/v1/sets/class", "", ""); rec.Code != 404 || !strings.Contains(rec.Body.String(), "(POST; a class-conditional set has no /ood)") {
		t.Errorf("GET /v1/sets/class: %d %s", rec.Code, rec.Body)
	}
	for _, c := range []struct {
		path, body, want string
	}{
		{"/v1/sets/class/score", `{"anchor": [1, 0, 0], "points": [[50, 0, 0]], "label": "bee"}`,
			`class "bee"'s set is the whole space: every point is inside it, which says nothing of it: 5 calibration scores are too few for alpha 0.1`},
		{"/v1/sets/class/retrieve", `{"anchor": [1, 0, 0], "collection": "c", "label": "bee"}`,
			`class "bee"'s set is the whole space: every item of the collection is in it, which says nothing of it: 5 calibration scores are too few`},
		{"/v1/sets/class/score", `{"anchor": [1, 0, 0], "points": [[50, 0, 0]], "label": "ant"}`, ""},
		{"/v1/sets/class/retrieve", `{"anchor": [1, 0, 0], "collection": "c", "label": "ant"}`, ""},
	} {
		rec := do(t, h, "POST", c.path, "", c.body)
		var a struct {
			Inside   []bool
			Total    int
			Warnings []string
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != 200 {
			t.Fatalf("%s %s: %d %s", c.path, c.body, rec.Code, rec.Body)
		}
		switch {
		case c.want == "" && a.Warnings != nil:
			t.Errorf("%s %s: warnings %q, want none", c.path, c.body, a.Warnings)
		case c.want != "" && (len(a.Warnings) != 1 || !strings.HasPrefix(a.Warnings[0], c.want)):
			t.Errorf("%s %s: warnings %q, want one starting %q", c.path, c.body, a.Warnings, c.want)
		case c.want != "" && (slices.Contains(a.Inside, false) || strings.HasSuffix(c.path, "retrieve") && a.Total != 2):
			t.Errorf("%s %s: %s, want every point inside", c.path, c.body, rec.Body)
		}
	}
}
