package experiment

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/sim"
)

// TestCompareSizes: the Size column is each row's mean, over seeds, of
// the sets' sizes eval.SetSizes counts on the collection scanned plainly
// (the ellipsoid's cells scan a transformed view, the ball's the shared
// collection); the table names the collection's size; a class-conditional
// comparison sizes each test anchor's set at its class's threshold.
func TestCompareSizes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 70))
	const d, items = 3, 20000 // past the compact copies' minimum
	data := CompareData{Name: "g", Fit: sim.Gauss(r, 300, 2, d), Cal: sim.Gauss(r, 200, 2, d), Test: sim.Gauss(r, 120, 2, d)}
	rows := make([]float32, items*d)
	for i := range rows {
		rows[i] = float32(1.5 * r.NormFloat64())
	}
	out := t.TempDir()
	cfg := CompareConfig{Config: Config{Seeds: 2, Alpha: 0.1, OutDir: out}, Resplits: 5,
		Sizes: &CompareSizes{Rows: rows, N: items, D: d, Name: "rows.npy", Anchors: 50}}
	methods := ForCompare(Baselines())
	tab, err := Compare(context.Background(), data, cfg, methods, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain.NoHalf = true
	if tab.SizeItems != items {
		t.Errorf("SizeItems %d, want %d", tab.SizeItems, items)
	}
	for _, row := range tab.Rows {
		var means []float64
		for seed := range 2 {
			s, err := conformal.Load(filepath.Join(out, fmt.Sprintf("seed-%d", seed), row.Set+".json"))
			if err != nil {
				t.Fatal(err)
			}
			z, err := eval.SetSizes(context.Background(), s, data.Test, plain, 50, nil)
			if err != nil {
				t.Fatal(err)
			}
			means = append(means, z.Mean)
		}
		want := eval.Summarize(means)
		if row.SetSize == nil || *row.SetSize != want || want.Mean == 0 {
			t.Errorf("%s: Size %+v, counted from its sets %+v", row.Method, row.SetSize, want)
		}
	}
	var text bytes.Buffer
	if err := tab.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Size↓ of 20000") || !strings.Contains(tab.Config, "the first 50 test anchors") {
		t.Errorf("the table does not show the Size column:\n%s", text.String())
	}

	// Class-conditional: each test anchor's set at its class's threshold,
	// as eval.SetSizes counts it on the test bundle's labels.
	data.Cal.Labels, data.Test.Labels = make([]int64, data.Cal.N), make([]int64, data.Test.N)
	for i := range data.Cal.Labels {
		data.Cal.Labels[i] = int64(i % 2)
	}
	for i := range data.Test.Labels {
		data.Test.Labels[i] = int64(i % 2)
	}
	classOut := t.TempDir()
	cfg.OutDir, cfg.Calibration, cfg.Alpha, cfg.Seeds = classOut, conformal.Class, 0.2, 1
	tab, err = Compare(context.Background(), data, cfg, methods[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := conformal.Load(filepath.Join(classOut, "seed-0", tab.Rows[0].Set+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.OneThreshold() == nil {
		t.Fatalf("class-conditional: the set has one threshold")
	}
	z, err := eval.SetSizes(context.Background(), s, data.Test, plain, 50, nil)
	if err != nil {
		t.Fatal(err)
	}
	if row := tab.Rows[0]; row.SetSize == nil || row.SetSize.Mean != z.Mean || z.Mean == 0 || tab.SizeItems != items ||
		!strings.Contains(tab.Config, "each anchor's set at its class's threshold") {
		t.Errorf("class-conditional: Size %+v, items %d, config %q; counted from its set %v", row.SetSize, tab.SizeItems, tab.Config, z.Mean)
	}
	// A collection of another dimension is refused before any row runs.
	cfg.Calibration, cfg.Sizes = conformal.OnePerAnchor, &CompareSizes{Rows: rows[:10], N: 5, D: 2, Name: "wide.npy"}
	if _, err := Compare(context.Background(), data, cfg, methods[:1], nil); err == nil || !strings.Contains(err.Error(), "wide.npy has dimension 2, the bundles 3") {
		t.Errorf("another dimension: %v", err)
	}
}

// reordered is the first n anchors of b, last first (positives kept with
// their anchors).
func reordered(b *bundle.Bundle, n int) *bundle.Bundle {
	out := &bundle.Bundle{N: n, K: b.K, D: b.D}
	for i := n - 1; i >= 0; i-- {
		out.Anchors = append(out.Anchors, b.Anchors[i*b.D:(i+1)*b.D]...)
		out.Positives = append(out.Positives, b.Positives[i*b.K*b.D:(i+1)*b.K*b.D]...)
	}
	return out
}

// TestCompareTestSplit: a test split that is the calibration, fit or
// validation split is refused, naming it; one of which many anchors are
// another split's rows (another bundling's test split) is warned of.
func TestCompareTestSplit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(8, 80))
	const d = 3
	fit, cal, test := sim.Gauss(r, 200, 2, d), sim.Gauss(r, 150, 2, d), sim.Gauss(r, 100, 2, d)
	cfg := CompareConfig{Config: Config{Seeds: 1, Alpha: 0.1}, Resplits: 5}
	methods := ForCompare(Baselines())
	for _, c := range []struct {
		data CompareData
		want string
	}{
		{CompareData{Fit: fit, Cal: cal, Test: cal}, "the test split is the calibration split (the same anchors)"},
		{CompareData{Fit: fit, Cal: cal, Test: fit}, "the test split is the fit split"},
		// Reordered, or a part: every test anchor a calibration row.
		{CompareData{Fit: fit, Cal: cal, Test: reordered(cal, 100)}, "every one of the test split's 100 anchors is a row of the calibration split (that split reordered, or a part of it)"},
	} {
		if _, err := Compare(context.Background(), c.data, cfg, methods, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	// 30 of the test split's 100 anchors are fit rows: warned; none: not.
	mixed := *test
	mixed.Anchors = slices.Clone(test.Anchors)
	copy(mixed.Anchors, fit.Anchors[:30*d])
	for _, c := range []struct {
		test *bundle.Bundle
		want string
	}{{&mixed, "30 of the test split's 100 anchors are rows of the fit split"}, {test, ""}} {
		tab, err := Compare(context.Background(), CompareData{Fit: fit, Cal: cal, Test: c.test}, cfg, methods, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(tab.Warnings, "\n")
		if c.want != "" && !strings.Contains(got, c.want) || c.want == "" && strings.Contains(got, "rows of the") {
			t.Errorf("warnings %q, want %q", got, c.want)
		}
	}
}

// TestCompareSameForEverySeed: figures every seed gave alike (pooled
// calibration draws nothing) print without "± 0.0", and a note says why;
// figures that vary keep their ±. A one-seed table of the paper's layout
// has no ± at all.
func TestCompareSameForEverySeed(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 90))
	const d = 3
	data := CompareData{Name: "g", Fit: sim.Gauss(r, 200, 2, d), Cal: sim.Gauss(r, 150, 2, d), Test: sim.Gauss(r, 100, 2, d)}
	for _, c := range []struct {
		mode      conformal.Mode
		pm, noted bool
	}{{conformal.Pooled, false, true}, {conformal.OnePerAnchor, true, false}} {
		tab, err := Compare(context.Background(), data, CompareConfig{Config: Config{Seeds: 2, Alpha: 0.1, Calibration: c.mode}, Resplits: 5}, ForCompare(Baselines()), nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := tab.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		// Coverage, exclusion and LogVol/d (the resplits column draws its
		// halvings by seed, and varies).
		ball := strings.Join(strings.Split(b.String()[strings.Index(b.String(), "| Conformal Ball"):], "|")[2:5], "|")
		if strings.Contains(ball, "±") != c.pm || strings.Contains(b.String(), "A figure without ± came out the same for all 2 seeds") != c.noted {
			t.Errorf("%v: the ball's row %q, want ± %v, the note %v:\n%s", c.mode, ball, c.pm, c.noted, b.String())
		}
	}
	// A spread that rounds to 0 at the digits shown is none: no "± 0.0%"
	// beside the note (a new user's OOD FPR95, 86.5 ± 0.0%).
	tiny := &CompareTable{Title: "t", Seeds: 3, Alpha: 0.1, Rows: []CompareRow{{Row: Row{Method: "m", Coverage: eval.Summary{Mean: 86.5, Std: 0.03, N: 3}, Exclusion: eval.Summary{Mean: 60, Std: 0.3, N: 3}, LogVolPerDim: eval.Summary{Mean: 2.5, Std: 0.004, N: 3}}}}}
	var bt bytes.Buffer
	if err := tiny.WriteText(&bt); err != nil || !strings.Contains(bt.String(), "| m      | 86.5%    | 60.0 ± 0.3% | 2.50 ") || !strings.Contains(bt.String(), "to the digits shown") {
		t.Errorf("a spread below the digits shown: %v\n%s", err, bt.String())
	}
	one := &Table{Title: "t", Rows: []Row{{Method: "m", Coverage: eval.Summary{Mean: 95.25, N: 1}, Exclusion: eval.Summary{Mean: 60, N: 1}, LogVolPerDim: eval.Summary{Mean: 2.5, N: 1}}}}
	var b bytes.Buffer
	if err := one.WriteText(&b); err != nil || strings.Contains(b.String(), "±") || !strings.Contains(b.String(), "| m      | 95.2%    | 60.0%") {
		t.Errorf("one seed: %v\n%s", err, b.String())
	}
}

// TestCompareFARBeyondChance: held-out ID inputs that calibrate the
// per-input test drawn otherwise than the test split (shrunk toward the
// fit anchors: lower scores) make it flag the test split far above
// α_ood; the table names the rows. Inputs drawn as the test split are not
// named.
func TestCompareFARBeyondChance(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(10, 100))
	const d = 3
	fit, cal, test := sim.Gauss(r, 300, 2, d), sim.Gauss(r, 200, 2, d), sim.Gauss(r, 200, 2, d)
	features := func(b *bundle.Bundle, scale float32) *bundle.Bundle {
		f := &bundle.Bundle{N: b.N, D: d, Anchors: slices.Clone(b.Anchors)}
		for i := range f.Anchors {
			f.Anchors[i] *= scale
		}
		return f
	}
	oodIn := features(sim.Gauss(r, 100, 2, d), 4)
	for _, c := range []struct {
		scale float32
		named bool
	}{{0.2, true}, {1, false}} {
		data := CompareData{Fit: fit, Cal: cal, Test: test, OOD: oodIn, OODCal: features(sim.Gauss(r, 150, 2, d), c.scale)}
		tab, err := Compare(context.Background(), data, CompareConfig{Config: Config{Seeds: 1, Alpha: 0.1}, Resplits: 5}, ForCompare(Baselines()), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(tab.Warnings, "\n")
		if strings.Contains(got, "FAR above α_ood = 0.05 beyond chance — Conformal Ball (ℓ2) (seed 0: ") != c.named {
			t.Errorf("ood-cal scaled by %v: warnings %q, want the ball named %v", c.scale, got, c.named)
		}
	}
}

// TestRows: -rows names a set of rows, or sets and rows by their files'
// names, in order, each once; a name of neither is refused with the
// nearest.
func TestRows(t *testing.T) {
	files := func(ms []Method) string {
		var f []string
		for _, m := range ms {
			f = append(f, m.File)
		}
		return strings.Join(f, ",")
	}
	for spec, want := range map[string]string{
		"baselines":                  "ball,ellipsoid",
		"genball-neg-vol":            "genball-neg-vol",
		"ball, genball-neg":          "ball,genball-neg",
		"genball-neg,baselines,ball": "genball-neg,ball,ellipsoid",
		"single-vol-infonce,learned": "single-vol-infonce,single-neg,genball-neg,single-vol,genball-vol,single-neg-vol,genball-neg-vol",
	} {
		got, err := Rows(spec)
		if err != nil || files(got) != want {
			t.Errorf("%q: %s, %v; want %s", spec, files(got), err, want)
		}
	}
	if _, err := Rows("ball,genball-negvol"); err == nil || !strings.Contains(err.Error(), `did you mean "genball-neg-vol"?`) {
		t.Errorf("a row mistyped: %v", err)
	}
}
