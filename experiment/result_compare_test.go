package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/figure"
)

// TestClassTicks: the per-class figure labels every class up to 30, then
// every step-th (at most 30 labels), with minor ticks for the others up to
// 200 classes and none beyond.
func TestClassTicks(t *testing.T) {
	for _, tc := range []struct{ n, labels, minor int }{
		{1, 1, 0}, {10, 10, 0}, {30, 30, 0}, {31, 16, 15}, {100, 25, 75}, {200, 29, 171}, {201, 29, 0}, {10000, 30, 0},
	} {
		classes := make([]ClassCoverage, tc.n)
		for i := range classes {
			classes[i].Label = int64(100 + i)
		}
		var labels, minor int
		for _, tk := range classTicks(classes, nil) {
			if tk.IsMinor() {
				minor++
			} else {
				labels++
				if want := fmt.Sprint(100 + int(tk.Value)); tk.Label != want {
					t.Errorf("n=%d: the tick at %v is labelled %q, want %q", tc.n, tk.Value, tk.Label, want)
				}
			}
		}
		if labels != tc.labels || minor != tc.minor || labels > maxClassLabels {
			t.Errorf("n=%d: %d labels and %d minor ticks, want %d and %d", tc.n, labels, minor, tc.labels, tc.minor)
		}
	}
	// With string labels' names, the ticks read the names; a label past
	// them keeps its number.
	classes := []ClassCoverage{{Label: 0}, {Label: 2}, {Label: 5}}
	var got []string
	for _, tk := range classTicks(classes, []string{"boot", "coat", "dress"}) {
		got = append(got, tk.Label)
	}
	if fmt.Sprint(got) != "[boot dress 5]" {
		t.Errorf("named ticks %q, want [boot dress 5]", got)
	}
}

// TestCompareOODFigureRows: compare's OOD figures draw its three best
// learned rows and both baselines. Its rows are not named as the OOD
// table's CCS rows are, and the figure drew the two best rows alone.
func TestCompareOODFigureRows(t *testing.T) {
	t.Parallel()
	ot := &OODTable{Sets: []string{"ood"}}
	for i, m := range []string{"Conformal Ball (ℓ2)", "Mahalanobis Ellipsoid", "Single (Neg)", "Generalized (Neg)", "Single (Vol)", "Generalized (Vol)"} {
		ot.Rows = append(ot.Rows, OODRow{Method: m, AUROC: []eval.Summary{{Mean: float64(90 - i)}}, Curves: []ScoreCurve{{}}})
	}
	var got []string
	for _, ccs := range []bool{true, false} {
		for _, i := range best(ot, 0, ccs, map[bool]int{true: 3, false: 2}[ccs], learnedRow) {
			got = append(got, ot.Rows[i].Method)
		}
	}
	if want := "[Single (Neg) Generalized (Neg) Single (Vol) Conformal Ball (ℓ2) Mahalanobis Ellipsoid]"; fmt.Sprint(got) != want {
		t.Errorf("rows drawn %v, want %s", got, want)
	}
	if f := rocFigureOf(ot, "x", learnedRow, "learned rows", "baselines"); f == nil || !strings.Contains(f.Caption, "the three best learned rows by mean AUROC and its 2 baselines") {
		t.Errorf("figure %v", f)
	}
}

