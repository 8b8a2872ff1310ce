package conformal

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// TestUnitPairs checks UnitPairs against the definitions
// (docs/calibration.md), not against Scores, which is built on it.
//
// Stored positives: one unit an anchor, in order, each with one of its own
// positives; the same draw for the same seed whatever the mode (PAC
// differs in the rank, Class in the grouping), another for another seed;
// every positive drawn, about as often (400 anchors, 4 positives: each
// index within 50 of its expected 100, 5.8 standard deviations).
//
// Label bundles: the disjoint pairs, rederived here from their definition
// (each anchor in the bundle's order takes its first listed positive, not
// itself and of its class, not yet in a pair), whatever the seed; each row
// in at most one unit, both rows of one class; Class keeps them all,
// OnePerAnchor and PAC the first ⌊ρ·m_l⌋ of class l's (m_l its anchors, ρ
// the smallest share of pairs to anchors among the classes with pairs,
// computed in rationals), which here leaves some out. And the units are
// those Scores scores, in its order. Pooled has none.
func TestUnitPairs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 9))
	const k, d = 4, 2
	g := geometry.Ball{D: d}

	stored := synthetic(rng, 400, k)
	stored.Labels = make([]int64, stored.N) // Class groups them; the draw is the same
	for i := range stored.Labels {
		stored.Labels[i] = int64(i % 3)
	}
	draws := map[uint64][][2]int{}
	for _, seed := range []uint64{5, 6, 7} {
		units := UnitPairs(stored, OnePerAnchor, seed)
		if len(units) != stored.N {
			t.Fatalf("stored, seed %d: %d units of %d anchors", seed, len(units), stored.N)
		}
		drawn := make([]int, k)
		for u, p := range units {
			if p[0] != u || p[1] < 0 || p[1] >= k {
				t.Fatalf("stored, seed %d: unit %d is %v, want anchor %d with one of its %d positives", seed, u, p, u, k)
			}
			drawn[p[1]]++
		}
		for a, c := range drawn {
			if c < stored.N/k-50 || c > stored.N/k+50 {
				t.Errorf("stored, seed %d: positive %d drawn for %d of %d anchors, want about %d (%v)", seed, a, c, stored.N, stored.N/k, drawn)
			}
		}
		for _, m := range []Mode{0, OnePerAnchor, PAC, Class} {
			if again := UnitPairs(stored, m, seed); !slices.Equal(again, units) {
				t.Errorf("stored, seed %d, mode %v: another draw than OnePerAnchor's", seed, m)
			}
		}
		for other, was := range draws {
			if slices.Equal(was, units) {
				t.Errorf("stored: seeds %d and %d draw the same positives", other, seed)
			}
		}
		draws[seed] = units
	}

	labelled := labelBundle(rng, 60, k)
	want := disjointPairsByDefinition(labelled)
	used := make([]bool, labelled.N)
	for _, p := range want {
		used[p[0]], used[p[1]] = true, true
	}
	if len(want) < 10 || !slices.Contains(used, false) {
		t.Fatalf("labels: %d disjoint pairs: the data pairs too few anchors, or all", len(want))
	}
	kept := keptByDefinition(labelled, want)
	if len(kept) == len(want) {
		t.Fatalf("labels: all %d pairs kept: the data does not trim", len(want))
	}
	for _, tc := range []struct {
		mode Mode
		want [][2]int // as (anchor, its positive's row)
	}{
		{OnePerAnchor, kept}, {PAC, kept}, {Class, want},
	} {
		for _, seed := range []uint64{0, 5} {
			units := UnitPairs(labelled, tc.mode, seed)
			rows := make([][2]int, len(units))
			inUnit := make([]int, labelled.N)
			for u, p := range units {
				if p[1] < 0 || p[1] >= k {
					t.Fatalf("labels, %v, seed %d: unit %d is %v: no positive %d", tc.mode, seed, u, p, p[1])
				}
				i, j := p[0], int(labelled.PositiveIndex[p[0]*k+p[1]])
				rows[u] = [2]int{i, j}
				if labelled.Labels[i] != labelled.Labels[j] {
					t.Errorf("labels, %v, seed %d: unit %d pairs rows %d and %d of classes %d and %d", tc.mode, seed, u, i, j, labelled.Labels[i], labelled.Labels[j])
				}
				inUnit[i]++
				if inUnit[j]++; i == j {
					t.Errorf("labels, %v, seed %d: unit %d pairs row %d with itself", tc.mode, seed, u, i)
				}
			}
			for r, n := range inUnit {
				if n > 1 {
					t.Errorf("labels, %v, seed %d: row %d in %d units", tc.mode, seed, r, n)
				}
			}
			if !slices.Equal(rows, tc.want) {
				t.Errorf("labels, %v, seed %d: units (anchor, positive row)\n%v\nwant\n%v", tc.mode, seed, rows, tc.want)
			}
		}
	}

	// The units are those Scores scores, in its order.
	for _, tc := range []struct {
		b    *bundle.Bundle
		mode Mode
	}{{stored, OnePerAnchor}, {stored, PAC}, {labelled, OnePerAnchor}, {labelled, Class}} {
		units := UnitPairs(tc.b, tc.mode, 5)
		scores, err := Scores(g, tc.b, tc.mode, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(units) != len(scores) {
			t.Fatalf("%v: %d units, %d scores", tc.mode, len(units), len(scores))
		}
		for u, p := range units {
			if v := g.Scores(nil, tc.b.PositiveDiff(nil, p[0], p[1]))[0]; v != scores[u] {
				t.Errorf("%v: unit %d %v scores %v, Scores %v", tc.mode, u, p, v, scores[u])
				break
			}
		}
	}
	if UnitPairs(stored, Pooled, 0) != nil || UnitPairs(labelled, Pooled, 0) != nil {
		t.Error("pooled: units")
	}
}

