package eval

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/race"
)

// TestCoverageOfMadeBundles is the guarantee as a practitioner meets it:
// ccs bundle's splits of one fixed data set (bundle.Make: stratified by
// label, positives drawn within each split, a small class repeating its
// few positives, a class held out as OOD), calibrated one positive per
// anchor and evaluated on all the test positives. Over R seeds of the
// split, the mean test coverage must reach 1 − α (up to 4.5 standard
// errors of the mean) and not exceed it by much more than 1/(n+1): the
// marginal guarantee, for label bundles and for relevance pairs; and per
// class with class-conditional calibration. Under the race detector, 100
// seeds (the bound is the count's): the concurrency is the same in each.
func TestCoverageOfMadeBundles(t *testing.T) {
	t.Parallel()
	const d = 3
	R := 4000
	if testing.Short() {
		R = 300
	}
	if race.Enabled {
		R = 100
	}
	rng := rand.New(rand.NewPCG(5, 11))
	// labelled draws classes of the given sizes and spreads around random
	// centres; a share of outlying coordinates (four times the spread)
	// makes the tails heavy.
	labelled := func(sizes []int, spreads []float64, outlying float64) (rows []float32, labels []int64) {
		for c, n := range sizes {
			centre := []float64{4 * rng.NormFloat64(), 4 * rng.NormFloat64(), 4 * rng.NormFloat64()}
			for range n {
				for j := range d {
					z := rng.NormFloat64()
					if rng.Float64() < outlying {
						z *= 4
					}
					rows = append(rows, float32(centre[j]+spreads[c]*z))
				}
				labels = append(labels, int64(c))
			}
		}
		return rows, labels
	}
	// Five classes of different spreads and sizes (one small), and a sixth
	// held out; four heavy-tailed classes of 150, where one positive per
	// anchor fell short of rank/(n+1) by 1 point per class, and two of 200,
	// where it fell short by half a point over all (DisjointPairs).
	rows, labels := labelled([]int{300, 200, 150, 60, 50, 80}, []float64{0.5, 1, 2, 0.7, 1.5, 1}, 0)
	heavy, heavyLabels := labelled([]int{150, 150, 150, 150}, []float64{0.5, 1, 2, 1}, 0.05)
	two, twoLabels := labelled([]int{200, 200}, []float64{1, 1}, 0.05)
	// Relevance pairs: 300 queries, each with 1 to 4 relevant passages near
	// it among 1500 passages.
	const nq, np = 300, 1500
	queries := make([]float32, nq*d)
	passages := make([]float32, np*d)
	for i := range passages {
		passages[i] = float32(3 * rng.NormFloat64())
	}
	var pairs [][2]int
	for q := range nq {
		p0 := rng.IntN(np)
		for j := range d {
			queries[q*d+j] = passages[p0*d+j] + float32(0.3*rng.NormFloat64())
		}
		pairs = append(pairs, [2]int{q, p0})
		for range rng.IntN(4) {
			p := rng.IntN(np)
			for j := range d { // a relevant passage is near its query
				passages[p*d+j] = queries[q*d+j] + float32(0.5*rng.NormFloat64())
			}
			pairs = append(pairs, [2]int{q, p})
		}
	}

	for _, c := range []struct {
		name  string
		items bundle.Items
		cfg   bundle.MakeConfig
		mode  conformal.Mode
		alpha float64
	}{
		{"labels", bundle.Items{N: len(labels), Labels: labels}, bundle.MakeConfig{K: 5, KNeg: 5, AllowFewer: true, OODClasses: []int64{5}}, conformal.OnePerAnchor, 0.1},
		// Per class the units are disjoint pairs (DisjointPairs): about 14
		// of a class's 30 calibration anchors.
		{"labels, per class", bundle.Items{N: len(heavyLabels), Labels: heavyLabels}, bundle.MakeConfig{K: 5, KNeg: 5}, conformal.Class, 0.1},
		{"labels, two heavy-tailed classes", bundle.Items{N: len(twoLabels), Labels: twoLabels}, bundle.MakeConfig{K: 5, KNeg: 5}, conformal.OnePerAnchor, 0.1},
		{"relevance pairs", bundle.Items{N: np, Queries: nq, Pairs: pairs}, bundle.MakeConfig{K: 2, KNeg: 5, AllowFewer: true}, conformal.OnePerAnchor, 0.1},
	} {
		alpha := c.alpha
		src := rows
		switch {
		case c.items.Queries > 0:
			src = passages
		case c.mode == conformal.Class:
			src = heavy
		case c.items.N == len(twoLabels):
			src = two
		}
		// Each split's coverage, and what exchangeable units give it in
		// expectation: rank/(n+1) of its own n units (by class, per class).
		covs, exact := map[int64][]float64{}, map[int64][]float64{}
		for seed := range R {
			cfg := c.cfg
			cfg.Split, cfg.Seed = [4]float64{0.5, 0.1, 0.2, 0.2}, uint64(seed)
			plan, err := bundle.Make(c.items, cfg)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			cal, err := plan.Bundle(bundle.Cal, src, queries, d)
			if err != nil {
				t.Fatal(err)
			}
			test, err := plan.Bundle(bundle.Test, src, queries, d)
			if err != nil {
				t.Fatal(err)
			}
			set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, alpha, conformal.Options{Mode: c.mode, Seed: uint64(seed)})
			if err != nil {
				t.Fatalf("%s, seed %d: %v", c.name, seed, err)
			}
			if c.mode == conformal.Class {
				_, classes, err := WithClasses(set, test)
				if err != nil {
					t.Fatal(err)
				}
				for i, k := range classes {
					covs[k.Label] = append(covs[k.Label], k.Coverage)
					exact[k.Label] = append(exact[k.Label], float64(set.Classes[i].Rank)/float64(set.Classes[i].N+1))
				}
				continue
			}
			r, err := Evaluate(set, test)
			if err != nil {
				t.Fatal(err)
			}
			covs[-1] = append(covs[-1], r.Coverage)
			exact[-1] = append(exact[-1], float64(set.Calibration.Rank)/float64(set.Calibration.N+1))
		}
		for _, k := range slices.Sorted(maps.Keys(covs)) {
			what := c.name
			if k >= 0 {
				what = fmt.Sprintf("%s, class %d", c.name, k)
			}
			m, se := meanSE(covs[k])
			want, _ := meanSE(exact[k])
			t.Logf("%s: mean coverage %.4f over %d splits (se %.4f), exact %.4f", what, m, R, se, want)
			if math.Abs(m-want) > 4.5*se {
				t.Errorf("%s: mean coverage %.4f over %d splits (se %.4f), want %.4f, rank/(n+1)", what, m, R, se, want)
			}
		}
	}
}

// meanSE is x's mean and its standard error.
func meanSE(x []float64) (mean, se float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}
