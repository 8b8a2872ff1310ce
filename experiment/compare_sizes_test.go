package experiment

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

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
