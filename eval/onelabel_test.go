package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestOneLabelResplits: a set calibrated on the bundles of one label's
// rows (bundle.OneLabel, ccs bundle -one-label) covers that label's
// positives at ≥ 1 − α over resplits. Several labels a row (three labels
// of about 15%, 40% and 40% of 600 rows, each row the mean of its labels'
// centres plus noise); for each label, its rows bundled alone (calibration
// and test splits), the ℓ2 ball calibrated on the calibration split, then
// Resplits recalibrates it on random halves of the test split: the mean
// coverage of the held-out anchors' positives is at least 1 − α within 4
// standard errors, and a set of α + 0.1 fails the same check, so that
// the check can fail.
func TestOneLabelResplits(t *testing.T) {
	t.Parallel()
	const n, d, c, alpha, R = 600, 4, 3, 0.1, 300
	rng := rand.New(rand.NewPCG(36, 7))
	p := []float64{0.15, 0.4, 0.4}
	centres := make([]float64, c*d)
	for i := range centres {
		centres[i] = 2 * rng.NormFloat64()
	}
	sets := make([][]int32, n)
	rows := make([]float32, n*d)
	for i := range n {
		for l := range c {
			if rng.Float64() < p[l] {
				sets[i] = append(sets[i], int32(l))
			}
		}
		for j := range d {
			v := 0.6 * rng.NormFloat64()
			for _, l := range sets[i] {
				v += centres[int(l)*d+j] / float64(len(sets[i]))
			}
			rows[i*d+j] = float32(v)
		}
	}
	e := bundle.Embeddings{Source: "x.npy", Rows: rows, N: n, D: d}
	g := geometry.Ball{D: d}
	for l := range c {
		items, err := bundle.Inputs{Embeddings: e, LabelSets: sets, LabelsSource: "m.npy", OneLabel: &bundle.OneLabel{Label: int32(l), Name: fmt.Sprint(l)}}.Items()
		if err != nil {
			t.Fatal(err)
		}
		plan, err := bundle.Make(items, bundle.MakeConfig{K: 10, KNeg: 10, Split: [4]float64{0, 0, 0.5, 0.5}, Seed: uint64(l)})
		if err != nil {
			t.Fatal(err)
		}
		cal, err := plan.Bundle(bundle.Cal, rows, rows, d)
		if err != nil {
			t.Fatal(err)
		}
		test, err := plan.Bundle(bundle.Test, rows, rows, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []float64{alpha, alpha + 0.1} {
			set, err := conformal.Calibrate(g, cal, a, conformal.Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Resplits(set, test, R, 0.5, uint64(l))
			if err != nil {
				t.Fatal(err)
			}
			se := res.Coverage.Std / math.Sqrt(R)
			fails := res.Coverage.Mean < 1-alpha-4*se
			switch {
			case a == alpha && fails:
				t.Errorf("label %d (%d test anchors): mean coverage %.4f ± %.4f over %d resplits, want ≥ %.2f", l, test.N, res.Coverage.Mean, se, R, 1-alpha)
			case a == alpha:
				t.Logf("label %d (%d test anchors): mean coverage %.4f ± %.4f over %d resplits", l, test.N, res.Coverage.Mean, se, R)
			case !fails:
				t.Errorf("label %d: a set of α = %.1f covered %.4f ± %.4f, and the check passed it", l, a, res.Coverage.Mean, se)
			}
		}
	}
}
