package bundle

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// sqDist is the squared ℓ2 distance of two rows, in float64.
func sqDist(a, b []float32) float64 {
	var s float64
	for i := range a {
		v := float64(a[i]) - float64(b[i])
		s += v * v
	}
	return s
}

// TestHardNegatives: with HardNegatives h, every anchor's first h
// negatives are nearer to it than its others (drawn from the same
// candidates), all are possible negatives (another class, another group,
// a row relevant to none of a query's) and distinct; with candidates
// enough to hold every possible negative, the first h are the h nearest
// of all, checked by brute force; the plan is the same at any number of
// goroutines; without hard negatives it is the random plan as before.
func TestHardNegatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 90))
	const n, d = 600, 6
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	labels, groups := make([]int64, n), make([]int64, n)
	for i := range n {
		labels[i], groups[i] = int64(i%5), int64(i/3)
	}
	const nq = 120
	queries := rows[:nq*d]
	var pairs [][2]int
	for q := range nq {
		for j := range 6 {
			pairs = append(pairs, [2]int{q, (q*7 + j*31) % n})
		}
	}
	row := func(r int) []float32 { return rows[r*d : (r+1)*d] }
	modes := []struct {
		name  string
		items Items
		ok    func(p *Plan, s, a, neg int) bool // neg a possible negative of anchor a of split s
		dist  func(p *Plan, s, a, neg int) float64
	}{
		{"labels", Items{N: n, Labels: labels, Rows: rows, D: d},
			func(p *Plan, s, a, neg int) bool { return p.Splits[s].Labels[a] != p.Splits[s].Labels[neg] },
			func(p *Plan, s, a, neg int) float64 {
				return sqDist(row(p.Splits[s].Anchors[a]), row(p.Splits[s].Anchors[neg]))
			}},
		{"groups", Items{N: n, Groups: groups, Rows: rows, D: d},
			func(p *Plan, s, a, neg int) bool { return neg != a },
			func(p *Plan, s, a, neg int) float64 {
				return sqDist(row(p.Splits[s].Anchors[a]), row(p.Splits[s].Anchors[neg]))
			}},
		{"pairs", Items{N: n, Queries: nq, Pairs: pairs, Rows: rows, QueryRows: queries, D: d},
			func(p *Plan, s, a, neg int) bool {
				q, r := p.Splits[s].Anchors[a], p.Splits[s].NegativePool[neg]
				return !slices.Contains(pairs, [2]int{q, r})
			},
			func(p *Plan, s, a, neg int) float64 {
				return sqDist(queries[p.Splits[s].Anchors[a]*d:(p.Splits[s].Anchors[a]+1)*d], row(p.Splits[s].NegativePool[neg]))
			}},
	}
	for _, m := range modes {
		for _, cand := range []int{12, 100000} { // a few candidates; every possible negative
			cfg := MakeConfig{K: 2, KNeg: 8, Split: testSplit, Seed: 5, HardNegatives: 3, HardCandidates: cand}
			p, err := Make(m.items, cfg)
			if err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			for s, sp := range p.Splits[:4] {
				for a := range sp.Anchors {
					negs := sp.NegativeIndex[a*8 : (a+1)*8]
					seen := map[int64]bool{}
					for _, g := range negs {
						if seen[g] || !m.ok(p, s, a, int(g)) {
							t.Fatalf("%s, %s anchor %d: negatives %v: a repeat, or not a possible negative", m.name, sp.Name, a, negs)
						}
						seen[g] = true
					}
					hardMax := 0.0
					for _, g := range negs[:3] {
						hardMax = max(hardMax, m.dist(p, s, a, int(g)))
					}
					for _, g := range negs[3:] {
						if m.dist(p, s, a, int(g)) < hardMax {
							t.Fatalf("%s, %s anchor %d: a random negative nearer than a hard one", m.name, sp.Name, a)
						}
					}
					if cand < 100000 || m.name == "pairs" { // the pool is the drawn rows: check the labels' and groups' brute force
						continue
					}
					var all []float64
					for g := range sp.Anchors {
						if m.ok(p, s, a, g) {
							all = append(all, m.dist(p, s, a, g))
						}
					}
					slices.Sort(all)
					if hardMax != all[2] {
						t.Fatalf("%s, %s anchor %d: the 3 hard negatives reach %v; the 3 nearest possible ones %v", m.name, sp.Name, a, hardMax, all[:3])
					}
				}
			}
			// The same plan on one goroutine.
			prev := runtime.GOMAXPROCS(1)
			p1, err := Make(m.items, cfg)
			runtime.GOMAXPROCS(prev)
			if err != nil || !reflect.DeepEqual(p1.Splits, p.Splits) {
				t.Errorf("%s: one goroutine made another plan (%v)", m.name, err)
			}
		}
		// Without hard negatives, and without the rows, the random plan.
		cfg := MakeConfig{K: 2, KNeg: 8, Split: testSplit, Seed: 5}
		plain := m.items
		plain.Rows, plain.QueryRows, plain.D = nil, nil, 0
		a, err1 := Make(plain, cfg)
		b, err2 := Make(m.items, cfg)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a.Splits, b.Splits) {
			t.Errorf("%s: the rows changed a plan without hard negatives (%v, %v)", m.name, err1, err2)
		}
	}
}