// labelBundle is a bundle of n anchors whose k positives are its own
// anchors (ccs bundle's from labels): classes 0, 1, 2, class 2 small (it
// sets the marginal share); mostly positives of the anchor's class, some
// of another class or the anchor itself, which no pair may take.
func labelBundle(rng *rand.Rand, n, k int) *bundle.Bundle {
	b := synthetic(rng, n, k)
	b.Positives = nil
	b.Labels = make([]int64, n)
	b.PositiveIndex = make([]int64, n*k)
	var byClass [3][]int
	for i := range n {
		b.Labels[i] = int64(i % 3)
		if i%3 == 2 && i > 30 {
			b.Labels[i] = 1
		}
		byClass[b.Labels[i]] = append(byClass[b.Labels[i]], i)
	}
	for i := range n {
		own := byClass[b.Labels[i]]
		for a := range k {
			j := own[rng.IntN(len(own))]
			for j == i { // never the anchor itself: Validate refuses it
				j = own[rng.IntN(len(own))]
			}
			if rng.IntN(8) == 0 { // another class's
				other := byClass[(b.Labels[i]+1)%3]
				j = other[rng.IntN(len(other))]
			}
			b.PositiveIndex[i*k+a] = int64(j)
		}
	}
	return b
}

// disjointPairsByDefinition is docs/calibration.md's disjoint pairs, as
// (anchor, its positive's row): each anchor in the bundle's order not yet
// in a pair takes its first listed positive that is another anchor of its
// class not yet in a pair.
func disjointPairsByDefinition(b *bundle.Bundle) [][2]int {
	inPair := map[int]bool{}
	var pairs [][2]int
	for i := range b.N {
		if inPair[i] {
			continue
		}
		for _, j := range b.PositiveIndex[i*b.K : (i+1)*b.K] {
			if j := int(j); j != i && !inPair[j] && b.Labels[j] == b.Labels[i] {
				inPair[i], inPair[j] = true, true
				pairs = append(pairs, [2]int{i, j})
				break
			}
		}
	}
	return pairs
}

// keptByDefinition is the first ⌊ρ·m_l⌋ of class l's pairs, in order: m_l
// its anchors, ρ the smallest pairs/anchors among the classes with pairs.
func keptByDefinition(b *bundle.Bundle, pairs [][2]int) [][2]int {
	anchors, made := map[int64]int64{}, map[int64]int64{}
	for _, l := range b.Labels {
		anchors[l]++
	}
	for _, p := range pairs {
		made[b.Labels[p[0]]]++
	}
	var rho *big.Rat
	for l, m := range made {
		if r := big.NewRat(m, anchors[l]); rho == nil || r.Cmp(rho) < 0 {
			rho = r
		}
	}
	quota := map[int64]int64{}
	for l, m := range anchors {
		q := new(big.Rat).Mul(rho, big.NewRat(m, 1))
		quota[l] = new(big.Int).Quo(q.Num(), q.Denom()).Int64() // ⌊q⌋, q ≥ 0
	}
	var kept [][2]int
	for _, p := range pairs {
		if l := b.Labels[p[0]]; quota[l] > 0 {
			quota[l]--
			kept = append(kept, p)
		}
	}
	return kept
}
