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
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
)

// TestBundleQueryLabels: -query-labels gives each query of relevance pairs
// a label (its language), read in the queries' row order or matched by
// id from a table whose first column holds the query ids; the bundles
// carry it, so that calibrate -calibration class gives each language its
// threshold and evaluate -per-class its row. A table that names some
// queries and not others is refused, naming the line.
func TestBundleQueryLabels(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, nq, d = 300, 400, 3
	x32, _, _ := mixture(7, n+nq, d, 4)
	if err := bundle.WriteNPY(p("passages.npy"), bundle.Float32(x32[:n*d], n, d)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("queries.npy"), bundle.Float32(x32[n*d:], nq, d)); err != nil {
		t.Fatal(err)
	}
	langs := []string{"en", "de", "ja", "hi", "sw"}
	rng := rand.New(rand.NewPCG(8, 0))
	lang := make([]string, nq)
	var qrels, qids, rowOrder strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	rowOrder.WriteString("query-id,language\n")
	for q := range nq {
		lang[q] = langs[[]int{0, 0, 0, 0, 0, 1, 1, 2, 3, 4}[rng.IntN(10)]]
		fmt.Fprintf(&qids, "q%d\n", 1000-q)
		fmt.Fprintf(&qrels, "q%d\tdoc%d\t2\nq%d\tdoc%d\t1\n", 1000-q, q%n, 1000-q, (q*7+3)%n)
		fmt.Fprintf(&rowOrder, "q%d,%s\n", 1000-q, lang[q])
	}
	var ids strings.Builder
	for i := range n {
		fmt.Fprintf(&ids, "doc%d\n", i)
	}
	lines := strings.Split(strings.TrimSuffix(rowOrder.String(), "\n"), "\n")
	shuffled := slices.Clone(lines[1:])
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for name, text := range map[string]string{
		"qrels.tsv": qrels.String(), "query-ids.txt": qids.String(), "ids.txt": ids.String(),
		"lang.csv":     rowOrder.String(),
		"shuffled.csv": lines[0] + "\n" + strings.Join(shuffled, "\n") + "\n",
		"lang.txt":     strings.Join(lang, "\n") + "\n",
		"unknown.csv":  lines[0] + "\n" + strings.Join(append(slices.Clone(shuffled[1:]), "q5,en"), "\n") + "\n",
		"twice.csv":    lines[0] + "\n" + strings.Join(append(slices.Clone(shuffled[1:]), shuffled[2]), "\n") + "\n",
		"short.csv":    lines[0] + "\n" + strings.Join(shuffled[1:], "\n") + "\n",
		"nan.csv":      lines[0] + "\n" + strings.Join(append(slices.Clone(shuffled[1:]), strings.Split(shuffled[0], ",")[0]+",nan"), "\n") + "\n",
		"langonly.csv": "language\n" + strings.Join(lang, "\n") + "\n",
		"noqueryids.csv": "row,language\n" + strings.Join(func() []string {
			s := make([]string, nq)
			for i := range s {
				s[i] = fmt.Sprintf("r%d,%s", i, lang[i])
			}
			return s
		}(), "\n") + "\n",
	} {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"bundle", "-embeddings", p("passages.npy"), "-queries", p("queries.npy"), "-pairs", p("qrels.tsv"), "-ids", p("ids.txt"), "-query-ids", p("query-ids.txt"), "-k", "1", "-kneg", "5"}
	// Every way of giving the same labels makes the same bundles.
	var first string
	for _, c := range []struct{ labels, note string }{
		{"lang.csv:language", ""},
		{"shuffled.csv:language", `note: ` + p("shuffled.csv") + `: its lines are not in the queries' row order: each query's label was matched by its id, the first column "query-id", to ` + p("query-ids.txt")},
		{"lang.txt", ""},
		{"langonly.csv", ""},
		{"noqueryids.csv:language", ""},
	} {
		out := p("rag-" + strings.Split(c.labels, ".")[0])
		var stderr bytes.Buffer
		if err := run(io.Discard, &stderr, append(slices.Clone(base), "-query-labels", p(c.labels), "-out", out)); err != nil {
			t.Fatalf("%s: %v", c.labels, err)
		}
		if c.note != "" && !strings.Contains(stderr.String(), c.note) {
			t.Errorf("%s: stderr does not say %q:\n%s", c.labels, c.note, stderr.String())
		}
		if c.note == "" && strings.Contains(stderr.String(), "row order") {
			t.Errorf("%s: stderr speaks of the order:\n%s", c.labels, stderr.String())
		}
		if first == "" {
			first = out
			continue
		}
		for _, f := range []string{"fit", "val", "cal", "test"} {
			a, _ := os.ReadFile(filepath.Join(first, f+".npz"))
			b, err := os.ReadFile(filepath.Join(out, f+".npz"))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s: %s.npz differs from %s's (%v)", c.labels, f, first, err)
			}
		}
	}
	// A query whose language is "nan" (pandas' NaN after astype(str)):
	// refused below; -missing-labels drop leaves it out, and says so.
	var dropped bytes.Buffer
	if err := run(io.Discard, &dropped, append(slices.Clone(base), "-query-labels", p("nan.csv")+":language", "-missing-labels", "drop", "-out", p("rag-drop"))); err != nil {
		t.Fatal(err)
	}
	if want := `1 of the queries with a relevant row have a query label that marks a missing value ("nan": 1; the first: query "`; !strings.Contains(dropped.String(), want) || !strings.Contains(dropped.String(), "left out of every split") {
		t.Errorf("-missing-labels drop: stderr does not say %q:\n%s", want, dropped.String())
	}
	// The anchors' labels are their queries' languages, named by the
	// manifest.
	names := []string{"de", "en", "hi", "ja", "sw"} // sorted
	for _, f := range []string{"cal", "test"} {
		b, err := bundle.Read(filepath.Join(first, f+".npz"))
		if err != nil {
			t.Fatal(err)
		}
		for a, q := range b.Index {
			if got := names[b.Labels[a]]; got != lang[q] {
				t.Fatalf("%s: anchor %d (query %d): label %q, want %q", f, a, q, got, lang[q])
			}
		}
		if got := bundle.ManifestLabelNames(filepath.Join(first, f+".npz"), b); !slices.Equal(got, names) {
			t.Errorf("%s: the manifest's names %q, want %q", f, got, names)
		}
	}
	// A threshold a language; evaluate's rows by language.
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", filepath.Join(first, "cal.npz"), "-alpha", "0.2", "-calibration", "class", "-allow-infinite", "-out", p("lang.json")}); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := run(&got, io.Discard, []string{"evaluate", "-set", p("lang.json"), "-test", filepath.Join(first, "test.npz"), "-per-class"}); err != nil {
		t.Fatal(err)
	}
	for _, l := range names {
		if !hasRow(got.String(), l) {
			t.Errorf("evaluate -per-class has no row for %q:\n%s", l, got.String())
		}
	}
	// -class: one language's anchors alone, one threshold, the same as
	// that language's threshold in the class-conditional set.
	var class struct {
		Classes []struct {
			Name      string
			Threshold float64
		}
	}
	raw, _ := os.ReadFile(p("lang.json"))
	if err := json.Unmarshal(raw, &class); err != nil {
		t.Fatal(err)
	}
	for _, c := range class.Classes {
		out := p("lang-" + c.Name + ".json")
		var stderr bytes.Buffer
		if err := run(io.Discard, &stderr, []string{"calibrate", "-geometry", "ball", "-cal", filepath.Join(first, "cal.npz"), "-alpha", "0.2", "-class", c.Name, "-allow-infinite", "-out", out}); err != nil {
			t.Fatal(err)
		}
		set, err := conformal.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if set.ClassConditional() || set.Threshold != c.Threshold {
			t.Errorf("-class %s: threshold %v (class-conditional %v), want %v", c.Name, set.Threshold, set.ClassConditional(), c.Threshold)
		}
		if want := fmt.Sprintf("anchors of class %q (of ", c.Name); !strings.Contains(stderr.String(), want) {
			t.Errorf("-class %s: stderr does not say %q:\n%s", c.Name, want, stderr.String())
		}
	}
	// A class-conditional set retrieves with a class's threshold (ccs
	// retrieve -label, TestRetrieveClass): the refusal says how. Evaluate
	// -db sizes each test anchor's set at its class's threshold, its rows
	// named by the classes' names.
	var sizes strings.Builder
	if err := run(&sizes, io.Discard, []string{"evaluate", "-set", p("lang.json"), "-test", filepath.Join(first, "test.npz"), "-db", p("passages.npy"), "-per-class", "-json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ClassSizes []eval.ClassSizes `json:"class_set_sizes"`
	}
	if err := json.Unmarshal([]byte(sizes.String()), &doc); err != nil || len(doc.ClassSizes) == 0 {
		t.Fatalf("evaluate -db -per-class: %v: %s", err, sizes.String())
	}
	for _, c := range doc.ClassSizes {
		if !slices.Contains([]string{"de", "en", "hi", "ja", "sw"}, c.Name) || c.Anchors == 0 {
			t.Errorf("evaluate -db -per-class: class %d named %q, %d anchors", c.Label, c.Name, c.Anchors)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"retrieve", "-set", p("lang.json"), "-db", p("passages.npy"), "-anchor-index", "0"}, `(a threshold a class: "de", "en", "hi", "ja", "sw"): give the anchor's class with -label`},
	} {
		if err := run(io.Discard, io.Discard, c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.args[0], err, c.want)
		}
	}
	for _, c := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"-class", "xx"}, false, `calibrate: -class: ` + filepath.Join(first, "cal.npz") + `: "xx" is not among the labels`},
		{[]string{"-class", "sw", "-calibration", "class"}, true, "calibrate: -class sw calibrates one class's anchors alone, with one threshold"},
		{[]string{"-class", "sw", "-ood-class", "en"}, true, "calibrate: -class sw and -ood-class en"},
	} {
		err := run(io.Discard, io.Discard, append([]string{"calibrate", "-geometry", "ball", "-cal", filepath.Join(first, "cal.npz"), "-out", p("bad.json")}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != map[bool]int{true: 2, false: 1}[c.usage] {
			t.Errorf("%v: %v (exit %d), want %q", c.args, err, exitCode(err), c.want)
		}
	}
	for _, c := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"an id not among the queries'", []string{"-query-labels", p("unknown.csv") + ":language"}, false, p("unknown.csv") + `:401: query id "q5" is not among ` + p("query-ids.txt") + `'s, though 399 of its 400 lines name one`},
		{"a query on two lines", []string{"-query-labels", p("twice.csv") + ":language"}, false, `: one line a query`},
		{"a query without a line", []string{"-query-labels", p("short.csv") + ":language"}, false, p("short.csv") + `: query "q955" of ` + p("query-ids.txt") + ` has no line, though its first column, "query-id", names queries by id: give every query its label`},
		{"a missing label", []string{"-query-labels", p("nan.csv") + ":language"}, false, p("nan.csv") + `:language: bundle: 1 of the queries with a relevant row have a query label that marks a missing value ("nan": 1; the first: query "`},
		{"query labels without pairs", []string{"-queries", "", "-pairs", "", "-ids", "", "-query-ids", "", "-labels", p("lang.txt"), "-query-labels", p("lang.txt")}, true, "bundle: -ids, -query-ids and -query-labels are of relevance pairs' rows and queries: give them with -queries and -pairs"},
		{"labels with pairs", []string{"-labels", p("lang.txt")}, true, "give one of the three (a label of each query, such as its language, is -query-labels)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := p("out-" + strings.ReplaceAll(c.name, " ", "-"))
			err := run(io.Discard, io.Discard, append(append(slices.Clone(base), "-out", out), c.args...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want %q", err, c.want)
			}
			if code := exitCode(err); code != map[bool]int{true: 2, false: 1}[c.usage] {
				t.Errorf("exit %d (%v)", code, err)
			}
		})
	}
}
