package bundle

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// recordings is a time-ordered export of overlapping windows: recs
// recordings of per rows each, a class (operating mode) per segment of 10
// rows, each row a near-copy of the one before (an AR(1) walk) — what a
// predictive-maintenance user's windows look like. It returns the rows,
// the labels and each row's recording.
func recordings(seed uint64, recs, per, d int) ([]float32, []int64, []int64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var rows []float32
	var labels, blocks []int64
	for r := range recs {
		x := make([]float64, d)
		for j := range x {
			x[j] = 3 * rng.NormFloat64()
		}
		for i := range per {
			c := int64(((i/10)*7 + r) % 3)
			for j := range x {
				x[j] = 0.99*x[j] + 0.1*rng.NormFloat64()
				rows = append(rows, float32(x[j]+4*float64(c)))
			}
			labels = append(labels, c)
			blocks = append(blocks, int64(r))
		}
	}
	return rows, labels, blocks
}

// TestSplitBlocks: with blocks, every block lies whole in one split, the
// OOD calibration's included; the shares are shared out by blocks; the OOD
// classes' rows go to the OOD split whatever their block; positives are
// still rows of the anchor's class in its split; the plan depends on the
// seed, and a block's split on the seed alone, not on its size.
func TestSplitBlocks(t *testing.T) {
	const recs, per, d = 40, 60, 4
	_, labels, blocks := recordings(1, recs, per, d)
	labels[5], labels[6], labels[700] = 9, 9, 9 // a fault: OOD rows in two blocks
	cfg := MakeConfig{K: 3, Split: testSplit, Seed: 3, OODCalShare: 0.1, OODClasses: []int64{9}}
	p, err := Make(Items{N: len(labels), Labels: labels, Blocks: blocks}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	where := map[int64]string{}
	perSplit := map[string]map[int64]bool{}
	seen := 0
	for _, sp := range p.Splits {
		perSplit[sp.Name] = map[int64]bool{}
		for a, r := range sp.Anchors {
			seen++
			if sp.Name == SplitNames[OOD] {
				if labels[r] != 9 {
					t.Errorf("ood split holds row %d of class %d", r, labels[r])
				}
				continue
			}
			b := blocks[r]
			if w, ok := where[b]; ok && w != sp.Name {
				t.Fatalf("block %d lies in %s and %s", b, w, sp.Name)
			}
			where[b] = sp.Name
			perSplit[sp.Name][b] = true
			if sp.K > 0 {
				for _, q := range sp.PositiveIndex[a*sp.K : (a+1)*sp.K] {
					if int(q) == a || sp.Labels[q] != sp.Labels[a] {
						t.Fatalf("%s anchor %d: positive %d not another of its class", sp.Name, a, q)
					}
				}
			}
		}
	}
	if seen != len(labels) {
		t.Errorf("%d rows in the splits, want all %d", seen, len(labels))
	}
	// 40 blocks: 4 to ood-cal (10%), then 36 by 0.5, 0.1, 0.2, 0.2.
	want := map[string]int{"ood-cal": 4, "fit": 18, "val": 4, "cal": 7, "test": 7}
	for name, n := range want {
		if got := len(perSplit[name]); got != n {
			t.Errorf("%s: %d blocks, want %d", name, got, n)
		}
	}
	q, err := Make(Items{N: len(labels), Labels: labels, Blocks: blocks}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for s := range p.Splits {
		if !slices.Equal(p.Splits[s].Anchors, q.Splits[s].Anchors) || !slices.Equal(p.Splits[s].PositiveIndex, q.Splits[s].PositiveIndex) {
			t.Fatalf("%s: the same seed made another plan", p.Splits[s].Name)
		}
	}
	// A block's split does not depend on its size: the block order
	// (shuffled by the seed) alone decides, so shortening a block moves it
	// nowhere.
	var keep []int
	for i, b := range blocks {
		if b != 0 || i%60 < 20 {
			keep = append(keep, i)
		}
	}
	l2, b2 := make([]int64, len(keep)), make([]int64, len(keep))
	for i, r := range keep {
		l2[i], b2[i] = labels[r], blocks[r]
	}
	q, err = Make(Items{N: len(keep), Labels: l2, Blocks: b2}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range q.Splits {
		for _, r := range sp.Anchors {
			if b := b2[r]; sp.Name != SplitNames[OOD] && where[b] != sp.Name {
				t.Fatalf("block %d, shortened, moved from %s to %s", b, where[b], sp.Name)
			}
		}
	}
}

// TestBlocksClassMissing: a class whose rows lie in one block misses
// every split but that block's, and the plan says so by name; classes in
// every split are not named.
func TestBlocksClassMissing(t *testing.T) {
	const recs, per, d = 40, 60, 4
	_, labels, blocks := recordings(1, recs, per, d)
	cfg := MakeConfig{K: 3, Split: testSplit, Seed: 3}
	p, err := Make(Items{N: len(labels), Labels: labels, Blocks: blocks}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "miss a split") {
			t.Errorf("every class in every split, yet: %s", w)
		}
	}
	for i := range per {
		labels[i] = 5 // recording 0 is the one of class 5
	}
	p, err = Make(Items{N: len(labels), Labels: labels, Blocks: blocks}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var lacks []string
	for _, sp := range p.Splits {
		if !slices.Contains(sp.Anchors, 0) {
			lacks = append(lacks, sp.Name)
		}
	}
	want := "class 5 (60 rows in one block) has none in " + strings.Join(lacks, ", ") + ". A class without calibration rows"
	found := false
	for _, w := range p.Warnings {
		found = found || strings.Contains(w, want)
	}
	if len(lacks) != 3 || !found {
		t.Errorf("warnings %q, want one with %q", p.Warnings, want)
	}
}

// TestBlocksErrors: blocks too few for a share, missing block ids, and
// blocks with groups or without labels are refused, saying why; too few
// blocks as an InputError naming the blocks, the file a command names.
func TestBlocksErrors(t *testing.T) {
	_, labels, blocks := recordings(2, 6, 30, 2)
	_, l4, b4 := recordings(2, 4, 45, 2)
	for _, c := range []struct {
		name  string
		items Items
		cfg   MakeConfig
		want  string
		input string // the InputError's Input; "" for none
	}{
		{"too few blocks for val", Items{N: 180, Labels: l4, Blocks: b4}, MakeConfig{K: 2, Split: testSplit}, "bundle: 4 blocks are too few for the val share 0.1: blocks lie whole in one split, and the shares are shared out by blocks; give more blocks (more recordings), fewer splits (a share of 0: -split 0,0,0.5,0.5, split=(0, 0, 0.5, 0.5) in Python, for the ℓ2 ball", InputBlocks},
		{"too few blocks for ood-cal", Items{N: 180, Labels: labels, Blocks: blocks}, MakeConfig{K: 2, Split: [4]float64{0, 0, 0.5, 0.5}, OODCalShare: 0.05}, "are too few for the ood-cal share 0.05: blocks lie whole in one split", InputBlocks},
		{"with groups", Items{N: 180, Labels: labels, Groups: blocks, Blocks: blocks}, MakeConfig{K: 2, Split: testSplit}, "give them with labels alone", ""},
		{"without labels", Items{N: 180, Blocks: blocks}, MakeConfig{K: 2, Split: testSplit}, "give them with labels alone", ""},
		{"another length", Items{N: 180, Labels: labels, Blocks: blocks[:100]}, MakeConfig{K: 2, Split: testSplit}, "100 block ids for 180 rows", ""},
		{"recordings of several modes as groups", Items{N: 180, Labels: labels, Groups: blocks}, MakeConfig{K: 2, Split: testSplit}, "has rows of labels 0 and 1: a group's rows are views of one item, of one class; where the groups are what the rows are to be split by — recordings of windows in several modes, patients, sites — and the labels the classes, give the groups as blocks (-blocks FILE; blocks= in Python)", ""},
		{"a missing block", Items{N: 180, Labels: labels, Blocks: append(slices.Clone(blocks[:179]), -1)}, MakeConfig{K: 2, Split: [4]float64{0, 0, 0.5, 0.5}}, "row 179 has a block id that marks a missing value", ""},
	} {
		_, err := Make(c.items, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if got := inputAtFault(err); got != c.input {
			t.Errorf("%s: the input at fault %q, want %q", c.name, got, c.input)
		}
	}
	// Shares that leave blocks out say how many, in blocks and rows.
	p, err := Make(Items{N: 180, Labels: labels, Blocks: blocks}, MakeConfig{K: 2, Split: [4]float64{0, 0, 0.34, 0.34}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "sum to 0.68: 2 of 6 blocks (60 rows) are in no split"; len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], want) {
		t.Errorf("warnings %q, want %q", p.Warnings, want)
	}
}

// TestInputsBlocks: Inputs.Items passes blocks with labels and refuses
// them with groups, without labels, of another length or missing.
func TestInputsBlocks(t *testing.T) {
	e := Embeddings{N: 4, D: 1, Rows: []float32{1, 2, 3, 4}, Source: "w.npy"}
	ok := Inputs{Embeddings: e, Labels: []int64{0, 0, 1, 1}, Blocks: []int64{0, 1, 0, 1}, BlocksSource: "w.csv:recording_id"}
	if it, err := ok.Items(); err != nil || !slices.Equal(it.Blocks, ok.Blocks) {
		t.Fatalf("Items: %v, %v", it.Blocks, err)
	}
	for _, c := range []struct {
		name string
		in   Inputs
		want string
	}{
		{"groups", Inputs{Embeddings: e, Groups: []int64{0, 0, 1, 1}, Blocks: []int64{0, 1, 0, 1}, BlocksSource: "b.txt"}, "b.txt: blocks split rows of one class label a row: give them with -labels alone"},
		{"several labels a row", Inputs{Embeddings: e, LabelSets: [][]int32{{0}, {0, 1}, {1}, {1}}, LabelsSource: "mh.npy", Blocks: []int64{0, 1, 0, 1}, BlocksSource: "b.txt"}, "b.txt: blocks split rows of one class a row, and mh.npy gives several labels a row"},
		{"length", Inputs{Embeddings: e, Labels: []int64{0, 0, 1, 1}, Blocks: []int64{0, 1, 0}, BlocksSource: "b.txt"}, "b.txt: 3 block ids for the 4 rows of w.npy"},
		{"missing", Inputs{Embeddings: e, Labels: []int64{0, 0, 1, 1}, Blocks: []int64{0, -1, 0, -1}, BlocksSource: "b.txt"}, "b.txt: 2 of 4 rows have a block id that marks a missing value"},
	} {
		if _, err := c.in.Items(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestWarnNeighbours: a time-ordered export of overlapping windows split
// at random is warned of, naming -blocks; split by block, or rows in no
// order (shuffled), or rows sorted by class alone, are not.
func TestWarnNeighbours(t *testing.T) {
	const d = 8
	rows, labels, blocks := recordings(3, 30, 60, d)
	warned := func(p *Plan) bool {
		return slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.HasPrefix(w, "neighbouring rows are near-copies") })
	}
	cfg := MakeConfig{K: 3, Split: testSplit, Seed: 1}
	p, err := Make(Items{N: len(labels), Labels: labels}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Inspect(rows, nil, d); !warned(p) {
		t.Errorf("windows split at random: no warning (%q)", p.Warnings)
	} else if w := p.Warnings[len(p.Warnings)-1]; !strings.Contains(w, "-blocks FILE") {
		t.Errorf("warning %q names no -blocks", w)
	}
	p, err = Make(Items{N: len(labels), Labels: labels, Blocks: blocks}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Inspect(rows, nil, d); warned(p) {
		t.Errorf("split by block: warned %q", p.Warnings)
	}
	// The same rows shuffled: neighbours are random rows.
	perm := rand.New(rand.NewPCG(4, 4)).Perm(len(labels))
	r2, l2 := make([]float32, len(rows)), make([]int64, len(labels))
	for i, q := range perm {
		copy(r2[i*d:(i+1)*d], rows[q*d:(q+1)*d])
		l2[i] = labels[q]
	}
	p, err = Make(Items{N: len(l2), Labels: l2}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Inspect(r2, nil, d); warned(p) {
		t.Errorf("shuffled rows: warned %q", p.Warnings)
	}
	// Independent rows sorted by class: neighbours share a class, no more.
	ind, il := labelled(5, d, 300, 300, 300)
	order := make([]int, len(il))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(il[a] - il[b]) })
	r3, l3 := make([]float32, len(ind)), make([]int64, len(il))
	for i, q := range order {
		copy(r3[i*d:(i+1)*d], ind[q*d:(q+1)*d])
		l3[i] = il[q]
	}
	p, err = Make(Items{N: len(l3), Labels: l3}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Inspect(r3, nil, d); warned(p) {
		t.Errorf("independent rows sorted by class: warned %q", p.Warnings)
	}
}

// inputAtFault is the Input of err's InputError; "" without one.
func inputAtFault(err error) string {
	if ie := (*InputError)(nil); errors.As(err, &ie) {
		return ie.Input
	}
	return ""
}

// TestSplitBlocksRecorded: each split's bundle — made in memory or written
// and read back — records its anchors' blocks (Bundle.Blocks, the file's
// "blocks"), so that resplits keep them together; a subset keeps them; a
// plan without blocks records none.
func TestSplitBlocksRecorded(t *testing.T) {
	const recs, per, d = 30, 40, 4
	rows, labels, blocks := recordings(2, recs, per, d)
	p, err := Make(Items{N: len(labels), Labels: labels, Blocks: blocks}, MakeConfig{K: 3, Split: testSplit, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for s, sp := range p.Splits {
		b, err := p.Bundle(s, rows, nil, d)
		if err != nil {
			t.Fatal(err)
		}
		arrays, err := p.Arrays(s, rows, nil, d)
		if err != nil {
			t.Fatal(err)
		}
		npz, err := EncodeNPZ(arrays, func(n int) []byte { return make([]byte, n) }) // as written
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := DecodeNPZ(npz)
		if err != nil {
			t.Fatal(err)
		}
		read, err := FromArrays(decoded)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []*Bundle{b, read} {
			if len(got.Blocks) != len(sp.Anchors) {
				t.Fatalf("%s: %d blocks for %d anchors", sp.Name, len(got.Blocks), len(sp.Anchors))
			}
			for a, r := range sp.Anchors {
				if got.Blocks[a] != blocks[r] {
					t.Fatalf("%s: anchor %d (row %d) in block %d, want %d", sp.Name, a, r, got.Blocks[a], blocks[r])
				}
			}
		}
		if sub := b.Subset([]int{2, 0}); !slices.Equal(sub.Blocks, []int64{b.Blocks[2], b.Blocks[0]}) {
			t.Errorf("%s: a subset's blocks %v", sp.Name, sub.Blocks)
		}
	}
	q, err := Make(Items{N: len(labels), Labels: labels}, MakeConfig{K: 3, Split: testSplit, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := q.Bundle(0, rows, nil, d); err != nil || b.Blocks != nil {
		t.Errorf("no blocks given: %v, %v", b.Blocks, err)
	}
	// A file's blocks of another length are refused, naming the array.
	b, err := p.Bundle(0, rows, nil, d)
	if err != nil {
		t.Fatal(err)
	}
	arrays := b.Arrays()
	arrays["blocks"] = Int64([]int64{1, 2}, 2)
	if _, err := FromArrays(arrays); err == nil || !strings.Contains(err.Error(), `"blocks"`) {
		t.Errorf("short blocks: %v", err)
	}
}
