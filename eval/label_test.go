package eval

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestByLabel: on bundles of several labels a row (a multi-hot matrix, as
// ccs bundle makes them), each label's coverage is the share of the
// positives that share it with their anchor inside the set, counted here
// from the matrix and the plan's source rows; a label whose positives lie
// far from their anchors (spread rows, rows of two centres) falls short
// where the whole coverage does not. A bundle
// without the positives' labels, and a class-conditional set, are
// refused.
func TestByLabel(t *testing.T) {
	const n, c, d = 1200, 5, 3
	rng := rand.New(rand.NewPCG(8, 9))
	m := make([]int64, n*c)
	centre := make([]float64, c*d)
	for i := range centre {
		centre[i] = 4 * rng.NormFloat64()
	}
	rows := make([]float32, n*d)
	for i := range n {
		l := i % c
		m[i*c+l] = 1
		if rng.Float64() < 0.3 {
			m[i*c+(l+1)%c] = 1
		}
		spread := 1.0
		if l == c-1 {
			spread = 3 // the last label's rows lie far apart
		}
		for j := range d {
			rows[i*d+j] = float32(centre[l*d+j] + spread*rng.NormFloat64())
		}
	}
	sets, ok, err := bundle.LabelSets(bundle.Array{Shape: []int{n, c}, I64: m}, "m.npy")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	items, err := bundle.Inputs{Embeddings: bundle.Embeddings{Source: "e.npy", Rows: rows, N: n, D: d}, LabelSets: sets}.Items()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := bundle.Make(items, bundle.MakeConfig{K: 3, KNeg: 2, Split: [4]float64{0, 0, 0.5, 0.5}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cal, err := plan.Bundle(2, rows, rows, d)
	if err != nil {
		t.Fatal(err)
	}
	test, err := plan.Bundle(3, rows, rows, d)
	if err != nil {
		t.Fatal(err)
	}
	g := geometry.Ball{D: d}
	set, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ByLabel(set, test)
	if err != nil {
		t.Fatal(err)
	}
	// Counted from the matrix and the plan's rows.
	sp := plan.Splits[3]
	type count struct{ anchors, positives, in int }
	want := make([]count, c)
	diff := make([]float32, d)
	score := make([]float64, 1)
	for a, q := range sp.Anchors {
		seen := make([]bool, c)
		for j := range sp.K {
			r := sp.PositivePool[sp.PositiveIndex[a*sp.K+j]]
			test.PositiveDiff(diff, a, j)
			in := g.Scores(score, diff)[0] <= set.Threshold
			for l := range c {
				if m[q*c+l] == 1 && m[r*c+l] == 1 {
					want[l].positives++
					if in {
						want[l].in++
					}
					if !seen[l] {
						seen[l] = true
						want[l].anchors++
					}
				}
			}
		}
	}
	if len(got) != c {
		t.Fatalf("%d labels, want %d: %+v", len(got), c, got)
	}
	for l, w := range want {
		r := got[l]
		if r.Label != int64(l) || r.Anchors != w.anchors || r.Positives != w.positives || r.Coverage != float64(w.in)/float64(w.positives) {
			t.Errorf("label %d: %+v, want %+v", l, r, w)
		}
	}
	whole, err := Evaluate(set, test)
	if err != nil {
		t.Fatal(err)
	}
	worst, _ := WorstLabel(got, 20)
	t.Logf("coverage %.3f; the worst label, %d, %.3f", whole.Coverage, worst.Label, worst.Coverage)
	if worst.Coverage >= whole.Coverage-0.05 {
		t.Errorf("no label falls short: worst %+v, whole coverage %.3f", worst, whole.Coverage)
	}

	for _, c := range []struct {
		labels      []LabelResult
		min         int
		want, fewer int64
	}{
		{[]LabelResult{{Label: 0, Positives: 50, Coverage: 0.9}, {Label: 1, Positives: 3, Coverage: 0}, {Label: 2, Positives: 20, Coverage: 0.8}}, 20, 2, 1},
		{[]LabelResult{{Label: 0, Positives: 5, Coverage: 0.9}, {Label: 1, Positives: 3, Coverage: 0.5}}, 20, 1, 0},
	} {
		if w, fewer := WorstLabel(c.labels, c.min); w.Label != c.want || int64(fewer) != c.fewer {
			t.Errorf("WorstLabel(%+v, %d) = %+v, %d; want label %d, %d fewer", c.labels, c.min, w, fewer, c.want, c.fewer)
		}
	}

	// From stored scores (a comparison's), and with the whole result: the
	// same numbers.
	sc, err := Score(set, test)
	if err != nil {
		t.Fatal(err)
	}
	if stored, err := sc.ByLabel(); err != nil || !slices.Equal(stored, got) {
		t.Errorf("Scored.ByLabel: %+v, %v; want %+v", stored, err, got)
	}
	if r, labels, err := WithLabels(set, test); err != nil || !slices.Equal(labels, got) || r != whole {
		t.Errorf("WithLabels: %+v, %+v, %v; want %+v, %+v", r, labels, err, whole, got)
	}
	// A subset of the anchors (a resplit's) keeps each positive's labels.
	rev := make([]int, test.N)
	for i := range rev {
		rev[i] = test.N - 1 - i
	}
	if sub, err := ByLabel(set, test.Subset(rev)); err != nil || !slices.Equal(sub, got) {
		t.Errorf("the anchors reversed: %+v, %v; want %+v", sub, err, got)
	}

	plain := *test
	plain.PositiveLabelStart, plain.PositiveLabels = nil, nil
	if _, err := ByLabel(set, &plain); err == nil || !strings.Contains(err.Error(), "the test bundle carries no labels of its positives") || strings.Contains(err.Error(), "class-conditional") {
		t.Errorf("a bundle without its positives' labels: %v", err)
	}
}

// TestResplitsByLabel: each label's coverage over resplits is, resplit by
// resplit, ByLabel's on the held-out anchors with the resplit's
// recalibrated threshold (the draws Resplits makes, redone here); the
// label of spread rows falls short of 1 − α on average where the whole
// coverage does not. A class-conditional set and a bundle without its
// positives' labels are refused.
func TestResplitsByLabel(t *testing.T) {
	const n, c, d = 1200, 5, 3
	rng := rand.New(rand.NewPCG(8, 9))
	m := make([]int64, n*c)
	rows := make([]float32, n*d)
	for i := range n {
		l := i % c
		m[i*c+l] = 1
		if rng.Float64() < 0.3 {
			m[i*c+(l+1)%c] = 1
		}
		spread := 1.0
		if l == c-1 {
			spread = 3
		}
		for j := range d {
			rows[i*d+j] = float32(4*float64(l%2*j) + spread*rng.NormFloat64())
		}
	}
	sets, _, err := bundle.LabelSets(bundle.Array{Shape: []int{n, c}, I64: m}, "m.npy")
	if err != nil {
		t.Fatal(err)
	}
	items, err := bundle.Inputs{Embeddings: bundle.Embeddings{Source: "e.npy", Rows: rows, N: n, D: d}, LabelSets: sets}.Items()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := bundle.Make(items, bundle.MakeConfig{K: 3, KNeg: 2, Split: [4]float64{0, 0, 0.5, 0.5}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cal, err := plan.Bundle(2, rows, rows, d)
	if err != nil {
		t.Fatal(err)
	}
	test, err := plan.Bundle(3, rows, rows, d)
	if err != nil {
		t.Fatal(err)
	}
	const alpha, resplits, frac, seed = 0.1, 40, 0.5, 3
	set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, alpha, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, got, err := ResplitsByLabel(set, test, resplits, frac, seed)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Score(set, test)
	if err != nil {
		t.Fatal(err)
	}
	nCal := int(frac * float64(test.N))
	rank, _ := conformal.Rank(nCal, alpha)
	sum := map[int64]float64{}
	seen := map[int64]int{}
	for r := range resplits {
		rng := rand.New(rand.NewPCG(seed, uint64(r)))
		perm := rng.Perm(test.N)
		var scores []float64
		for _, i := range perm[:nCal] {
			scores = append(scores, sc.pos[i*test.K+rng.IntN(test.K)])
		}
		s := *set
		s.Threshold = conformal.Select(scores, rank)
		byLabel, err := ByLabel(&s, test.Subset(perm[nCal:]))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range byLabel {
			sum[l.Label] += l.Coverage
			seen[l.Label]++
		}
	}
	if len(got) != len(sum) {
		t.Fatalf("%d labels, want %d", len(got), len(sum))
	}
	worst := got[0]
	for _, g := range got {
		want := sum[g.Label] / float64(seen[g.Label])
		if d := g.Coverage.Mean - want; d > 1e-12 || d < -1e-12 || g.Coverage.N != seen[g.Label] {
			t.Errorf("label %d: mean coverage %.6f over %d resplits, ByLabel's %.6f over %d", g.Label, g.Coverage.Mean, g.Coverage.N, want, seen[g.Label])
		}
		if g.Coverage.Mean < worst.Coverage.Mean {
			worst = g
		}
	}
	if worst.Label != c-1 || worst.Coverage.Mean >= 1-alpha || res.Coverage.Mean < 1-alpha-0.01 {
		t.Errorf("worst label %d at %.4f, overall %.4f: want label %d below %.2f, overall about 1 − α", worst.Label, worst.Coverage.Mean, res.Coverage.Mean, c-1, 1-alpha)
	}
	for _, r := range []int{0, -1} { // refused, as Resplits refuses them
		if _, _, err := ResplitsByLabel(set, test, r, frac, seed); err == nil || !strings.Contains(err.Error(), "want at least 1") {
			t.Errorf("%d resplits: %v", r, err)
		}
	}
	plain := *test
	plain.PositiveLabelStart, plain.PositiveLabels = nil, nil
	if _, _, err := ResplitsByLabel(set, &plain, resplits, frac, seed); err == nil || !strings.Contains(err.Error(), "carries no labels of its positives") {
		t.Errorf("no positives' labels: %v", err)
	}
	cls := *set
	cls.Calibration.Mode, cls.Classes = conformal.Class, []conformal.ClassThreshold{{Label: 0, N: 10, Rank: 10, Threshold: 1}}
	if _, _, err := ResplitsByLabel(&cls, test, resplits, frac, seed); err == nil || !strings.Contains(err.Error(), "class-conditional") {
		t.Errorf("class-conditional: %v", err)
	}
}
