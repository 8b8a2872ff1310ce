package eval

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/race"
)

// TestLabelRecipeResplits: the guarantee for one label of several labels
// a row, as docs/your-data.md gives it (calibration by label being
// refused: conformal.SeveralLabelsMessage). Each label's rows alone as
// relevance pairs (the rows their own queries), bundled by bundle.Make
// with a new seed each time and calibrated one positive per anchor: over
// R resplits, a test anchor carrying the label covers a row drawn among
// the label's rows (computed exactly, over all of them) with mean
// probability ≥ 1 − α, within 4 standard errors, label by label; a rank
// too small by a tenth of the calibration scores (the quantile at
// α + 0.1) fails the same check, so that the check can fail.
func TestLabelRecipeResplits(t *testing.T) {
	t.Parallel()
	const n, d, c, alpha = 400, 4, 3, 0.1
	R := 1000
	if race.Enabled {
		R = 100
	}
	rng := rand.New(rand.NewPCG(34, 5))
	p := []float64{0.15, 0.4, 0.4}
	member := make([][]bool, c)
	for l := range c {
		member[l] = make([]bool, n)
	}
	centres := make([]float64, c*d)
	for i := range centres {
		centres[i] = 2 * rng.NormFloat64()
	}
	rows := make([]float32, n*d)
	for i := range n {
		var ls []int
		for l := range c {
			if rng.Float64() < p[l] {
				member[l][i] = true
				ls = append(ls, l)
			}
		}
		for j := range d {
			v := 0.6 * rng.NormFloat64()
			for _, l := range ls {
				v += centres[l*d+j] / float64(len(ls))
			}
			rows[i*d+j] = float32(v)
		}
	}
	e := bundle.Embeddings{Source: "x.npy", Rows: rows, N: n, D: d}
	g := geometry.Ball{D: d}
	// Every pair's score, once: the resplits judge the same pairs.
	diffs := make([]float32, n*n*d)
	for q := range n {
		for r := range n {
			for j := range d {
				diffs[(q*n+r)*d+j] = rows[r*d+j] - rows[q*d+j]
			}
		}
	}
	scores := g.Scores(nil, diffs)
	score := func(q, r int) float64 { return scores[q*n+r] }
	for l := range c {
		var pairs [][2]int
		for q := range n {
			for r := range n {
				if q != r && member[l][q] && member[l][r] {
					pairs = append(pairs, [2]int{q, r})
				}
			}
		}
		items, err := bundle.Inputs{Embeddings: e, Queries: &e, Pairs: pairs}.Items()
		if err != nil {
			t.Fatal(err)
		}
		var right, broken []float64 // each resplit's test coverage of the label
		for s := range R {
			plan, err := bundle.Make(items, bundle.MakeConfig{K: 1, KNeg: 1, Split: [4]float64{0, 0, 0.5, 0.5}, Seed: uint64(s)})
			if err != nil {
				t.Fatal(err)
			}
			cal, err := plan.Bundle(bundle.Cal, rows, rows, d)
			if err != nil {
				t.Fatal(err)
			}
			set, err := conformal.Calibrate(g, cal, alpha, conformal.Options{Seed: uint64(s)})
			if err != nil {
				t.Fatal(err)
			}
			low, err := conformal.Calibrate(g, cal, alpha+0.1, conformal.Options{Seed: uint64(s)})
			if err != nil {
				t.Fatal(err)
			}
			var in, lowIn, all float64
			for _, q := range plan.Splits[bundle.Test].Anchors {
				var m, k, kl float64
				for r := range n {
					if r == q || !member[l][r] {
						continue
					}
					v := score(q, r)
					m++
					if v <= set.Threshold {
						k++
					}
					if v <= low.Threshold {
						kl++
					}
				}
				in, lowIn, all = in+k/m, lowIn+kl/m, all+1
			}
			right, broken = append(right, in/all), append(broken, lowIn/all)
		}
		short := func(cov []float64) (mean, se float64, fails bool) {
			var sum, sq float64
			for _, v := range cov {
				sum += v
			}
			mean = sum / float64(len(cov))
			for _, v := range cov {
				sq += (v - mean) * (v - mean)
			}
			se = math.Sqrt(sq / float64(len(cov)-1) / float64(len(cov)))
			return mean, se, mean < 1-alpha-4*se
		}
		if mean, se, fails := short(right); fails {
			t.Errorf("label %d: mean coverage %.4f ± %.4f over %d resplits, want ≥ %.2f", l, mean, se, R, 1-alpha)
		} else {
			t.Logf("label %d: mean coverage %.4f ± %.4f over %d resplits", l, mean, se, R)
		}
		if mean, se, fails := short(broken); !fails {
			t.Errorf("label %d: a rank too small (α + 0.1) covered %.4f ± %.4f, and the check passed it", l, mean, se)
		}
	}
}
