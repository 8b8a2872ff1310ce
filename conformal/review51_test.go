package conformal

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// review51File is s's file as ccs writes it, edited by edit, without its
// checksum (a file written by hand: read with a warning), at a path.
func review51File(t *testing.T, s *Set, edit func(string) string) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`,\n  "checksum": "sha256:[0-9a-f]{64}"`).ReplaceAllString(b.String(), "")
	edited := edit(text)
	if edited == text {
		t.Fatalf("the edit changed nothing in:\n%s", text)
	}
	p := filepath.Join(t.TempDir(), "set.json")
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReview51DuplicateClassNamesRefused checks that Load refuses a
// class-conditional set file whose two classes carry the same name,
// naming the file and classes[1].name (failed at 2131dd3: it loaded in
// ccs evaluate, ccs serve and Python's Set.load, and an anchor of class
// "coat" was judged with the first class's threshold, the second class
// of that name never reachable by it).
func TestReview51DuplicateClassNamesRefused(t *testing.T) {
	cal := synthetic(rand.New(rand.NewPCG(3, 4)), 120, 3)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i / 40)
	}
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.2, Options{Mode: Class, LabelNames: []string{"coat", "rare", "shirt"}})
	if err != nil {
		t.Fatal(err)
	}
	p := review51File(t, s, func(f string) string { return strings.Replace(f, `"name": "rare"`, `"name": "coat"`, 1) })
	got, err := Load(p)
	if err == nil {
		l, lerr := got.LabelNamed("coat")
		t.Fatalf("loaded a set whose classes 0 and 1 are both named \"coat\"; \"coat\" is judged as label %d (err %v): want an error naming %s and classes[1].name", l, lerr, p)
	}
	if want := p + `: classes[1].name "coat" (label 1) is classes[0]'s too (label 0): want distinct names`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q: want %q", err, want)
	}
}

// TestReview51DuplicateKeysRefused checks that Load refuses a set file
// that gives a key twice, in any object at any level, naming the file and
// the key's path (failed at 2131dd3: the file loaded with the last copy —
// "threshold": 1.5, then "threshold": 0.5, served at 0.5 — while a reader
// of its top sees 1.5; decodeFast gave up on the top-level repeat, and
// encoding/json, which decodeSlow is, kept the last copy).
func TestReview51DuplicateKeysRefused(t *testing.T) {
	s := &Set{Geometry: geometry.Ball{D: 3}, Threshold: 1.5, Alpha: 0.05, Calibration: Info{Mode: OnePerAnchor, N: 99, Rank: 95}}
	ell, err := geometry.NewEllipsoid(2, []float64{2, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	e := &Set{Geometry: ell, Threshold: 1.5, Alpha: 0.05, Calibration: Info{Mode: OnePerAnchor, N: 99, Rank: 95}}
	for _, c := range []struct {
		name string
		set  *Set
		from string
		to   string
		want string
	}{
		{"top level", s, `"threshold": 1.5,`, `"threshold": 1.5,` + "\n" + `  "threshold": 0.5,`, `: threshold is given twice (parsers disagree on which copy wins)`},
		{"top level, another case", s, `"threshold": 1.5,`, `"threshold": 1.5,` + "\n" + `  "Threshold": 0.5,`, `: Threshold repeats "threshold" in another case`},
		{"in calibration", s, `"n": 99,`, `"n": 99, "n": 98,`, `: calibration.n is given twice`},
		{"in the geometry", s, `"kind": "ball",`, `"kind": "ball", "kind": "ellipsoid",`, `: geometry.kind is given twice`},
		{"in an ellipsoid's geometry", e, `"sigma": [`, `"sigma": [1, 0, 0, 1], "sigma": [`, `: geometry.sigma is given twice`},
		{"escaped", s, `"alpha": 0.05,`, `"alpha": 0.05, "\u0061lpha": 0.5,`, `: alpha is given twice`},
	} {
		p := review51File(t, c.set, func(f string) string { return strings.Replace(f, c.from, c.to, 1) })
		got, err := Load(p)
		if err == nil {
			t.Errorf("%s: loaded (threshold %v, alpha %v, n %d, dim %d) from a file that gives a key twice", c.name, got.Threshold, got.Alpha, got.Calibration.N, got.Geometry.Dim())
			continue
		}
		if !strings.Contains(err.Error(), p+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q\nwant the file and %q", c.name, err, c.want)
		}
	}
	// A document with a key twice deep inside an array of objects.
	doc := []byte(`{"a": [{"b": 1}, {"c": {"d": 1, "D": 2}}]}`)
	if at, earlier := repeatedKey(doc, ""); at != "a[1].c.D" || earlier != "d" {
		t.Errorf("repeatedKey: %q after %q, want a[1].c.D after d", at, earlier)
	}
}

// TestReview51MissingGeometryNamed checks that a set file without its
// geometry, or whose geometry lost its kind or its dim, is refused naming
// the missing field as missing (failed at 2131dd3: without geometry.kind,
// "geometry: unknown kind Kind(0)", a Go type's zero value; without
// geometry or geometry.dim, "dim 3, but the geometry (and head) take 0",
// a dimension mismatch).
func TestReview51MissingGeometryNamed(t *testing.T) {
	s := &Set{Geometry: geometry.Ball{D: 3}, Threshold: 1.5, Alpha: 0.05, Calibration: Info{Mode: OnePerAnchor, N: 99, Rank: 95}}
	for _, c := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"kind", func(f string) string { return strings.Replace(f, `"kind": "ball",`, ``, 1) }, "geometry.kind is missing (want ball, ellipsoid, single or genball)"},
		{"dim", func(f string) string {
			return strings.Replace(f, `"kind": "ball",`+"\n"+`    "dim": 3`, `"kind": "ball"`, 1)
		}, "geometry.dim is missing or 0"},
		{"geometry", func(f string) string {
			return regexp.MustCompile(`(?s)"geometry": \{.*?\},\n`).ReplaceAllString(f, "")
		}, "geometry is missing"},
	} {
		p := review51File(t, s, c.edit)
		_, err := Load(p)
		if err == nil {
			t.Errorf("%s removed: loaded", c.name)
			continue
		}
		if want := p + ": " + c.want; !strings.Contains(err.Error(), want) {
			t.Errorf("%s removed: %q\nwant %q", c.name, err, want)
		}
	}
}

