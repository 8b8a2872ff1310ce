package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/sim"
)

// TestCompareCommand: ccs compare on ccs bundle's directory agrees with
// the single commands it stands for — each row's per-seed coverage,
// exclusion and volume are those ccs evaluate measures of the set it kept,
// and its ℓ2 ball is ccs calibrate's at the same seed — its worst class is
// no better than the whole, the held-out OOD class is neither a class of
// the table nor unseen by the OOD test, a rerun reads every cell back to
// the same document, and one seed prints no spread.
func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 1500, 5
	_, x64, y := mixture(11, n, d, 5)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	if err := bundle.WriteNPY(p("labels.npy"), bundle.Int64(y, n)); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("b"),
		"-k", "5", "-ood-classes", "4", "-ood-cal-share", "0.1", "-seed", "2"}); err != nil {
		t.Fatal(err)
	}
	// Bundles of calibration and test alone (a split of share 0 is not made).
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("caltest"),
		"-k", "5", "-split", "0,0,0.5,0.5"}); err != nil {
		t.Fatal(err)
	}
	args := []string{"compare", "-data", p("b"), "-seeds", "2", "-epochs", "3", "-resplits", "40", "-out", p("r"), "-json", "-quiet"}
	var first, stderr bytes.Buffer
	if err := run(&first, &stderr, args); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	doc, err := experiment.ReadDocument(bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	res, ok := doc.Result.(*experiment.CompareResult)
	if !ok || doc.Kind != "compare" || len(res.Tables) != 1 {
		t.Fatalf("kind %q, result %T", doc.Kind, doc.Result)
	}
	table := res.Tables[0]
	if len(table.Rows) != 8 {
		t.Fatalf("%d rows, want the 8 of -rows all", len(table.Rows))
	}
	for _, r := range table.Rows { // the paper's figures are for its simulation, not these data
		if r.Paper != nil || bytes.Contains(first.Bytes(), []byte(`"paper"`)) {
			t.Fatalf("%s: a paper row %+v in a comparison of the user's data", r.Method, r.Paper)
		}
	}
	// Here the training moves every learned row at seed 1; in 3 epochs
	// some stay untrained at seed 0, and the warning names them.
	for _, w := range table.Warnings {
		if strings.Contains(w, "kept the initial geometry at every seed") || strings.Contains(w, "kept the initial geometry") && !strings.Contains(w, " at seed 0") {
			t.Errorf("warning %q", w)
		}
	}
	for _, r := range table.Rows {
		if r.Coverage.N != 2 || len(r.PerSeed) != 2 {
			t.Fatalf("%s: %d seeds", r.Method, len(r.PerSeed))
		}
		if r.WorstClass == nil || r.WorstClass.Mean > r.Coverage.Mean+1e-9 {
			t.Errorf("%s: worst class %v, coverage %v", r.Method, r.WorstClass, r.Coverage)
		}
		var labels []int64
		for _, c := range r.Classes {
			labels = append(labels, c.Label)
		}
		if !slices.Equal(labels, []int64{0, 1, 2, 3}) {
			t.Errorf("%s: classes %v, want 0–3 (4 is the OOD class)", r.Method, labels)
		}
		if r.OODAUROC == nil || r.OODAUROC.Mean < 70 || r.OODFAR == nil || r.BelowShare == nil || r.OODCurve == nil {
			t.Errorf("%s: OOD AUROC %v, FAR %v, resplits %v, curve %v", r.Method, r.OODAUROC, r.OODFAR, r.BelowShare, r.OODCurve != nil)
		}
	}

	// The sets it kept, evaluated one by one, give its per-seed figures.
	for seed := range 2 {
		sets, err := filepath.Glob(p("r/sets/compare/seed-" + string(rune('0'+seed)) + "/*.json"))
		if err != nil || len(sets) != 8 {
			t.Fatalf("seed %d: %d sets kept, want 8 (%v)", seed, len(sets), err)
		}
		for i, r := range table.Rows {
			set := p("r/sets/compare/seed-" + string(rune('0'+seed)) + "/" + methodFile(t, table, i) + ".json")
			out, err := ccs("evaluate", "-set", set, "-test", p("b/test.npz"), "-json")
			if err != nil {
				t.Fatalf("%s: %v", set, err)
			}
			var e struct {
				Coverage     float64 `json:"coverage"`
				Exclusion    float64 `json:"exclusion"`
				LogVolPerDim float64 `json:"logvol_per_dim"`
			}
			if err := json.Unmarshal([]byte(out), &e); err != nil {
				t.Fatal(err)
			}
			got := r.PerSeed[seed]
			if e.Coverage != got.Coverage || e.Exclusion != got.Exclusion || e.LogVolPerDim != got.LogVolPerDim {
				t.Errorf("%s seed %d: evaluate gives %+v, compare %+v", r.Method, seed, e, got)
			}
			// Seed 0's sets carry the pool and the OOD calibration the
			// table measured with: ccs ood (and a service) test inputs so.
			raw, _ := os.ReadFile(set)
			if has := bytes.Contains(raw, []byte(`"ood_calibration"`)) && bytes.Contains(raw, []byte(`"ood_reference"`)); has != (seed == 0) {
				t.Errorf("%s: OOD calibration and pool kept %v", set, has)
			}
			if seed == 0 {
				if out, err := ccs("ood", "-set", set, "-id", p("b/test.npz"), "-ood", p("b/ood.npz")); err != nil || !strings.Contains(out, "per input") {
					t.Errorf("%s: ccs ood: %v\n%s", set, err, out)
				}
			} else if seed == 1 && r.Method == "Conformal Ball (ℓ2)" {
				// Without them only the batch score runs, and it says so.
				var stderr bytes.Buffer
				if err := run(io.Discard, &stderr, []string{"ood", "-set", set, "-id", p("b/test.npz"), "-ood", p("b/ood.npz")}); err != nil || !strings.Contains(stderr.String(), "only the paper's batch score (how tightly each batch clusters), which certifies no input") {
					t.Errorf("%s: ccs ood without a pool: %v\n%s", set, err, stderr.String())
				}
			}
		}
	}
	if _, err := ccs("calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-seed", "1", "-out", p("ball.json")); err != nil {
		t.Fatal(err)
	}
	mine, _ := os.ReadFile(p("ball.json"))
	kept, _ := os.ReadFile(p("r/sets/compare/seed-1/ball.json"))
	if threshold(t, mine) != threshold(t, kept) {
		t.Errorf("ccs calibrate -seed 1 gives threshold %v, compare's seed 1 %v", threshold(t, mine), threshold(t, kept))
	}
	// compare's ellipsoid: Σ from the fit split, the threshold from the whole
	// calibration split, as ccs calibrate -fit makes it. Without -fit, the
	// halves of these label bundles' calibration split would share rows:
	// refused, naming -fit.
	ell := []string{"calibrate", "-geometry", "ellipsoid", "-cal", p("b/cal.npz"), "-seed", "1", "-out", p("ell.json")}
	if _, err := ccs(append(ell, "-fit", p("b/fit.npz"))...); err != nil {
		t.Fatal(err)
	}
	mine, _ = os.ReadFile(p("ell.json"))
	kept, _ = os.ReadFile(p("r/sets/compare/seed-1/ellipsoid.json"))
	if threshold(t, mine) != threshold(t, kept) {
		t.Errorf("ccs calibrate -geometry ellipsoid -fit gives threshold %v, compare's seed 1 %v", threshold(t, mine), threshold(t, kept))
	}
	if err := os.Remove(p("ell.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := ccs(ell...); err == nil || !strings.Contains(err.Error(), "share rows") || !strings.Contains(err.Error(), "-fit FIT.npz") {
		t.Errorf("ccs calibrate -geometry ellipsoid without -fit on label bundles: %v, want a refusal naming -fit", err)
	}
	if _, err := os.Stat(p("ell.json")); !os.IsNotExist(err) {
		t.Errorf("a refused calibration left %s (%v)", p("ell.json"), err)
	}

	// A rerun reads every cell back and prints the same document.
	var again bytes.Buffer
	stderr.Reset()
	if err := run(&again, &stderr, args); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), again.Bytes()) {
		t.Error("the rerun's document differs from the first run's")
	}

	// Fewer rows into the same directory: the answer has those rows;
	// compare.json keeps the directory's every row, the others read back
	// from their cells, with the first run's figures.
	var two bytes.Buffer
	stderr.Reset()
	if err := run(&two, &stderr, append(slices.Clone(args), "-rows", "baselines")); err != nil {
		t.Fatal(err)
	}
	kept8, err := os.ReadFile(p("r/compare.json"))
	if err != nil {
		t.Fatal(err)
	}
	rowsOf := func(b []byte) []experiment.CompareRow {
		doc, err := experiment.ReadDocument(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return doc.Result.(*experiment.CompareResult).Tables[0].Rows
	}
	if got, dir := rowsOf(two.Bytes()), rowsOf(kept8); len(got) != 2 || len(dir) != 8 || !strings.Contains(stderr.String(), "compare.json keeps 6 rows (Single (Neg), ") {
		t.Errorf("-rows baselines: %d rows answered, %d kept in compare.json\n%s", len(got), len(dir), stderr.String())
	} else if a, b := fmt.Sprint(rowsOf(first.Bytes())[5].PerSeed), fmt.Sprint(dir[5].PerSeed); a != b {
		t.Errorf("a row read back: %s, first computed %s", b, a)
	}

	// One seed: means alone, no spread of zero; the false-alarm rate's
	// footnote says which draw it depends on.
	out, err := ccs("compare", "-data", p("b"), "-seeds", "1", "-rows", "baselines", "-resplits", "20", "-quiet")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "±") || !strings.Contains(out, "Conformal Ball") || !strings.Contains(out, "held-out inputs that calibrate it") {
		t.Errorf("one seed shows a spread:\n%s", out)
	}
	if !strings.Contains(out, "the ellipsoid's Σ from the ") {
		t.Errorf("the table does not say where the ellipsoid's Σ comes from:\n%s", out)
	}
	// A Size column: the collection's items in the header, each row's mean
	// size, the JSON's set_size.
	out, err = ccs("compare", "-data", p("b"), "-seeds", "1", "-rows", "baselines", "-resplits", "20", "-quiet", "-db", p("emb.npy"), "-size-anchors", "30")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "| Size↓ of ") || !strings.Contains(out, "each set holds around the first 30 test anchors") {
		t.Errorf("no Size column:\n%s", out)
	}
	// -size-anchors 0: every test anchor.
	out, err = ccs("compare", "-data", p("b"), "-seeds", "1", "-rows", "baselines", "-resplits", "20", "-quiet", "-db", p("emb.npy"), "-size-anchors", "0")
	if want := fmt.Sprintf("each set holds around the first %d test anchors", testN(t, p("b/test.npz"))); err != nil || !strings.Contains(out, want) {
		t.Errorf("-size-anchors 0: %v, want %q in\n%s", err, want, out)
	}
	// The footnote says what each calibration promises.
	for _, c := range []struct{ args []string }{
		{[]string{"-calibration", "pac", "-delta", "0.1"}},
		{[]string{"-calibration", "pooled"}},
	} {
		out, err := ccs(append([]string{"compare", "-data", p("b"), "-seeds", "1", "-rows", "baselines", "-resplits", "20", "-quiet"}, c.args...)...)
		want := map[string]string{"pac": "Coverage is ≥ 95% with probability ≥ 1 − δ = 90% over the calibration draw, for every row; the resplits column recalibrates the row's geometry on one half of a random halving of the test split and tests it on the other: the share of halvings whose coverage falls below it (at most about δ = 10%",
			"pooled": "Coverage is not guaranteed: pooled calibration is approximate"}[c.args[1]]
		if err != nil || !strings.Contains(out, want) || strings.Contains(out, "about half is the guarantee") {
			t.Errorf("%v: %v, want %q in\n%s", c.args, err, want, out)
		}
	}
	// Class-conditional calibration: no resplits column (it resplits class
	// by class in ccs coverage-check -per-class).
	out, err = ccs("compare", "-data", p("b"), "-seeds", "1", "-rows", "baselines", "-calibration", "class", "-json", "-quiet")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "resplits_below") || !strings.Contains(out, "worst_class_coverage") {
		t.Errorf("class calibration: %s", out)
	}
	// Nor OOD columns, and the table says why.
	if strings.Contains(out, "ood_auroc") || !strings.Contains(out, "the OOD columns are left out although the bundles hold") {
		t.Errorf("class calibration, OOD: %s", out)
	}

	for _, c := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no data", []string{"compare"}, true, "-data"},
		{"unknown rows", []string{"compare", "-data", p("b"), "-rows", "best"}, true, `-rows "best": "best" is no set of rows (all, all+infonce, baselines, infonce, learned) nor a row (ball, ellipsoid`},
		{"rows mistyped", []string{"compare", "-data", p("b"), "-rows", "baseline"}, true, `-rows "baseline": "baseline" is no set of rows (all, all+infonce, baselines, infonce, learned) nor a row (ball, ellipsoid, single-neg, `},
		{"a row mistyped", []string{"compare", "-data", p("b"), "-rows", "ball,genball-negvol"}, true, `-rows "ball,genball-negvol": "genball-negvol" is no set of rows`},
		{"no resplits", []string{"compare", "-data", p("b"), "-resplits", "0"}, true, "want at least 1"},
		// A default pool is capped at the fit split, a given one is not.
		{"reference above the fit split", []string{"compare", "-data", p("b"), "-reference", "100000"}, false, "-reference 100000: " + p("b/fit.npz") + " has "},
		{"class with pac's delta", []string{"compare", "-data", p("b"), "-calibration", "class", "-delta", "2"}, true, "want 1e-12 ≤ δ < 0.5, or 0"},
		{"no bundles", []string{"compare", "-data", dir}, false, "fit.npz is missing: make the bundles with ccs bundle -out "},
		{"bundles without a fit split", []string{"compare", "-data", p("caltest")}, false, "caltest: fit.npz is missing: its bundles were made with a fit share of 0 (fit 0, val 0, cal 0.5, test 0.5), and compare fits, calibrates and tests: bundle again with a share for every split (the default 0.5,0.1,0.2,0.2), or, to fit on other rows than these (a model's training classes or people, bundled with -split 0.8,0.2,0,0), put their fit.npz and val.npz beside these in " + p("caltest") + ` ({"fit": …, "val": …, "cal": …, "test": …} in Python)`},
		{"no directory", []string{"compare", "-data", p("none")}, false, "none: no such directory (ccs bundle -out "},
		{"a file", []string{"compare", "-data", p("emb.npy")}, false, "emb.npy is a file, want the directory ccs bundle -out wrote"},
		{"embeddings for bundles", []string{"compare", "-data", p("emb-dir")}, false, `emb-dir/fit.npz: array "anchors" is missing (have [x]): a bundle holds anchors with their positives; ccs bundle makes bundles`},
		{"fit of another dimension", []string{"compare", "-data", p("dim-dir")}, false, "val.npz: embeddings of dimension 5, " + p("dim-dir/fit.npz") + "'s is 4"},
		{"calibrate -fit of another dimension", []string{"calibrate", "-geometry", "ellipsoid", "-fit", p("dim-dir/fit.npz"), "-cal", p("b/cal.npz"), "-out", p("x.json")}, false, "dim-dir/fit.npz: embeddings of dimension 4, " + p("b/cal.npz") + "'s is 5"},
		{"calibrate -fit for the ball", []string{"calibrate", "-geometry", "ball", "-fit", p("b/fit.npz"), "-cal", p("b/cal.npz"), "-out", p("x.json")}, true, "-fit is for -geometry ellipsoid"},
		// The ellipsoid's Σ comes from the fit split, trained rows or not.
		{"baselines without fit", []string{"compare", "-data", p("nofit-dir"), "-rows", "baselines"}, false, "fit.npz is missing: make the bundles with ccs bundle -out "},
		{"class calibration without labels", []string{"compare", "-data", p("nolabel-dir"), "-rows", "baselines", "-calibration", "class"}, false, "compare: -calibration class: " + p("nolabel-dir/cal.npz") + " has no labels, and a class-conditional threshold is one per label: bundle with -labels"},
		{"size anchors below 0", []string{"compare", "-data", p("b"), "-db", p("emb.npy"), "-size-anchors", "-1"}, true, "-size-anchors -1: want ≥ 0 (0: all)"},
		{"size anchors without a collection", []string{"compare", "-data", p("b"), "-size-anchors", "10"}, true, "-size-anchors counts items of the -db collection; give -db"},
		{"a database for the Size column", []string{"compare", "-data", p("b"), "-db", "clickhouse://127.0.0.1:9000/db.t"}, true, "a database table's sizes are ccs evaluate -db's"},
		{"a collection of another dimension", []string{"compare", "-data", p("b"), "-rows", "baselines", "-db", p("dim-dir/fit.npz") + ":anchors"}, false, "compare: -db " + p("dim-dir/fit.npz") + ":anchors: embeddings of dimension 4, the bundles' is 5"},
		{"no collection", []string{"compare", "-data", p("b"), "-rows", "baselines", "-db", p("none.npy")}, false, "none.npy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "embeddings for bundles" {
				os.MkdirAll(p("emb-dir"), 0o755)
				for _, f := range []string{"fit", "val", "cal", "test"} {
					if err := bundle.WriteNPZ(p("emb-dir/"+f+".npz"), map[string]bundle.Array{"x": bundle.Float32(make([]float32, 6), 2, 3)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if c.name == "class calibration without labels" {
				os.MkdirAll(p("nolabel-dir"), 0o755)
				for i, f := range []string{"fit", "val", "cal", "test"} {
					if err := bundle.Write(p("nolabel-dir/"+f+".npz"), sim.Gauss(rand.New(rand.NewPCG(uint64(i), 2)), 40, 3, 5)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if c.name == "baselines without fit" {
				os.MkdirAll(p("nofit-dir"), 0o755)
				for _, f := range []string{"cal", "test"} {
					data, err := os.ReadFile(p("b/" + f + ".npz"))
					if err != nil {
						t.Fatal(err)
					}
					os.WriteFile(p("nofit-dir/"+f+".npz"), data, 0o644)
				}
			}
			if c.name == "fit of another dimension" {
				// The fit split from another embedding (d = 4), the others
				// as made (d = 5).
				os.MkdirAll(p("dim-dir"), 0o755)
				for _, f := range []string{"val", "cal", "test"} {
					data, err := os.ReadFile(p("b/" + f + ".npz"))
					if err != nil {
						t.Fatal(err)
					}
					os.WriteFile(p("dim-dir/"+f+".npz"), data, 0o644)
				}
				if err := bundle.Write(p("dim-dir/fit.npz"), sim.Gauss(rand.New(rand.NewPCG(1, 2)), 40, 3, 4)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ccs(c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want %q", err, c.want)
			}
			if isUsage(err) != c.usage {
				t.Errorf("usage error %v, want %v (%v)", isUsage(err), c.usage, err)
			}
		})
	}
}

// methodFile is the file name compare keeps row i's set under.
func methodFile(t *testing.T, table *experiment.CompareTable, i int) string {
	t.Helper()
	name := map[string]string{
		"Conformal Ball (ℓ2)": "ball", "Mahalanobis Ellipsoid": "ellipsoid",
		"Single (Neg)": "single-neg", "Generalized (Neg)": "genball-neg",
		"Single (Vol)": "single-vol", "Generalized (Vol)": "genball-vol",
		"Single (Neg,Vol)": "single-neg-vol", "Generalized (Neg,Vol)": "genball-neg-vol",
	}[table.Rows[i].Method]
	if name == "" {
		t.Fatalf("row %q has no file name", table.Rows[i].Method)
	}
	return name
}

func threshold(t *testing.T, set []byte) float64 {
	t.Helper()
	var s struct {
		Threshold float64 `json:"threshold"`
	}
	if err := json.Unmarshal(set, &s); err != nil {
		t.Fatal(err)
	}
	return s.Threshold
}

// TestCompareSmallTestSplit: a test split whose halves are too few for α
// leaves the resplits column out with a warning saying why and what gives
// it, and keeps every other figure; the text reads without it.
func TestCompareSmallTestSplit(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 400, 4
	_, x64, y := mixture(5, n, d, 2)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	if err := bundle.WriteNPY(p("labels.npy"), bundle.Int64(y, n)); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("b"),
		"-k", "3", "-split", "0.5,0.1,0.32,0.08", "-seed", "2"}); err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	args := []string{"compare", "-data", p("b"), "-seeds", "1", "-rows", "baselines", "-quiet"}
	if err := run(&text, io.Discard, args); err != nil {
		t.Fatal(err)
	}
	if err := run(&js, io.Discard, append(args, "-json")); err != nil {
		t.Fatal(err)
	}
	doc, err := experiment.ReadDocument(&js)
	if err != nil {
		t.Fatal(err)
	}
	table := doc.Result.(*experiment.CompareResult).Tables[0]
	for _, r := range table.Rows {
		if r.BelowShare != nil || r.WorstClass == nil || r.Coverage.N != 1 {
			t.Errorf("%s: resplits %v, worst class %v, coverage %v: want no resplits, the rest", r.Method, r.BelowShare, r.WorstClass, r.Coverage)
		}
	}
	const want = "resplits left out: each resplit calibrates on half of the 32 test anchors, and 16 calibration scores are too few for alpha 0.05"
	if len(table.Warnings) != 1 || !strings.HasPrefix(table.Warnings[0], want) || !strings.HasSuffix(table.Warnings[0], "alpha 0.05 needs at least 19 (a larger test split, or a larger -alpha, gives them)") {
		t.Errorf("warnings %q, want one starting %q", table.Warnings, want)
	}
	if s := text.String(); strings.Contains(s, "Resplits") || strings.Contains(s, "; .") || !strings.Contains(s, "WARNING: "+want) {
		t.Errorf("text:\n%s", s)
	}
}

// TestCompareUntrained: where no epoch beats the initial geometry's
// validation exclusion (classes far apart: it is 100% from the start), the
// learned rows are the untrained sets, and the table says so, naming them.
func TestCompareUntrained(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 900, 32
	_, x64, y := mixture(9, n, d, 3)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	if err := bundle.WriteNPY(p("labels.npy"), bundle.Int64(y, n)); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("b"), "-k", "3", "-seed", "2"}); err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := run(&js, io.Discard, []string{"compare", "-data", p("b"), "-seeds", "2", "-rows", "learned", "-epochs", "3", "-resplits", "10", "-quiet", "-json"}); err != nil {
		t.Fatal(err)
	}
	doc, err := experiment.ReadDocument(&js)
	if err != nil {
		t.Fatal(err)
	}
	table := doc.Result.(*experiment.CompareResult).Tables[0]
	want := "Single (Neg), Generalized (Neg), Single (Vol), Generalized (Vol), Single (Neg,Vol), Generalized (Neg,Vol) kept the initial geometry at every seed"
	if !slices.ContainsFunc(table.Warnings, func(w string) bool {
		return strings.HasPrefix(w, want) && strings.Contains(w, "where the initial set already excludes the validation negatives")
	}) {
		t.Errorf("warnings %q, want one starting %q, of negatives already excluded", table.Warnings, want)
	}
}

// TestClassTooSmall: string labels with one class too small for a
// class-conditional set. calibrate refuses it by its name, saying how to go
// on; compare refuses it before training; with -allow-infinite the set
// keeps the names, so evaluate names the classes on a test file taken away
// from its manifest.
func TestClassTooSmall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 1300, 4
	_, x64, y := mixture(8, n, d, 3)
	names := make([]string, n)
	for i := range names {
		names[i] = []string{"ant", "bee", "cat"}[y[i]]
		if i < 60 {
			names[i] = "yak" // 60 rows: about 12 in the calibration split
		}
	}
	writeNPY64(t, p("emb.npy"), x64, n, d)
	writeStrNPY(t, p("labels.npy"), names, fmt.Sprintf("(%d,)", n))
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("b"), "-k", "5", "-allow-fewer"}); err != nil {
		t.Fatal(err)
	}
	err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-calibration", "class", "-out", p("set.json")})
	if err == nil || !strings.Contains(err.Error(), `class "yak" (`) || !strings.Contains(err.Error(), "disjoint pairs of its") || !strings.Contains(err.Error(), "-allow-infinite makes that class's set the whole space") ||
		!regexp.MustCompile(`needs at least \d+ — about \d+ calibration anchors of the class`).MatchString(err.Error()) {
		t.Errorf("calibrate: %v", err)
	}
	err = run(io.Discard, io.Discard, []string{"compare", "-data", p("b"), "-seeds", "1", "-rows", "all", "-calibration", "class"})
	if err == nil || !strings.Contains(err.Error(), `class "yak" has `) || !strings.Contains(err.Error(), "calibrate over every class (-calibration one") || !strings.Contains(err.Error(), "-ood-classes") || !strings.Contains(err.Error(), "-allow-infinite") {
		t.Errorf("compare: %v", err)
	}
	// -allow-infinite keeps yak's sets the whole space in every row, said
	// once for the table: every yak anchor's positives covered.
	var cmpOut, cmpErr bytes.Buffer
	if err := run(&cmpOut, &cmpErr, []string{"compare", "-data", p("b"), "-seeds", "1", "-rows", "baselines", "-calibration", "class", "-allow-infinite", "-resplits", "20", "-json"}); err != nil {
		t.Fatal(err)
	}
	var cmpDoc struct {
		Tables []experiment.CompareTable `json:"tables"`
	}
	if err := json.Unmarshal(cmpOut.Bytes(), &cmpDoc); err != nil || len(cmpDoc.Tables) != 1 {
		t.Fatalf("compare -json: %v, %d tables", err, len(cmpDoc.Tables))
	}
	table := cmpDoc.Tables[0]
	if !slices.Contains(table.LabelNames, "yak") || len(table.Rows) != 2 || !slices.ContainsFunc(table.Warnings, func(w string) bool {
		return strings.HasPrefix(w, `-allow-infinite: class "yak" has `) && strings.Contains(w, "LogVol/d is +Inf") && !strings.Contains(w, "conformal:")
	}) {
		t.Fatalf("compare -allow-infinite: warnings %q, names %q", table.Warnings, table.LabelNames)
	}
	for _, r := range table.Rows { // a whole space has no finite volume, as the warning says
		if !math.IsInf(r.LogVolPerDim.Mean, 1) || r.Coverage.Mean < 80 || r.Coverage.Mean >= 100 {
			t.Errorf("%s: coverage %v, LogVol/d %v; want +Inf LogVol/d", r.Method, r.Coverage.Mean, r.LogVolPerDim.Mean)
		}
	}
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-calibration", "class", "-allow-infinite", "-out", p("set.json")}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), `WARNING: class "yak": `) {
		t.Errorf("calibrate -allow-infinite:\n%s", stderr.String())
	}
	// Evaluated on its own calibration split, the set warns: no test.
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"evaluate", "-set", p("set.json"), "-test", p("b/cal.npz")}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "cal.npz: this is the set's calibration split") {
		t.Errorf("evaluate on the calibration split:\n%s", stderr.String())
	}
	// coverage-check's resplits recalibrate, so the split is fair for them,
	// but the file's own threshold on it is no test, and it says so.
	var cc bytes.Buffer
	if err := run(&cc, io.Discard, []string{"coverage-check", "-set", p("set.json"), "-test", p("b/cal.npz"), "-resplits", "10"}); err != nil || !strings.Contains(cc.String(), "this is the set's calibration split: near 1−α by construction, no test") {
		t.Errorf("coverage-check on the calibration split: %v\n%s", err, cc.String())
	}
	cc.Reset()
	if err := run(&cc, io.Discard, []string{"coverage-check", "-set", p("set.json"), "-test", p("b/cal.npz"), "-resplits", "10", "-json"}); err != nil || !strings.Contains(cc.String(), `"split": "calibration"`) {
		t.Errorf("coverage-check -json on the calibration split: %v\n%s", err, cc.String())
	}
	// and its JSON document says so too, for a pipeline that reads only it.
	var doc bytes.Buffer
	if err := run(&doc, io.Discard, []string{"evaluate", "-set", p("set.json"), "-test", p("b/cal.npz"), "-json"}); err != nil {
		t.Fatal(err)
	}
	var e struct{ Warnings []string }
	if err := json.Unmarshal(doc.Bytes(), &e); err != nil || len(e.Warnings) == 0 || !strings.Contains(e.Warnings[0], "cal.npz: this is the set's calibration split") {
		t.Errorf("evaluate -json on the calibration split: warnings %q (%v)", e.Warnings, err)
	}
	raw, err := os.ReadFile(p("b/test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("test.npz"), raw, 0o644); err != nil { // no manifest beside it
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := run(&stdout, io.Discard, []string{"evaluate", "-set", p("set.json"), "-test", p("test.npz"), "-per-class"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"ant", "bee", "cat", "yak"} {
		if !hasRow(stdout.String(), c) {
			t.Errorf("evaluate -per-class names no %s:\n%s", c, stdout.String())
		}
	}
}

// TestCompareSetWarnings: a set's own warnings reach the comparison's
// table, once for the rows and seeds that gave them. At an α that puts the
// smallest class at rank n, calibrate warns that its threshold is its
// largest score; compare -calibration class says the same of both
// baselines, and pooled calibration is warned of once, not once a row.
func TestCompareSetWarnings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 1200, 4
	_, x64, y := mixture(6, n, d, 3)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	if err := bundle.WriteNPY(p("labels.npy"), bundle.Int64(y, n)); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("b"), "-k", "5", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-calibration", "class", "-out", p("set.json")}); err != nil {
		t.Fatal(err)
	}
	set, err := conformal.Load(p("set.json"))
	if err != nil {
		t.Fatal(err)
	}
	small := slices.MinFunc(set.Classes, func(a, b conformal.ClassThreshold) int { return a.N - b.N })
	alpha := strconv.FormatFloat(1.5/float64(small.N+1), 'g', -1, 64) // ⌈(1−α)(n+1)⌉ = n
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-calibration", "class", "-alpha", alpha, "-out", p("set.json")}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("class %d: ", small.Label)
	if !strings.Contains(stderr.String(), "WARNING: "+want) {
		t.Fatalf("calibrate -alpha %s: no warning of class %d at rank n:\n%s", alpha, small.Label, stderr.String())
	}
	var text bytes.Buffer
	if err := run(&text, io.Discard, []string{"compare", "-data", p("b"), "-seeds", "2", "-rows", "baselines", "-calibration", "class", "-alpha", alpha, "-quiet"}); err != nil {
		t.Fatal(err)
	}
	if s := text.String(); !strings.Contains(s, "WARNING: Conformal Ball (ℓ2), Mahalanobis Ellipsoid: "+want) {
		t.Errorf("compare -calibration class -alpha %s: no warning of class %d at rank n:\n%s", alpha, small.Label, s)
	}
	var js bytes.Buffer
	if err := run(&js, io.Discard, []string{"compare", "-data", p("b"), "-seeds", "1", "-rows", "baselines", "-calibration", "pooled", "-json", "-quiet"}); err != nil {
		t.Fatal(err)
	}
	doc, err := experiment.ReadDocument(&js)
	if err != nil {
		t.Fatal(err)
	}
	warnings := doc.Result.(*experiment.CompareResult).Tables[0].Warnings
	if pooled := slices.IndexFunc(warnings, func(w string) bool { return strings.Contains(w, "pooled") }); pooled < 0 || slices.ContainsFunc(warnings[pooled+1:], func(w string) bool { return strings.Contains(w, "pooled") }) {
		t.Errorf("compare -calibration pooled: warnings %q, want one of pooled calibration", warnings)
	}
}

// testN is the number of anchors of the bundle file path.
func testN(t *testing.T, path string) int {
	t.Helper()
	b, err := bundle.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return b.N
}
