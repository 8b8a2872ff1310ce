package conformal

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// spread scales every positive's offset from its anchor by f: a shift of
// the test data's positives away from their anchors.
func spread(b *bundle.Bundle, f float32) *bundle.Bundle {
	for i := range b.N {
		for a := range b.K {
			for j := range b.D {
				p := &b.Positives[(i*b.K+a)*b.D+j]
				*p = b.Anchors[i*b.D+j] + f*(*p-b.Anchors[i*b.D+j])
			}
		}
	}
	return b
}

// TestCheckExchangeable: over seeded draws of a calibration and a test
// bundle from one law, P is a valid p-value (P ≤ u in at most a share u of
// the draws, and not far fewer: the check is exact, not merely
// conservative); the counts are the test units' own (one positive each:
// the scores outside the threshold, counted directly); and a test bundle
// whose positives spread 3 times as far is found (P < 10⁻³) in most
// draws (85%: 99 calibration scores bound the power), for the marginal
// and the PAC rank.
func TestCheckExchangeable(t *testing.T) {
	t.Parallel()
	const trials, n, nTest, k = 2000, 99, 200, 4
	g := geometry.Ball{D: 2}
	for _, c := range []struct {
		name string
		opt  Options
	}{{"marginal", Options{}}, {"pac", Options{Mode: PAC, Delta: 0.1}}} {
		rng := rand.New(rand.NewPCG(21, uint64(c.opt.Mode)))
		var below05, below20, found int
		for tr := range trials {
			cal := synthetic(rng, n, k)
			opt := c.opt
			opt.Seed = uint64(tr)
			set, err := Calibrate(g, cal, 0.1, opt)
			if err != nil {
				t.Fatal(err)
			}
			e, err := set.CheckExchangeable(synthetic(rng, nTest, k))
			if err != nil {
				t.Fatal(err)
			}
			if e.Units != nTest || e.Expected != float64(n+1-set.Calibration.Rank)/float64(n+1) || e.Classes != 0 {
				t.Fatalf("%s: %+v: want %d units, expected share %v", c.name, e, nTest, float64(n+1-set.Calibration.Rank)/float64(n+1))
			}
			if e.P <= 0.05 {
				below05++
			}
			if e.P <= 0.2 {
				below20++
			}
			if tr%10 == 0 { // the shifted draws: fewer, each a certain find
				e, err := set.CheckExchangeable(spread(synthetic(rng, nTest, k), 3))
				if err != nil {
					t.Fatal(err)
				}
				if e.P < 1e-3 {
					found++
				}
			}
		}
		for _, r := range []struct {
			u     float64
			count int
		}{{0.05, below05}, {0.2, below20}} {
			share := float64(r.count) / trials
			t.Logf("%s: P ≤ %v in %.4f of the draws", c.name, r.u, share)
			se := math.Sqrt(r.u * (1 - r.u) / trials)
			if share > r.u+4.5*se || share < r.u/2 {
				t.Errorf("%s: P ≤ %v in %.4f of %d exchangeable draws, want about %v (at most %.4f)", c.name, r.u, share, trials, r.u, r.u+4.5*se)
			}
		}
		t.Logf("%s: a 3-fold spread found in %d of %d draws", c.name, found, trials/10)
		if found < trials/10*85/100 {
			t.Errorf("%s: a 3-fold spread found in %d of %d draws, want 85%%", c.name, found, trials/10)
		}
	}

	// The counts, on a test bundle of one positive an anchor: no draw.
	rng := rand.New(rand.NewPCG(3, 4))
	set, err := Calibrate(g, synthetic(rng, 199, k), 0.05, Options{})
	if err != nil {
		t.Fatal(err)
	}
	test := spread(synthetic(rng, 500, 1), 1.2)
	diffs := make([]float32, test.N*test.D)
	for i := range test.N {
		test.PositiveDiff(diffs[i*test.D:(i+1)*test.D], i, 0)
	}
	out := 0
	for _, v := range g.Scores(nil, diffs) {
		if v > set.Threshold {
			out++
		}
	}
	e, err := set.CheckExchangeable(test)
	if err != nil {
		t.Fatal(err)
	}
	l := 200 - set.Calibration.Rank
	if e.Units != 500 || e.Outside != out || e.P != ExchangeableTail(out, 500, 199, l) {
		t.Errorf("%+v: want %d of 500 outside, P %v", e, out, ExchangeableTail(out, 500, 199, l))
	}
}