// TestOODCaptions: the OOD figures' captions say what they draw — a ccs
// ood run of one set and no baselines is one run's one CCS row, its
// histograms one column, no "seed 0" and no "best baseline".
func TestOODCaptions(t *testing.T) {
	t.Parallel()
	curve := ScoreCurve{FPR: []float64{0, 1}, TPR: []float64{0, 1}, Edges: []float64{0, 1, 2}, ID: []float64{0.5, 0.5}, OOD: []float64{0.2, 0.8}}
	one := &OODTable{Title: "OOD detection", Sets: []string{"ood"}, Runs: 1,
		Rows: []OODRow{{Method: "Conformal Ball (ℓ2), per input", AUROC: []eval.Summary{{Mean: 80}}, Curves: []ScoreCurve{curve}}}}
	roc, hist := rocFigure(one, "x"), histogramsFigure(one, "x")
	if roc == nil || !strings.Contains(roc.Caption, "ROC curves (OOD the positive class) of the table's one CCS row against each OOD set") {
		t.Errorf("ROC caption %q", roc.Caption)
	}
	if hist == nil || !strings.Contains(hist.Caption, "score histograms, ID test inputs against each OOD set, for the table's CCS row;") {
		t.Errorf("histograms caption %q", hist.Caption)
	}
	// Three seeds, two CCS rows and three baselines: seed 0's curves of
	// both CCS rows and the two best baselines.
	many := &OODTable{Title: "OOD", Sets: []string{"ood"}, Runs: 3}
	for i, m := range []string{"Conformal Ball (ℓ2), per input", "Single (Neg), per input", "MSP", "Energy", "KNN"} {
		many.Rows = append(many.Rows, OODRow{Method: m, AUROC: []eval.Summary{{Mean: float64(90 - i)}}, Curves: []ScoreCurve{curve}})
	}
	roc, hist = rocFigure(many, "x"), histogramsFigure(many, "x")
	if want := "ROC curves on seed 0 (OOD the positive class) of its 2 CCS rows and the two best baselines by mean AUROC"; !strings.Contains(roc.Caption, want) {
		t.Errorf("ROC caption %q, want %q", roc.Caption, want)
	}
	if want := "for the best CCS row (left) and the best baseline (right) by mean AUROC"; !strings.Contains(hist.Caption, want) {
		t.Errorf("histograms caption %q, want %q", hist.Caption, want)
	}
}

// TestClassesCaption: the per-class figure's caption states the promise of
// the table's calibration: marginal (no class's), or each class's.
func TestClassesCaption(t *testing.T) {
	rows := []CompareRow{{Row: Row{Method: "Conformal Ball (ℓ2)"}, Classes: []ClassCoverage{{Label: 0, Coverage: eval.Summary{Mean: 95}}, {Label: 1, Coverage: eval.Summary{Mean: 93}}}}}
	for cal, want := range map[string]string{
		"one-per-anchor": "Marginal calibration guarantees the coverage over all classes, not each class's",
		"class":          "The calibration is class-conditional: each class's threshold comes from its own calibration anchors",
	} {
		f := classesFigure(&CompareTable{Alpha: 0.05, Calibration: cal, Rows: rows}, "compare")
		if f == nil || !strings.Contains(f.Caption, want) || cal == "class" && strings.Contains(f.Caption, "Marginal") {
			t.Errorf("%s: caption %q, want %q", cal, f.Caption, want)
		}
	}
	// Several labels a row: each label's coverage of the positives that
	// share it; no class-conditional calibration to offer.
	f := classesFigure(&CompareTable{Alpha: 0.05, Calibration: "one-per-anchor", ByLabel: true, Rows: rows}, "compare")
	if f == nil || !strings.Contains(f.Caption, "Each test label's coverage of the positives that share it") || strings.Contains(f.Caption, "-calibration class") {
		t.Errorf("by label: caption %q", f.Caption)
	}
}

