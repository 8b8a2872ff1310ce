package bundle

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// labelled is n rows of dimension d in the given classes (sizes), seeded.
func labelled(seed uint64, d int, sizes ...int) ([]float32, []int64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var rows []float32
	var labels []int64
	for c, n := range sizes {
		for range n {
			labels = append(labels, int64(c*10)) // labels need not be 0..C−1
			for j := range d {
				rows = append(rows, float32(c)+float32(rng.NormFloat64())+float32(j)/10)
			}
		}
	}
	// Shuffle the rows so that classes interleave.
	perm := rng.Perm(len(labels))
	r2, l2 := make([]float32, len(rows)), make([]int64, len(labels))
	for i, p := range perm {
		copy(r2[i*d:(i+1)*d], rows[p*d:(p+1)*d])
		l2[i] = labels[p]
	}
	return r2, l2
}

var testSplit = [4]float64{0.5, 0.1, 0.2, 0.2}

// TestMakeLabels: the splits partition the items, each stratified by
// label; every anchor's positives are distinct items of its class in its
// own split, never itself, its negatives distinct items of other classes
// in its split; the OOD classes and the OOD calibration share are held
// out; the plan does not depend on the number of goroutines.
func TestMakeLabels(t *testing.T) {
	const d, k = 4, 5
	rows, labels := labelled(1, d, 300, 200, 120, 80)
	cfg := MakeConfig{K: k, KNeg: 7, Split: testSplit, Seed: 9, OODClasses: []int64{30}, OODCalShare: 0.1}
	p, err := Make(Items{N: len(labels), Labels: labels}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Splits) != 6 {
		t.Fatalf("%d splits, want fit, val, cal, test, ood-cal and ood", len(p.Splits))
	}
	seen := map[int]string{}
	for _, sp := range p.Splits {
		for _, r := range sp.Anchors {
			if s, dup := seen[r]; dup {
				t.Fatalf("row %d is in the %s and %s splits", r, s, sp.Name)
			}
			seen[r] = sp.Name
		}
	}
	if len(seen) != len(labels)-0 {
		t.Errorf("%d of %d rows in a split (the shares sum to 1)", len(seen), len(labels))
	}
	for _, r := range p.Splits[OOD].Anchors {
		if labels[r] != 30 {
			t.Fatalf("ood split holds label %d", labels[r])
		}
	}
	for s := range 4 {
		sp := p.Splits[s]
		n := len(sp.Anchors)
		for c, size := range map[int64]int{0: 300, 10: 200, 20: 120} {
			// Stratified: each class's share of the split is its share
			// of the in-distribution items (90% of them: OOD calibration).
			want := testSplit[s] * 0.9 * float64(size)
			if got := p.Classes[s][c]; float64(got) < want-2 || float64(got) > want+2 {
				t.Errorf("%s split: class %d has %d items, want about %.1f", sp.Name, c, got, want)
			}
			if p.Classes[s][30] != 0 {
				t.Errorf("%s split holds the OOD class", sp.Name)
			}
		}
		for a := range n {
			pos := sp.PositiveIndex[a*k : (a+1)*k]
			neg := sp.NegativeIndex[a*7 : (a+1)*7]
			if len(slices.Compact(slices.Sorted(slices.Values(pos)))) != k || len(slices.Compact(slices.Sorted(slices.Values(neg)))) != 7 {
				t.Fatalf("%s anchor %d: positives %v or negatives %v repeat", sp.Name, a, pos, neg)
			}
			for _, i := range pos {
				if i < 0 || int(i) >= n || int(i) == a || sp.Labels[i] != sp.Labels[a] || labels[sp.Anchors[i]] != sp.Labels[a] {
					t.Fatalf("%s anchor %d (class %d): positive %d", sp.Name, a, sp.Labels[a], i)
				}
			}
			for _, i := range neg {
				if i < 0 || int(i) >= n || sp.Labels[i] == sp.Labels[a] {
					t.Fatalf("%s anchor %d (class %d): negative %d of class %d", sp.Name, a, sp.Labels[a], i, sp.Labels[i])
				}
			}
		}
	}
	// The same plan on one goroutine.
	old := runtime.GOMAXPROCS(1)
	p1, err := Make(Items{N: len(labels), Labels: labels}, cfg)
	runtime.GOMAXPROCS(old)
	if err != nil {
		t.Fatal(err)
	}
	for s := range p.Splits {
		a, b := p.Splits[s], p1.Splits[s]
		if !slices.Equal(a.Anchors, b.Anchors) || !slices.Equal(a.PositiveIndex, b.PositiveIndex) || !slices.Equal(a.NegativeIndex, b.NegativeIndex) {
			t.Fatalf("%s split differs on one goroutine", a.Name)
		}
	}
	// Another seed, another plan.
	cfg.Seed = 10
	p2, _ := Make(Items{N: len(labels), Labels: labels}, cfg)
	if slices.Equal(p.Splits[Cal].Anchors, p2.Splits[Cal].Anchors) {
		t.Error("another seed drew the same calibration split")
	}
	// The bundles: in memory and through files, the same.
	dir := t.TempDir()
	paths, err := p.Write(dir, rows, nil, d)
	if err != nil || len(paths) != 6 {
		t.Fatalf("Write: %v, %v", paths, err)
	}
	for s, sp := range p.Splits {
		mem, err := p.Bundle(s, rows, nil, d)
		if err != nil {
			t.Fatalf("%s: %v", sp.Name, err)
		}
		read := Read
		if sp.K == 0 {
			read = ReadFeatures
		}
		file, err := read(filepath.Join(dir, sp.Name+".npz"))
		if err != nil {
			t.Fatalf("%s: %v", sp.Name, err)
		}
		if !slices.Equal(mem.Anchors, file.Anchors) || !slices.Equal(mem.PositiveIndex, file.PositiveIndex) ||
			!slices.Equal(mem.NegativeIndex, file.NegativeIndex) || !slices.Equal(mem.Labels, file.Labels) || !slices.Equal(mem.Index, file.Index) {
			t.Fatalf("%s: the file differs from the bundle in memory", sp.Name)
		}
		for i, r := range sp.Anchors {
			if !slices.Equal(file.Anchor(i), rows[r*d:(r+1)*d]) || file.Index[i] != int64(r) {
				t.Fatalf("%s: anchor %d is not row %d", sp.Name, i, r)
			}
		}
	}
}