// TestReview51OODThresholdRefusedAtLoad checks that Load refuses a set
// file with an OOD calibration whose threshold is 0, or whose
// ood_calibration holds a negative score, naming the field and the
// per-input test (failed at 2131dd3: both loaded in ccs evaluate and
// Python's Set.load; threshold 0 was refused only at use, by ccs serve at
// its start and by ood, as "the CCS score −s_n/q̂ needs a positive, finite
// q̂", the old reference score, and a negative score, which φ/q̂ never
// is, loaded and served).
func TestReview51OODThresholdRefusedAtLoad(t *testing.T) {
	cal := make([]float64, 99)
	for i := range cal {
		cal[i] = 0.02 * float64(i+1)
	}
	oodCal, err := NewOODCalibration(1, cal, "test")
	if err != nil {
		t.Fatal(err)
	}
	s := &Set{Geometry: geometry.Ball{D: 3}, Threshold: 1.5, Alpha: 0.05, Calibration: Info{Mode: OnePerAnchor, N: 99, Rank: 95},
		Reference: &Reference{Source: "test", N: 2, Rows: []float32{0, 0, 0, 3, 0, 4}}, OOD: oodCal}
	for _, c := range []struct {
		name, want string
		edit       func(string) string
	}{
		{"threshold 0", "threshold 0 with an ood_calibration: the set's OOD scores divide by its threshold q̂ (the per-input test's K-th smallest φ(a − x)/q̂ over the pool) and need a positive, finite q̂",
			func(f string) string { return strings.Replace(f, `"threshold": 1.5,`, `"threshold": 0,`, 1) }},
		{"a negative OOD score", "ood_calibration: score 0 is -1: the per-input OOD test's score, the K-th smallest φ(a − x)/q̂ over the pool, is never negative",
			func(f string) string { return strings.Replace(f, `0.02, 0.04`, `-1, 0.04`, 1) }},
	} {
		p := review51File(t, s, c.edit)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p+": "+c.want) {
			t.Errorf("%s: %v\nwant the file and %q", c.name, err, c.want)
		}
	}
	if _, err := NewOODCalibration(1, []float64{-0.5, 1}, "test"); err == nil {
		t.Error("NewOODCalibration took a negative score")
	}
}