// TestCheckExchangeableClasses: a class-conditional set checks each class
// against its own threshold — all together (the tail of the sum of their
// counts) and the least likely alone, named, with its P multiplied by the
// classes checked; unshifted, the sum's P is small no more often than a
// p-value is; a class without a finite threshold is not checked; pooled
// and whole-space sets have no check.
func TestCheckExchangeableClasses(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	g := geometry.Ball{D: 2}
	labelled := func(n int, shift map[int64]float32) *bundle.Bundle {
		b := synthetic(rng, n, 3)
		b.Labels = make([]int64, n)
		for i := range n {
			l := int64(i % 3)
			b.Labels[i] = l
			if f, ok := shift[l]; ok {
				for a := range b.K {
					for j := range b.D {
						p := &b.Positives[(i*b.K+a)*b.D+j]
						*p = b.Anchors[i*b.D+j] + f*(*p-b.Anchors[i*b.D+j])
					}
				}
			}
		}
		return b
	}
	set, err := Calibrate(g, labelled(600, nil), 0.1, Options{Mode: Class, LabelNames: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := set.CheckExchangeable(labelled(900, map[int64]float32{1: 2.5}))
	if err != nil {
		t.Fatal(err)
	}
	w := e.Worst
	if w == nil || w.Label != 1 || w.Name != "b" || e.Classes != 3 || w.Units != 300 || e.Units != 900 || w.P > 1e-3 || e.P > 1e-3 {
		t.Errorf("class b shifted: %+v, worst %+v", e, w)
	}
	// Bonferroni: the worst class's P is its tail times 3; the sum's is
	// the convolution's of the three classes' laws.
	k := set.Classes[1]
	if want := min(1, 3*ExchangeableTail(w.Outside, w.Units, k.N, k.N+1-k.Rank)); w.P != want {
		t.Errorf("the class's P %v, want %v", w.P, want)
	}
	var groups []TailGroup
	for _, k := range set.Classes {
		groups = append(groups, TailGroup{M: 300, N: k.N, L: k.N + 1 - k.Rank})
	}
	if want := ExchangeableSumTail(e.Outside, groups); e.P != want {
		t.Errorf("P %v, want %v", e.P, want)
	}
	// Unshifted, over 1000 draws of a calibration and a test bundle: the
	// sum's P ≤ 0.05 in about 5% (a little less: the counts' steps; 4.1%
	// over 4000 draws).
	low := 0
	for range 1000 {
		cal, err := Calibrate(g, labelled(600, nil), 0.1, Options{Mode: Class})
		if err != nil {
			t.Fatal(err)
		}
		e, err := cal.CheckExchangeable(labelled(300, nil))
		if err != nil {
			t.Fatal(err)
		}
		if e.P <= 0.05 {
			low++
		}
	}
	t.Logf("unshifted: the sum's P ≤ 0.05 in %d of 1000 draws", low)
	if low > 50+31 || low < 25 { // 5% of 1000 is 50, 4.5 binomial sd 31
		t.Errorf("unshifted: P ≤ 0.05 in %d of 1000 draws", low)
	}
	if _, err := set.CheckExchangeable(synthetic(rng, 50, 3)); err == nil {
		t.Error("a class-conditional set checked a bundle without labels")
	}

	// A class of too few calibration anchors has no finite threshold.
	few := labelled(60, nil)
	few.Labels[0], few.Labels[3] = 7, 7
	small, err := Calibrate(g, few, 0.1, Options{Mode: Class, AllowInfinite: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err = small.CheckExchangeable(labelled(300, nil))
	if err != nil {
		t.Fatal(err)
	}
	if e == nil || e.Classes != 3 {
		t.Errorf("class 7 (2 anchors, no finite threshold) checked, or others not: %+v", e)
	}

	pooled, err := Calibrate(g, synthetic(rng, 100, 3), 0.1, Options{Mode: Pooled})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Calibrate(g, synthetic(rng, 5, 3), 0.1, Options{AllowInfinite: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Set{"pooled": pooled, "whole space": whole} {
		if e, err := s.CheckExchangeable(synthetic(rng, 100, 3)); e != nil || err != nil {
			t.Errorf("%s: %+v, %v; want no check", name, e, err)
		}
	}
}

// TestCheckOtherUnits: a check says when its units are of another kind
// than the set's calibration units (disjoint pairs against anchors with
// one positive each, or the reverse), and not when they are of one kind.
func TestCheckOtherUnits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	const n, k = 300, 4
	paired := func() *bundle.Bundle { // positives among its own anchors, of their class
		b := synthetic(rng, n, k)
		b.Positives = nil
		b.Labels = make([]int64, n)
		b.PositiveIndex = make([]int64, n*k)
		for i := range n {
			b.Labels[i] = int64(i % 3)
			for a := range k {
				j := rng.IntN(n/3)*3 + i%3
				if j == i {
					j = (j + 3) % n
				}
				b.PositiveIndex[i*k+a] = int64(j)
			}
		}
		return b
	}
	g := geometry.Ball{D: 2}
	for _, c := range []struct {
		name  string
		cal   *bundle.Bundle
		test  *bundle.Bundle
		pairs bool
		other bool
	}{
		{"anchors, anchors", synthetic(rng, n, k), synthetic(rng, n, k), false, false},
		{"pairs, pairs", paired(), paired(), true, false},
		{"anchors, pairs", synthetic(rng, n, k), paired(), true, true},
		{"pairs, anchors", paired(), synthetic(rng, n, k), false, true},
	} {
		set, err := Calibrate(g, c.cal, 0.1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := set.CheckExchangeable(c.test)
		if err != nil || e == nil || e.Pairs != c.pairs || e.OtherUnits != c.other {
			t.Errorf("%s: %+v, %v; want pairs %v, other units %v", c.name, e, err, c.pairs, c.other)
		}
	}
}

// TestCheckClasses: a marginal set judged class by class. Where one class
// of the test anchors has positives spread three times as far (a language
// the encoder embeds worse), that class's P is tiny and the other's is
// not; classes drawn alike give a valid p-value (P ≤ 0.05 in at most
// about 5% of the draws); a class-conditional set and a test bundle
// without labels have nothing to check here.
func TestCheckClasses(t *testing.T) {
	t.Parallel()
	const trials, n, nTest, k = 400, 199, 200, 4
	g := geometry.Ball{D: 2}
	rng := rand.New(rand.NewPCG(23, 1))
	labelled := func(b *bundle.Bundle) *bundle.Bundle {
		b.Labels = make([]int64, b.N)
		for i := range b.Labels {
			b.Labels[i] = int64(i % 2)
		}
		return b
	}
	below05, found := 0, 0
	for tr := range trials {
		cal := labelled(synthetic(rng, n, k))
		set, err := Calibrate(g, cal, 0.1, Options{Seed: uint64(tr)})
		if err != nil {
			t.Fatal(err)
		}
		alike, err := set.CheckClasses(labelled(synthetic(rng, nTest, k)))
		if err != nil {
			t.Fatal(err)
		}
		if len(alike) != 2 || alike[0].Label != 0 || alike[1].Label != 1 || alike[0].Units != nTest/2 {
			t.Fatalf("checks %+v: want classes 0 and 1 of %d units each", alike, nTest/2)
		}
		if alike[0].P <= 0.05 {
			below05++
		}
		// Class 1's positives spread three times as far.
		test := labelled(synthetic(rng, nTest, k))
		shifted := spread(synthetic(rng, nTest, k), 3)
		for i := 1; i < nTest; i += 2 {
			copy(test.Anchors[i*2:(i+1)*2], shifted.Anchors[i*2:(i+1)*2])
			copy(test.Positives[i*k*2:(i+1)*k*2], shifted.Positives[i*k*2:(i+1)*k*2])
		}
		checks, err := set.CheckClasses(test)
		if err != nil {
			t.Fatal(err)
		}
		if checks[1].P < 1e-3 && checks[0].P > 1e-3 {
			found++
		}
	}
	t.Logf("alike: P ≤ 0.05 in %d of %d draws; the spread class found in %d", below05, trials, found)
	if share := float64(below05) / trials; share > 0.05+3*math.Sqrt(0.05*0.95/trials) {
		t.Errorf("classes drawn alike: P ≤ 0.05 in %.3f of the draws, want at most about 0.05", share)
	}
	if found < trials*9/10 {
		t.Errorf("the spread class was found in %d of %d draws, want at least 90%%", found, trials)
	}
	cal := labelled(synthetic(rng, n, k))
	classSet, err := Calibrate(g, cal, 0.1, Options{Mode: Class})
	if err != nil {
		t.Fatal(err)
	}
	marginal, err := Calibrate(g, cal, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		set  *Set
		test *bundle.Bundle
	}{"class-conditional": {classSet, labelled(synthetic(rng, nTest, k))}, "no labels": {marginal, synthetic(rng, nTest, k)}} {
		if checks, err := c.set.CheckClasses(c.test); checks != nil || err != nil {
			t.Errorf("%s: %v, %v: want nothing checked", name, checks, err)
		}
	}
}

// TestCalibrateLabel: Options.Label calibrates one class's anchors alone,
// each with the positive the whole bundle's draw gives it, so that its
// one threshold is the class-conditional set's for that class (k = 4: a
// subset's own draw would differ); a class absent, a Class mode and no
// labels are refused.
func TestCalibrateLabel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 2))
	cal := synthetic(rng, 300, 4)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i % 3)
	}
	g := geometry.Ball{D: 2}
	class, err := Calibrate(g, cal, 0.1, Options{Mode: Class, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range class.Classes {
		for _, mode := range []Mode{OnePerAnchor, PAC} {
			opt := Options{Mode: mode, Seed: 5, Label: &c.Label}
			want := c.Threshold
			if mode == PAC {
				opt.Delta = 0.1
				pc, err := Calibrate(g, cal, 0.1, Options{Mode: Class, Seed: 5, Delta: 0.1})
				if err != nil {
					t.Fatal(err)
				}
				want = pc.Classes[c.Label].Threshold
			}
			s, err := Calibrate(g, cal, 0.1, opt)
			if err != nil {
				t.Fatal(err)
			}
			if s.Threshold != want || s.Calibration.N != c.N || s.ClassConditional() {
				t.Errorf("%v, label %d: threshold %v of n = %d, want the class's %v of %d", mode, c.Label, s.Threshold, s.Calibration.N, want, c.N)
			}
		}
	}
	absent, classMode := int64(7), int64(0)
	unlabelled := synthetic(rng, 30, 4)
	for _, c := range []struct {
		name string
		cal  *bundle.Bundle
		opt  Options
		want string
	}{
		{"absent", cal, Options{Label: &absent}, "conformal: the calibration bundle has no anchor of class 7"},
		{"class mode", cal, Options{Mode: Class, Label: &classMode}, "alone take one threshold, from one positive each: a class calibration has another"},
		{"no labels", unlabelled, Options{Label: &classMode}, NoLabelsMessage},
	} {
		if _, err := Calibrate(g, c.cal, 0.1, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestForClass: a class-conditional set's ForClass is the set that
// calibrating on that class's anchors alone gives (Options.Label) — the
// same threshold, n, rank, mode and δ, and the class recorded in
// Info.Class, which a set file keeps —; an unknown class, a set of one
// threshold and a file's class on a class-conditional calibration are
// refused.
func TestForClass(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 2))
	cal := synthetic(rng, 300, 4)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i % 3)
	}
	g := geometry.Ball{D: 2}
	names := []string{"en", "fr", "sw"}
	for _, delta := range []float64{0, 0.1} {
		mode := OnePerAnchor
		if delta > 0 {
			mode = PAC
		}
		class, err := Calibrate(g, cal, 0.1, Options{Mode: Class, Seed: 5, Delta: delta, LabelNames: names})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[float64]bool{}
		for _, c := range class.Classes {
			fc, err := class.ForClass(c.Label)
			if err != nil {
				t.Fatal(err)
			}
			alone, err := Calibrate(g, cal, 0.1, Options{Mode: mode, Seed: 5, Delta: delta, Label: &c.Label, LabelNames: names})
			if err != nil {
				t.Fatal(err)
			}
			want := ClassOf{Label: c.Label, Name: names[c.Label]}
			fi, ai := fc.Calibration, alone.Calibration
			if fc.Threshold != alone.Threshold || fi.N != ai.N || fi.Rank != ai.Rank || fi.Mode != ai.Mode || fi.Delta != ai.Delta ||
				fc.ClassConditional() || fc.Classes != nil || *fi.Class != want || *ai.Class != want {
				t.Errorf("δ %v, %v: ForClass %v (n %d, rank %d, %v, %+v), calibrated alone %v (n %d, rank %d, %v, %+v)", delta, c,
					fc.Threshold, fi.N, fi.Rank, fi.Mode, fi.Class, alone.Threshold, ai.N, ai.Rank, ai.Mode, ai.Class)
			}
			seen[fc.Threshold] = true
			var buf bytes.Buffer
			if err := alone.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := ReadJSON(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if back.Calibration.Class == nil || *back.Calibration.Class != want {
				t.Errorf("δ %v, %v: the file's class is %+v, want %+v", delta, c, back.Calibration.Class, want)
			}
		}
		if len(seen) < 2 {
			t.Errorf("δ %v: every class has the threshold %v: no test of which class's is taken", delta, class.Threshold)
		}
		if _, err := class.ForClass(7); err == nil || !strings.Contains(err.Error(), `class 7 has no threshold`) || !strings.Contains(err.Error(), `2 "sw"`) {
			t.Errorf("δ %v: ForClass(7): %v, want class 7 refused, the classes listed", delta, err)
		}
	}
	one, err := Calibrate(g, cal, 0.1, Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.ForClass(0); !errors.Is(err, ErrLabel) {
		t.Errorf("ForClass of a set of one threshold: %v, want ErrLabel", err)
	}
	// A file's class on a class-conditional calibration.
	class, err := Calibrate(g, cal, 0.1, Options{Mode: Class, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	class.Calibration.Class = &ClassOf{Label: 1}
	var buf bytes.Buffer
	if err := class.EmbedJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSON(&buf); err == nil || !strings.Contains(err.Error(), "calibration.class (label 1) given for mode class") {
		t.Errorf("a class on a class-conditional set's file: %v, want it refused", err)
	}
}

// TestClassNamed: a label given as text is an integer label, or a
// class's name; an integer that names another class is ambiguous.
func TestClassNamed(t *testing.T) {
	t.Parallel()
	s := &Set{Calibration: Info{Mode: Class}, Classes: []ClassThreshold{{Label: 0, Name: "1"}, {Label: 1, Name: "sw"}, {Label: 2, Name: "en"}}}
	for _, c := range []struct {
		text string
		want int64
		err  string
	}{
		{"sw", 1, ""},
		{"2", 2, ""},
		{"1", 0, "1 reads as label 1 and names class 0"},
		{"xx", 0, `no class is named "xx"`},
	} {
		got, err := s.ClassNamed(c.text)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %d, %v, want %d", c.text, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %d, %v, want %q", c.text, got, err, c.err)
		}
	}
	if _, err := (&Set{Calibration: Info{Mode: OnePerAnchor}}).ClassNamed("3"); !errors.Is(err, ErrLabel) {
		t.Errorf("a set of one threshold: %v, want ErrLabel", err)
	}
}

// TestSeveralLabelsRefused: a class-conditional calibration (every class,
// or one class's) on a bundle of several labels a row — positives' labels
// and no anchor labels, as ccs bundle makes from a multi-hot matrix — is
// refused with why and what to do instead (SeveralLabelsMessage), not as
// a bundle made without labels.
func TestSeveralLabelsRefused(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 4))
	multi := synthetic(rng, 30, 4)
	multi.PositiveLabelStart = make([]int64, multi.N*multi.K+1)
	for u := range multi.N * multi.K {
		multi.PositiveLabels = append(multi.PositiveLabels, int64(u%3))
		multi.PositiveLabelStart[u+1] = int64(len(multi.PositiveLabels))
	}
	if err := multi.Validate(); err != nil {
		t.Fatal(err)
	}
	plain := synthetic(rng, 30, 4)
	g := geometry.Ball{D: 2}
	label := int64(1)
	for _, c := range []struct {
		name string
		cal  *bundle.Bundle
		opt  Options
		want string
	}{
		{"class mode", multi, Options{Mode: Class}, SeveralLabelsMessage},
		{"one class", multi, Options{Label: &label}, SeveralLabelsMessage},
		{"class mode, no labels", plain, Options{Mode: Class}, NoLabelsMessage},
		{"one class, no labels", plain, Options{Label: &label}, NoLabelsMessage},
	} {
		if _, err := Calibrate(g, c.cal, 0.1, c.opt); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := CheckClasses(multi, 0.1, 0, nil); err == nil || err.Error() != SeveralLabelsMessage {
		t.Errorf("CheckClasses: %v", err)
	}
}