// TestMakeGroupsAndViews: groups are split whole; a group's first row is
// its anchor and its other rows the positives (through the pool); the
// negatives are other groups' anchors.
func TestMakeGroups(t *testing.T) {
	const d, v, items = 3, 4, 200
	rng := rand.New(rand.NewPCG(2, 2))
	groups := make([]int64, items*v)
	rows := make([]float32, items*v*d)
	for i := range groups {
		groups[i] = int64(1000 + i/v)
		for j := range d {
			rows[i*d+j] = float32(i/v) + 0.1*float32(rng.NormFloat64())
		}
	}
	p, err := Make(Items{N: len(groups), Groups: groups}, MakeConfig{K: v - 1, KNeg: 5, Split: testSplit, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	for s := range 4 {
		sp := p.Splits[s]
		b, err := p.Bundle(s, rows, nil, d)
		if err != nil {
			t.Fatal(err)
		}
		for a, r := range sp.Anchors {
			g := groups[r]
			if s0, dup := seen[g]; dup {
				t.Fatalf("group %d in the %s and %s splits", g, s0, sp.Name)
			}
			seen[g] = sp.Name
			for j := range v - 1 {
				pr := sp.PositivePool[sp.PositiveIndex[a*(v-1)+j]]
				if groups[pr] != g || pr == r {
					t.Fatalf("%s anchor %d: positive row %d of group %d", sp.Name, a, pr, groups[pr])
				}
				if !slices.Equal(b.Positive(a, j), rows[pr*d:(pr+1)*d]) {
					t.Fatalf("%s anchor %d: the bundle's positive %d is not row %d", sp.Name, a, j, pr)
				}
			}
			for _, i := range sp.NegativeIndex[a*5 : (a+1)*5] {
				if groups[sp.Anchors[i]] == g {
					t.Fatalf("%s anchor %d: a negative of its own group", sp.Name, a)
				}
			}
		}
	}
}

// TestMakePairs: queries are split; positives are relevant rows,
// negatives rows relevant to none of the query's; the pool holds the rows
// drawn.
func TestMakePairs(t *testing.T) {
	const d, nq, nr = 3, 120, 500
	rows := make([]float32, nr*d)
	for i := range rows {
		rows[i] = float32(i % 17)
	}
	queries := make([]float32, nq*d)
	var pairs [][2]int
	for q := range nq {
		for j := range 3 {
			pairs = append(pairs, [2]int{q, (q*7 + j*101) % nr})
		}
	}
	p, err := Make(Items{N: nr, Queries: nq, Pairs: pairs}, MakeConfig{K: 2, KNeg: 10, Split: testSplit, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings %q, want none", p.Warnings)
	}
	// A query without a relevant row is named; a pair given twice is
	// counted.
	some := append(slices.Clone(pairs[3:]), pairs[5], pairs[7])
	w, err := Make(Items{N: nr, Queries: nq, Pairs: some, QueryIDs: slices.Repeat([]string{"x"}, nq)}, MakeConfig{K: 2, KNeg: 10, Split: testSplit, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`1 of 120 queries have no relevant row: left out (the first: query "x" (row 0 of the queries))`, "2 pairs given more than once: counted once"}; !slices.Equal(w.Warnings, want) {
		t.Errorf("warnings %q, want %q", w.Warnings, want)
	}
	relevant := func(q, r int) bool { return slices.Contains(pairs, [2]int{q, r}) }
	for s := range 4 {
		sp := p.Splits[s]
		b, err := p.Bundle(s, rows, queries, d)
		if err != nil {
			t.Fatal(err)
		}
		for a, q := range sp.Anchors {
			for j := range 2 {
				r := sp.PositivePool[sp.PositiveIndex[a*2+j]]
				if !relevant(q, r) || !slices.Equal(b.Positive(a, j), rows[r*d:(r+1)*d]) {
					t.Fatalf("query %d: positive row %d", q, r)
				}
			}
			for _, i := range sp.NegativeIndex[a*10 : (a+1)*10] {
				if r := sp.NegativePool[i]; relevant(q, r) {
					t.Fatalf("query %d: negative row %d is relevant", q, r)
				}
			}
		}
	}
	// Too few relevant rows: the query is named by its id when it has one
	// (the id of row q is "q<nq−1−q>", so that ids and rows differ).
	ids := make([]string, nq)
	for q := range ids {
		ids[q] = fmt.Sprintf("q%d", nq-1-q)
	}
	for _, c := range []struct {
		ids  []string
		want *regexp.Regexp
	}{
		{nil, regexp.MustCompile(`^bundle: query (\d+) has 3 relevant rows, too few for k = 4`)},
		{ids, regexp.MustCompile(`^bundle: query "q(\d+)" \(row (\d+) of the queries\) has 3 relevant rows, too few for k = 4`)},
	} {
		_, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, QueryIDs: c.ids}, MakeConfig{K: 4, Split: testSplit, Seed: 4})
		m := c.want.FindStringSubmatch(fmt.Sprint(err))
		if m == nil {
			t.Errorf("ids %v: %v, want %v", c.ids != nil, err, c.want)
		} else if len(m) == 3 && m[1] != fmt.Sprint(nq-1-atoi(t, m[2])) {
			t.Errorf("%v: the id is not row %s's", err, m[2])
		}
	}
}

func atoi(t *testing.T, s string) int {
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// identities are n labels of classes of 2 to 10 items, every tenth of
// 20 (which splits without a lone item; the last class cut short).
func identities(n int) []int64 {
	var l []int64
	for c := int64(0); len(l) < n; c++ {
		m := 2 + int(c)%10
		if c%10 == 9 {
			m = 20
		}
		for range m {
			l = append(l, c)
		}
	}
	return l[:n]
}

// TestMakeErrors: bad items and configurations are clear errors.
func TestMakeErrors(t *testing.T) {
	_, labels := labelled(1, 2, 100, 100)
	// The class size the refusal advises keeping splits cleanly, with and
	// without an OOD calibration share set aside first.
	for _, share := range []float64{0, 0.1, 0.25} {
		from := cleanFrom(testSplit[:], share)
		for m := from; m < from+40; m++ {
			small := append(slices.Clone(labels), slices.Repeat([]int64{99}, m)...)
			if _, err := Make(Items{N: len(small), Labels: small}, MakeConfig{K: 1, Split: testSplit, OODCalShare: share}); err != nil {
				t.Errorf("share %v: a class of %d items (from %d): %v", share, m, from, err)
			}
		}
	}
	one := append(slices.Clone(labels), 99)
	spelled := make([]string, 100) // label i's name, as a string labels' bundle numbers them
	for i := range spelled {
		spelled[i] = fmt.Sprintf("c%d", i)
	}
	spelled[0], spelled[10], spelled[99] = "sports", "news", "Sports"
	for _, c := range []struct {
		name  string
		items Items
		cfg   MakeConfig
		want  string
	}{
		{"labels of another length", Items{N: 150, Labels: labels}, MakeConfig{K: 3, Split: testSplit}, "200 labels for 150 rows"},
		{"a class with one member", Items{N: 201, Labels: one}, MakeConfig{K: 3, Split: testSplit}, "1 of 3 classes would have exactly 1 item in a split, with no other of its class there to be its positive (class 99, 1 item, would have 1 in the fit split)"},
		{"a class with one member, -allow-fewer", Items{N: 201, Labels: one}, MakeConfig{K: 3, Split: testSplit, AllowFewer: true}, "a class splits without a lone item from 16 items (-allow-fewer does not help: it repeats an anchor's few positives, and a lone item has none). "},
		{"identities as labels", Items{N: 300, Labels: identities(300)}, MakeConfig{K: 1, Split: testSplit}, "38 of 42 classes would have exactly 1 item in a split, with no other of its class there to be its positive (class 0, 2 items, would have 1 in the fit split): a class's items are split by the shares [0.5 0.1 0.2 0.2], and a class splits without a lone item from 16 items. Many small classes — people's identities, products, a few photos each — are groups, not labels: give them as groups (-groups FILE; groups= in Python)"},
		{"a small class, its OOD calibration share set aside", Items{N: 216, Labels: append(slices.Clone(labels), slices.Repeat([]int64{99}, 16)...)}, MakeConfig{K: 3, Split: testSplit, OODCalShare: 0.1},
			"(class 99, 14 items once -ood-cal-share 0.1 set its share aside, would have 1 in the val split): a class's items are split by the shares [0.5 0.1 0.2 0.2], and a class splits without a lone item from 16 items, 18 before -ood-cal-share 0.1 takes its share. Leave the small classes out (ids, counts = np.unique(labels, return_counts=True); keep = np.isin(labels, ids[counts >= 18])), or hold them out as OOD inputs"},
		{"a label split by its spelling", Items{N: 201, Labels: one}, MakeConfig{K: 3, Split: testSplit, LabelNames: spelled},
			`bundle: perhaps the cause — labels: names differ only by case or by spaces around them ("sports" and "Sports"): each is a label of its own`},
		{"k larger than every class", Items{N: 200, Labels: labels}, MakeConfig{K: 60, Split: testSplit}, "too few for k = 60 positives per anchor (another of its class); 2 classes are short of it there, the smallest class "},
		{"k the fit split allows and val not", Items{N: 200, Labels: labels}, MakeConfig{K: 30, Split: testSplit}, "(k = 9 keeps them all, in every split): lower k"},
		// Names alike but for case or spaces: the likelier cause, before
		// the lower k that would hide it.
		{"k too large for a label split by its spelling", Items{N: 200, Labels: labels}, MakeConfig{K: 30, Split: testSplit, LabelNames: spelled},
			`(k = 9 keeps them all, in every split): perhaps the cause — labels: names differ only by case or by spaces around them ("sports" and "Sports"): each is a label of its own, its rows apart from the other's; if they mean one label, write them alike first (labels.str.strip().str.lower() in pandas, np.char.lower(np.char.strip(labels)) in NumPy); otherwise lower k`},
		{"labels as fine as groups", Items{N: 300, Groups: identities(300), Labels: identities(300)}, MakeConfig{K: 1, Split: testSplit}, "bundle: the val split is empty: the 42 groups are split label by label, and no label has enough of them for its share 0.1 (the most a label has: 1). Labels here are classes of whole groups"},
		{"few groups", Items{N: 8, Groups: []int64{0, 0, 1, 1, 2, 2, 3, 3}}, MakeConfig{K: 1, Split: testSplit}, "bundle: the val split is empty: 4 groups are too few for its share 0.1"},
		{"pairs counted from 1", Items{N: 5, Queries: 3, Pairs: [][2]int{{1, 1}, {2, 5}, {3, 2}}}, MakeConfig{K: 1, Split: testSplit}, "bundle: pair 1 names row 5, there are 5 rows of embeddings (2 of the 3 pairs name a query or row out of range; queries 1 … 3, rows 1 … 5: ids counted from 1? Rows are numbered from 0: give pairs − 1)"},
		{"queries and rows swapped", Items{N: 10, Queries: 3, Pairs: [][2]int{{0, 1}, {9, 2}, {5, 0}}}, MakeConfig{K: 1, Split: testSplit}, "bundle: pair 1 names query 9, there are 3 queries (2 of the 3 pairs name a query or row out of range; queries 0 … 9, rows 0 … 2: they fit the other way round — are -queries and -embeddings swapped, or the pairs' columns (query first, then row)?)"},
		{"shares over 1", Items{N: 200, Labels: labels}, MakeConfig{K: 3, Split: [4]float64{0.5, 0.3, 0.2, 0.2}}, "sum to 1.2, more than 1"},
		{"absent OOD class", Items{N: 200, Labels: labels}, MakeConfig{K: 3, Split: testSplit, OODClasses: []int64{7}}, "OOD class 7 is not among the labels (0, 10)"},
		{"every class OOD", Items{N: 200, Labels: labels}, MakeConfig{K: 3, Split: testSplit, OODClasses: []int64{0, 10}}, "nothing is left"},
		{"every class OOD but one", Items{N: 200, Labels: labels}, MakeConfig{K: 3, Split: testSplit, OODClasses: []int64{10}}, "items outside class 0, too few for 3 negatives per anchor (-kneg, which is -k unless given; kneg= in Python); -ood-classes held out 1 class, leaving this one alone: hold out fewer"},
		{"nothing positive", Items{N: 200}, MakeConfig{K: 3, Split: testSplit}, "give labels, groups or relevance pairs"},
		{"every share 0 but one negative", Items{N: 200, Labels: labels}, MakeConfig{K: 3, Split: [4]float64{0, 0, 0, -1}}, "split share -1 of test: want 0 to 1"},
		{"a share too small for a group", Items{N: 8, Groups: []int64{0, 0, 1, 1, 2, 2, 3, 3}}, MakeConfig{K: 1, Split: [4]float64{0, 0, 0.1, 0.9}}, "bundle: the cal split is empty: 4 groups are too few for its share 0.1"},
	} {
		if _, err := Make(c.items, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Allowing fewer positives: a class of 4 items per split repeats its 3.
	_, small := labelled(2, 2, 400, 40)
	p, err := Make(Items{N: 440, Labels: small}, MakeConfig{K: 10, KNeg: 3, Split: testSplit, AllowFewer: true})
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Splits[Val] // 4 items of class 10
	for a := range sp.Anchors {
		if sp.Labels[a] != 10 {
			continue
		}
		pos := sp.PositiveIndex[a*10 : (a+1)*10]
		if d := slices.Compact(slices.Sorted(slices.Values(pos))); len(d) != 3 || slices.Contains(pos, int64(a)) {
			t.Errorf("a class of 4: positives %v, want its 3 others repeated", pos)
		}
	}
}

// TestMakeMissingLabels: a negative label is refused by default, naming
// the counts; dropped, its rows are left out and the plan is the one of
// the input without them (its rows renumbered), with a warning; as a class,
// it is one. In groups mode a group labelled negative is dropped whole.
func TestMakeMissingLabels(t *testing.T) {
	_, labels := labelled(3, 2, 150, 150, 150)
	rng := rand.New(rand.NewPCG(4, 4))
	var all []int64 // the labelled rows with 60 rows of -1 and 20 of -2 among them
	var kept []int  // all's rows that are labelled
	for _, l := range labels {
		for rng.IntN(4) == 0 {
			all = append(all, -1-int64(rng.IntN(4)/3))
		}
		kept = append(kept, len(all))
		all = append(all, l)
	}
	counts := map[int64]int{}
	for _, l := range all {
		counts[l]++
	}
	cfg := MakeConfig{K: 3, KNeg: 4, Split: testSplit, Seed: 5, OODClasses: []int64{10}, OODCalShare: 0.1}
	want := fmt.Sprintf("%d of %d rows have a label that marks a missing value (-2: %d, -1: %d)", counts[-1]+counts[-2], len(all), counts[-2], counts[-1])
	if _, err := Make(Items{N: len(all), Labels: all}, cfg); err == nil || !strings.Contains(err.Error(), want+": Hugging Face datasets and scikit-learn label a row") {
		t.Fatalf("negative labels by default: %v, want %q", err, want)
	}
	ref, err := Make(Items{N: len(labels), Labels: labels}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	drop := cfg
	drop.MissingLabels = MissingDropped
	p, err := Make(Items{N: len(all), Labels: all}, drop)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Warnings, []string{want + ", taken for no label: left out of every split"}) {
		t.Errorf("warnings %q", p.Warnings)
	}
	if len(p.Splits) != len(ref.Splits) {
		t.Fatalf("%d splits, want %d", len(p.Splits), len(ref.Splits))
	}
	for s, sp := range p.Splits {
		r := ref.Splits[s]
		renumbered := make([]int, len(r.Anchors))
		for i, a := range r.Anchors {
			renumbered[i] = kept[a]
		}
		if !slices.Equal(sp.Anchors, renumbered) || !slices.Equal(sp.Labels, r.Labels) ||
			!slices.Equal(sp.PositiveIndex, r.PositiveIndex) || !slices.Equal(sp.NegativeIndex, r.NegativeIndex) {
			t.Errorf("%s: the plan with negative labels dropped is not the plan without those rows", sp.Name)
		}
	}
	class := cfg
	class.MissingLabels, class.AllowFewer = MissingClass, true
	if p, err = Make(Items{N: len(all), Labels: all}, class); err != nil {
		t.Fatal(err)
	}
	if p.Classes[Fit][-1] == 0 || p.Classes[Fit][-2] == 0 || slices.ContainsFunc(p.Warnings, func(w string) bool { return !strings.HasPrefix(w, "allow fewer: ") }) {
		t.Errorf("negative labels as classes: fit split's classes %v, warnings %q", p.Classes[Fit], p.Warnings)
	}

	// Groups of two rows, every fourth group labelled -1.
	var groups, glabels []int64
	for g := range 200 {
		l := int64(g % 3)
		if g%4 == 0 {
			l = -1
		}
		groups = append(groups, int64(g), int64(g))
		glabels = append(glabels, l, l)
	}
	gcfg := MakeConfig{K: 1, KNeg: 2, Split: testSplit, Seed: 1}
	if _, err := Make(Items{N: 400, Groups: groups, Labels: glabels}, gcfg); err == nil || !strings.Contains(err.Error(), "100 of 400 rows have a label that marks a missing value (-1: 100)") {
		t.Errorf("groups labelled negative: %v", err)
	}
	gcfg.MissingLabels = MissingDropped
	if p, err = Make(Items{N: 400, Groups: groups, Labels: glabels}, gcfg); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sp := range p.Splits {
		for _, a := range sp.Anchors {
			if glabels[a] < 0 {
				t.Errorf("%s: an anchor of a group labelled -1", sp.Name)
			}
		}
		n += len(sp.Anchors)
	}
	if n != 150 {
		t.Errorf("%d groups in the splits, want the 150 labelled", n)
	}

	for _, c := range []struct {
		in   string
		want MissingLabels
	}{{"", MissingRefused}, {"error", MissingRefused}, {"drop", MissingDropped}, {"class", MissingClass}} {
		if got, err := ParseMissingLabels(c.in); err != nil || got != c.want || (c.in != "" && got.String() != c.in) {
			t.Errorf("ParseMissingLabels(%q) = %v, %v", c.in, got, err)
		}
	}
	if _, err := ParseMissingLabels("skip"); err == nil || err.Error() != `"skip": want error, drop or class` {
		t.Errorf("ParseMissingLabels(skip): %v", err)
	}
}

// TestMissingStrings: the string labels that mark a missing value ("",
// "nan" in any case) get the labels −1, −2, … and leave the names, which
// are numbered anew in their order; Make then names them in its error.
func TestMissingStrings(t *testing.T) {
	codes, names := LabelCodes([]string{"b", "nan", "a", "", "b", "NaN"})
	got, kept, missing := MissingStrings(codes, names)
	if !slices.Equal(kept, []string{"a", "b"}) || !slices.Equal(got, []int64{1, -3, 0, -1, 1, -2}) ||
		len(missing) != 3 || missing[-1] != "" || missing[-2] != "NaN" || missing[-3] != "nan" {
		t.Errorf("MissingStrings: codes %v, names %q, missing %v", got, kept, missing)
	}
	// Python's package passes a pandas null as NullMark: missing, named
	// null; with MissingClass, NamedNull makes it the class "null" in its
	// sorted place, "(null)" beside a label "null".
	codes, names = LabelCodes([]string{"b", NullMark, "a", "null", NullMark, "z"})
	if c, n, m := MissingStrings(codes, names); !slices.Equal(n, []string{"a", "b", "null", "z"}) || !slices.Equal(c, []int64{1, -1, 0, 2, -1, 3}) || m[-1] != NullMark || markName(m[-1]) != "null" {
		t.Errorf("null mark: codes %v, names %q, missing %v", c, n, m)
	}
	if c, n := NamedNull(codes, names); !slices.Equal(n, []string{"(null)", "a", "b", "null", "z"}) || !slices.Equal(c, []int64{2, 0, 1, 3, 0, 4}) {
		t.Errorf("NamedNull beside null: codes %v, names %q", c, n)
	}
	codes, names = LabelCodes([]string{"b", NullMark, "a", "z", "-1"})
	if c, n := NamedNull(append(codes, -1), names); !slices.Equal(n, []string{"-1", "a", "b", "null", "z"}) || !slices.Equal(c, []int64{2, 3, 1, 4, 0, -1}) {
		t.Errorf("NamedNull: codes %v, names %q", c, n)
	}
	// The empty string sorts before the mark: the mark is then second.
	codes, names = LabelCodes([]string{"b", NullMark, "", "null", NullMark, "a"})
	if c, n := NamedNull(codes, names); !slices.Equal(n, []string{"", "(null)", "a", "b", "null"}) || !slices.Equal(c, []int64{3, 1, 0, 4, 1, 2}) {
		t.Errorf("NamedNull after \"\": codes %v, names %q", c, n)
	}
	if c, n := NamedNull([]int64{1, 0}, []string{"a", "b"}); !slices.Equal(c, []int64{1, 0}) || !slices.Equal(n, []string{"a", "b"}) {
		t.Errorf("NamedNull without the mark: %v %q", c, n)
	}
	// Python's None after astype(str); "none" may be a class, and is one.
	if c, n, m := MissingStrings(LabelCodes([]string{"b", "None", "none"})); !slices.Equal(n, []string{"b", "none"}) || m[-1] != "None" || !slices.Equal(c, []int64{0, -1, 1}) {
		t.Errorf("None: codes %v, names %q, missing %v", c, n, m)
	}
	// The marks annotation tools and exports leave where a row has no
	// label: "Unknown" (a cell type no one assigned), R's NA, pandas'
	// pd.NA after astype(str); look-alikes stay classes.
	for _, c := range []struct {
		label   string
		missing bool
	}{
		{"Unknown", true}, {"unknown", true}, {"UNKNOWN", true}, {"Unassigned", true}, {"unannotated", true},
		{"Unlabeled", true}, {"unlabelled", true}, {"NA", true}, {"N/A", true}, {"<NA>", true},
		{"Na", false}, {"na", false}, {"Unknown T", false}, {"unknown-2", false}, {"NAN-1", false},
		// Blanks alone are no label; around a mark, the mark.
		{" ", true}, {"\t ", true}, {" nan ", true}, {"Unknown\n", true}, {" cat ", false},
	} {
		if got := MissingString(c.label); got != c.missing {
			t.Errorf("MissingString(%q) = %v, want %v", c.label, got, c.missing)
		}
	}
	plain, plainNames := LabelCodes([]string{"b", "a", "nano"})
	if c, n, m := MissingStrings(plain, plainNames); !slices.Equal(c, plain) || !slices.Equal(n, plainNames) || m != nil {
		t.Errorf("no missing value: %v %q %v", c, n, m)
	}
	var labels []string
	for i := range 300 {
		labels = append(labels, []string{"a", "b", "c"}[i%3])
	}
	labels[7], labels[8], labels[100] = "nan", "", "nan"
	codes, names = LabelCodes(labels)
	codes, names, missing = MissingStrings(codes, names)
	cfg := MakeConfig{K: 3, Split: testSplit, LabelNames: names, MissingNames: missing}
	if _, err := Make(Items{N: len(codes), Labels: codes}, cfg); err == nil || !strings.Contains(err.Error(), `3 of 300 rows have a label that marks a missing value ("nan": 2, "": 1)`) {
		t.Errorf("string labels that mark a missing value: %v", err)
	}
}

// TestInsertClass: a missing value's rows made a class of their own get
// a name no other class has, in its sorted place or last, the codes at
// or after it one more and other negative codes kept; FreeName
// parenthesizes a name while one of names is it.
func TestInsertClass(t *testing.T) {
	for _, c := range []struct {
		name      string
		codes     []int64
		names     []string
		from      int64
		class     string
		last      bool
		wantCodes []int64
		wantNames []string
	}{
		{"sorted", []int64{0, -1, 1, -2, 2}, []string{"a", "m", "z"}, -1, "null", false, []int64{0, 2, 1, -2, 3}, []string{"a", "m", "null", "z"}},
		{"first", []int64{0, -3, 1}, []string{"x", "y"}, -3, "-1", false, []int64{1, 0, 2}, []string{"-1", "x", "y"}},
		{"last", []int64{1, -1, 0}, []string{"b", "a"}, -1, "null", true, []int64{1, 2, 0}, []string{"b", "a", "null"}},
		{"beside its name", []int64{-1, 0, 1}, []string{"(null)", "null"}, -1, "null", false, []int64{0, 1, 2}, []string{"((null))", "(null)", "null"}},
		{"no such rows", []int64{0, 1}, []string{"a", "b"}, -1, "null", false, []int64{0, 1}, []string{"a", "b", "null"}},
	} {
		codes, names := slices.Clone(c.codes), slices.Clone(c.names)
		gotCodes, gotNames := InsertClass(codes, names, c.from, c.class, c.last)
		if !slices.Equal(gotCodes, c.wantCodes) || !slices.Equal(gotNames, c.wantNames) {
			t.Errorf("%s: codes %v, names %q; want %v, %q", c.name, gotCodes, gotNames, c.wantCodes, c.wantNames)
		}
		if !slices.Equal(codes, c.codes) || !slices.Equal(names, c.names) {
			t.Errorf("%s: the arguments changed: %v, %q", c.name, codes, names)
		}
	}
	for _, c := range []struct {
		names      []string
		name, want string
	}{
		{nil, "null", "null"},
		{[]string{"a", "null"}, "null", "(null)"},
		{[]string{"-1", "(-1)"}, "-1", "((-1))"},
		{[]string{"(-1)"}, "-1", "-1"},
	} {
		if got := FreeName(c.names, c.name); got != c.want {
			t.Errorf("FreeName(%q, %q) = %q, want %q", c.names, c.name, got, c.want)
		}
	}
}

// TestWarnCopies: exact copies of a row in another split are warned of,
// counted, with the first pair named; copies kept in one split (a group's
// rows, identical views) and rows that differ in one bit are not.
func TestWarnCopies(t *testing.T) {
	const d, k = 4, 3
	rows, labels := labelled(5, d, 100, 100)
	copyRow := func(dst, src int) { copy(rows[dst*d:(dst+1)*d], rows[src*d:(src+1)*d]) }
	for i := range 5 {
		copyRow(150+i, i) // five copies, across splits or not
	}
	rows[199*d] = math.Float32frombits(math.Float32bits(rows[0]) ^ 1) // one bit off row 0: no copy
	copy(rows[199*d+1:200*d], rows[1:d])
	cfg := MakeConfig{K: k, Split: testSplit, Seed: 4}
	p, err := Make(Items{N: len(labels), Labels: labels}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	where := map[int]string{}
	for _, sp := range p.Splits {
		for _, r := range sp.Anchors {
			where[r] = sp.Name
		}
	}
	across := 0
	for i := range 5 {
		if where[i] != where[150+i] {
			across++
		}
	}
	if across == 0 {
		t.Fatal("seed 4 put every copy in its row's split: the test compares nothing")
	}
	p.warnCopies(rows, nil, d)
	want := fmt.Sprintf("5 rows are exact copies of an earlier row, and %d of them lie in another split", across)
	if len(p.Warnings) != 1 || !strings.HasPrefix(p.Warnings[0], want) {
		t.Errorf("warnings %q, want one beginning %q", p.Warnings, want)
	}

	// A group's identical rows stay in its split: nothing to say.
	groups := make([]int64, 200)
	grows := make([]float32, 200*d)
	for i := range groups {
		groups[i] = int64(i / 4)
		for j := range d {
			grows[i*d+j] = float32(i / 4) // each group's four rows the same
		}
	}
	g, err := Make(Items{N: len(groups), Groups: groups}, MakeConfig{K: 3, KNeg: 2, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	g.warnCopies(grows, nil, d)
	want = "150 rows are exact copies of an earlier row of their split (the first: rows 0 and 1, in "
	if len(g.Warnings) != 1 || !strings.HasPrefix(g.Warnings[0], want) || !strings.Contains(g.Warnings[0], "a copy of an anchor is its positive at distance 0") {
		t.Errorf("copies within groups: warnings %q, want one beginning %q", g.Warnings, want)
	}
	// One copy (a path listed twice in a speaker corpus's export).
	for i := range grows {
		grows[i] = float32(i)
	}
	copy(grows[9*d:10*d], grows[8*d:9*d])
	g.Warnings = nil
	g.warnCopies(grows, nil, d)
	want = "row 9 is an exact copy of row 8, in the same split ("
	if len(g.Warnings) != 1 || !strings.HasPrefix(g.Warnings[0], want) {
		t.Errorf("one copy within a group: warnings %q, want one beginning %q", g.Warnings, want)
	}
	// With sessions, a copy is a positive only across sessions: said so.
	sessions := make([]int64, len(groups))
	for i := range sessions {
		sessions[i] = int64(i % 2)
	}
	gs, err := Make(Items{N: len(groups), Groups: groups, Sessions: sessions}, MakeConfig{K: 1, KNeg: 2, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	gs.Warnings = nil
	gs.warnCopies(grows, nil, d)
	if len(gs.Warnings) != 1 || !strings.Contains(gs.Warnings[0], "a copy of an anchor in another session of its group is its positive at distance 0") || strings.Contains(gs.Warnings[0], "a copy of an anchor is its positive") {
		t.Errorf("one copy within a group, with sessions: warnings %q", gs.Warnings)
	}
	// An item's views alike (an augmentation that changed nothing) are
	// left alone.
	v, err := Make(Items{N: len(groups), Groups: groups, ViewItems: true}, MakeConfig{K: 3, KNeg: 2, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	v.warnCopies(grows, nil, d)
	if len(v.Warnings) != 0 {
		t.Errorf("copies within views: warnings %q", v.Warnings)
	}

	// Relevance pairs: the collection's rows are every split's, so its
	// copies (here every row is one of 17) say nothing; a query asked
	// twice, in two splits, does.
	const nq, nr = 120, 500
	crows := make([]float32, nr*d)
	for i := range crows {
		crows[i] = float32(i % 17)
	}
	queries := make([]float32, nq*d)
	for i := range queries {
		queries[i] = float32(i) // every query its own
	}
	var pairs [][2]int
	for q := range nq {
		for j := range 3 {
			pairs = append(pairs, [2]int{q, (q*7 + j*101) % nr})
		}
	}
	q, err := Make(Items{N: nr, Queries: nq, Pairs: pairs}, MakeConfig{K: 2, KNeg: 10, Split: testSplit, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	q.warnCopies(crows, queries, d)
	if len(q.Warnings) != 0 {
		t.Errorf("distinct queries: warnings %q", q.Warnings)
	}
	qsplit := map[int]string{}
	for _, sp := range q.Splits {
		for _, r := range sp.Anchors {
			qsplit[r] = sp.Name
		}
	}
	other := -1
	for r := 1; r < nq; r++ {
		if qsplit[r] != qsplit[0] {
			other = r
			break
		}
	}
	copy(queries[other*d:(other+1)*d], queries[:d])
	q.warnCopies(crows, queries, d)
	want = fmt.Sprintf("query row %d is an exact copy of query row 0, in another split (%s and %s), so one point", other, qsplit[other], qsplit[0])
	if len(q.Warnings) != 1 || !strings.HasPrefix(q.Warnings[0], want) || !strings.Contains(q.Warnings[0], "relevance pairs to one query") {
		t.Errorf("a query in two splits: warnings %q, want one beginning %q", q.Warnings, want)
	}
}

// TestUnsplitWarning: split shares that sum below 1 leave items out of
// every split, which each kind of item is warned of, counted; shares that
// sum to 1 leave none and say nothing.
func TestUnsplitWarning(t *testing.T) {
	const n = 400
	labels := make([]int64, n)
	groups := make([]int64, n)
	for i := range labels {
		labels[i], groups[i] = int64(i%4), int64(i/2)
	}
	var pairs [][2]int
	for q := range 100 {
		pairs = append(pairs, [2]int{q, q}, [2]int{q, q + 100})
	}
	sample := [4]float64{0.4, 0.1, 0.2, 0.2} // 90%
	for _, c := range []struct {
		name  string
		items Items
		want  string
	}{
		{"labels", Items{N: n, Labels: labels}, "sum to 0.9: 40 of 400 rows are in no split"},
		{"groups", Items{N: n, Groups: groups}, "sum to 0.9: 20 of 200 items are in no split"},
		{"pairs", Items{N: n, Queries: 100, Pairs: pairs}, "sum to 0.9: 10 of 100 queries with a relevant row are in no split"},
	} {
		for _, split := range [][4]float64{sample, testSplit} {
			p, err := Make(c.items, MakeConfig{K: 1, Split: split, Seed: 1})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			said := slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, c.want) })
			if said != (split == sample) {
				t.Errorf("%s, shares %v: warnings %q, want one saying %q: %v", c.name, split, p.Warnings, c.want, split == sample)
			}
			if split == testSplit && slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "in no split") }) {
				t.Errorf("%s: shares summing to 1 warned: %q", c.name, p.Warnings)
			}
		}
	}
}

// TestWarnRepeats: with AllowFewer, the anchors that repeat a positive
// (their class had fewer than k others in the split) are counted split by
// split; without repeats, or without AllowFewer, nothing is said.
func TestWarnRepeats(t *testing.T) {
	labels := make([]int64, 400)
	for i := range labels {
		labels[i] = int64(i % 4)
	}
	for i := 0; i < 40; i++ {
		labels[i*10] = 9 // a class of 40 rows: 1 to 20 per split
	}
	for _, c := range []struct {
		k    int
		want bool
	}{{2, false}, {15, true}, {8, true}} {
		p, err := Make(Items{N: len(labels), Labels: labels}, MakeConfig{K: c.k, Split: testSplit, Seed: 3, AllowFewer: true})
		if err != nil {
			t.Fatal(err)
		}
		total, anchors := 0, 0
		var parts []string
		for _, sp := range p.Splits {
			n := 0
			for a := range sp.Anchors {
				if m := p.Classes[slices.Index(SplitNames[:], sp.Name)][sp.Labels[a]]; m-1 < c.k {
					n++
				}
			}
			anchors += len(sp.Anchors)
			if n > 0 {
				total += n
				parts = append(parts, fmt.Sprintf("%s %d", sp.Name, n))
			}
		}
		said := slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.HasPrefix(w, "allow fewer: ") })
		want := fmt.Sprintf("allow fewer: %d of %d anchors had fewer than k = %d distinct positives and repeat some (%s)", total, anchors, c.k, strings.Join(parts, ", "))
		if said != c.want || c.want && !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
			t.Errorf("k = %d: warnings %q, want one beginning %q: %v", c.k, p.Warnings, want, c.want)
		}
		if !c.want {
			continue
		}
		// The k it advises: the 10th percentile (nearest rank) of each
		// anchor's distinct positives, min(k, its class's others in the
		// split), and their least — followed, no anchor repeats.
		var distinct []int
		for s, sp := range p.Splits[:4] {
			for a := range sp.Anchors {
				distinct = append(distinct, min(c.k, p.Classes[s][sp.Labels[a]]-1))
			}
		}
		slices.Sort(distinct)
		k90, kAll := distinct[int(math.Ceil(0.1*float64(len(distinct))))-1], distinct[0]
		advice := fmt.Sprintf("-k %d draws distinct ones for nine anchors in ten, -k %d for every anchor (k= in Python)", k90, kAll)
		switch {
		case k90 == kAll:
			advice = fmt.Sprintf("-k %d draws distinct ones for every anchor (k=%d in Python)", kAll, kAll)
		case k90 >= c.k:
			advice = fmt.Sprintf("the other %d (%.3g%%) draw k distinct ones already; -k %d draws distinct ones for every anchor (k=%d in Python)", anchors-total, 100*float64(anchors-total)/float64(anchors), kAll, kAll)
		}
		if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.HasSuffix(w, advice) }) {
			t.Errorf("k = %d: warnings %q, want the advice %q", c.k, p.Warnings, advice)
		}
		q, err := Make(Items{N: len(labels), Labels: labels}, MakeConfig{K: kAll, Split: testSplit, Seed: 3, AllowFewer: true})
		if err != nil || slices.ContainsFunc(q.Warnings, func(w string) bool { return strings.HasPrefix(w, "allow fewer: ") }) {
			t.Errorf("-k %d, as advised: %v, %q", kAll, err, q.Warnings)
		}
	}
}

// TestWarnUnaligned: labels that follow the rows of clustered embeddings
// give no warning; the same labels one row off (a file of labels with a
// line too many at its top), or embeddings that are noise, do; relevance
// pairs likewise, through ids shifted by one.
func TestWarnUnaligned(t *testing.T) {
	const n, d, classes = 3000, 8, 6
	rng := rand.New(rand.NewPCG(5, 9))
	rows, noise := make([]float32, n*d), make([]float32, n*d)
	labels := make([]int64, n)
	for i := range n {
		labels[i] = int64(rng.IntN(classes))
		for j := range d {
			c := float64(0)
			if j == int(labels[i]) {
				c = 3
			}
			rows[i*d+j] = float32(c + 0.8*rng.NormFloat64())
			noise[i*d+j] = float32(rng.NormFloat64())
		}
	}
	shifted := append([]int64{0}, labels[:n-1]...)
	for _, c := range []struct {
		name   string
		rows   []float32
		labels []int64
		warn   bool
	}{
		{"aligned", rows, labels, false},
		{"one row off", rows, shifted, true},
		{"noise", noise, labels, true},
	} {
		p, err := Make(Items{N: n, Labels: c.labels}, MakeConfig{K: 5, Split: testSplit, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		p.warnUnaligned(c.rows, nil, d)
		const want = "the positives are no closer to their anchors than the negatives: over 2251 anchors, a positive was the nearer"
		got := slices.ContainsFunc(p.Warnings, func(w string) bool {
			return strings.HasPrefix(w, want) && strings.Contains(w, "(do the labels follow the embeddings' rows, in the same order?)")
		})
		if got != c.warn {
			t.Errorf("%s: warnings %q, want one starting %q: %v", c.name, p.Warnings, want, c.warn)
		}
	}
	// Queries near their relevant rows; their ids one row off.
	const nq = 400
	queries := make([]float32, nq*d)
	var pairs, off [][2]int
	for q := range nq {
		r := q * 7
		copy(queries[q*d:(q+1)*d], rows[r*d:(r+1)*d])
		for j := range 3 {
			pairs = append(pairs, [2]int{q, r + j})
			off = append(off, [2]int{q, r + j + 1})
		}
	}
	for _, c := range []struct {
		name  string
		pairs [][2]int
		warn  bool
	}{{"pairs", pairs, false}, {"pairs one row off", off, true}} {
		p, err := Make(Items{N: n, Queries: nq, Pairs: c.pairs}, MakeConfig{K: 2, KNeg: 10, Split: testSplit, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		p.warnUnaligned(rows, queries, d)
		got := slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "an ids file one line off does this") })
		if got != c.warn || slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "dot-product") }) {
			t.Errorf("%s: warnings %q, want the warning: %v", c.name, p.Warnings, c.warn)
		}
	}
	// A dot-product model: rows of norms 0.5 to 3, each query's relevant
	// rows its 3 largest inner products — long rows, far in ℓ2. The
	// warning says so, not that the rows are paired wrongly.
	long := make([]float32, n*d)
	for i := range n {
		scale := 0.5 + 2.5*rng.Float64()
		var nrm float64
		for j := range d {
			long[i*d+j] = float32(rng.NormFloat64())
			nrm += float64(long[i*d+j] * long[i*d+j])
		}
		for j := range d {
			long[i*d+j] *= float32(scale / math.Sqrt(nrm))
		}
	}
	var top [][2]int
	for q := range nq {
		for j := range d {
			queries[q*d+j] = float32(rng.NormFloat64() / math.Sqrt(d))
		}
		ip := make([]float64, n)
		order := make([]int, n)
		for i := range n {
			order[i] = i
			for j := range d {
				ip[i] += float64(queries[q*d+j] * long[i*d+j])
			}
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ip[b], ip[a]) })
		for _, r := range order[:3] {
			top = append(top, [2]int{q, r})
		}
	}
	p, err := Make(Items{N: n, Queries: nq, Pairs: top}, MakeConfig{K: 2, KNeg: 10, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p.warnUnaligned(long, queries, d)
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "the embeddings look like a dot-product model's") || strings.Contains(p.Warnings[0], "one line off") {
		t.Errorf("dot-product pairs: warnings %q", p.Warnings)
	}
}

