package experiment

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ccsets/ccs/sim"
)

// TestSimDeterministic: the table does not depend on the number of workers.
func TestSimDeterministic(t *testing.T) {
	t.Parallel()
	cfg := SimConfig{Seeds: 3, K: 20, PerClass: 300}
	cfg.Workers = 1
	a, err := Sim(cfg, SimBaselines(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workers = 3
	b, err := Sim(cfg, SimBaselines(), nil)
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

// TestPaperSimulation runs the README's main job (20 seeds, the paper's
// sizes and the default data seed): both baseline rows cover within 95 ± 1%,
// and the exclusions come out near the paper's 15.3% and 61.8%.
func TestPaperSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("the full simulation table: long")
	}
	t.Parallel()
	tab, err := Sim(SimConfig{DataSeed: sim.PaperDataSeed}, SimBaselines(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		if math.Abs(r.Coverage.Mean-95) > 1 {
			t.Errorf("%s: coverage %.2f%%, want 95 ± 1", r.Method, r.Coverage.Mean)
		}
		if math.Abs(r.Exclusion.Mean-r.Paper.Exclusion) > 3 {
			t.Errorf("%s: exclusion %.1f%%, paper %.1f%%", r.Method, r.Exclusion.Mean, r.Paper.Exclusion)
		}
	}
}
