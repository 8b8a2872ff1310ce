package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

// TestSimDeterministic: the table does not depend on the number of workers.
func TestSimDeterministic(t *testing.T) {
	t.Parallel()
	cfg := SimConfig{Config: Config{Seeds: 3, K: 20, Train: train.Config{MaxEpochs: 3}}, PerClass: 300}
	cfg.Workers = 1
	a, err := Sim(context.Background(), cfg, SimMethods(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workers = 3
	b, err := Sim(context.Background(), cfg, SimMethods(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("1 worker and 3 workers gave different tables")
	}
	var buf bytes.Buffer
	if err := a.WriteText(&buf); err != nil || !strings.Contains(buf.String(), "Mahalanobis Ellipsoid") {
		t.Errorf("rendering: %v\n%s", err, buf.String())
	}
}

// TestPaperSimulation runs the paper's table on the built-in simulation
// (the paper's sizes, the default data seed, the paper's recipe) with 5
// seeds: every row covers within 95 ± 1% (one positive per calibration
// anchor), the baselines' exclusions come out near the paper's, and every
// learned row excludes at least the paper's figure minus 3 points. 86 s on
// a 2-vCPU AMD EPYC: a long test.
func TestPaperSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("the simulation table with training: long")
	}
	t.Parallel()
	tab, err := Sim(context.Background(), SimConfig{Config: Config{Seeds: 5}, DataSeed: sim.PaperDataSeed}, SimMethods(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tab.WriteText(&buf)
	t.Logf("\n%s", buf.String())
	for _, r := range tab.Rows {
		if math.Abs(r.Coverage.Mean-95) > 1 {
			t.Errorf("%s: coverage %.2f%%, want 95 ± 1", r.Method, r.Coverage.Mean)
		}
		baseline := r.Method == Ball().Name || r.Method == Ellipsoid().Name
		switch {
		case baseline && math.Abs(r.Exclusion.Mean-r.Paper.Exclusion) > 4:
			t.Errorf("%s: exclusion %.1f%%, paper %.1f%%", r.Method, r.Exclusion.Mean, r.Paper.Exclusion)
		case !baseline && r.Exclusion.Mean < r.Paper.Exclusion-3:
			t.Errorf("%s: exclusion %.1f%%, below the paper's %.1f%% minus 3", r.Method, r.Exclusion.Mean, r.Paper.Exclusion)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th", 50: "50th"} {
		if got := Ordinal(n); got != want {
			t.Errorf("Ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestEllipsoidFromFitOnce: compare's ellipsoid estimates Σ once per fit
// bundle — every seed's set shares its geometry, each calibrated on its own
// draw — and another fit bundle gets its own Σ.
func TestEllipsoidFromFitOnce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	fit, other, cal := sim.Gauss(rng, 60, 4, 3), sim.Gauss(rng, 60, 4, 3), sim.Gauss(rng, 80, 4, 3)
	m := ForCompare(Baselines())[1]
	if !m.NeedsFit || m.Calibration != nil {
		t.Fatalf("compare's ellipsoid: NeedsFit %v, a calibration half %v", m.NeedsFit, m.Calibration != nil)
	}
	cfg := Config{Alpha: 0.1}
	cfg.defaults()
	var sets []*conformal.Set
	for seed, f := range []*bundle.Bundle{fit, fit, other} {
		s, err := m.Fit(context.Background(), &Splits{Fit: f, Cal: cal}, cfg, uint64(seed))
		if err != nil {
			t.Fatal(err)
		}
		if s.Calibration.N != cal.N {
			t.Errorf("seed %d: calibrated on %d anchors, want the whole split's %d", seed, s.Calibration.N, cal.N)
		}
		sets = append(sets, s)
	}
	if sets[0].Geometry != sets[1].Geometry {
		t.Error("two seeds on one fit bundle estimated Σ twice")
	}
	if sets[0].Geometry == sets[2].Geometry {
		t.Error("another fit bundle reused the first's Σ")
	}
}

// TestCompareReference: a per-input OOD pool above the fit split, or
// above what a set file keeps, is refused before any row runs; a default
// one is capped at both.
func TestCompareReference(t *testing.T) {
	const d = 16384 // a set file keeps 1 024 anchors of it
	// The pool is refused on the fit split's size alone, before a row
	// reads a value: bundles of a header only (1 100 × 16 384 drawn
	// rows were 160 MB).
	small := func(n int) *bundle.Bundle { return &bundle.Bundle{N: n, K: 1, D: d} }
	data := CompareData{Name: "wide", Fit: small(1100), Cal: small(60), Test: small(61), OOD: small(20)}
	cfg := Config{Seeds: 1, Alpha: 0.1}
	for _, c := range []struct {
		reference int
		want      string
	}{
		{1200, "reference pool of 1200 fit anchors: the fit split has 1100"},
		{1050, "reference pool of 1050 fit anchors of dimension 16384: 17203200 values, more than a set file keeps (16777216): at most 1024 anchors"},
		{-1, "want at least 1"},
	} {
		_, err := Compare(context.Background(), data, CompareConfig{Config: cfg, Resplits: 5, Reference: c.reference}, ForCompare(Baselines())[:1], nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("reference %d: %v, want %q", c.reference, err, c.want)
		}
	}
	for _, c := range []struct{ n, d, want int }{
		{1100, d, 1024}, // the set file's cap
		{1100, 8, 1100}, // the fit split
		{5000, 8, DefaultReference},
	} {
		if got := defaultReference(&bundle.Bundle{N: c.n, D: c.d}); got != c.want {
			t.Errorf("default pool of a fit split of %d × %d: %d, want %d", c.n, c.d, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	narrow := func(n int) *bundle.Bundle { return sim.Gauss(r, n, 1, 8) }
	data = CompareData{Name: "narrow", Fit: narrow(300), Cal: narrow(60), Test: narrow(60), OOD: narrow(20)}
	tab, err := Compare(context.Background(), data, CompareConfig{Config: cfg, Resplits: 5}, ForCompare(Baselines())[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "per-input score against 300 fit anchors"; !strings.Contains(tab.Config, want) {
		t.Errorf("default pool: %q lacks %q", tab.Config, want)
	}
}

// TestCompareInterrupted: cells not run because the run was interrupted
// are not reported as done: the last progress a caller sees counts the
// cells that finished.
func TestCompareInterrupted(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	data := CompareData{Name: "small", Cal: sim.Gauss(r, 60, 2, 3), Test: sim.Gauss(r, 60, 2, 3)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last, total int
	_, err := Compare(ctx, data, CompareConfig{Config: Config{Seeds: 6, Alpha: 0.1, Workers: 1}, Resplits: 5}, ForCompare(Baselines())[:1],
		func(done, n int, _ string) {
			last, total = done, n
			if done == 2 {
				cancel()
			}
		})
	if !errors.Is(err, context.Canceled) || last != 2 || total != 6 {
		t.Errorf("interrupted after 2 of 6 cells: %v, last progress %d/%d", err, last, total)
	}
}

// TestCompareEpochs: Config.Epochs hears every learned row's epochs,
// named by row and seed, ending with the last report; the baselines
// train nothing and report none.
func TestCompareEpochs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	data := CompareData{Name: "small", Fit: sim.Gauss(r, 120, 4, 3), Val: sim.Gauss(r, 60, 4, 3), Cal: sim.Gauss(r, 60, 2, 3), Test: sim.Gauss(r, 60, 2, 3)}
	var mu sync.Mutex
	heard := map[string][]train.Progress{}
	cfg := Config{Seeds: 1, Alpha: 0.1, Train: train.Config{MaxEpochs: 3}, Epochs: func(row string, seed uint64, p train.Progress) {
		mu.Lock()
		defer mu.Unlock()
		heard[fmt.Sprintf("%s, seed %d", row, seed)] = append(heard[fmt.Sprintf("%s, seed %d", row, seed)], p)
	}}
	methods := append(ForCompare(Baselines())[:1], ForCompare([]Method{Learned(geometry.KindGenBall, objective.Neg)})...)
	if _, err := Compare(context.Background(), data, CompareConfig{Config: cfg, Resplits: 5}, methods, nil); err != nil {
		t.Fatal(err)
	}
	if len(heard) != 1 {
		t.Fatalf("heard %d rows' epochs, want the one learned row's: %v", len(heard), heard)
	}
	ps := heard["Generalized (Neg), seed 0"]
	if len(ps) < 2 || ps[0].Epoch != 0 || !ps[len(ps)-1].Done {
		t.Errorf("Generalized (Neg), seed 0: %+v, want epoch 0 first and the last report done", ps)
	}
}