// TestUntrainedWarning: learned rows that kept their initial geometry are
// explained by far negatives only where the initial set excluded 90% of
// the validation negatives or more (or is not known to have excluded
// less); below, the warning gives the exclusions and the other causes.
func TestUntrainedWarning(t *testing.T) {
	rows := []string{"Single (Vol)", "Generalized (Vol)"}
	for _, c := range []struct {
		lo, hi    float64
		known     bool
		want, not string
	}{
		{0.001, 0.031, true, "beat epoch 0's (0.1–3.1%), so these rows measure untrained sets", "already excludes"},
		{0.007, 0.007, true, "beat epoch 0's (0.7%)", "already excludes"},
		{0.99, 1, true, "where the initial set already excludes the validation negatives", "(99.0"},
		{0.1, 0.2, false, "where the initial set already excludes", "(10.0"},
	} {
		w := untrainedWarning(rows, c.lo, c.hi, c.known)
		if !strings.HasPrefix(w, "Single (Vol), Generalized (Vol) kept the initial geometry at every seed") || !strings.Contains(w, c.want) || strings.Contains(w, c.not) {
			t.Errorf("%v…%v known %v: %q, want %q and not %q", c.lo, c.hi, c.known, w, c.want, c.not)
		}
	}
}

// TestUntrainedRows: a learned row that kept its initial geometry at every
// seed is named for the every-seed warning, with its epoch-0 exclusions;
// one that kept it at some seeds is named with those seeds; a baseline
// row (which trains nothing) and trained rows are not named.
func TestUntrainedRows(t *testing.T) {
	at := func(untrained bool, e float64) cellResult {
		return cellResult{Compare: &compareCell{Untrained: untrained, InitialExclusion: &e}}
	}
	methods := []Method{{Name: "ball"}, {Name: "a", Trains: true}, {Name: "b", Trains: true}, {Name: "c", Trains: true}, {Name: "d", Trains: true}}
	base := []Row{{Method: "Ball"}, {Method: "A"}, {Method: "B"}, {Method: "C"}, {Method: "D"}}
	results := [][]cellResult{
		{at(true, 0.5), at(true, 0.2), at(true, 0.9), at(false, 0.3), at(false, 0.3)},
		{at(true, 0.5), at(true, 0.3), at(false, 0.9), at(false, 0.3), at(false, 0.3)},
		{at(true, 0.5), at(true, 0.25), at(true, 0.9), at(true, 0.3), at(false, 0.3)},
	}
	untrained, partly, lo, hi, known := untrainedRows(methods, results, base)
	if !slices.Equal(untrained, []string{"A"}) || lo != 0.2 || hi != 0.3 || !known ||
		!slices.Equal(partly, []string{"B at seeds 0 and 2", "C at seed 2"}) {
		t.Errorf("untrained %q (%v…%v, %v), partly %q", untrained, lo, hi, known, partly)
	}
	if w := partlyUntrainedWarning(partly); !strings.HasPrefix(w, "B at seeds 0 and 2; C at seed 2 kept the initial geometry: no epoch's validation exclusion beat epoch 0's, so those seeds' sets are untrained") {
		t.Errorf("warning %q", w)
	}
}

// TestWorstClassNamed: the text table names each row's worst class (the
// lowest mean coverage over seeds), by its name for string labels, rows
// grouped under it, worst first; without classes, no such line.
func TestWorstClassNamed(t *testing.T) {
	cov := func(m float64) eval.Summary { return eval.Summary{Mean: m} }
	worst := func(m float64) *eval.Summary { return &eval.Summary{Mean: m} }
	tab := &CompareTable{Title: "Your data", Seeds: 1, Alpha: 0.1, LabelNames: []string{"B cell", "cDC2", "pDC"},
		Rows: []CompareRow{
			{Row: Row{Method: "Conformal Ball (ℓ2)"}, WorstClass: worst(79.3), Classes: []ClassCoverage{{Label: 0, Coverage: cov(91)}, {Label: 1, Coverage: cov(79.3)}, {Label: 2, Coverage: cov(92)}}},
			{Row: Row{Method: "Single (Neg)"}, WorstClass: worst(84.5), Classes: []ClassCoverage{{Label: 0, Coverage: cov(90)}, {Label: 1, Coverage: cov(88)}, {Label: 2, Coverage: cov(84.5)}}},
			{Row: Row{Method: "Generalized (Neg)"}, WorstClass: worst(77.6), Classes: []ClassCoverage{{Label: 0, Coverage: cov(90)}, {Label: 1, Coverage: cov(77.6)}, {Label: 2, Coverage: cov(95)}}},
		}}
	var b strings.Builder
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "\nWorst class of each row (mean coverage over seeds): \"cDC2\": Generalized (Neg) 77.6%, Conformal Ball (ℓ2) 79.3%; \"pDC\": Single (Neg) 84.5%.\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("want %q in\n%s", want, b.String())
	}
	tab.LabelNames = nil
	b.Reset()
	tab.WriteText(&b)
	if !strings.Contains(b.String(), "class 1: Generalized (Neg) 77.6%") {
		t.Errorf("integer labels:\n%s", b.String())
	}
	for i := range tab.Rows {
		tab.Rows[i].Classes, tab.Rows[i].WorstClass = nil, nil
	}
	b.Reset()
	tab.WriteText(&b)
	if strings.Contains(b.String(), "Worst class") {
		t.Errorf("no classes:\n%s", b.String())
	}
}

