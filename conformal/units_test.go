package conformal

import (
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// TestUnitPairs: the units UnitPairs names are those Scores scores, in
// its order, for stored positives (one drawn by the seed) and for a label
// bundle (its disjoint pairs, trimmed for a marginal calibration, all of
// them for a class-conditional one); pooled has none.
func TestUnitPairs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 9))
	const n, k, d = 60, 4, 2
	stored := synthetic(rng, n, k)
	labelled := synthetic(rng, n, k)
	labelled.Positives = nil
	labelled.Labels = make([]int64, n)
	labelled.PositiveIndex = make([]int64, n*k)
	for i := range n {
		labelled.Labels[i] = int64(i % 3)
		if i%3 == 2 && i > 30 { // a class of fewer pairs: the marginal units trim
			labelled.Labels[i] = 1
		}
		for a := range k {
			j := (i + 3*(1+rng.IntN(n/3-1))) % n
			labelled.PositiveIndex[i*k+a] = int64(j)
		}
	}
	// Label bundles pair anchors of one class: take positives of its own.
	for i := range n {
		for a := range k {
			for j := int(labelled.PositiveIndex[i*k+a]); ; j = (j + 1) % n {
				if j != i && labelled.Labels[j] == labelled.Labels[i] {
					labelled.PositiveIndex[i*k+a] = int64(j)
					break
				}
			}
		}
	}
	g := geometry.Ball{D: d}
	for _, tc := range []struct {
		name  string
		mode  Mode
		seed  uint64
		pairs bool
	}{
		{"stored, one", OnePerAnchor, 5, false},
		{"stored, pac", PAC, 6, false},
		{"labels, one", OnePerAnchor, 0, true},
		{"labels, class", Class, 0, true},
	} {
		b := stored
		if tc.pairs {
			b = labelled
		}
		units := UnitPairs(b, tc.mode, tc.seed)
		scores, err := Scores(g, b, tc.mode, tc.seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(units) != len(scores) {
			t.Fatalf("%s: %d units, %d scores", tc.name, len(units), len(scores))
		}
		for u, p := range units {
			if v := g.Scores(nil, b.PositiveDiff(nil, p[0], p[1]))[0]; v != scores[u] {
				t.Errorf("%s: unit %d %v scores %v, Scores %v", tc.name, u, p, v, scores[u])
				break
			}
		}
		if want := len(DisjointPairs(b)); tc.pairs && (tc.mode == Class) != (len(units) == want) {
			t.Errorf("%s: %d units of %d disjoint pairs", tc.name, len(units), want)
		}
	}
	if UnitPairs(stored, Pooled, 0) != nil {
		t.Error("pooled: units")
	}
}
