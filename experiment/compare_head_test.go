package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

// TestCompareHeadDim: Config.HeadDim gives the InfoNCE rows' heads that
// many outputs (their set files hold a d → HeadDim head, their LogVol/d
// is the log-volume per output), the table says so, a head wider than the
// embeddings is warned of, and a head's outputs without a row that trains
// one, or negative, are refused.
func TestCompareHeadDim(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 30))
	const d = 4
	data := CompareData{Name: "g", Fit: sim.Gauss(r, 160, 2, d), Val: sim.Gauss(r, 80, 2, d), Cal: sim.Gauss(r, 120, 2, d), Test: sim.Gauss(r, 80, 2, d)}
	row := []Method{LearnedInfoNCE(geometry.KindGenBall, objective.NegVol)}
	for _, c := range []struct {
		head, outputs int
		note, warn    string
	}{
		{0, d, "", ""},
		{2, 2, "heads map the 4 dimensions to 2, their LogVol/d per output", ""},
		{6, 6, "heads map the 4 dimensions to 6", "-head-dim: a head of 6 outputs widens the 4-dimensional embeddings"},
	} {
		out := t.TempDir()
		cfg := CompareConfig{Config: Config{Seeds: 1, Alpha: 0.1, OutDir: out, HeadDim: c.head, Train: train.Config{MaxEpochs: 1}}, Resplits: 3}
		tab, err := Compare(context.Background(), data, cfg, row, nil)
		if err != nil {
			t.Fatalf("head %d: %v", c.head, err)
		}
		s, err := conformal.Load(filepath.Join(out, "seed-0", tab.Rows[0].Set+".json"))
		if err != nil {
			t.Fatal(err)
		}
		desc := geometry.Describe(s.Geometry)
		if desc.HeadIn != d || desc.HeadOut != c.outputs {
			t.Errorf("head %d: the set's head maps %d → %d, want %d → %d", c.head, desc.HeadIn, desc.HeadOut, d, c.outputs)
		}
		dim := d
		if c.outputs != d {
			dim = c.outputs
		}
		if want, got := s.Geometry.LogVolume(s.Threshold)/float64(dim), tab.Rows[0].LogVolPerDim.Mean; math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("head %d: LogVol/d %v, the set's log-volume over %d outputs %v", c.head, got, dim, want)
		}
		if c.note == "" && strings.Contains(tab.Config, "heads map") || !strings.Contains(tab.Config, c.note) {
			t.Errorf("head %d: configuration %q, want %q", c.head, tab.Config, c.note)
		}
		if got := fmt.Sprint(tab.Warnings); c.warn == "" && strings.Contains(got, "widens") || !strings.Contains(got, c.warn) {
			t.Errorf("head %d: warnings %s, want %q", c.head, got, c.warn)
		}
	}
	for _, c := range []struct {
		head    int
		methods []Method
	}{
		{-1, row},
		{2, []Method{Learned(geometry.KindGenBall, objective.NegVol)}},
	} {
		cfg := CompareConfig{Config: Config{Seeds: 1, HeadDim: c.head, Train: train.Config{MaxEpochs: 1}}, Resplits: 3}
		if _, err := Compare(context.Background(), data, cfg, c.methods, nil); err == nil || !strings.Contains(err.Error(), "rows that train the InfoNCE head") {
			t.Errorf("head %d with %s: %v, want a refusal", c.head, c.methods[0].Name, err)
		}
	}
}