// TestCompareOneLabel: the table of one label's bundles (ccs bundle
// -one-label) says whose they are — in its text, below the guarantee, and
// in its JSON — and says nothing of it for other bundles.
func TestCompareOneLabel(t *testing.T) {
	for _, c := range []struct {
		label, text, json string
	}{
		{"joy", "\nOne label: \"joy\" — the bundles hold the rows carrying it alone (ccs bundle -one-label): every anchor carries it, and the guarantee is for anchors carrying \"joy\", not for the other labels' rows.\n", `"one_label":"joy"`},
		{"", "", ""},
	} {
		tab := &CompareTable{Title: "Your data: joy", Seeds: 1, Alpha: 0.05, OneLabel: c.label, Rows: []CompareRow{{Row: Row{Method: "Conformal Ball (ℓ2)"}}}}
		var b strings.Builder
		if err := tab.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(tab)
		if err != nil {
			t.Fatal(err)
		}
		if c.label == "" {
			if strings.Contains(b.String(), "One label") || strings.Contains(string(raw), "one_label") {
				t.Errorf("no one label: text\n%s\njson %s", b.String(), raw)
			}
			continue
		}
		if !strings.Contains(b.String(), c.text) || !strings.Contains(string(raw), c.json) {
			t.Errorf("text\n%s\nwant %q; json %s, want %s", b.String(), c.text, raw, c.json)
		}
	}
}