// TestHardNegativesRefused: what MakeConfig.HardNegatives cannot do is an
// error saying so.
func TestHardNegativesRefused(t *testing.T) {
	labels := make([]int64, 300)
	rows := make([]float32, 300*2)
	for i := range labels {
		labels[i] = int64(i % 3)
	}
	for _, c := range []struct {
		cfg  MakeConfig
		rows []float32
		want string
	}{
		{MakeConfig{K: 2, KNeg: 4, HardNegatives: 5}, rows, "5 hard negatives per anchor, more than its 4 negatives (-kneg, which is -k unless given; kneg= in Python)"},
		{MakeConfig{K: 2, HardNegatives: -1}, rows, "-1 hard negatives per anchor: want 0"},
		{MakeConfig{K: 2, KNeg: 6, HardNegatives: 2, HardCandidates: 5}, rows, "5 hard-negative candidates, fewer than the 6 negatives an anchor takes from them: want at least kneg (-kneg; kneg= in Python)"},
		{MakeConfig{K: 2, HardNegatives: 1, HardCandidates: -3}, rows, "-3 hard-negative candidates"},
		{MakeConfig{K: 2, HardNegatives: 1}, nil, "Items.Rows (and QueryRows) must hold them"},
		// Not hard negatives, but -kneg named for both callers likewise.
		{MakeConfig{K: 2, KNeg: 250}, rows, "too few for 250 negatives per anchor (-kneg, which is -k unless given; kneg= in Python)"},
	} {
		c.cfg.Split = testSplit
		_, err := Make(Items{N: 300, Labels: labels, Rows: c.rows, D: 2}, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestNearest: the h nearest, ties by index, are the first h of the
// indices sorted stably by distance, for any h, with many ties.
func TestNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		dist := make([]float64, n)
		for i := range dist {
			dist[i] = float64(rng.IntN(1 + trial%20)) // few values: ties
		}
		order := seqFrom(0, n)
		slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(dist[a], dist[b]) })
		for _, h := range []int{0, 1, 3, n / 2, n, n + 5} {
			if got, want := nearest(dist, h), order[:min(h, n)]; !slices.Equal(got, want) {
				t.Fatalf("n %d, h %d: %v, want %v", n, h, got, want)
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BenchmarkHardNegatives: a RAG user's bundle of 3 000 queries against
// 20 000 passages (d = 256), 20 hard negatives of 50 each among every
// passage (-kneg-hard 20 -hard-candidates 20000).
func BenchmarkHardNegatives(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, nq, d = 20000, 3000, 256
	rows, queries := make([]float32, n*d), make([]float32, nq*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	for i := range queries {
		queries[i] = float32(rng.NormFloat64())
	}
	var pairs [][2]int
	for q := range nq {
		for range 1 + rng.IntN(3) {
			pairs = append(pairs, [2]int{q, rng.IntN(n)})
		}
	}
	items := Items{N: n, Queries: nq, Pairs: pairs, Rows: rows, QueryRows: queries, D: d}
	cfg := MakeConfig{K: 1, KNeg: 50, Split: [4]float64{0.5, 0.1, 0.2, 0.2}, Seed: 1, HardNegatives: 20, HardCandidates: 20000, AllowFewer: true}
	for b.Loop() {
		if _, err := Make(items, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOthersDraws: others draws exactly what a scan of the members taken
// drew (the draw before the bit set: same picks, same order, same
// generator state after), for draws of any size, with and without
// members refused.
func TestOthersDraws(t *testing.T) {
	scan := func(dst []int64, n int, ok func(int) bool, rng *rand.Rand) {
		for c := 0; c < len(dst); {
			v := rng.IntN(n)
			if !ok(v) || slices.Contains(dst[:c], int64(v)) {
				continue
			}
			dst[c] = int64(v)
			c++
		}
	}
	seeds := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + seeds.IntN(5000)
		mod := 1 + seeds.IntN(4)
		ok := func(i int) bool { return i%mod != 0 || mod == 1 }
		avail := 0
		for i := range n {
			if ok(i) {
				avail++
			}
		}
		k := seeds.IntN(min(avail, 3000) + 1)
		seed := seeds.Uint64()
		a, b := make([]int64, k), make([]int64, k)
		ra, rb := rand.New(rand.NewPCG(seed, 3)), rand.New(rand.NewPCG(seed, 3))
		others(a, n, ok, nil, ra)
		scan(b, n, ok, rb)
		if !slices.Equal(a, b) || ra.Uint64() != rb.Uint64() {
			t.Fatalf("trial %d: n = %d, k = %d: the draws differ", trial, n, k)
		}
	}
}

// BenchmarkHardCandidates: hard negatives among c candidates an anchor
// of 24 000 rows (a Go user's bundle.Make, whose candidates' draw scanned
// those taken: 0.78, 12.2 and 40.2 s for 256, 1 024 and 2 048).
func BenchmarkHardCandidates(b *testing.B) {
	const n, d = 24000, 4
	rng := rand.New(rand.NewPCG(1, 2))
	rows, labels := make([]float32, n*d), make([]int64, n)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	for i := range labels {
		labels[i] = int64(i % 8)
	}
	for _, c := range []int{256, 1024, 2048} {
		b.Run(fmt.Sprintf("candidates=%d", c), func(b *testing.B) {
			for b.Loop() {
				if _, err := Make(Items{N: n, Labels: labels, Rows: rows, D: d},
					MakeConfig{K: 2, Seed: 1, HardNegatives: 1, HardCandidates: c}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
