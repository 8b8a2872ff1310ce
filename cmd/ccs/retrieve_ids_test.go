package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestRetrieveStringIDs: a collection's string ids — a text file given
// with -ids, or a collection .npz's "ids" that NumPy wrote — name ccs
// retrieve's hits (the first column; "key" in its JSON) and ccs serve's,
// with the same hits as integer ids; bad -ids are refused naming the file.
func TestRetrieveStringIDs(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	db := filepath.Join(dir, "test.npz")
	b, err := bundle.Read(db)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("passage-%03d", b.N-i)
	}
	idFile := filepath.Join(dir, "ids.txt")
	if err := os.WriteFile(idFile, []byte(strings.Join(ids, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	coll := filepath.Join(dir, "passages.npz")
	script := `
import sys, numpy as np
db, ids, out = sys.argv[1:]
np.savez(out, embeddings=np.load(db)["anchors"], ids=np.array(open(ids).read().split()))
`
	if out, err := exec.Command("/usr/bin/python3", "-c", script, db, idFile, coll).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	type hit struct {
		ID    int64   `json:"id"`
		Key   *string `json:"key"`
		Row   int     `json:"row"`
		Score float64 `json:"score"`
	}
	retrieve := func(args ...string) []hit {
		t.Helper()
		out, err := ccs(append([]string{"retrieve", "-set", set, "-anchor-index", "3", "-json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Hits []hit }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Hits
	}
	plain := retrieve("-db", db)
	if len(plain) < 2 {
		t.Fatalf("%d hits: want a few", len(plain))
	}
	for _, args := range [][]string{{"-db", db, "-ids", idFile}, {"-db", coll}} {
		got := retrieve(args...)
		if len(got) != len(plain) {
			t.Fatalf("%v: %d hits, without ids %d", args, len(got), len(plain))
		}
		for i, h := range got {
			p := plain[i]
			if p.Key != nil || h.Key == nil || *h.Key != ids[h.Row] || h.Row != p.Row || h.Score != p.Score || h.ID != int64(h.Row) {
				t.Errorf("%v: hit %d: %+v (key %v), without ids %+v: want the same row and score, key %q", args, i, h, deref(h.Key), p, ids[p.Row])
			}
		}
	}
	out, err := ccs("retrieve", "-set", set, "-db", db, "-ids", idFile, "-anchor-index", "3", "-limit", "1")
	if lines := strings.Split(out, "\n"); err != nil || len(lines) < 3 || !strings.HasPrefix(lines[2], ids[plain[0].Row]+"\t") {
		t.Errorf("text: %v\n%s\nwant the first hit's line to start with %q", err, out, ids[plain[0].Row])
	}

	// -ids beside a file with ids of its own replaces them, and says so;
	// beside a file of rows alone, no note.
	for _, c := range []struct {
		db   string
		note bool
	}{{coll, true}, {db, false}} {
		var stderr bytes.Buffer
		if err := run(io.Discard, &stderr, []string{"retrieve", "-set", set, "-db", c.db, "-ids", idFile, "-anchor-index", "3", "-limit", "1"}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr.String(), "note: -ids "+idFile+": the hits' ids, in place of the ids "+c.db+" holds"); got != c.note {
			t.Errorf("-db %s -ids: stderr %q, want the note %v", c.db, stderr.String(), c.note)
		}
	}

	// ccs serve answers with the keys of a collection .npz.
	sv := startServe(t, "serve", "-set", "ball="+set, "-db", "passages="+coll, "-addr", "127.0.0.1:0")
	anchor, _ := json.Marshal(anchorRow(t, db, 3))
	resp, err := http.Post(sv.base+"/v1/sets/ball/retrieve", "application/json", strings.NewReader(fmt.Sprintf(`{"anchor": %s, "collection": "passages"}`, anchor)))
	if err != nil {
		t.Fatal(err)
	}
	var srv struct{ Hits []hit }
	err = json.NewDecoder(resp.Body).Decode(&srv)
	resp.Body.Close()
	if err != nil || len(srv.Hits) != len(plain) {
		t.Fatalf("serve: %d hits (%v), want %d", len(srv.Hits), err, len(plain))
	}
	for i, h := range srv.Hits {
		if h.Key == nil || *h.Key != ids[plain[i].Row] || h.Row != plain[i].Row {
			t.Errorf("serve: hit %d: %+v (key %v), want row %d, key %q", i, h, deref(h.Key), plain[i].Row, ids[plain[i].Row])
		}
	}
	sv.stop(t)

	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	short := write("short.txt", strings.Join(ids[1:], "\n"))
	twice := write("twice.txt", strings.Join(append(ids[1:], ids[5]), "\n"))
	empty := write("empty.txt", strings.Join(ids[:3], "\n")+"\n\n"+strings.Join(ids[4:], "\n"))
	header := write("header.txt", "_id\n"+strings.Join(ids[:b.N-1], "\n"))
	for _, tc := range []struct {
		name  string
		args  []string
		want  string
		usage bool
	}{
		{"too few", []string{"-db", db, "-ids", short}, fmt.Sprintf("short.txt: %d ids for %d rows", b.N-1, b.N), false},
		{"repeated", []string{"-db", db, "-ids", twice}, fmt.Sprintf(`twice.txt: row id %q is given twice (rows 4 and %d, numbered from 0 — in a text file, its lines 5 and %d)`, ids[5], b.N-1, b.N), false},
		{"empty", []string{"-db", db, "-ids", empty}, "empty.txt:4: an empty id", false},
		{"a header line", []string{"-db", db, "-ids", header}, `header.txt:1: "_id" is a column's name, not an id`, false},
		{"missing", []string{"-db", db, "-ids", filepath.Join(dir, "none.txt")}, "none.txt", false},
		{"database", []string{"-db", "clickhouse://127.0.0.1:1/d.t", "-ids", idFile}, "-ids names a collection file's rows", true},
	} {
		_, err := ccs(append([]string{"retrieve", "-set", set, "-anchor", filepath.Join(dir, "a.npy")}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || isUsage(err) != tc.usage {
			t.Errorf("%s: %v (usage %v), want %q (usage %v)", tc.name, err, isUsage(err), tc.want, tc.usage)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

// TestRetrieveUnitNorm: a set calibrated on unit-norm embeddings refuses
// an anchor that is not, naming where it came from.
func TestRetrieveUnitNorm(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 0.5, Alpha: 0.1,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90, UnitNorm: true}}
	if err := set.Save(p("unit.json")); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPZ(p("db.npz"), map[string]bundle.Array{"embeddings": bundle.Float32([]float32{1, 0, 0, 0, 1, 0, 0, 0, 0}, 3, 3)}); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("long.npy"), bundle.Float32([]float32{0, 3, 0}, 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := ccs("retrieve", "-set", p("unit.json"), "-db", p("db.npz"), "-anchor-index", "1"); err != nil {
		t.Errorf("a unit-norm anchor: %v", err)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"-anchor", p("long.npy")}},
		{[]string{"-anchor-index", "2"}},
	} {
		_, err := ccs(append([]string{"retrieve", "-set", p("unit.json"), "-db", p("db.npz")}, c.args...)...)
		want := map[string]string{"-anchor": p("long.npy") + ": the anchor's norm 3: the set was calibrated on unit-norm embeddings",
			"-anchor-index": p("db.npz") + ": row 2: the anchor's norm 0: an all-zero row, which no normalisation makes a unit vector"}[c.args[0]]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want %q", c.args, err, want)
		}
	}
}

// TestRetrieveUnitNormAnchors: a set calibrated around unit-norm anchors
// (the inner-product map's users) refuses an -anchor that is not — a user
// vector sent without its normalisation —, and takes -anchor-index's
// collection row, an item of its own norm.
func TestRetrieveUnitNormAnchors(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 0.5, Alpha: 0.1,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90, UnitNormAnchors: true}}
	if err := set.Save(p("users.json")); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPZ(p("db.npz"), map[string]bundle.Array{"embeddings": bundle.Float32([]float32{1, 0, 0, 0, 2, 0, 0, 0, 3}, 3, 3)}); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("users.npy"), bundle.Float32([]float32{0, 1, 0, 0, 3, 0}, 2, 3)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("user.npy"), bundle.Float32([]float32{0.6, 0.8, 0}, 3)); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-anchor", p("user.npy")}, {"-anchor-index", "2"}} {
		if _, err := ccs(append([]string{"retrieve", "-set", p("users.json"), "-db", p("db.npz")}, args...)...); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	_, err := ccs("retrieve", "-set", p("users.json"), "-db", p("db.npz"), "-anchor", p("users.npy"))
	if want := p("users.npy") + ": anchor 1's norm 3: the set was calibrated around unit-norm anchors"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an unnormalised user: %v, want %q", err, want)
	}
}

// TestRetrieveWholeCollection: a set that holds 99% or more of a
// collection of 100 or more is warned of (an anchor of another kind than
// the calibration's), for one anchor and counted for a batch; a set that
// holds less (296 of 300), or a small collection, is not.
func TestRetrieveWholeCollection(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(3, 3))
	rows := make([]float32, 300*3)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	for name, n := range map[string]int{"db.npz": 300, "small.npz": 99} {
		if err := bundle.WriteNPZ(p(name), map[string]bundle.Array{"embeddings": bundle.Float32(rows[:n*3], n, 3)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := bundle.WriteNPY(p("two.npy"), bundle.Float32([]float32{0, 0, 0, 30, 30, 30}, 2, 3)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		threshold float64
		args      []string
		want      string
	}{
		{100, []string{"-db", p("db.npz"), "-anchor-index", "0"}, "the anchor's set holds every one of the collection's 300 items: is the anchor of the kind the set was calibrated around?"},
		{25, []string{"-db", p("db.npz"), "-anchor", p("two.npy")}, "1 of 2 anchors' sets hold every one of the collection's 300 items"},
		{0.5, []string{"-db", p("db.npz"), "-anchor-index", "0"}, ""},
		{farthest(rows, 300, 2), []string{"-db", p("db.npz"), "-anchor-index", "0"}, "the anchor's set holds 299 of the collection's 300 items"},
		{farthest(rows, 300, 5), []string{"-db", p("db.npz"), "-anchor-index", "0"}, ""},
		{100, []string{"-db", p("small.npz"), "-anchor-index", "0"}, ""},
	} {
		set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: c.threshold, Alpha: 0.1,
			Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90}}
		if err := set.Save(p("set.json")); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, append([]string{"retrieve", "-set", p("set.json"), "-limit", "1"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		if got := stderr.String(); c.want == "" && strings.Contains(got, "every one of") || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("threshold %v, %v: stderr %q, want %q", c.threshold, c.args, got, c.want)
		}
	}
	// A row the collection does not have is the flag's value out of its
	// range: a usage error, exit 2.
	var stdout, stderr bytes.Buffer
	err := run(&stdout, &stderr, []string{"retrieve", "-set", p("set.json"), "-db", p("small.npz"), "-anchor-index", "99"})
	if want := "retrieve: -anchor-index 99: " + p("small.npz") + ": the collection has 99 rows (0 to 98)"; err == nil || exitCode(err) != 2 || err.Error() != want {
		t.Errorf("-anchor-index 99 of 99 rows: %v, want a usage error %q", err, want)
	}
}

// farthest is a threshold just under row 0's k-th largest distance to
// the n rows of d = 3: a ball of it around row 0 leaves k − 1 rows out.
func farthest(rows []float32, n, k int) float64 {
	ds := make([]float64, n)
	for i := range n {
		var s float64
		for j := range 3 {
			x := float64(rows[j] - rows[i*3+j])
			s += x * x
		}
		ds[i] = math.Sqrt(s)
	}
	slices.Sort(ds)
	return (ds[n-k] + ds[n-k+1]) / 2
}

// TestCount: set sizes print in plain decimals.
func TestCount(t *testing.T) {
	for v, want := range map[float64]string{17660.4: "17660", 1000: "1000", 999.5: "999.5", 1.413: "1.413", 97: "97", 0: "0"} {
		if got := count(v); got != want {
			t.Errorf("count(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestRetrieveZeroAnchor: an all-zero anchor (an encoder's output for an
// input it failed on) is answered, with a warning that says so and how
// many items its set holds; in a batch, how many anchors are and the
// first; a nonzero anchor is not warned of.
func TestRetrieveZeroAnchor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	db := filepath.Join(dir, "test.npz")
	script := `
import sys, numpy as np
db, dir = sys.argv[1:]
a = np.load(db)["anchors"]
np.save(dir + "/zero.npy", np.zeros(a.shape[1], np.float32))
np.save(dir + "/one.npy", a[3])
b = a[:4].copy(); b[1] = 0; b[3] = 0
np.save(dir + "/batch.npy", b)
`
	if out, err := exec.Command("/usr/bin/python3", "-c", script, db, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	for _, c := range []struct{ anchor, want string }{
		{"zero.npy", "WARNING: the anchor is all zeros: what an encoder gives for an input it failed on"},
		{"batch.npy", "WARNING: 2 of 4 anchors are all zeros (the first: anchor 1): what an encoder gives for an input it failed on"},
		{"one.npy", ""},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, []string{"retrieve", "-set", set, "-db", db, "-anchor", filepath.Join(dir, c.anchor), "-limit", "1"}); err != nil {
			t.Fatalf("%s: %v", c.anchor, err)
		}
		got := stderr.String()
		if c.want == "" {
			if strings.Contains(got, "all zeros") {
				t.Errorf("%s: warned %q", c.anchor, got)
			}
			continue
		}
		if !strings.Contains(got, c.want) || !strings.Contains(got, "items nearest the origin (") {
			t.Errorf("%s: stderr %q, want %q…", c.anchor, got, c.want)
		}
	}
	// A set centred at anchor + c holds, around an all-zero anchor, the
	// items nearest c, not the origin.
	shifted := filepath.Join(dir, "ball-shift.json")
	if _, err := ccs("calibrate", "-geometry", "ball", "-cal", filepath.Join(dir, "cal.npz"), "-fit", filepath.Join(dir, "fit.npz"), "-shift", "-out", shifted); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"retrieve", "-set", shifted, "-db", db, "-anchor", filepath.Join(dir, "zero.npy"), "-limit", "1"}); err != nil {
		t.Fatal(err)
	}
	if got := stderr.String(); !strings.Contains(got, "the anchor is all zeros") || strings.Contains(got, "the origin") || !strings.Contains(got, "items nearest c, the set's shift (its sets are centred at anchor + c, ‖c‖ = ") {
		t.Errorf("a shifted set: stderr %q, want the items nearest c, the set's shift", got)
	}
}

// TestRetrieveLabels: -labels names each printed hit's label and counts
// every hit of the set by label — all of them, not only the -limit
// printed: a protein-family user's set around a query held 103 domains,
// of which the nearest few say little of the families the set holds.
// The counts are recomputed here from the unlimited hits; bad -labels
// are refused naming the file.
func TestRetrieveLabels(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	db := filepath.Join(dir, "test.npz")
	b, err := bundle.Read(db)
	if err != nil {
		t.Fatal(err)
	}
	labels := make([]string, b.N)
	for i := range labels {
		labels[i] = fmt.Sprintf("PF%05d.%d", i%7, i%3)
	}
	labels[5] = "" // a row without a family
	lf := filepath.Join(dir, "families.txt")
	os.WriteFile(lf, []byte(strings.Join(labels, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "short.txt"), []byte("PF00001.1\n"), 0o644)
	type doc struct {
		Total     int
		Truncated bool
		Hits      []struct{ Row int }
		HitLabels []string `json:"hit_labels"`
		Labels    []struct {
			Label string
			Count int
		}
	}
	get := func(args ...string) doc {
		t.Helper()
		out, err := ccs(append([]string{"retrieve", "-set", set, "-db", db, "-json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var d doc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, anchor := range []string{"0", "5", "17"} {
		all := get("-anchor-index", anchor)
		if all.Total < 3 {
			t.Fatalf("anchor %s: %d hits: want a few", anchor, all.Total)
		}
		want := map[string]int{}
		for _, h := range all.Hits {
			want[labels[h.Row]]++
		}
		got := get("-anchor-index", anchor, "-labels", lf, "-limit", "2")
		if got.Total != all.Total || len(got.Hits) != 2 || !got.Truncated || len(got.HitLabels) != 2 {
			t.Fatalf("anchor %s: total %d (want %d), %d hits, truncated %v, %d hit labels", anchor, got.Total, all.Total, len(got.Hits), got.Truncated, len(got.HitLabels))
		}
		for i, h := range got.Hits {
			if h.Row != all.Hits[i].Row || got.HitLabels[i] != labels[h.Row] {
				t.Errorf("anchor %s: hit %d: row %d label %q, want row %d label %q", anchor, i, h.Row, got.HitLabels[i], all.Hits[i].Row, labels[all.Hits[i].Row])
			}
		}
		sum := 0
		for i, l := range got.Labels {
			sum += l.Count
			if want[l.Label] != l.Count {
				t.Errorf("anchor %s: label %q counted %d, want %d", anchor, l.Label, l.Count, want[l.Label])
			}
			if i > 0 && (l.Count > got.Labels[i-1].Count || l.Count == got.Labels[i-1].Count && l.Label < got.Labels[i-1].Label) {
				t.Errorf("anchor %s: labels not most first: %+v", anchor, got.Labels)
			}
		}
		if sum != all.Total || len(got.Labels) != len(want) {
			t.Errorf("anchor %s: labels count %d items in %d labels, want %d in %d", anchor, sum, len(got.Labels), all.Total, len(want))
		}
	}
	out, err := ccs("retrieve", "-set", set, "-db", db, "-anchor-index", "0", "-labels", lf, "-limit", "1")
	if err != nil || !strings.Contains(out, "\nid\trow\tscore\tlabel\n0\t0\t0\tPF00000.0\n") || !regexp.MustCompile(`\nlabels     \d+ among its \d+ items: "PF`).MatchString(out) {
		t.Errorf("text output: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"-labels", filepath.Join(dir, "short.txt")}, false, "short.txt: 1 labels for the "},
		{[]string{"-labels", filepath.Join(dir, "none.txt")}, false, "none.txt: no such file"},
	} {
		_, err := ccs(append([]string{"retrieve", "-set", set, "-db", db, "-anchor-index", "0"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || isUsage(err) != c.usage {
			t.Errorf("%v: %v, want %q (usage %v)", c.args, err, c.want, c.usage)
		}
	}
	// A batch (one pass over the collection, which counts the labels as
	// it goes and keeps the nearest -limit): each anchor's counts are its
	// unlimited hits', its hits the unlimited batch's first two.
	type batchDoc struct {
		Anchors []doc
	}
	batch := func(args ...string) batchDoc {
		t.Helper()
		out, err := ccs(append([]string{"retrieve", "-set", set, "-db", db, "-anchor", db + ":anchors", "-json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var d batchDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	all, cut := batch(), batch("-labels", lf, "-limit", "2")
	if len(all.Anchors) != b.N || len(cut.Anchors) != b.N {
		t.Fatalf("a batch of %d anchors: %d and %d answers", b.N, len(all.Anchors), len(cut.Anchors))
	}
	for i, a := range all.Anchors {
		want := map[string]int{}
		for _, h := range a.Hits {
			want[labels[h.Row]]++
		}
		got := map[string]int{}
		for _, l := range cut.Anchors[i].Labels {
			got[l.Label] = l.Count
		}
		c := cut.Anchors[i]
		if !maps.Equal(got, want) || c.Total != a.Total || len(c.Hits) != min(2, a.Total) || len(c.HitLabels) != len(c.Hits) {
			t.Fatalf("batch anchor %d: counts %v, total %d, %d hits; want %v, %d, %d", i, got, c.Total, len(c.Hits), want, a.Total, min(2, a.Total))
		}
		for j, h := range c.Hits {
			if h.Row != a.Hits[j].Row || c.HitLabels[j] != labels[h.Row] {
				t.Errorf("batch anchor %d, hit %d: row %d label %q, want row %d", i, j, h.Row, c.HitLabels[j], a.Hits[j].Row)
			}
		}
	}
	// A Parquet column's nulls: JSON null, text null, apart from "".
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for i, l := range labels {
		if i%3 == 1 {
			sb.AppendNull()
			continue
		}
		sb.Append(l)
	}
	writeNullableParquet(t, filepath.Join(dir, "families.parquet"), "family", sb.NewArray())
	out, err = ccs("retrieve", "-set", set, "-db", db, "-anchor-index", "1", "-labels", filepath.Join(dir, "families.parquet:family"), "-json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		HitLabels []*string `json:"hit_labels"`
		Labels    []struct {
			Label *string
			Count int
		}
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	nulls, counted := 0, 0
	for _, l := range raw.HitLabels {
		if l == nil {
			nulls++
		}
	}
	for _, l := range raw.Labels {
		if l.Label == nil {
			counted = l.Count
		}
	}
	if nulls == 0 || counted != nulls {
		t.Errorf("nulls: %d hits' labels null, counted %d:\n%s", nulls, counted, out)
	}
	out, err = ccs("retrieve", "-set", set, "-db", db, "-anchor-index", "1", "-labels", filepath.Join(dir, "families.parquet:family"))
	if err != nil || !regexp.MustCompile(`, null \d+|: null \d+`).MatchString(out) || !strings.Contains(out, "\tnull\n") || strings.Contains(out, "\x00") {
		t.Errorf("text output with nulls: %v\n%q", err, out)
	}
	// A null is no label, nor is "" (a string that marks a missing value,
	// as ccs bundle takes it): the count is of the others.
	named := 0
	for _, l := range raw.Labels {
		if l.Label != nil && !bundle.MissingString(*l.Label) {
			named++
		}
	}
	if want := fmt.Sprintf("labels     %d among", named); named == len(raw.Labels) || !strings.Contains(out, want) {
		t.Errorf("text output with nulls counts them as a label, want %q:\n%s", want, out)
	}
	// Every item unlabelled: a batch's summary says 0 labels a set,
	// not nothing.
	nb := array.NewStringBuilder(memory.DefaultAllocator)
	for range labels {
		nb.AppendNull()
	}
	writeNullableParquet(t, filepath.Join(dir, "nulls.parquet"), "family", nb.NewArray())
	out, err = ccs("retrieve", "-set", set, "-db", db, "-anchor", db+":anchors", "-labels", filepath.Join(dir, "nulls.parquet:family"), "-json")
	var sum struct {
		Summary map[string]any
	}
	if err != nil || json.Unmarshal([]byte(out), &sum) != nil || sum.Summary["labels"] != 0.0 {
		t.Errorf("a batch whose items are all null: %v, summary %v, want labels 0", err, sum.Summary)
	}
	// The same with every label a string that marks a missing value, as
	// pandas' astype(str) writes NaN: no label either, as ccs bundle takes
	// "nan", though its items are counted beside.
	os.WriteFile(filepath.Join(dir, "nan.txt"), []byte(strings.Repeat("nan\n", len(labels))), 0o644)
	out, err = ccs("retrieve", "-set", set, "-db", db, "-anchor", db+":anchors", "-labels", filepath.Join(dir, "nan.txt"), "-json")
	sum.Summary = nil
	if err != nil || json.Unmarshal([]byte(out), &sum) != nil || sum.Summary["labels"] != 0.0 {
		t.Errorf("a batch whose items are all \"nan\": %v, summary %v, want labels 0", err, sum.Summary)
	}
	if _, err := ccs("retrieve", "-set", set, "-db", "clickhouse://127.0.0.1:1/db.t", "-anchor", db, "-labels", lf); !isUsage(err) || !strings.Contains(err.Error(), "-labels names a collection file's rows") {
		t.Errorf("-labels with a database table: %v", err)
	}
}