// TestWarnZeroRows: rows of all zeros among the splits' rows are counted,
// the first named; queries apart from the rows they retrieve.
func TestWarnZeroRows(t *testing.T) {
	const n, d = 600, 4
	rows := make([]float32, n*d)
	labels := make([]int64, n)
	for i := range n {
		labels[i] = int64(i % 3)
		for j := range d {
			rows[i*d+j] = float32(i%7 + j + 1)
		}
	}
	p, err := Make(Items{N: n, Labels: labels}, MakeConfig{K: 3, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.warnZeroRows(rows, nil, d); len(p.Warnings) != 0 {
		t.Errorf("no zero row: %q", p.Warnings)
	}
	clear(rows[40*d : 41*d])
	clear(rows[17*d : 18*d])
	p.warnZeroRows(rows, nil, d)
	if want := "2 rows of the embeddings (the first: row 17) are all zeros: what an encoder gives for an input it failed on"; len(p.Warnings) != 1 || !strings.HasPrefix(p.Warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", p.Warnings, want)
	}
	queries := make([]float32, 100*d)
	var pairs [][2]int
	for q := range 100 {
		copy(queries[q*d:(q+1)*d], rows[(q+100)*d:(q+101)*d])
		pairs = append(pairs, [2]int{q, q + 100}, [2]int{q, q + 200})
	}
	clear(queries[5*d : 6*d])
	q, err := Make(Items{N: n, Queries: 100, Pairs: pairs}, MakeConfig{K: 1, KNeg: 5, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	q.warnZeroRows(rows, queries, d)
	if want := "1 row of the queries (the first: query row 5) is all zeros"; len(q.Warnings) != 1 || !strings.HasPrefix(q.Warnings[0], want) {
		t.Errorf("queries: warnings %q, want one starting %q", q.Warnings, want)
	}
}

// TestOODCalFew: an OOD calibration split too small to certify α_ood =
// 0.05 is warned of when it is made, not when compare needs it.
func TestOODCalFew(t *testing.T) {
	const n = 600
	labels := make([]int64, n)
	for i := range labels {
		labels[i] = int64(i % 3)
	}
	for _, c := range []struct {
		share float64
		warn  bool
	}{{0.01, true}, {0.1, false}} {
		p, err := Make(Items{N: n, Labels: labels}, MakeConfig{K: 3, Split: testSplit, Seed: 1, OODCalShare: c.share})
		if err != nil {
			t.Fatal(err)
		}
		got := slices.ContainsFunc(p.Warnings, func(w string) bool {
			return strings.HasPrefix(w, "ood-cal holds 6 in-distribution inputs: a per-input OOD test calibrated on them cannot certify")
		})
		if got != c.warn {
			t.Errorf("share %v: warnings %q, want the warning: %v", c.share, p.Warnings, c.warn)
		}
	}
}

// TestSetLogits: every split's bundle and arrays carry its anchors' rows of
// the logits and the activations; too few rows, or ragged ones, or for
// relevance pairs' query anchors, are refused.
func TestSetLogits(t *testing.T) {
	const n, d, c = 300, 2, 3
	rows := make([]float32, n*d)
	labels := make([]int64, n)
	logits := make([]float32, n*c)
	for i := range n {
		labels[i] = int64(i % 3)
		rows[i*d], rows[i*d+1] = float32(i%3), float32(i%7)
		for j := range c {
			logits[i*c+j] = float32(i*10 + j)
		}
	}
	p, err := Make(Items{N: n, Labels: labels}, MakeConfig{K: 3, Split: testSplit, Seed: 1, OODClasses: []int64{2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetLogits(logits[:len(logits)-c], c); err == nil || !strings.Contains(err.Error(), "bundle: logits for 299 rows, and the") {
		t.Errorf("too few logits: %v", err)
	}
	if err := p.SetLogits(logits, c); err != nil {
		t.Fatal(err)
	}
	// The activations, a = 2 a row, go their own way beside the logits.
	const a = 2
	acts := make([]float32, n*a)
	for i := range acts {
		acts[i] = float32(-i)
	}
	if err := p.SetActivations(acts[:len(acts)-1], a); err == nil || !strings.Contains(err.Error(), "bundle: 599 activations are not rows of 2") {
		t.Errorf("ragged activations: %v", err)
	}
	if err := p.SetActivations(acts, a); err != nil {
		t.Fatal(err)
	}
	for s, sp := range p.Splits {
		if sp.Omitted {
			continue
		}
		// The arrays written: the logits' rows of the split's anchors,
		// gathered as they are written.
		arrays, err := p.Arrays(s, rows, nil, d)
		if err != nil {
			t.Fatal(err)
		}
		if a := arrays["logits"]; !slices.Equal(a.Shape, []int{len(sp.Anchors), c}) || !slices.Equal(a.Rows, sp.Anchors) || &a.F32[0] != &logits[0] {
			t.Fatalf("%s: logits array of shape %v", sp.Name, a.Shape)
		}
		if g := arrays["activations"]; !slices.Equal(g.Shape, []int{len(sp.Anchors), a}) || !slices.Equal(g.Rows, sp.Anchors) || &g.F32[0] != &acts[0] {
			t.Fatalf("%s: activations array of shape %v", sp.Name, g.Shape)
		}
		if sp.K == 0 {
			continue
		}
		b, err := p.Bundle(s, rows, nil, d)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range sp.Anchors {
			if b.C != c || !slices.Equal(b.Logits[i*c:(i+1)*c], logits[r*c:(r+1)*c]) {
				t.Fatalf("%s: anchor %d (row %d): logits %v", sp.Name, i, r, b.Logits[i*c:(i+1)*c])
			}
			if b.A != a || !slices.Equal(b.Activations[i*a:(i+1)*a], acts[r*a:(r+1)*a]) {
				t.Fatalf("%s: anchor %d (row %d): activations %v", sp.Name, i, r, b.Activations[i*a:(i+1)*a])
			}
		}
	}
	q, err := Make(Items{N: n, Queries: 10, Pairs: [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 10}}}, MakeConfig{K: 1, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.SetLogits(logits, c); err == nil || !strings.Contains(err.Error(), "relevance pairs' anchors are queries") {
		t.Errorf("logits for queries: %v", err)
	}
	if err := q.SetActivations(acts, a); err == nil || !strings.Contains(err.Error(), "bundle: activations are for the rows' anchors") {
		t.Errorf("activations for queries: %v", err)
	}
}

// TestCheckRows: embeddings that are not the plan's rows — another
// dimension, too few rows or too many, queries of another count — are
// refused by Bundle, Arrays, Write and Inspect, naming what was given and
// what the plan was made for; Write then writes nothing.
func TestCheckRows(t *testing.T) {
	const n, d = 300, 4
	rows := make([]float32, n*d)
	labels := make([]int64, n)
	for i := range n {
		labels[i] = int64(i % 3)
		rows[i*d] = float32(i % 3)
	}
	p, err := Make(Items{N: n, Labels: labels}, MakeConfig{K: 3, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pairs := make([][2]int, 0, 40)
	for q := range 40 {
		pairs = append(pairs, [2]int{q, q}, [2]int{q, q + 40})
	}
	qp, err := Make(Items{N: 100, Queries: 40, Pairs: pairs}, MakeConfig{K: 2, KNeg: 3, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		p             *Plan
		rows, queries []float32
		d             int
		want          string
	}{
		{"the right rows", p, rows, nil, d, ""},
		{"another dimension", p, rows, nil, 2, "bundle: 1200 embedding values are not the plan's 300 rows of dimension 2 (600 values)"},
		{"a dimension that does not divide", p, rows, nil, 7, "not the plan's 300 rows of dimension 7"},
		{"too few rows", p, rows[:len(rows)-d], nil, d, "1196 embedding values are not the plan's 300 rows of dimension 4"},
		{"too many rows", p, append(slices.Clone(rows), rows[:d]...), nil, d, "1204 embedding values"},
		{"no dimension", p, rows, nil, 0, "bundle: dimension 0: want at least 1"},
		{"pairs", qp, make([]float32, 100*d), make([]float32, 40*d), d, ""},
		{"queries short", qp, make([]float32, 100*d), make([]float32, 39*d), d, "bundle: 156 query embedding values are not the plan's 40 queries of dimension 4 (160 values)"},
	} {
		errs := map[string]error{"CheckRows": c.p.CheckRows(c.rows, c.queries, c.d), "Inspect": c.p.Inspect(c.rows, c.queries, c.d)}
		_, errs["Bundle"] = c.p.Bundle(Cal, c.rows, c.queries, c.d)
		_, errs["Arrays"] = c.p.Arrays(Cal, c.rows, c.queries, c.d)
		dir := t.TempDir()
		_, errs["Write"] = c.p.Write(dir, c.rows, c.queries, c.d)
		for name, err := range errs {
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("%s: %s: %v, want %q", c.name, name, err, c.want)
			}
		}
		if files, _ := os.ReadDir(dir); c.want != "" && len(files) != 0 {
			t.Errorf("%s: Write wrote %d files", c.name, len(files))
		}
	}
}

// TestDedupeRelevant: repeats go, each row stays where it first appears,
// and the count of those removed is returned.
func TestDedupeRelevant(t *testing.T) {
	cases := []struct {
		name    string
		in      [][]int
		want    [][]int
		removed int
	}{
		{"none", [][]int{{3, 1, 2}, {}}, [][]int{{3, 1, 2}, {}}, 0},
		{"repeats keep the first place", [][]int{{4, 1, 4, 0, 1, 1}}, [][]int{{4, 1, 0}}, 3},
		{"queries apart", [][]int{{0, 0}, {0, 2, 2}, {2}}, [][]int{{0}, {0, 2}, {2}}, 2},
	}
	for _, c := range cases {
		got := make([][]int, len(c.in))
		for i, r := range c.in {
			got[i] = slices.Clone(r)
		}
		if removed := dedupeRelevant(got, 5); removed != c.removed {
			t.Errorf("%s: removed %d, want %d", c.name, removed, c.removed)
		}
		for i := range got {
			if !slices.Equal(got[i], c.want[i]) {
				t.Errorf("%s: query %d: %v, want %v", c.name, i, got[i], c.want[i])
			}
		}
	}
}

// TestMakePairsDense: multi-label data as relevance pairs — each query
// (row q of the rows themselves) relevant to the rows sharing a category
// with it, most of the rows — draws positives among them and negatives
// among the rest, pairs given in any order and some twice.
func TestMakePairsDense(t *testing.T) {
	const n, cats = 400, 5
	rng := rand.New(rand.NewPCG(3, 3))
	has := make([][cats]bool, n)
	for i := range has {
		has[i][rng.IntN(cats)] = true
		if rng.IntN(2) == 0 {
			has[i][rng.IntN(2)] = true // categories 0 and 1 are large
		}
	}
	share := func(i, j int) bool {
		for c := range cats {
			if has[i][c] && has[j][c] {
				return true
			}
		}
		return false
	}
	var pairs [][2]int
	for i := range n {
		for j := range n {
			if i != j && share(i, j) {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	all := len(pairs)
	pairs = append(pairs, pairs[:all/10]...)
	pairs = append(pairs, [2]int{7, 7}, [2]int{9, 9}) // the diagonal, not filled
	rng.Shuffle(len(pairs), func(a, b int) { pairs[a], pairs[b] = pairs[b], pairs[a] })
	p, err := Make(Items{N: n, Queries: n, Pairs: pairs, SelfQueries: true}, MakeConfig{K: 5, KNeg: 5, Split: testSplit, Seed: 2, AllowFewer: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("%d pairs given more than once: counted once", all/10),
		"2 pairs name a query's own row (the queries are the rows): left out, as a row is not its own positive (np.fill_diagonal(related, False) before taking the pairs)",
	} {
		if !slices.Contains(p.Warnings, want) {
			t.Errorf("warnings %q, want %q among them", p.Warnings, want)
		}
	}
	for _, sp := range p.Splits {
		for a, q := range sp.Anchors {
			for _, l := range sp.PositiveIndex[a*sp.K : (a+1)*sp.K] {
				if r := sp.PositivePool[l]; r == q || !share(q, r) {
					t.Fatalf("%s: query %d: positive row %d is its own or shares no category", sp.Name, q, r)
				}
			}
			for _, l := range sp.NegativeIndex[a*sp.KNeg : (a+1)*sp.KNeg] {
				if r := sp.NegativePool[l]; share(q, r) { // share(q, q): never its own row
					t.Fatalf("%s: query %d: negative row %d shares a category", sp.Name, q, r)
				}
			}
		}
	}
}

// TestSelfQueries: queries equal to the rows, value for value, are the
// rows themselves; any other queries are not.
func TestSelfQueries(t *testing.T) {
	rows := []float32{1, 2, 3, 4, 5, 6}
	other := []float32{1, 2, 3, 4, 5, 7}
	cases := []struct {
		name    string
		queries Embeddings
		want    bool
	}{
		{"the same rows", Embeddings{Rows: slices.Clone(rows), N: 3, D: 2}, true},
		{"one value differs", Embeddings{Rows: other, N: 3, D: 2}, false},
		{"fewer queries", Embeddings{Rows: rows[:4], N: 2, D: 2}, false},
	}
	for _, c := range cases {
		in := Inputs{Embeddings: Embeddings{Rows: rows, N: 3, D: 2}, Queries: &c.queries, Pairs: [][2]int{{0, 1}}}
		it, err := in.Items()
		if err != nil {
			t.Fatal(err)
		}
		if it.SelfQueries != c.want {
			t.Errorf("%s: SelfQueries %v, want %v", c.name, it.SelfQueries, c.want)
		}
	}
}

// TestJoinedLabels: string labels that are lists joined by a separator
// are found; names that merely hold one are not.
func TestJoinedLabels(t *testing.T) {
	cases := []struct {
		name      string
		names     []string
		want, sep string
	}{
		{"lists by commas", []string{"cs.LG", "cs.LG,stat.ML", "math.ST", "math.ST,stat.ML"}, "cs.LG,stat.ML", ","},
		{"lists by semicolons, spaced", []string{"a; b", "b; c", "c"}, "a; b", ";"},
		{"one comma name", []string{"Smith, J.", "Jones", "Brown", "Lee", "Wu"}, "", ""},
		{"commas, no piece twice", []string{"a,b", "c,d", "e"}, "", ""},
		{"integers", nil, "", ""},
	}
	for _, c := range cases {
		if got, sep := joinedLabels(c.names); got != c.want || sep != c.sep {
			t.Errorf("%s: %q, %q, want %q, %q", c.name, got, sep, c.want, c.sep)
		}
	}
	// The refusal of lone classes says so, rather than naming groups.
	labels := make([]int64, 60)
	names := []string{"cs.LG", "cs.LG,stat.ML", "math.ST", "math.ST,stat.ML"}
	for i := range labels {
		labels[i] = int64(i % 4)
	}
	labels[59] = 1 // ,stat.ML once more: four classes of 15, 16, 15, 14 items
	_, err := Make(Items{N: 60, Labels: labels}, MakeConfig{K: 1, Split: testSplit, LabelNames: names})
	if want := `Names such as "cs.LG,stat.ML" look like lists of labels joined by ",", each combination a class of its own (lists = [s.split(",") for s in labels]): ` + MultiLabel; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %v, want it to end %q", err, want)
	}
	// Classes large enough to split: a warning, kept in the manifest.
	for i := range labels {
		labels[i] = int64(i % 4)
	}
	labels = slices.Concat(labels, labels, labels)
	p, err := Make(Items{N: len(labels), Labels: labels}, MakeConfig{K: 1, Split: testSplit, LabelNames: names})
	if err != nil {
		t.Fatal(err)
	}
	if want := `labels such as "cs.LG,stat.ML" look like lists of labels joined by ",": each combination is a class of its own, and rows that share one label but not the whole list are negatives of each other; ` + MultiLabel; !slices.Contains(p.Warnings, want) {
		t.Errorf("warnings %q, want %q among them", p.Warnings, want)
	}
}

// TestZeroShares: a split of share 0 is not made — labels, groups and
// relevance pairs alike. Its plan entry is Omitted and empty, the other
// splits hold every item between them (stratified as before), Write
// writes their files alone and the manifest lists them alone; Bundle
// refuses the omitted one by name.
func TestZeroShares(t *testing.T) {
	const d = 4
	rows, labels := labelled(3, d, 60, 80, 100)
	var groups []int64
	for i := range len(labels) {
		groups = append(groups, int64(i/3))
	}
	queries := rows[:40*d]
	var pairs [][2]int
	for q := range 40 {
		pairs = append(pairs, [2]int{q, (q * 7) % len(labels)}, [2]int{q, (q*7 + 1) % len(labels)})
	}
	for _, c := range []struct {
		name  string
		items Items
		split [4]float64
	}{
		{"labels, cal and test", Items{N: len(labels), Labels: labels}, [4]float64{0, 0, 0.5, 0.5}},
		{"labels, test alone", Items{N: len(labels), Labels: labels}, [4]float64{0, 0, 0, 1}},
		{"groups, fit and test", Items{N: len(labels), Groups: groups}, [4]float64{0.5, 0, 0, 0.5}},
		{"pairs, cal and test", Items{N: len(labels), Queries: 40, Pairs: pairs}, [4]float64{0, 0, 0.5, 0.5}},
	} {
		p, err := Make(c.items, MakeConfig{K: 1, KNeg: 3, Split: c.split, Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var made []string
		anchors := 0
		for s, sp := range p.Splits[:Test+1] {
			if sp.Omitted != (c.split[s] == 0) || (sp.Omitted && len(sp.Anchors) > 0) {
				t.Errorf("%s: split %s: omitted %v with %d anchors, share %v", c.name, sp.Name, sp.Omitted, len(sp.Anchors), c.split[s])
			}
			if !sp.Omitted {
				made = append(made, sp.Name)
			}
			anchors += len(sp.Anchors)
		}
		want := c.items.N // an anchor a row, a group or a query
		switch {
		case c.items.Queries > 0:
			want = c.items.Queries
		case c.items.Groups != nil:
			want = len(labels) / 3
		}
		if anchors != want || !slices.Equal(p.Made(), made) {
			t.Errorf("%s: %d anchors in the splits, want %d; made %v, want %v", c.name, anchors, want, p.Made(), made)
		}
		dir := t.TempDir()
		q := []float32(nil)
		if c.items.Queries > 0 {
			q = queries
		}
		paths, err := p.Write(dir, rows, q, d)
		if err != nil {
			t.Fatal(err)
		}
		var wrote []string
		for _, path := range paths {
			wrote = append(wrote, strings.TrimSuffix(filepath.Base(path), ".npz"))
		}
		m := NewManifest("test", Inputs{}, MakeConfig{}, p)
		var listed []string
		for _, f := range m.Files {
			listed = append(listed, f.Split)
		}
		if !slices.Equal(wrote, made) || !slices.Equal(listed, made) {
			t.Errorf("%s: wrote %v, manifest lists %v; want %v", c.name, wrote, listed, made)
		}
		for s, sp := range p.Splits[:Test+1] {
			if _, err := p.Bundle(s, rows, q, d); sp.Omitted && (err == nil || !strings.Contains(err.Error(), "the "+sp.Name+" split is not made: its share is 0")) {
				t.Errorf("%s: Bundle(%s): %v", c.name, sp.Name, err)
			} else if !sp.Omitted && err != nil {
				t.Errorf("%s: Bundle(%s): %v", c.name, sp.Name, err)
			}
		}
	}
}

// TestLabelSets: several labels a row (a multi-hot matrix read by
// LabelSets) plan the same bundles as the recipe they replace — the rows
// as their own queries and np.argwhere(M @ M.T > 0), diagonal left out,
// as relevance pairs: the same splits, positives, negatives, pools and
// warnings, for every split share and with -allow-fewer; rows of no label
// are no query. A matrix of other values is not read as label sets.
func TestLabelSets(t *testing.T) {
	const n, c, d = 300, 6, 3
	rng := rand.New(rand.NewPCG(5, 5))
	m, sets, rows := multiHot(t, rng, n, c, c, d, 0.25)
	var pairs [][2]int
	for q := range n {
		for r := range n {
			if q == r {
				continue
			}
			for j := range c {
				if m[q*c+j] == 1 && m[r*c+j] == 1 {
					pairs = append(pairs, [2]int{q, r})
					break
				}
			}
		}
	}
	e := Embeddings{Source: "e.npy", Rows: rows, N: n, D: d}
	native, err := Inputs{Embeddings: e, LabelSets: sets, LabelsSource: "m.npy"}.Items()
	if err != nil {
		t.Fatal(err)
	}
	recipe, err := Inputs{Embeddings: e, Queries: &e, Pairs: pairs}.Items()
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []MakeConfig{
		{K: 2, KNeg: 5, Split: testSplit, Seed: 3, AllowFewer: true},
		{K: 1, KNeg: 4, Split: [4]float64{0, 0, 0.5, 0.5}, Seed: 7, AllowFewer: true},
	} {
		a, err := Make(native, cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Make(recipe, cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The labels each positive shares with its anchor: the label sets'
		// alone, which the recipe's pairs do not know.
		plain := slices.Clone(a.Splits)
		for s, sp := range plain {
			if sp.Omitted {
				continue
			}
			if sp.PositiveLabelStart == nil {
				t.Errorf("%+v: the %s split carries no positives' labels", cfg, sp.Name)
				continue
			}
			pool := sp.PositivePool
			for u := range len(sp.Anchors) * sp.K {
				q, r := sp.Anchors[u/sp.K], pool[sp.PositiveIndex[u]]
				var want []int64
				for j := range c {
					if m[q*c+j] == 1 && m[r*c+j] == 1 {
						want = append(want, int64(j))
					}
				}
				if got := sp.PositiveLabels[sp.PositiveLabelStart[u]:sp.PositiveLabelStart[u+1]]; !slices.Equal(got, want) {
					t.Fatalf("%+v: %s split, positive %d of anchor %d (rows %d, %d): labels %v, want %v", cfg, sp.Name, u%sp.K, u/sp.K, q, r, got, want)
				}
			}
			plain[s].PositiveLabelStart, plain[s].PositiveLabels = nil, nil
		}
		if fmt.Sprint(plain) != fmt.Sprint(b.Splits) || !slices.Equal(a.Warnings, b.Warnings) {
			t.Errorf("%+v: the label sets' plan differs from the recipe's:\n%v\n%q\n%v\n%q", cfg, plain, a.Warnings, b.Splits, b.Warnings)
		}
		if !slices.ContainsFunc(a.Warnings, func(w string) bool { return strings.Contains(w, "queries have no relevant row: left out") }) {
			t.Errorf("%+v: rows of no label not said: %q", cfg, a.Warnings)
		}
		ma, mb := NewManifest("x", Inputs{Embeddings: e, LabelSets: sets}, cfg, a), NewManifest("x", Inputs{Embeddings: e, Queries: &e, Pairs: pairs}, cfg, b)
		if !strings.Contains(ma.Positives, "share a label") || ma.Positives == mb.Positives {
			t.Errorf("the manifest's positives: %q", ma.Positives)
		}
	}
	for _, c := range []struct {
		name string
		a    Array
	}{
		{"counts", Array{Shape: []int{2, 3}, I64: []int64{0, 2, 1, 1, 0, 0}}},
		{"one column", Array{Shape: []int{3, 1}, I64: []int64{0, 1, 1}}},
		{"one label a row", Array{Shape: []int{3}, I64: []int64{0, 1, 1}}},
	} {
		if _, ok, err := LabelSets(c.a, "x"); ok || err != nil {
			t.Errorf("%s: read as label sets (%v)", c.name, err)
		}
	}
	if _, err := (Inputs{Embeddings: e, LabelSets: sets[:10], LabelsSource: "m.npy"}).Items(); err == nil || !strings.Contains(err.Error(), "m.npy: 10 rows of labels for the 300 rows of e.npy") {
		t.Errorf("rows that do not line up: %v", err)
	}
	// Too many related pairs are refused before they are held.
	if _, err := sharedLabels(sets, len(pairs)-1); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("make over %d related pairs", len(pairs)-1)) {
		t.Errorf("one pair over the limit: %v", err)
	}
	if rel, err := sharedLabels(sets, len(pairs)); err != nil || len(slices.Concat(rel...)) != len(pairs) {
		t.Errorf("at the limit: %v", err)
	}
}

// TestPathNames: labels or group ids that are file paths (a speaker
// corpus's utt.txt, speaker/session/utterance) are each their own class;
// the refusals of lone classes and one-row groups say which directory
// would make the classes, not that they are groups or should be left out.
func TestPathNames(t *testing.T) {
	var paths []string
	for s := range 6 {
		for u := range 10 {
			paths = append(paths, fmt.Sprintf("id1%04d/sess%d/%05d.wav", s, u%3, u))
		}
	}
	cases := []struct {
		name  string
		names []string
		want  string
	}{
		{"VoxCeleb paths", paths, `names such as "id10000/sess0/00000.wav" are file paths, each its own class: its first directory makes 6 classes, its first two 18 — keep one (cut -d/ -f1 FILE > classes.txt; [p.split("/")[0] for p in paths] in Python)`},
		{"Windows paths", []string{`spk1\a.wav`, `spk1\b.wav`, `spk2\c.wav`}, `names such as "spk1\\a.wav" are file paths, each its own class: its first directory makes 2 classes — keep one (cut -d'\' -f1 FILE > classes.txt; [p.split("\\")[0] for p in paths] in Python)`},
		{"absolute paths", []string{"/data/vox/wav/id1/a/1.wav", "/data/vox/wav/id1/b/2.wav", "/data/vox/wav/id2/c/3.wav", "/data/vox/wav/id2/c/4.wav"}, `names such as "/data/vox/wav/id1/a/1.wav" are file paths, each its own class: after the directories all share ("/data/vox/wav/"), the next makes 2 classes, the next two 3 — keep one (cut -d/ -f5 FILE > classes.txt; [p.split("/")[4] for p in paths] in Python)`},
		{"names, not paths", []string{"ant", "bee", "cat"}, ""},
		{"a directory each", []string{"vox1/id1", "vox1/id2", "vox1/id3"}, ""},
		{"a few slashes", []string{"a/b", "c", "d", "e", "f"}, ""},
		{"integers", nil, ""},
	}
	for _, c := range cases {
		if got := pathNames(c.names, "class"); !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// The refusals name it: paths as labels, and as groups.
	n := len(paths)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	_, err := Make(Items{N: n, Labels: ids}, MakeConfig{K: 1, Split: testSplit, LabelNames: paths})
	if want := `Names such as "id10000/sess0/00000.wav" are file paths, each its own class: its first directory makes 6 classes`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "are groups, not labels") {
		t.Errorf("paths as labels: %v, want %q", err, want)
	}
	_, err = Make(Items{N: n, Groups: ids, GroupNames: paths}, MakeConfig{K: 1, Split: testSplit, AllowFewer: true})
	if want := `one row (the first: group "id10000/sess0/00000.wav"): no other row to be its anchor's positive; names such as "id10000/sess0/00000.wav" are file paths, each its own group: its first directory makes 6 classes`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "np.unique(groups") {
		t.Errorf("paths as groups: %v, want %q", err, want)
	}
	// Names with a '/' that are classes and groups, a few of them small:
	// the small ones are left out, not the names cut.
	labels, groupIDs, labelNames, groupNames := make([]int64, n), make([]int64, n), []string{"animal/cat", "animal/dog", "plant/fern"}, []string{}
	for i := range n {
		labels[i], groupIDs[i] = int64(min(i%2, 1)), int64(i/4)
	}
	labels[n-1] = 2
	for g := range n / 4 {
		groupNames = append(groupNames, fmt.Sprintf("vox1/id%05d", g))
	}
	groupIDs[n-1], groupNames = int64(n/4), append(groupNames, "vox1/id99999")
	_, err = Make(Items{N: n, Labels: labels}, MakeConfig{K: 1, Split: testSplit, LabelNames: labelNames})
	if err == nil || strings.Contains(err.Error(), "file paths") || !strings.Contains(err.Error(), "Leave the small classes out") {
		t.Errorf("hierarchical labels, one small: %v", err)
	}
	_, err = Make(Items{N: n, Groups: groupIDs, GroupNames: groupNames}, MakeConfig{K: 1, Split: testSplit, AllowFewer: true})
	if err == nil || strings.Contains(err.Error(), "file paths") || !strings.Contains(err.Error(), "np.unique(groups") {
		t.Errorf("a corpus's prefix on speaker ids, one speaker of one row: %v", err)
	}
}

// TestGroupSessions: with sessions (a speaker's recordings), an anchor's
// positives are the rows of its group in other sessions than the
// anchor's, never its own session's; a group of one session has none and
// is refused, counted, as groups of too few such rows are.
func TestGroupSessions(t *testing.T) {
	const groupsN, per = 60, 12
	groups := make([]int64, groupsN*per)
	sessions := make([]int64, len(groups))
	for i := range groups {
		groups[i] = int64(i / per)
		sessions[i] = int64(i/per*10 + (i%per)%3) // three sessions a group: rows 0, 3, 6, 9 the anchor's
	}
	p, err := Make(Items{N: len(groups), Groups: groups, Sessions: sessions}, MakeConfig{K: 8, KNeg: 3, Split: testSplit, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range p.Splits[:4] {
		for a, anchor := range sp.Anchors {
			for _, i := range sp.PositiveIndex[a*sp.K : (a+1)*sp.K] {
				r := sp.PositivePool[i]
				if groups[r] != groups[anchor] || sessions[r] == sessions[anchor] {
					t.Fatalf("%s: anchor row %d (group %d, session %d) has positive row %d (group %d, session %d)", sp.Name, anchor, groups[anchor], sessions[anchor], r, groups[r], sessions[r])
				}
			}
		}
	}
	// 8 rows of other sessions a group: k = 9 is too many.
	if _, err := Make(Items{N: len(groups), Groups: groups, Sessions: sessions}, MakeConfig{K: 9, Split: testSplit}); err == nil || !strings.Contains(err.Error(), "60 groups of the splits have fewer than k = 9 rows in other sessions than their anchor's (the first: group 0, with 8): lower k (-k 8 keeps them all)") {
		t.Errorf("k = 9: %v", err)
	}
	// A group recorded in one session: no cross-session positive.
	for i := 0; i < per; i++ {
		sessions[i] = 0
	}
	if _, err := Make(Items{N: len(groups), Groups: groups, Sessions: sessions}, MakeConfig{K: 2, Split: testSplit}); err == nil || !strings.Contains(err.Error(), "1 group of the splits have no row in another session than their anchor's (the first: group 0, 12 rows in one session)") {
		t.Errorf("one session: %v", err)
	}
	// Sessions need groups, one a row.
	emb := Embeddings{Rows: make([]float32, 2*len(groups)), N: len(groups), D: 2, Source: "emb.npy"}
	for _, c := range []struct {
		in   Inputs
		want string
	}{
		{Inputs{Embeddings: emb, Labels: groups, LabelsSource: "spk.txt", Sessions: sessions, SessionsSource: "sess.txt"}, "sess.txt: sessions are a group's recordings: give group ids with them (-groups)"},
		{Inputs{Embeddings: emb, Groups: groups, GroupsSource: "spk.txt", Sessions: sessions[1:], SessionsSource: "sess.txt"}, "sess.txt: 719 session ids for the 720 rows of emb.npy"},
	} {
		if _, err := c.in.Items(); err == nil || err.Error() != c.want {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}

// TestLabelSetsNoneShared: label sets under which too few rows share a
// label are refused saying so — none at all (each row its own label, or
// no labels), or too few for a split (the queries are the rows that share
// a label) — not as if the rows were too few.
func TestLabelSetsNoneShared(t *testing.T) {
	t.Parallel()
	const n, d = 200, 2
	e := Embeddings{Source: "e.npy", Rows: make([]float32, n*d), N: n, D: d}
	own, none, three := make([][]int32, n), make([][]int32, n), make([][]int32, n)
	for i := range n {
		own[i], none[i], three[i] = []int32{int32(i)}, []int32{}, []int32{}
	}
	for i := range 3 {
		three[i] = []int32{0}
	}
	for _, c := range []struct {
		name string
		sets [][]int32
		want string
	}{
		{"each row its own label", own, "no two of the 200 rows share a label"},
		{"no labels", none, "no two of the 200 rows share a label"},
		{"three rows share one", three, "the rows that share a label with another: 3 of the 200"},
	} {
		items, err := Inputs{Embeddings: e, LabelSets: c.sets, LabelsSource: "m.npy"}.Items()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Make(items, MakeConfig{K: 1, AllowFewer: true}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestReidNames: person re-identification image names (Market-1501's
// 0002_c1s1_000451_03.jpg, DukeMTMC-reID's 0005_c2_f0046985.jpg), each its
// own class or group, are named as such, with the lines that give the
// person as the group and the camera as the session, and the rows of no
// person (-1: junk; 0: false detections) counted.
func TestReidNames(t *testing.T) {
	t.Parallel()
	var market []string
	for p := range 6 {
		for c := 1; c <= 3; c++ {
			market = append(market, fmt.Sprintf("%04d_c%ds1_%06d_01.jpg", p, c, 100*p+c))
		}
	}
	market = append(market, "-1_c1s2_000401_03.jpg", "-1_c3s1_000777_02.jpg")
	cases := []struct {
		name  string
		names []string
		want  string // a prefix; "" for none
	}{
		{"Market-1501", market, `names such as "0000_c1s1_000001_01.jpg" are person re-identification image names (person id, camera, frame: Market-1501, DukeMTMC-reID), each its own class: their person ids make 5 people over 3 cameras, besides 2 images of person -1 (junk) and 3 of person 0 (false detections, distractors)`},
		{"DukeMTMC-reID, with a directory", []string{"bounding_box_train/0005_c2_f0046985.jpg", "bounding_box_train/0005_c5_f0051341.jpg", "bounding_box_train/0007_c2_f0047029.jpg"}, `names such as "bounding_box_train/0005_c2_f0046985.jpg" are person re-identification image names (person id, camera, frame: Market-1501, DukeMTMC-reID), each its own class: their person ids make 2 people over 2 cameras —`},
		{"speaker paths", []string{"id10270/5r0dWxy17C8/00001.wav", "id10270/5r0dWxy17C8/00002.wav"}, ""},
		{"names with underscores", []string{"cat_1.jpg", "dog_2.jpg"}, ""},
		{"a few re-ID names among others", append([]string{"a", "b", "c"}, market[:2]...), ""},
		{"none", nil, ""},
	}
	for _, c := range cases {
		got := reidNames(c.names, "class")
		if !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// The lines cut a directory of either separator, as reidName does
	// (a Windows export's C:\market\bounding_box_test\0002_c1s1_….jpg).
	if got := reidNames(market, "class"); !strings.Contains(got, `-groups pid.txt -sessions cam.txt`) || !strings.Contains(got, `keep = pid > 0`) ||
		!strings.Contains(got, `sed 's|.*[/\\]||; s/_.*//'`) || !strings.Contains(got, `re.split(r"[/\\]", n)[-1]`) {
		t.Errorf("no recipe: %q", got)
	}
	// The refusals name them: as groups (each of one row) and as labels.
	n := len(market)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	_, err := Make(Items{N: n, Groups: ids, GroupNames: market}, MakeConfig{K: 1, Split: testSplit, AllowFewer: true})
	if want := `no other row to be its anchor's positive; names such as "0000_c1s1_000001_01.jpg" are person re-identification image names`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "np.unique(groups") {
		t.Errorf("re-ID names as groups: %v, want %q", err, want)
	}
	_, err = Make(Items{N: n, Labels: ids}, MakeConfig{K: 1, Split: testSplit, LabelNames: market})
	if want := `Names such as "0000_c1s1_000001_01.jpg" are person re-identification image names`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "are groups, not labels") {
		t.Errorf("re-ID names as labels: %v, want %q", err, want)
	}
	// Under a query and a gallery directory (an export's query and
	// gallery names in one file): re-ID names, not file paths whose
	// first directory would be the class.
	dirs := slices.Clone(market)
	for i := range dirs {
		dirs[i] = []string{"query/", "bounding_box_test/"}[i%2] + dirs[i]
	}
	_, err = Make(Items{N: n, Groups: ids, GroupNames: dirs}, MakeConfig{K: 1, Split: testSplit, AllowFewer: true})
	if want := `are person re-identification image names`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "file paths") {
		t.Errorf("re-ID paths as groups: %v, want %q", err, want)
	}
	_, err = Make(Items{N: n, Labels: ids}, MakeConfig{K: 1, Split: testSplit, LabelNames: dirs})
	if want := `are person re-identification image names`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "file paths") {
		t.Errorf("re-ID paths as labels: %v, want %q", err, want)
	}
}

// TestMissingSessions: a session id that marks a missing value (-1, a
// string "" or "nan" MissingStrings made negative, a null) follows
// MissingLabels as a group id does: refused, naming the rows and the
// first of them, as an InputError of the sessions; dropped, its rows are left out,
// counted in a warning; as a class, each such id is a session of its
// own, its rows never one another's positives. Rows already left out for
// their group's mark are not counted again.
func TestMissingSessions(t *testing.T) {
	t.Parallel()
	const groupsN, per = 60, 12
	groups, sessions := make([]int64, groupsN*per), make([]int64, groupsN*per)
	for i := range groups {
		groups[i], sessions[i] = int64(i/per), int64((i%per+i/per)%3) // the anchors of three sessions
		if i%per == 4 || i%per == 7 {
			sessions[i] = -1 // two rows a group without a session
		}
		if i%per == 10 && i/per%2 == 0 {
			sessions[i] = -2 // "nan", in every other group
		}
	}
	groups[5] = -1 // a row of no group: dropped or kept, its session aside
	sessions[5] = -1
	names := map[int64]string{-2: "nan"}
	items := Items{N: len(groups), Groups: groups, Sessions: sessions}
	for _, c := range []struct {
		name    string
		mode    MissingLabels
		err     string
		warning string
		dropped bool
	}{
		{"error", MissingRefused, `bundle: 151 of 720 rows have a session id that marks a missing value (-2: 30, -1: 121); the first: row 4`, "", false},
		{"drop", MissingDropped, "", `150 of 720 rows have a session id that marks a missing value (-2: 30, -1: 120), taken for no session: left out of every split`, true},
		{"class", MissingClass, "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := MakeConfig{K: 4, KNeg: 3, Split: testSplit, Seed: 5, MissingLabels: c.mode}
			items := items
			if !c.dropped {
				// Row 5's group mark is refused, or a group of one row:
				// give it a group.
				items.Groups = slices.Clone(groups)
				items.Groups[5] = 0
			}
			if c.mode == MissingRefused {
				_, err := Make(items, cfg)
				var se *InputError
				if err == nil || !strings.HasPrefix(err.Error(), c.err) || !errors.As(err, &se) || se.Input != InputSessions {
					t.Fatalf("%v, want an InputError of the sessions %q", err, c.err)
				}
				named := cfg
				named.MissingSessionNames = names
				if _, err := Make(items, named); err == nil || !strings.Contains(err.Error(), `("nan": 30, -1: 121)`) || !strings.Contains(err.Error(), "-missing-labels drop") {
					t.Errorf("named marks: %v", err)
				}
				return
			}
			p, err := Make(items, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if w := strings.Join(p.Warnings, "\n"); c.warning != "" && !strings.Contains(w, c.warning) || c.warning == "" && strings.Contains(w, "marks a missing value") {
				t.Errorf("warnings %q, want %q", w, c.warning)
			}
			seen := false
			for _, sp := range p.Splits[:4] {
				rows := slices.Concat(sp.Anchors, sp.PositivePool)
				for _, r := range rows {
					if sessions[r] < 0 {
						seen = true
						if c.dropped {
							t.Fatalf("%s: row %d, of session %d, is in the split", sp.Name, r, sessions[r])
						}
					}
				}
				for a, anchor := range sp.Anchors {
					for _, i := range sp.PositiveIndex[a*sp.K : (a+1)*sp.K] {
						if r := sp.PositivePool[i]; sessions[r] == sessions[anchor] {
							t.Fatalf("%s: anchor row %d and its positive row %d are both of session %d", sp.Name, anchor, r, sessions[r])
						}
					}
				}
			}
			if !c.dropped && !seen {
				t.Error("no row of a missing session in any split")
			}
		})
	}
}

// TestSessionsOfRows: session ids that no two rows of a group share (the
// rows' own names given as sessions) exclude no positive: refused, naming
// the file.
func TestSessionsOfRows(t *testing.T) {
	t.Parallel()
	const n = 40
	groups, own := make([]int64, n), make([]int64, n)
	for i := range groups {
		groups[i], own[i] = int64(i/4), int64(i)
	}
	emb := Embeddings{Rows: make([]float32, 2*n), N: n, D: 2, Source: "emb.npy"}
	_, err := Inputs{Embeddings: emb, Groups: groups, GroupsSource: "pid.txt", Sessions: own, SessionsSource: "names.txt"}.Items()
	if want := "names.txt: no two rows of a group share a session (40 sessions for 40 rows): the sessions then exclude no positive, as if none were given"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%v, want %q", err, want)
	}
	// Sessions two rows share (cameras) pass.
	cams := make([]int64, n)
	for i := range cams {
		cams[i] = int64(i % 2)
	}
	if _, err := (Inputs{Embeddings: emb, Groups: groups, GroupsSource: "pid.txt", Sessions: cams, SessionsSource: "cam.txt"}).Items(); err != nil {
		t.Error(err)
	}
	// Cameras that see each person once (VIPeR: two cameras, an image of
	// each person from each): no two rows of a group share one, but rows of
	// different groups do: sessions, not the rows' own ids.
	pairs := make([]int64, n)
	for i := range pairs {
		pairs[i] = int64(i / 2)
	}
	if _, err := (Inputs{Embeddings: emb, Groups: pairs, GroupsSource: "pid.txt", Sessions: cams, SessionsSource: "cam.txt"}).Items(); err != nil {
		t.Errorf("a camera each image of a person: %v", err)
	}
}

// TestAnchorSessionSkew: each group's anchor is its first row, so rows
// sorted by session within each group (a directory listing's order) make
// every anchor one session's; ccs bundle warns, naming the session and
// the share a random anchor would have, and says nothing for rows in a
// random order.
func TestAnchorSessionSkew(t *testing.T) {
	t.Parallel()
	const groupsN, per = 120, 6
	groups, sessions := make([]int64, groupsN*per), make([]int64, groupsN*per)
	for i := range groups {
		groups[i], sessions[i] = int64(i/per), int64(i%per%3) // cameras 0, 1, 2, sorted: the anchor is camera 0
	}
	cfg := MakeConfig{K: 2, KNeg: 2, Split: testSplit, Seed: 1}
	p, err := Make(Items{N: len(groups), Groups: groups, Sessions: sessions}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := "the anchors (each group's first row) are 100.0% session 0, where an anchor drawn at random within its group would be 33.3%"
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, want) || !strings.Contains(w, "permutation(") {
		t.Errorf("sorted rows: warnings %q, want %q", w, want)
	}
	// Shuffled within each group: no warning.
	rng := rand.New(rand.NewPCG(3, 4))
	for g := range groupsN {
		rows := sessions[g*per : (g+1)*per]
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	}
	p, err = Make(Items{N: len(groups), Groups: groups, Sessions: sessions}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "first row") {
			t.Errorf("shuffled rows: %q", w)
		}
	}
	// Rows in a random order over many shared sessions (200 groups of 20
	// rows, 50 sessions: cameras or rooms): the distance of a random
	// order's anchors is near 0.2 itself; no warning, for any of 20 orders.
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 5))
		const gn, pn = 200, 20
		g, ss := make([]int64, gn*pn), make([]int64, gn*pn)
		for i := range g {
			g[i], ss[i] = int64(i/pn), int64(rng.IntN(50))
		}
		p, err := Make(Items{N: len(g), Groups: g, Sessions: ss}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range p.Warnings {
			if strings.Contains(w, "first row") {
				t.Errorf("random order %d over 50 sessions: %q", seed, w)
			}
		}
		// Sorted within each group: warned of.
		for i := 0; i < len(ss); i += pn {
			slices.Sort(ss[i : i+pn])
		}
		p, err = Make(Items{N: len(g), Groups: g, Sessions: ss}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "first row") {
			t.Errorf("sorted order %d over 50 sessions: no warning (%q)", seed, w)
		}
	}
	// Sessions of their groups alone (a speaker's recordings): no comparison across groups.
	for i := range sessions {
		sessions[i] = int64(i/per*10 + i%per%3)
	}
	p, err = Make(Items{N: len(groups), Groups: groups, Sessions: sessions}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "first row") {
			t.Errorf("sessions of their groups: %q", w)
		}
	}
}

// TestCatchAllGroup: a group far larger than the others — a re-ID
// gallery's false detections (person 0000), an "unknown" id — is warned of,
// named with its size beside the median's; groups of ordinary sizes are
// not.
func TestCatchAllGroup(t *testing.T) {
	t.Parallel()
	var groups []int64
	for g := 1; g <= 100; g++ {
		for range 4 + g%5 {
			groups = append(groups, int64(g))
		}
	}
	ordinary := slices.Clone(groups)
	for range 300 {
		groups = append(groups, 0)
	}
	cfg := MakeConfig{K: 2, KNeg: 2, Split: testSplit, Seed: 1, AllowFewer: true}
	p, err := Make(Items{N: len(groups), Groups: groups}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := "group 0 has 300 rows, 50 times the median group's 6"
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, want) || !strings.Contains(w, "keep = groups != 0") {
		t.Errorf("warnings %q, want %q", w, want)
	}
	p, err = Make(Items{N: len(ordinary), Groups: ordinary}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "median group") {
			t.Errorf("ordinary groups: %q", w)
		}
	}
}

// TestMakePairsCrowdedQueries: queries with far more relevant rows than
// nearly all the others — a shop's bots, thousands of views each among
// users of a few — are counted and the most crowded named; a long but
// smooth tail of heavy users, and few queries, are not.
func TestMakePairsCrowdedQueries(t *testing.T) {
	const nr = 5000
	pairsOf := func(counts []int) [][2]int {
		var pairs [][2]int
		for q, c := range counts {
			for j := range c {
				pairs = append(pairs, [2]int{q, (q*131 + j*7) % nr})
			}
		}
		return pairs
	}
	users := make([]int, 500)
	for q := range users {
		users[q] = 1 + q%8 // 1 to 8 items each
		if q%50 == 0 {
			users[q] = 40 + q/5 // a heavy tail, up to 138
		}
	}
	bots := slices.Clone(users)
	bots[7], bots[300], bots[411] = 1500, 1150, 1200
	ids := make([]string, len(users))
	for q := range ids {
		ids[q] = fmt.Sprintf("u%04d", q)
	}
	for _, c := range []struct {
		name   string
		counts []int
		want   string
	}{
		{"users", users, ""},
		{"bots", bots, `3 queries have more than ten times as many relevant rows as 99% of the queries (the most: query "u0007" (row 7 of the queries), 1500; the median query 5, the 99th percentile 110): bots or crawlers rather than users? Each query is one unit of the guarantee, whatever its count; leave out the queries that are not the users the sets are for (docs/your-data.md, "Interaction logs")`},
		{"few queries", append(slices.Repeat([]int{1, 2, 3}, 10), 900), ""},
	} {
		p, err := Make(Items{N: nr, Queries: len(c.counts), Pairs: pairsOf(c.counts), QueryIDs: ids[:len(c.counts)]}, MakeConfig{K: 1, KNeg: 5, Split: testSplit, Seed: 4})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := ""
		for _, w := range p.Warnings {
			if strings.Contains(w, "relevant rows as 99% of the queries") {
				got = w
			}
		}
		if got != c.want {
			t.Errorf("%s: warning %q, want %q", c.name, got, c.want)
		}
	}
}

// TestMakeJudgedNegatives: with JudgedNegatives, a query's negatives are
// its pairs judged not relevant and nothing else — drawn without
// replacement, repeated where it has fewer, never a relevant row (a pair
// judged both ways stays relevant) —, a query with none is left out and
// counted, the draws do not depend on the threads, and the refusals name
// what to give.
func TestMakeJudgedNegatives(t *testing.T) {
	const nq, nr = 200, 401
	var pairs, negs [][2]int
	judged := map[[2]int]bool{}
	for q := range nq {
		pairs = append(pairs, [2]int{q, q}, [2]int{q, (q + 1) % nr})
		if q%10 == 9 {
			continue // no judged negative: left out
		}
		for j := range 1 + q%6 { // 1 to 6 judged negatives
			r := 201 + (q*13+j*37)%200 // never a relevant row (q, q+1)
			negs = append(negs, [2]int{q, r})
			judged[[2]int{q, r}] = true
		}
		negs = append(negs, [2]int{q, q}) // judged both ways: stays relevant
	}
	cfg := MakeConfig{K: 1, KNeg: 4, Split: testSplit, Seed: 9, JudgedNegatives: true}
	p, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, Negatives: negs}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"judged negatives: 20 of the 200 queries with a relevant row have no pair judged not relevant: left out of their splits (the first: query 9), so the bundles speak of queries with judged negatives; the splits are those of the same bundles without judged negatives, less those queries, and so is each query's positive draw: a set calibrated on those (all queries) may be evaluated on these",
	}
	if len(p.Warnings) != 2 || p.Warnings[0] != want[0] || !strings.HasPrefix(p.Warnings[1], "judged negatives: ") || !strings.Contains(p.Warnings[1], "fewer than kneg = 4 judged not relevant and repeat them") {
		t.Fatalf("warnings %q, want %q and the repeats", p.Warnings, want)
	}
	anchors := 0
	for _, sp := range p.Splits {
		anchors += len(sp.Anchors)
		for a, q := range sp.Anchors {
			if q%10 == 9 {
				t.Fatalf("query %d has no judged negative, and is an anchor", q)
			}
			got := map[int]int{}
			for _, i := range sp.NegativeIndex[a*4 : (a+1)*4] {
				r := sp.NegativePool[i]
				if !judged[[2]int{q, r}] {
					t.Fatalf("query %d: negative row %d is not judged not relevant to it", q, r)
				}
				got[r]++
			}
			if n := 1 + q%6; len(got) != min(n, 4) {
				t.Fatalf("query %d: %d distinct negatives of its %d judged, kneg 4", q, len(got), n)
			}
		}
	}
	if anchors != 180 {
		t.Errorf("%d anchors, want the 180 queries with judged negatives", anchors)
	}
	// Same seed, same draws, on one thread.
	prev := runtime.GOMAXPROCS(1)
	one, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, Negatives: negs}, cfg)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	for s := range p.Splits {
		if !slices.Equal(one.Splits[s].NegativeIndex, p.Splits[s].NegativeIndex) || !slices.Equal(one.Splits[s].NegativePool, p.Splits[s].NegativePool) {
			t.Fatalf("split %d: the draws depend on the threads", s)
		}
	}
	// Without JudgedNegatives the same pairs draw at random, as before.
	plain, err := Make(Items{N: nr, Queries: nq, Pairs: pairs}, MakeConfig{K: 1, KNeg: 4, Split: testSplit, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(plain.Splits[0].Anchors) + len(plain.Splits[1].Anchors) + len(plain.Splits[2].Anchors) + len(plain.Splits[3].Anchors); n != nq {
		t.Errorf("without judged negatives %d anchors, want %d", n, nq)
	}
	// Each split is the plain one's, less the queries without judged
	// negatives, and each query drew the positive it drew there.
	for s, sp := range p.Splits {
		ps := plain.Splits[s]
		var want []int
		posOf := map[int]int{}
		for a, q := range ps.Anchors {
			if q%10 != 9 {
				want = append(want, q)
			}
			posOf[q] = ps.PositivePool[ps.PositiveIndex[a]]
		}
		if !slices.Equal(sp.Anchors, want) {
			t.Fatalf("split %d: anchors %v, want the plain split's less those without judged negatives, %v", s, sp.Anchors, want)
		}
		for a, q := range sp.Anchors {
			if r := sp.PositivePool[sp.PositiveIndex[a]]; r != posOf[q] {
				t.Fatalf("split %d: query %d drew positive %d, and %d without judged negatives", s, q, r, posOf[q])
			}
		}
	}
	for _, c := range []struct {
		name  string
		items Items
		cfg   MakeConfig
		want  string
	}{
		{"no judged pair", Items{N: nr, Queries: nq, Pairs: pairs}, cfg,
			"no pair is judged not relevant: give pairs with a score each, 0 or less"},
		{"judged without the flag", Items{N: nr, Queries: nq, Pairs: pairs, Negatives: negs}, MakeConfig{K: 1, KNeg: 4, Split: testSplit},
			"pairs judged not relevant given without JudgedNegatives"},
		{"with hard negatives", Items{N: nr, Queries: nq, Pairs: pairs, Negatives: negs, Rows: make([]float32, nr), QueryRows: make([]float32, nq), D: 1},
			MakeConfig{K: 1, KNeg: 4, Split: testSplit, JudgedNegatives: true, HardNegatives: 2},
			"judged negatives and hard negatives (-kneg-hard) both choose the negatives"},
		{"labels", Items{N: 40, Labels: make([]int64, 40)}, MakeConfig{K: 1, Split: testSplit, JudgedNegatives: true},
			"judged negatives are a query's pairs judged not relevant (scored 0 or less): give queries and scored relevance pairs"},
		{"row out of range", Items{N: nr, Queries: nq, Pairs: pairs, Negatives: [][2]int{{0, nr}}}, cfg,
			"pair 0 judged not relevant names row 401, there are 401 rows of embeddings"},
		{"query out of range", Items{N: nr, Queries: nq, Pairs: pairs, Negatives: [][2]int{{nq, 0}}}, cfg,
			"pair 0 judged not relevant names query 200, there are 200 queries"},
	} {
		_, err := Make(c.items, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestPairIDsJudged: with Judged, the pairs scored 0 or less — not those
// below a least relevant score but above 0 — are kept as negatives, from
// a qrels text and an array alike, resolved by id; without it they are
// left out, as before.
func TestPairIDsJudged(t *testing.T) {
	qrels := "query-id\tcorpus-id\tscore\nq0\td1\t2\nq0\td2\t0\nq1\td2\t1\nq1\td0\t0\nq1\td9\t0\nq0\td0\t-1\n"
	two := 2.0
	for _, c := range []struct {
		name      string
		judged    bool
		min       *float64
		pairs     [][2]int
		negatives [][2]int
		note      string
	}{
		{"judged", true, nil, [][2]int{{0, 1}, {1, 2}}, [][2]int{{0, 2}, {1, 0}, {0, 0}},
			"4 pairs scored 0 or less, judged not relevant: the queries' negatives (3 naming given rows)"},
		{"judged, least score 2", true, &two, [][2]int{{0, 1}}, [][2]int{{0, 2}, {1, 0}, {0, 0}},
			"5 pairs scored below the least relevant score 2: no positives — those above 0 relevant at a lower grade, no query's negatives either —, and those scored 0 or less (3 naming given rows) judged not relevant: the queries' negatives"},
		{"left out", false, nil, [][2]int{{0, 1}, {1, 2}}, nil,
			"3 pairs scored 0 or less (and 1 more naming an id not given), judged not relevant: left out"}, // the fourth names row d9, not given
	} {
		ids, err := NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1", "d2"})
		if err != nil {
			t.Fatal(err)
		}
		ids.Judged, ids.MinScore = c.judged, c.min
		pairs, err := ReadQrels(strings.NewReader(qrels), "qrels.tsv", ids)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pairs, c.pairs) || !slices.Equal(ids.Negatives, c.negatives) || ids.UnscoredNote() != c.note {
			t.Errorf("%s: pairs %v negatives %v note %q, want %v %v %q", c.name, pairs, ids.Negatives, ids.UnscoredNote(), c.pairs, c.negatives, c.note)
		}
		// The same as an (m, 3) array of strings.
		a := Array{Shape: []int{6, 3}, Str: strings.Fields(strings.ReplaceAll(qrels[strings.Index(qrels, "\n")+1:], "\t", " "))}
		ids2, _ := NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1", "d2"})
		ids2.Judged, ids2.MinScore = c.judged, c.min
		pairs2, err := ids2.Rows(a, "pairs")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pairs2, c.pairs) || !slices.Equal(ids2.Negatives, c.negatives) {
			t.Errorf("%s, array: pairs %v negatives %v, want %v %v", c.name, pairs2, ids2.Negatives, c.pairs, c.negatives)
		}
	}
	// Pairs scored 0 and also relevant (before or after) stay relevant:
	// the note counts them apart from the negatives.
	for _, c := range []struct {
		text string
		min  *float64
		want string
	}{
		{qrels + "q1\td2\t0\nq0\td0\t3\n", nil, "5 pairs scored 0 or less, judged not relevant: the queries' negatives (2 naming given rows, besides 2 also scored relevant, kept relevant)"},
		{"q0\td1\t0\n" + qrels[strings.Index(qrels, "\n")+1:], &two, "6 pairs scored below the least relevant score 2: no positives — those above 0 relevant at a lower grade, no query's negatives either —, and those scored 0 or less (3 naming given rows, besides 1 also scored relevant, kept relevant) judged not relevant"},
	} {
		ids, err := NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1", "d2"})
		if err != nil {
			t.Fatal(err)
		}
		ids.Judged, ids.MinScore = true, c.min
		if _, err := ReadQrels(strings.NewReader(c.text), "qrels.tsv", ids); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ids.UnscoredNote(), c.want) {
			t.Errorf("%q: note %q, want %q", c.text, ids.UnscoredNote(), c.want)
		}
	}
}

// TestMakePairsQueryLabels: a label of each query (its language) splits
// the queries stratified by it and labels every split's anchors, while
// each query keeps its relevant rows as positives; a missing label is
// refused, and a label absent from the calibration or test split is
// warned of.
func TestMakePairsQueryLabels(t *testing.T) {
	const nq, nr = 400, 300
	var pairs [][2]int
	for q := range nq {
		pairs = append(pairs, [2]int{q, (q * 7) % nr}, [2]int{q, (q*7 + 1) % nr})
	}
	// Five languages of shares 50, 20, 15, 10 and 5%.
	share := []int{200, 80, 60, 40, 20}
	labels := make([]int64, 0, nq)
	for l, n := range share {
		labels = append(labels, slices.Repeat([]int64{int64(l)}, n)...)
	}
	rand.New(rand.NewPCG(3, 0)).Shuffle(nq, func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })
	cfg := MakeConfig{K: 1, KNeg: 5, Split: [4]float64{0.5, 0.1, 0.2, 0.2}, Seed: 4, LabelNames: []string{"en", "de", "ja", "hi", "sw"}}
	p, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, QueryLabels: labels}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings %q, want none", p.Warnings)
	}
	for s, sp := range p.Splits {
		for a, q := range sp.Anchors {
			if sp.Labels[a] != labels[q] {
				t.Fatalf("%s split, anchor %d (query %d): label %d, want %d", sp.Name, a, q, sp.Labels[a], labels[q])
			}
			if r := sp.PositivePool[sp.PositiveIndex[a]]; r != (q*7)%nr && r != (q*7+1)%nr {
				t.Fatalf("query %d: positive row %d is not relevant", q, r)
			}
		}
		for l, n := range share { // stratified: each language its split's share
			if want := int(math.Round(cfg.Split[s] * float64(n))); p.Classes[s][int64(l)] != want {
				t.Errorf("%s split: %d queries of label %d, want %d", sp.Name, p.Classes[s][int64(l)], l, want)
			}
		}
	}
	// Without labels, the same queries split at random: nothing labelled.
	plain, err := Make(Items{N: nr, Queries: nq, Pairs: pairs}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Splits[Cal].Labels != nil || plain.Classes[Cal] != nil {
		t.Errorf("unlabelled queries' cal split has labels %v", plain.Classes[Cal])
	}
	for _, c := range []struct {
		name   string
		labels []int64
		want   string
		input  string // the InputError's Input; "" for none
	}{
		{"missing", append([]int64{-1, -1}, labels[2:]...), `bundle: 2 of the queries with a relevant row have a query label that marks a missing value (-1: 2; the first: query 0): as one class they would share a threshold with -calibration class; give each query its label, or leave those queries out (-missing-labels drop`, InputQueryLabels},
		{"count", labels[1:], "bundle: 399 query labels for 400 queries", ""},
	} {
		_, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, QueryLabels: c.labels}, cfg)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if got := inputAtFault(err); got != c.input {
			t.Errorf("%s: the input at fault %q, want %q", c.name, got, c.input)
		}
	}
	// -missing-labels drop: those queries are in no split, and counted.
	dropCfg := cfg
	dropCfg.MissingLabels = MissingDropped
	d, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, QueryLabels: append([]int64{-1, -1}, labels[2:]...)}, dropCfg)
	if err != nil {
		t.Fatal(err)
	}
	anchors := 0
	for _, sp := range d.Splits {
		anchors += len(sp.Anchors)
		if slices.Contains(sp.Anchors, 0) || slices.Contains(sp.Anchors, 1) || slices.Contains(sp.Labels, -1) {
			t.Errorf("%s split holds a query of no label", sp.Name)
		}
	}
	if want := "2 of the queries with a relevant row have a query label that marks a missing value (-1: 2; the first: query 0): left out of every split"; anchors != nq-2 || !slices.Equal(d.Warnings, []string{want}) {
		t.Errorf("dropped: %d anchors, warnings %q; want %d and %q", anchors, d.Warnings, nq-2, want)
	}
	// A language of 2 queries (one to fit, one to calibrate) has none in the test split.
	rare := slices.Clone(labels)
	n := 0
	for q := range rare {
		if rare[q] == 4 {
			if n++; n > 2 {
				rare[q] = 0
			}
		}
	}
	w, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, QueryLabels: rare}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `the test split holds no query of the query label "sw" (too few queries for its share 0.2): -calibration class has no threshold for it, and -per-class no row`
	if !slices.Contains(w.Warnings, want) {
		t.Errorf("warnings %q, want %q among them", w.Warnings, want)
	}
}

// TestInputsQueryLabels: query labels go with queries, one a query.
func TestInputsQueryLabels(t *testing.T) {
	e := Embeddings{N: 4, D: 2, Rows: make([]float32, 8), Source: "p.npy"}
	q := Embeddings{N: 3, D: 2, Rows: make([]float32, 6), Source: "q.npy"}
	for _, c := range []struct {
		name string
		in   Inputs
		want string
	}{
		{"no queries", Inputs{Embeddings: e, Labels: []int64{0, 0, 1, 1}, QueryLabels: []int64{0, 1, 2}, QueryLabelsSource: "lang.csv"}, "lang.csv: query labels are one label a query of relevance pairs: give them with queries and pairs"},
		{"header", Inputs{Embeddings: e, Queries: &q, Pairs: [][2]int{{0, 0}}, QueryLabels: []int64{0, 1, 2, 0}, QueryLabelsSource: "lang.csv"}, "lang.csv: 4 query labels for the 3 queries of q.npy (one line too many: a header line, or a blank line at the end, is read as a label)"},
	} {
		if _, err := c.in.Items(); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	it, err := Inputs{Embeddings: e, Queries: &q, Pairs: [][2]int{{0, 0}}, QueryLabels: []int64{0, 1, 2}}.Items()
	if err != nil || !slices.Equal(it.QueryLabels, []int64{0, 1, 2}) {
		t.Errorf("Items: %v, %v", it.QueryLabels, err)
	}
}

// TestLabelSetsOOD: several labels a row with OOD labels — every row
// that carries one is the ood split's anchor, and no row of the other
// splits (anchor, positive or negative) carries one; -ood-cal-share sets
// in-distribution queries aside, in no split; the in-distribution
// queries are split whole. A label no row carries, and every row held
// out, are refused.
func TestLabelSetsOOD(t *testing.T) {
	const n, c, d = 400, 6, 3
	rng := rand.New(rand.NewPCG(8, 8))
	m, sets, rows := multiHot(t, rng, n, c, c-1, d, 0.3) // the last column stays empty
	e := Embeddings{Source: "e.npy", Rows: rows, N: n, D: d}
	items, err := Inputs{Embeddings: e, LabelSets: sets, LabelsSource: "m.npy"}.Items()
	if err != nil {
		t.Fatal(err)
	}
	carries := func(r int, ls ...int64) bool {
		return slices.ContainsFunc(ls, func(l int64) bool { return m[r*c+int(l)] == 1 })
	}
	for _, cfg := range []MakeConfig{
		{K: 2, KNeg: 5, Split: testSplit, Seed: 3, AllowFewer: true, OODClasses: []int64{1}},
		{K: 3, KNeg: 4, Split: testSplit, Seed: 4, AllowFewer: true, OODClasses: []int64{0, 2}, OODCalShare: 0.2},
		{K: 1, KNeg: 4, Split: [4]float64{0, 0, 0.5, 0.5}, Seed: 7, AllowFewer: true, OODClasses: []int64{3, 3}, OODCalShare: 0.1},
		{K: 2, KNeg: 6, Split: testSplit, Seed: 5, AllowFewer: true, OODClasses: []int64{4}, HardNegatives: 3, HardCandidates: 20},
		{K: 2, KNeg: 5, Split: testSplit, Seed: 6, AllowFewer: true, OODCalShare: 0.2}, // ood-cal alone
	} {
		p, err := Make(items, cfg)
		if err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		var want []string
		for s, share := range cfg.Split {
			if share > 0 {
				want = append(want, SplitNames[s])
			}
		}
		if cfg.OODCalShare > 0 {
			want = append(want, "ood-cal")
		}
		if len(cfg.OODClasses) > 0 {
			want = append(want, "ood")
		}
		if names := p.Made(); !slices.Equal(names, want) {
			t.Fatalf("%+v: splits %v, want %v", cfg, names, want)
		}
		seen := map[int]string{} // each query's split
		for _, sp := range p.Splits {
			for _, r := range sp.Anchors {
				if s, twice := seen[r]; twice {
					t.Fatalf("%+v: row %d in the %s and the %s splits", cfg, r, s, sp.Name)
				}
				seen[r] = sp.Name
				if held := carries(r, cfg.OODClasses...); held != (sp.Name == "ood") {
					t.Fatalf("%+v: row %d, in the %s split, carries an OOD label: %v", cfg, r, sp.Name, held)
				}
			}
			if sp.Name == "ood" || sp.Name == "ood-cal" {
				if sp.K != 0 || sp.PositiveIndex != nil || sp.PositivePool != nil || sp.Labels != nil {
					t.Errorf("%+v: the %s split holds more than anchors: %+v", cfg, sp.Name, sp)
				}
				continue
			}
			if sp.Omitted {
				continue
			}
			for _, r := range sp.PositivePool { // the pool of positives and negatives alike
				if carries(r, cfg.OODClasses...) {
					t.Fatalf("%+v: row %d, in the %s split's pool, carries an OOD label", cfg, r, sp.Name)
				}
			}
		}
		related := 0 // in-distribution rows that share a label with another
		for q := range n {
			if carries(q, cfg.OODClasses...) {
				continue
			}
			for r := range n {
				if r != q && !carries(r, cfg.OODClasses...) && slices.ContainsFunc(sets[q], func(l int32) bool { return m[r*c+int(l)] == 1 }) {
					related++
					if _, ok := seen[q]; !ok {
						t.Fatalf("%+v: row %d shares a label with row %d and is in no split", cfg, q, r)
					}
					break
				}
			}
		}
		held := 0 // rows that carry an OOD label, counted from the matrix
		for r := range n {
			if carries(r, cfg.OODClasses...) {
				held++
			}
		}
		if len(seen) != related+held {
			t.Errorf("%+v: %d rows in the splits, want %d related in distribution and %d held out", cfg, len(seen), related, held)
		}
		man := NewManifest("x", Inputs{Embeddings: e, LabelSets: sets}, cfg, p)
		if said := strings.Contains(man.Positives, "OOD label") && strings.Contains(man.Negatives, "carry no OOD label"); said != (held > 0) {
			t.Errorf("%+v: the manifest's relations: %q, %q", cfg, man.Positives, man.Negatives)
		}
	}
	for _, c := range []struct {
		name string
		cfg  MakeConfig
		want string
	}{
		{"a label no row carries", MakeConfig{K: 2, AllowFewer: true, OODClasses: []int64{5}}, "bundle: OOD label 5 is carried by no row (the rows carry 0, 1, 2, 3, 4)"},
		{"a label past the columns", MakeConfig{K: 2, AllowFewer: true, OODClasses: []int64{9}}, "bundle: OOD label 9 is carried by no row"},
	} {
		if _, err := Make(items, c.cfg); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	one := Inputs{Embeddings: Embeddings{Source: "e.npy", Rows: rows[:4*d], N: 4, D: d}, LabelSets: [][]int32{{0}, {0, 1}, {1}, {0}}, LabelsSource: "m.npy"}
	oneItems, err := one.Items()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Make(oneItems, MakeConfig{K: 1, AllowFewer: true, OODClasses: []int64{0, 1}}); err == nil || err.Error() != "bundle: every row carries an OOD label (0, 1): nothing is left in distribution" {
		t.Errorf("every row held out: %v", err)
	}
}

// multiHot draws an n × c multi-hot label matrix m, row i carrying label
// j < used with probability p/(j+1) (the columns from used on empty), its
// LabelSets, and n Gaussian rows of dimension d.
func multiHot(t *testing.T, rng *rand.Rand, n, c, used, d int, p float64) (m []int64, sets [][]int32, rows []float32) {
	t.Helper()
	m = make([]int64, n*c)
	for i := range n {
		for j := range used {
			if rng.Float64() < p/float64(j+1) {
				m[i*c+j] = 1
			}
		}
	}
	rows = make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	sets, ok, err := LabelSets(Array{Shape: []int{n, c}, I64: m}, "m.npy")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	return m, sets, rows
}

// TestMissingSessionsDropOneLeft: dropping the rows of no session can
// leave a group one session; the refusal then says the rows were left out
// and that the sessions are counted among the rows kept.
func TestMissingSessionsDropOneLeft(t *testing.T) {
	t.Parallel()
	const groupsN, per = 40, 12
	groups, sessions := make([]int64, groupsN*per), make([]int64, groupsN*per)
	for i := range groups {
		groups[i], sessions[i] = int64(i/per), int64(i%3)
		if i/per == 0 && i%3 != 0 {
			sessions[i] = -1 // group 0 keeps session 0 alone
		}
	}
	cfg := MakeConfig{K: 2, KNeg: 3, Split: testSplit, Seed: 5, MissingLabels: MissingDropped}
	_, err := Make(Items{N: len(groups), Groups: groups, Sessions: sessions}, cfg)
	for _, want := range []string{"no row in another session than their anchor's (the first: group 0,",
		"8 of 480 rows have a session id that marks a missing value (-1: 8), taken for no session",
		"count them among the rows kept"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant %q in it", err, want)
		}
	}
}

// TestAlikeNames: label names that differ only by case or spaces around
// them are warned of, the first three sets named; distinct ones are not.
func TestAlikeNames(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"cat", "dog"}, ""},
		{nil, ""},
		{[]string{"Sky", "dog", "sky"}, `labels: names differ only by case or by spaces around them ("Sky" and "sky"): each is a label of its own`},
		{[]string{"a", "A", "b ", "b", "c", "C", "d", "D"}, `labels: 4 sets of names differ only by case or by spaces around them ("a" and "A"; "b " and "b"; "c" and "C", … 4 in all)`},
	} {
		if got := alikeNames(c.names); !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("alikeNames(%q) = %q, want %q", c.names, got, c.want)
		}
	}
	// Make warns of them.
	labels := make([]int64, 300)
	for i := range labels {
		labels[i] = int64(i % 3)
	}
	p, err := Make(Items{N: 300, Labels: labels}, MakeConfig{K: 2, Split: testSplit, Seed: 1, LabelNames: []string{"Sky", "dog", "sky"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, `("Sky" and "sky")`) }) {
		t.Errorf("Make: warnings %q", p.Warnings)
	}
}

// TestPlanBundleRefusals: a split the plan did not make is an error, not
// a panic; a row holding NaN is named by its row in the caller's array,
// by Inspect and by the Bundle of the split that holds it.
func TestPlanBundleRefusals(t *testing.T) {
	t.Parallel()
	const n, d = 300, 4
	labels := make([]int64, n)
	rows := make([]float32, n*d)
	for i := range labels {
		labels[i] = int64(i % 3)
		for j := range d {
			rows[i*d+j] = float32(i%3) + float32(j)/10
		}
	}
	p, err := Make(Items{N: n, Labels: labels}, MakeConfig{K: 2, Split: testSplit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[int]string{OOD: "bundle: the ood split is not made: no MakeConfig.OODClasses held out", OODCal: "bundle: the ood-cal split is not made: MakeConfig.OODCalShare is 0",
		-1: "bundle: split -1: want one of Fit (0) to OOD (5); the plan made fit, val, cal, test", 17: "split 17: want one of"} {
		if _, err := p.Bundle(s, rows, nil, d); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("split %d: %v, want %q", s, err, want)
		}
	}
	const bad = 123
	rows[bad*d+1] = float32(math.NaN())
	if err := p.Inspect(rows, nil, d); err == nil || !strings.Contains(err.Error(), "bundle: embeddings: row 123, coordinate 1 is NaN (1 row of 300 holds NaN or ±Inf): leave it out first") {
		t.Errorf("Inspect: %v", err)
	}
	var holder string
	for s, sp := range p.Splits {
		if slices.Contains(sp.Anchors, bad) {
			holder = sp.Name
			if _, err := p.Bundle(s, rows, nil, d); err == nil || !strings.Contains(err.Error(), "bundle: embeddings: row 123, coordinate 1 is NaN (in the "+sp.Name+" split)") {
				t.Errorf("Bundle of the %s split: %v", sp.Name, err)
			}
		}
	}
	if holder == "" {
		t.Fatal("no split holds row 123")
	}
}

// TestMakeContext: a done context stops a bundling with its error, and
// an open one gives Make's plan.
func TestMakeContext(t *testing.T) {
	_, labels := labelled(1, 4, 300, 200, 120, 80)
	cfg := MakeConfig{K: 5, KNeg: 7, Split: testSplit, Seed: 9}
	in := Items{N: len(labels), Labels: labels}
	want, err := Make(in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := MakeContext(context.Background(), in, cfg)
	if err != nil || !reflect.DeepEqual(got.Splits, want.Splits) {
		t.Errorf("MakeContext: %v, or another plan", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MakeContext(ctx, in, cfg); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v, want context.Canceled", err)
	}
}

// TestMakeJudgedNegativesShare: the repeats warning's advice names the
// share of queries the -kneg it advises draws distinct negatives for, as
// counted (it said "nine queries in ten" where every query had them, and
// where 95% had).
func TestMakeJudgedNegativesShare(t *testing.T) {
	const nq, nr = 200, 401
	for _, c := range []struct {
		few  int // queries with 1 judged negative (the others 3)
		want string
	}{
		{10, "-kneg 3 (kneg=3 in Python) draws distinct ones for 190 of the 200 queries (95%)"},
		{0, "-kneg 3 (kneg=3 in Python) draws distinct ones for every query"},
		{nq, "-kneg 1 (kneg=1 in Python) draws distinct ones for every query"},
	} {
		var pairs, negs [][2]int
		for q := range nq {
			pairs = append(pairs, [2]int{q, q})
			n := 3
			if q < c.few {
				n = 1
			}
			for j := range n {
				negs = append(negs, [2]int{q, 201 + (q*13+j*37)%200})
			}
		}
		p, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, Negatives: negs}, MakeConfig{K: 1, KNeg: 4, Split: testSplit, Seed: 9, JudgedNegatives: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Warnings) != 1 || !strings.HasSuffix(p.Warnings[0], c.want) {
			t.Errorf("%d queries with one judged negative: warnings %q, want one ending %q", c.few, p.Warnings, c.want)
		}
		// -kneg 2: the tenth of the queries that repeat one are all that
		// do; no -kneg to advise (it advised -kneg 3, a larger one).
		if c.few == 10 {
			p, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, Negatives: negs}, MakeConfig{K: 1, KNeg: 2, Split: testSplit, Seed: 9, JudgedNegatives: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Warnings) != 1 || strings.Contains(p.Warnings[0], "-kneg") || !strings.HasSuffix(p.Warnings[0], "(each query weighs alike in exclusion; from 1 to 3 a query)") {
				t.Errorf("-kneg 2, 10 of 200 queries with one judged negative: %q", p.Warnings)
			}
		}
	}
}

// TestMakeGradedNeverNegatives: rows relevant at a lower grade (Graded: a
// qrels file's 1s under a least relevant score of 2) are never drawn as
// their query's negatives, random or hard, and count as rows relevant to
// it where too few others are left; other queries may draw them. (A RAG
// user's hard negatives were 54% such rows.)
func TestMakeGradedNeverNegatives(t *testing.T) {
	const nq, nr, d = 20, 60, 2
	var pairs, graded [][2]int
	for q := range nq {
		pairs = append(pairs, [2]int{q, q})
		for r := 20; r < 38; r++ {
			graded = append(graded, [2]int{q, r})
		}
	}
	graded = append(graded, [2]int{0, 0}, [2]int{1, 20}) // a relevant row again, a pair twice: no matter
	rng := rand.New(rand.NewPCG(49, 3))
	rows, queries := make([]float32, nr*d), make([]float32, nq*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	for i := range queries {
		queries[i] = float32(rng.NormFloat64())
	}
	for _, hard := range []int{0, 5} {
		items := Items{N: nr, Queries: nq, Pairs: pairs, Graded: graded, Rows: rows, QueryRows: queries, D: d}
		p, err := Make(items, MakeConfig{K: 1, KNeg: 5, HardNegatives: hard, HardCandidates: 40, Split: testSplit, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		drawn := 0
		for _, sp := range p.Splits {
			for a := range sp.Anchors {
				for _, l := range sp.NegativeIndex[a*5 : (a+1)*5] {
					if r := sp.NegativePool[l]; r >= 20 && r < 38 || r == sp.Anchors[a] {
						t.Fatalf("hard %d: query %d drew row %d, relevant to it", hard, sp.Anchors[a], r)
					}
					drawn++
				}
			}
		}
		if drawn == 0 {
			t.Fatalf("hard %d: no negatives drawn", hard)
		}
	}
	// 60 rows, 1 relevant and 18 at a lower grade: 41 others, too few
	// for 45 negatives.
	if _, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, Graded: graded}, MakeConfig{K: 1, KNeg: 45, Split: testSplit, Seed: 3}); err == nil || !strings.Contains(err.Error(), "has 19 rows relevant to it (18 of them at a lower grade than the least relevant score: no positives, and no negatives either) among 60, too few others for 45 negatives") {
		t.Errorf("too few others: %v", err)
	}
}