// TestWorstClassOnAverage: over seeds, a row's Worst class column is the
// class the line below the table names — the lowest mean coverage over
// seeds, with its spread — not the mean of each seed's worst, which can
// be other classes' and lower (here 61%, classes 0 and 1 in turn).
func TestWorstClassOnAverage(t *testing.T) {
	cell := func(covs ...float64) cellResult {
		c := &compareCell{}
		for l, v := range covs {
			c.Classes = append(c.Classes, ClassCoverage{Label: int64(l), Coverage: eval.Summary{Mean: v, N: 1}})
		}
		w := slices.Min(covs)
		c.WorstClass = &w
		return cellResult{Compare: c}
	}
	methods := []Method{{Name: "ball"}}
	results := [][]cellResult{{cell(0.60, 0.95, 0.92)}, {cell(0.90, 0.62, 0.93)}}
	rows, _ := compareRows(methods, results, []Row{{Method: "Conformal Ball (ℓ2)"}}, nil, nil)
	w := rows[0].WorstClass
	if w == nil || math.Abs(w.Mean-75) > 1e-9 || math.Abs(w.Std-eval.Summarize([]float64{60, 90}).Std) > 1e-9 {
		t.Fatalf("worst class %+v, want class 0's 75%% ± its spread", w)
	}
	tab := &CompareTable{Title: "Your data", Seeds: 2, Alpha: 0.1, Rows: rows}
	var b strings.Builder
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "class 0: Conformal Ball (ℓ2) 75.0%") || !strings.Contains(b.String(), "| 75.0 ± 15.0% |") {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestWorstClassAmongAnchored: a long tail's classes of a few test
// anchors (protein families of 17 members) are left out of the Worst
// class column and its line, which say so; the table judges the classes
// of eval.MinClassAnchors anchors or more.
func TestWorstClassAmongAnchored(t *testing.T) {
	labels := append(slices.Repeat([]int64{0}, 30), 1, 1, 1) // class 1: 3 test anchors
	judged, fewer := eval.JudgedClasses(labels, eval.MinClassAnchors)
	if !judged[0] || judged[1] || fewer != 1 {
		t.Fatalf("judged %v, %d fewer", judged, fewer)
	}
	if j, m := eval.JudgedClasses(slices.Repeat([]int64{0, 1}, 30), eval.MinClassAnchors); j != nil || m != 0 {
		t.Errorf("every class large: judged %v, %d fewer; want all", j, m)
	}
	min := eval.MinClassAnchors
	c := &compareCell{Classes: []ClassCoverage{{Label: 0, Coverage: eval.Summary{Mean: 0.85, N: 1}}, {Label: 1, Coverage: eval.Summary{Mean: 0, N: 1}}}}
	rows, _ := compareRows([]Method{{Name: "ball"}}, [][]cellResult{{{Compare: c}}}, []Row{{Method: "Conformal Ball (ℓ2)"}}, judged, map[int64]int{0: 30, 1: 3})
	if w := rows[0].WorstClass; w == nil || math.Abs(w.Mean-85) > 1e-9 {
		t.Fatalf("worst class %+v, want class 0's 85%% (class 1's 0%% is 3 anchors')", w)
	}
	// but kept in sight: in few_classes, with its count, and a line.
	if f := rows[0].FewClasses; len(f) != 1 || f[0].Label != 1 || f[0].Anchors != 3 || f[0].Coverage.Mean != 0 || len(rows[0].Classes) != 1 {
		t.Fatalf("classes %+v, few %+v; want class 1 among the few, 3 anchors", rows[0].Classes, f)
	}
	tab := &CompareTable{Title: "Your data", Seeds: 1, Alpha: 0.1, Rows: rows, MinClassAnchors: min}
	var b strings.Builder
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "among classes of 20 test anchors or more") || !strings.Contains(b.String(), "class 0: Conformal Ball (ℓ2) 85.0%") ||
		!strings.Contains(b.String(), "The 1 class of fewer than 20 test anchors, left out above") || !strings.Contains(b.String(), "its coverage in each row: Conformal Ball (ℓ2) class 1 0.0% (3 anchors).") {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestFitSecondsCell: the table's fit time has two significant digits
// below 0.05 s (a ball's fit, which trains nothing, is no 0.0), one
// decimal above, and a dash where there is none.
func TestFitSecondsCell(t *testing.T) {
	for _, c := range []struct {
		secs float64
		want string
	}{{0.0123, "0.012"}, {0.000043, "0.000043"}, {0.049, "0.049"}, {0.05, "0.1"}, {12.34, "12.3"}, {0, "—"}, {math.NaN(), "—"}} {
		tab := &CompareTable{Title: "Your data", Seeds: 1, Alpha: 0.1, Rows: []CompareRow{{Row: Row{Method: "Conformal Ball (ℓ2)"}, FitSeconds: eval.Summary{Mean: c.secs}}}}
		var b strings.Builder
		if err := tab.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		row := strings.Split(b.String(), "\n")[4]
		cells := strings.Split(strings.Trim(row, "|"), "|")
		if got := strings.TrimSpace(cells[len(cells)-1]); got != c.want {
			t.Errorf("%v s: row %q, want the last cell %q", c.secs, row, c.want)
		}
	}
}

// TestReseeded: what a seed changes, said of the rows the table has: no
// refit where no row trains.
func TestReseeded(t *testing.T) {
	for _, c := range []struct {
		m      conformal.Mode
		trains bool
		want   string
	}{
		{conformal.OnePerAnchor, true, "each seed refits and recalibrates"},
		{conformal.OnePerAnchor, false, "each seed recalibrates"},
		{conformal.Pooled, true, "each seed refits the learned rows; pooled calibration takes every positive, the same for every seed"},
		{conformal.Pooled, false, "no row is trained; pooled calibration takes every positive, the same for every seed"},
	} {
		if got := reseeded(&bundle.Bundle{}, c.m, c.trains); got != c.want {
			t.Errorf("%v, trains %v: %q, want %q", c.m, c.trains, got, c.want)
		}
	}
}

// TestCoverageFigurePAC: a PAC comparison's coverage figure says that its
// rows lie above the marginal band by design; a marginal one's does not.
func TestCoverageFigurePAC(t *testing.T) {
	curve := []CurvePoint{{Alpha: 0.05, N: 100, Coverage: eval.Summary{Mean: 97, N: 1}}, {Alpha: 0.1, N: 100, Coverage: eval.Summary{Mean: 93, N: 1}}}
	for _, c := range []struct {
		mode string
		want bool
	}{{"pac", true}, {"one-per-anchor", false}} {
		tab := &CompareTable{Title: "Your data", Calibration: c.mode, Delta: 0.05,
			Rows: []CompareRow{{Row: Row{Method: "Conformal Ball (ℓ2)", Curve: curve}}}}
		figs, err := (&CompareResult{Tables: []*CompareTable{tab}}).Figures("compare")
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(figs, func(f *figure.Figure) bool { return strings.HasSuffix(f.Name, "-coverage") })
		if i < 0 {
			t.Fatalf("%s: no coverage figure among %d", c.mode, len(figs))
		}
		if got := strings.Contains(figs[i].Caption, "PAC calibration (δ = 0.05): each threshold is of a higher rank"); got != c.want {
			t.Errorf("%s: caption %q", c.mode, figs[i].Caption)
		}
	}
}

// TestClassShortWarning: the rows whose seed-0 set leaves a class short of
// 1 − α beyond chance are named with their worst three classes and a count
// of the rest; rows with none, and a table with none, say nothing.
func TestClassShortWarning(t *testing.T) {
	test := &bundle.Bundle{N: 4, K: 1, D: 2, Anchors: make([]float32, 8), Positives: make([]float32, 8), Labels: []int64{0, 1, 2, 3}}
	short := func(names ...string) []conformal.ClassCheck {
		var out []conformal.ClassCheck
		for i, n := range names {
			out = append(out, conformal.ClassCheck{Label: int64(i), Name: n, Units: 10, Outside: 9 - i, P: 1e-6 * float64(i+1)})
		}
		return out
	}
	base := []Row{{Method: "Conformal Ball (ℓ2)"}, {Method: "Mahalanobis Ellipsoid"}}
	results := [][]cellResult{{{Compare: &compareCell{}}, {Compare: &compareCell{ClassShort: short("gaming", "science", "music", "weather", "fashion")}}}}
	w := classShortWarning(results, base, test)
	if !strings.HasPrefix(w, "classes short of 1−α beyond chance on the test split (seed 0's sets; each class's tail times the classes checked, below 0.001) — Mahalanobis Ellipsoid: class \"gaming\" 9 of 10 test anchors outside (90%), probability 1e-06, class \"science\" 8 of 10") ||
		!strings.Contains(w, "class \"music\" 7 of 10 test anchors outside (70%), probability 3e-06, 2 more. A set's one threshold") || strings.Contains(w, "Conformal Ball") {
		t.Errorf("warning %q", w)
	}
	results[0][1].Compare.ClassShort = nil
	if w := classShortWarning(results, base, test); w != "" {
		t.Errorf("no class short: %q", w)
	}
}
