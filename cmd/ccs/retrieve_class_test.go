package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// retrieved is ccs retrieve -json's answer for one anchor, or a batch's.
type retrieved struct {
	Total     int
	Threshold any
	Label     *int64
	Class     string
	Hits      []struct{ Row int }
	Anchors   []retrieved
}

// rows are the hits' rows, sorted.
func (r retrieved) rows() []int {
	var out []int
	for _, h := range r.Hits {
		out = append(out, h.Row)
	}
	slices.Sort(out)
	return out
}

// classFixture makes a retrieval's bundles — queries in four languages,
// each relevant to a passage it lies near, closer in some languages than
// in others — and calibrates on them a class-conditional set of the
// languages (class.json), the ℓ2 ball's marginal set (ball.json) and the
// set of the queries in "de" alone (de.json). The collection is
// passages.npy, whose rows x32 are; q0.npy, q1.npy and q2.npy are the
// first three queries, shape (d,), three.npy the three, (3, d).
func classFixture(t *testing.T) (p func(string) string, x32, q0 []float32, d int) {
	t.Helper()
	dir := t.TempDir()
	p = func(name string) string { return filepath.Join(dir, name) }
	const n, nq = 1500, 1600
	d = 4
	rng := rand.New(rand.NewPCG(41, 5))
	x32 = make([]float32, n*d)
	for i := range x32 {
		x32[i] = float32(rng.NormFloat64())
	}
	langs := []string{"de", "en", "ja", "sw"}
	spread := []float64{0.3, 0.5, 0.8, 1.2} // a query's distance to its passage, by language
	queries := make([]float32, nq*d)
	var qrels, lang, qids, ids strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for q := range nq {
		l := rng.IntN(len(langs))
		for j := range d {
			queries[q*d+j] = x32[(q%n)*d+j] + float32(spread[l]*rng.NormFloat64())
		}
		fmt.Fprintf(&qrels, "q%d\tdoc%d\t1\n", q, q%n)
		fmt.Fprintln(&lang, langs[l])
		fmt.Fprintf(&qids, "q%d\n", q)
	}
	for i := range n {
		fmt.Fprintf(&ids, "doc%d\n", i)
	}
	for name, a := range map[string]bundle.Array{
		"passages.npy": bundle.Float32(x32, n, d), "queries.npy": bundle.Float32(queries, nq, d),
		"q0.npy": bundle.Float32(queries[:d], d), "q1.npy": bundle.Float32(queries[d:2*d], d), "q2.npy": bundle.Float32(queries[2*d:3*d], d),
		"three.npy": bundle.Float32(queries[:3*d], 3, d),
	} {
		if err := bundle.WriteNPY(p(name), a); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{
		"qrels.tsv": qrels.String(), "lang.txt": lang.String(), "query-ids.txt": qids.String(), "ids.txt": ids.String(),
		"three.txt": "en\nde\nen\n", "two.txt": "en\nde\n", "bad.txt": "en\nfr\nen\n",
	} {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"bundle", "-embeddings", p("passages.npy"), "-queries", p("queries.npy"), "-pairs", p("qrels.tsv"), "-ids", p("ids.txt"),
			"-query-ids", p("query-ids.txt"), "-query-labels", p("lang.txt"), "-k", "1", "-kneg", "5", "-out", p("B")},
		{"calibrate", "-geometry", "ball", "-cal", p("B/cal.npz"), "-calibration", "class", "-alpha", "0.2", "-out", p("class.json")},
		{"calibrate", "-geometry", "ball", "-cal", p("B/cal.npz"), "-alpha", "0.2", "-out", p("ball.json")},
		{"calibrate", "-geometry", "ball", "-cal", p("B/cal.npz"), "-alpha", "0.2", "-class", "de", "-out", p("de.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	return p, x32, queries[:d], d
}

// retrieveJSON runs ccs retrieve -json with args.
func retrieveJSON(t *testing.T, args ...string) (retrieved, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, append([]string{"retrieve", "-json"}, args...)); err != nil {
		t.Fatalf("retrieve %v: %v", args, err)
	}
	var r retrieved
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("retrieve %v: %v\n%s", args, err, stdout.Bytes())
	}
	return r, stderr.String()
}

// TestRetrieveClass: a class-conditional set retrieves with the class
// -label names (by name or label), exactly the collection's rows within
// that class's threshold of the anchor (a brute-force scan), another
// class's another set; -anchor-labels gives each of -anchor's rows its
// own, as -label does one at a time; a set calibrated on one class's
// anchors (calibrate -class) says its class, and retrieves as the class
// set's class does; -unlabeled marginal retrieves with the threshold
// over all classes, and warns.
func TestRetrieveClass(t *testing.T) {
	p, x32, anchor, d := classFixture(t)
	set, err := conformal.Load(p("class.json"))
	if err != nil {
		t.Fatal(err)
	}
	brute := func(q float64) []int {
		var in []int
		diff := make([]float32, d)
		score := make([]float64, 1)
		for i := range len(x32) / d {
			for j := range d {
				diff[j] = anchor[j] - x32[i*d+j]
			}
			if set.Geometry.Scores(score, diff)[0] <= q {
				in = append(in, i)
			}
		}
		return in
	}
	byName := map[string]retrieved{}
	for _, c := range set.Classes {
		r, _ := retrieveJSON(t, "-set", p("class.json"), "-db", p("passages.npy"), "-anchor", p("q0.npy"), "-label", c.Name)
		want := brute(c.Threshold)
		if got := r.rows(); !slices.Equal(got, want) || r.Total != len(want) {
			t.Errorf("-label %s: %d rows %v, want the %d within its threshold %v", c.Name, r.Total, got, len(want), c.Threshold)
		}
		if r.Label == nil || *r.Label != c.Label || r.Class != c.Name || r.Threshold != c.Threshold {
			t.Errorf("-label %s: label %v, class %q, threshold %v: want %d, %q, %v", c.Name, r.Label, r.Class, r.Threshold, c.Label, c.Name, c.Threshold)
		}
		byLabel, _ := retrieveJSON(t, "-set", p("class.json"), "-db", p("passages.npy"), "-anchor", p("q0.npy"), "-label", fmt.Sprint(c.Label))
		if !slices.Equal(byLabel.rows(), r.rows()) {
			t.Errorf("-label %d: %d rows, by its name %d", c.Label, byLabel.Total, r.Total)
		}
		if r.Total == 0 || r.Total == len(x32)/d {
			t.Errorf("-label %s: %d of the %d rows: no test of which rows a threshold keeps", c.Name, r.Total, len(x32)/d)
		}
		byName[c.Name] = r
	}
	if byName["de"].Total == byName["sw"].Total {
		t.Errorf("classes de and sw retrieve %d rows each: no test that a class's threshold is taken", byName["de"].Total)
	}
	// Three anchors, classes en, de, en: each as -label answers it.
	batch, _ := retrieveJSON(t, "-set", p("class.json"), "-db", p("passages.npy"), "-anchor", p("three.npy"), "-anchor-labels", p("three.txt"))
	for i, name := range []string{"en", "de", "en"} {
		one, _ := retrieveJSON(t, "-set", p("class.json"), "-db", p("passages.npy"), "-anchor", p(fmt.Sprintf("q%d.npy", i)), "-label", name)
		if a := batch.Anchors[i]; !slices.Equal(a.rows(), one.rows()) || a.Class != name || a.Threshold != one.Threshold {
			t.Errorf("-anchor-labels, anchor %d: %d rows, class %q, threshold %v; -label %s: %d rows, threshold %v", i, a.Total, a.Class, a.Threshold, name, one.Total, one.Threshold)
		}
	}
	// A bundle's anchors take the labels beside them, as -anchor-labels
	// FILE:labels gives them, and say so.
	given, _ := retrieveJSON(t, "-set", p("class.json"), "-db", p("passages.npy"), "-anchor", p("B/test.npz"), "-anchor-labels", p("B/test.npz")+":labels", "-limit", "3")
	beside, notes := retrieveJSON(t, "-set", p("class.json"), "-db", p("passages.npy"), "-anchor", p("B/test.npz"), "-limit", "3")
	if len(beside.Anchors) < 2 || len(beside.Anchors) != len(given.Anchors) || !strings.Contains(notes, "note: -anchor-labels "+p("B/test.npz")+":labels: each anchor's class, beside the anchors") {
		t.Errorf("a bundle's anchors: %d anchors against %d with -anchor-labels; stderr:\n%s", len(beside.Anchors), len(given.Anchors), notes)
	}
	classes := map[string]bool{}
	for i, a := range beside.Anchors {
		if b := given.Anchors[i]; !slices.Equal(a.rows(), b.rows()) || a.Class != b.Class || a.Threshold != b.Threshold || a.Total != b.Total {
			t.Errorf("a bundle's anchor %d: class %q, %d rows; with -anchor-labels class %q, %d rows", i, a.Class, a.Total, b.Class, b.Total)
		}
		classes[a.Class] = true
	}
	if len(classes) < 2 {
		t.Errorf("the bundle's anchors are of %d classes: no test that each takes its own", len(classes))
	}
	if _, notes := retrieveJSON(t, "-set", p("class.json"), "-db", p("passages.npy"), "-anchor", p("B/test.npz"), "-label", "de", "-limit", "1"); !strings.Contains(notes, "note: -label de: every anchor's class, whatever "+p("B/test.npz")+"'s labels say") {
		t.Errorf("-label beside a bundle's labels: stderr %q", notes)
	}
	// Another bundling numbers the classes otherwise (its manifest's
	// names in another order): its labels are taken by name, not number.
	m := bundle.ReadManifest(p("B"))
	if m == nil || len(m.LabelNames) != 4 {
		t.Fatalf("B's manifest: %+v", m)
	}
	names := slices.Clone(m.LabelNames)
	slices.Reverse(m.LabelNames)
	for i := range m.Files { // counted by the new names, as a bundling that named them so would
		f := &m.Files[i]
		f.ClassesByName = map[string]int{}
		for l, c := range f.Classes {
			if k, err := strconv.Atoi(l); err == nil && k >= 0 {
				f.ClassesByName[m.LabelNames[k]] = c
			}
		}
	}
	if err := os.MkdirAll(p("C"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.WriteManifest(p("C"), m); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(p("B/test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("C/test.npz"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-anchor", p("C/test.npz")}, {"-anchor", p("C/test.npz"), "-anchor-labels", p("C/test.npz") + ":labels"}} {
		renamed, _ := retrieveJSON(t, append([]string{"-set", p("class.json"), "-db", p("passages.npy"), "-limit", "3"}, args...)...)
		for i, a := range renamed.Anchors {
			if want := names[len(names)-1-slices.Index(names, beside.Anchors[i].Class)]; a.Class != want {
				t.Errorf("%v: anchor %d's class %q, want %q (its label's name in C's manifest)", args, i, a.Class, want)
			}
		}
	}
	// One class's set (calibrate -class de): its class said, its hits
	// the class set's for de.
	de, _ := retrieveJSON(t, "-set", p("de.json"), "-db", p("passages.npy"), "-anchor", p("q0.npy"))
	if !slices.Equal(de.rows(), byName["de"].rows()) || de.Class != "de" || de.Threshold != byName["de"].Threshold {
		t.Errorf("calibrate -class de: %d rows, class %q, threshold %v; want the class set's de: %d, %v", de.Total, de.Class, de.Threshold, byName["de"].Total, byName["de"].Threshold)
	}
	var stdout bytes.Buffer
	if err := run(&stdout, io.Discard, []string{"retrieve", "-set", p("de.json"), "-db", p("passages.npy"), "-anchor", p("q0.npy"), "-limit", "1"}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`inside the set (class "de"'s threshold %.6g, α=0.2)`, byName["de"].Threshold); !strings.Contains(stdout.String(), want) {
		t.Errorf("calibrate -class de's text output:\n%s\nwant %q", stdout.String(), want)
	}
	all, warn := retrieveJSON(t, "-set", p("class.json"), "-db", p("passages.npy"), "-anchor", p("q0.npy"), "-unlabeled", "marginal")
	if want := brute(set.Threshold); !slices.Equal(all.rows(), want) || all.Label != nil || !strings.Contains(warn, "-unlabeled marginal: ") || !strings.Contains(warn, "no class-conditional guarantee") {
		t.Errorf("-unlabeled marginal: %d rows (label %v), want the %d within the threshold over all classes %v; warnings:\n%s", all.Total, all.Label, len(want), set.Threshold, warn)
	}
}

// TestRetrieveClassBadInput: the refusals of a class's retrieval, usage
// errors (exit 2) where the flags contradict the set or each other, each
// naming what to give.
func TestRetrieveClassBadInput(t *testing.T) {
	p, _, _, _ := classFixture(t)
	base := func(set string, more ...string) []string {
		return append([]string{"retrieve", "-set", p(set), "-db", p("passages.npy")}, more...)
	}
	for _, c := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no label", base("class.json", "-anchor", p("q0.npy")), true, `is class-conditional (a threshold a class: "de", "en", "ja", "sw"): give the anchor's class with -label`},
		{"no label for another array of a bundle", base("class.json", "-anchor", p("B/test.npz")+":positives"), true, "-anchor-labels " + p("B/test.npz") + `:labels if that file's labels are those of its array "positives"'s rows`},
		{"label on a marginal set", base("ball.json", "-anchor", p("q0.npy"), "-label", "de"), true, "-label de: " + p("ball.json") + " has one threshold, which takes no label"},
		{"label on a class's set", base("de.json", "-anchor", p("q0.npy"), "-label", "de"), true, "has one threshold, which takes no label"},
		{"anchor labels on a marginal set", base("ball.json", "-anchor", p("three.npy"), "-anchor-labels", p("three.txt")), true, "-anchor-labels " + p("three.txt") + ": "},
		{"unknown name", base("class.json", "-anchor", p("q0.npy"), "-label", "fr"), false, `-label fr: no class is named "fr" (the set's classes: 0 "de", 1 "en", 2 "ja", 3 "sw")`},
		{"unknown label", base("class.json", "-anchor", p("q0.npy"), "-label", "9"), false, `-label 9: class 9 has no threshold: the calibration bundle had no anchor of it (the set's classes: 0 "de"`},
		{"both", base("class.json", "-anchor", p("three.npy"), "-label", "de", "-anchor-labels", p("three.txt")), true, "give one of them"},
		{"marginal and label", base("class.json", "-anchor", p("q0.npy"), "-label", "de", "-unlabeled", "marginal"), true, "-unlabeled marginal retrieves without a class; -label de gives one"},
		{"unlabeled value", base("class.json", "-anchor", p("q0.npy"), "-unlabeled", "drop"), true, `-unlabeled "drop": want error or marginal`},
		{"anchor labels and index", base("class.json", "-anchor-index", "0", "-anchor-labels", p("three.txt")), true, "give its class with -label"},
		{"anchor labels count", base("class.json", "-anchor", p("three.npy"), "-anchor-labels", p("two.txt")), false, "two.txt: 2 labels for the 3 anchors of " + p("three.npy")},
		{"anchor labels unknown", base("class.json", "-anchor", p("three.npy"), "-anchor-labels", p("bad.txt")), false, `bad.txt: row 1: no class is named "fr"`},
		{"anchor labels not there", base("class.json", "-anchor", p("three.npy"), "-anchor-labels", p("none.txt")), false, "open " + p("none.txt") + ": no such file or directory"},
	} {
		err := run(io.Discard, io.Discard, c.args)
		if err == nil || isUsage(err) != c.usage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v (usage %v), want usage %v saying %q", c.name, err, isUsage(err), c.usage, c.want)
		}
	}
}

// TestEvaluateOneClass: a set calibrated on one class's anchors (calibrate
// -class de) is evaluated on the test bundle's anchors of that class,
// matched by name: its figures are the class-conditional set's row for
// the class (the same threshold on the same anchors), a note says so and
// the set's line names the class; on a test bundle without labels it is
// judged on every anchor, with a warning that the figure mixes classes.
func TestEvaluateOneClass(t *testing.T) {
	p, _, _, _ := classFixture(t)
	type classRow struct {
		Name                string
		Anchors             int
		Coverage, Exclusion float64
		Threshold           float64
	}
	type figures struct {
		Positives           int
		Coverage, Exclusion float64
		Threshold           float64
		Calibration         struct{ Class *conformal.ClassOf }
		Warnings            []string
		Classes             []classRow
	}
	evaluate := func(args ...string) (figures, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, append([]string{"evaluate", "-json"}, args...)); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var f figures
		if err := json.Unmarshal(stdout.Bytes(), &f); err != nil {
			t.Fatal(err)
		}
		return f, stderr.String()
	}
	de, stderr := evaluate("-set", p("de.json"), "-test", p("B/test.npz"))
	class, _ := evaluate("-set", p("class.json"), "-test", p("B/test.npz"), "-per-class")
	row := class.Classes[slices.IndexFunc(class.Classes, func(c classRow) bool { return c.Name == "de" })]
	if de.Positives != row.Anchors || de.Coverage != row.Coverage || de.Exclusion != row.Exclusion || de.Threshold != row.Threshold || row.Anchors == class.Positives {
		t.Errorf("-class de on the test split: %d positives, coverage %v, exclusion %v, threshold %v; the class set's de: %d anchors (of %d), %v, %v, %v",
			de.Positives, de.Coverage, de.Exclusion, de.Threshold, row.Anchors, class.Positives, row.Coverage, row.Exclusion, row.Threshold)
	}
	if c := de.Calibration.Class; c == nil || *c != (conformal.ClassOf{Label: 0, Name: "de"}) {
		t.Errorf("-class de: calibration.class %+v, want label 0, \"de\"", c)
	}
	if want := fmt.Sprintf(`the set is for class "de"'s anchors alone (ccs calibrate -class, label= in Python): judged on the test bundle's %d anchors of that class (of %d, matched by name)`, row.Anchors, class.Positives); !strings.Contains(stderr, want) {
		t.Errorf("-class de: stderr\n%s\nwant %q", stderr, want)
	}
	var text bytes.Buffer
	if err := run(&text, io.Discard, []string{"evaluate", "-set", p("de.json"), "-test", p("B/test.npz")}); err != nil {
		t.Fatal(err)
	}
	if want := `one-per-anchor calibration on class "de"'s anchors alone)`; !strings.Contains(text.String(), want) {
		t.Errorf("-class de's set line:\n%s\nwant %q", text.String(), want)
	}
	b, err := bundle.Read(p("B/test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	b.Labels = nil
	if err := bundle.Write(p("unlabeled.npz"), b); err != nil {
		t.Fatal(err)
	}
	all, _ := evaluate("-set", p("de.json"), "-test", p("unlabeled.npz"))
	if all.Positives != class.Positives || len(all.Warnings) == 0 || !strings.Contains(all.Warnings[0], "has no labels to pick them by: its coverage below is over every class's anchors") {
		t.Errorf("-class de on an unlabeled test bundle: %d positives (want %d), warnings %q", all.Positives, class.Positives, all.Warnings)
	}
}
