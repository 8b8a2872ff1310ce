package conformal

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// TestClassNames: a class-conditional set calibrated with string labels'
// names keeps them in its classes and its file, names its classes in
// warnings and errors by them, and CheckClasses refuses the class too
// small before any score is computed; without names, classes are numbered.
func TestClassNames(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(1, 2)), 48, 3)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = []int64{0, 2}[min(i/40, 1)] // 40 of class 0, 8 of class 2 (none of 1)
	}
	names := []string{"coat", "shirt", "rare"}
	opt := Options{Mode: Class, LabelNames: names}

	_, err := Calibrate(geometry.Ball{D: 2}, cal, 0.05, opt)
	if !errors.Is(err, ErrTooFewCalibration) || !strings.HasPrefix(err.Error(), `class "rare": `) {
		t.Errorf("too few in a named class: %v", err)
	}
	err = CheckClasses(cal, 0.05, 0, names)
	var tf *TooFewError
	if !errors.As(err, &tf) || tf.N != 8 || !strings.HasPrefix(err.Error(), `class "rare" has 8 calibration anchors: `) || !strings.Contains(err.Error(), "needs at least 19") {
		t.Errorf("CheckClasses: %v", err)
	}
	if err := CheckClasses(cal, 0.05, 0, nil); err == nil || !strings.HasPrefix(err.Error(), "class 2 has 8 calibration anchors") {
		t.Errorf("CheckClasses without names: %v", err)
	}
	// Every class short of it is named, so that one fix does for all.
	three := *cal
	three.Labels = make([]int64, cal.N)
	for i := range three.Labels {
		three.Labels[i] = []int64{0, 1, 2}[min(i/16, 2)] // 16 of each
	}
	if err := CheckClasses(&three, 0.05, 0, names); !errors.As(err, &tf) || !strings.HasPrefix(err.Error(), `class "coat" has 16 calibration anchors: `) ||
		!strings.HasSuffix(err.Error(), `; 2 more classes have too few too: class "shirt" (16), class "rare" (16)`) {
		t.Errorf("three classes short: %v", err)
	}
	if err := CheckClasses(cal, 0.2, 0, names); err != nil { // 0.2 needs 4
		t.Errorf("CheckClasses at α = 0.2: %v", err)
	}
	if err := CheckClasses(cal, 0.05, 0.1, names); !errors.Is(err, ErrTooFewCalibration) || !strings.Contains(err.Error(), `class "coat" has 40`) {
		t.Errorf("CheckClasses with PAC's δ (45 needed): %v", err)
	}

	opt.AllowInfinite = true
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.05, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Classes) != 2 || s.Classes[0].Name != "coat" || s.Classes[1].Name != "rare" || !math.IsInf(s.Classes[1].Threshold, 1) {
		t.Fatalf("classes %+v", s.Classes)
	}
	if w := strings.Join(s.Warnings(), "\n"); !strings.Contains(w, `class "rare": 8 calibration scores are too few`) {
		t.Errorf("warnings:\n%s", w)
	}
	// label 1 has no class of the set: numbered
	if got := s.ClassNames(); !slices.Equal(got, []string{"coat", "1", "rare"}) {
		t.Errorf("ClassNames %q", got)
	}
	// A client that knows its anchor's class by name finds its label.
	for _, c := range []struct {
		name  string
		label int64
		err   string
	}{
		{"coat", 0, ""}, {"rare", 2, ""},
		{"shirt", 0, `no class is named "shirt" (the set's classes: 0 "coat", 2 "rare")`},
		{"Coat", 0, `no class is named "Coat" (the set's classes: 0 "coat", 2 "rare"): did you mean "coat"?`},
		{"rar", 0, `: did you mean "rare"?`},
		{"Coa", 0, `: did you mean "coat"?`}, // not near, but in one name alone
	} {
		l, err := s.LabelNamed(c.name)
		if c.err == "" && (err != nil || l != c.label) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("LabelNamed(%q) = %d, %v; want %d, %q", c.name, l, err, c.label, c.err)
		}
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.ClassNames(), s.ClassNames()) {
		t.Errorf("read back: classes %+v", back.Classes)
	}

	opt.LabelNames = nil
	s, err = Calibrate(geometry.Ball{D: 2}, cal, 0.05, opt)
	if err != nil {
		t.Fatal(err)
	}
	if s.ClassNames() != nil || !strings.Contains(strings.Join(s.Warnings(), "\n"), "class 2: 8 calibration scores") {
		t.Errorf("without names: %q, %q", s.ClassNames(), s.Warnings())
	}
	if _, err := s.LabelNamed("coat"); err == nil || !strings.Contains(err.Error(), "calibrated on integer labels, give the anchor's label as one (the set's classes: 0, 2)") {
		t.Errorf("LabelNamed without names: %v", err)
	}
	s.Calibration.Mode = OnePerAnchor
	if _, err := s.LabelNamed("coat"); !errors.Is(err, ErrLabel) {
		t.Errorf("LabelNamed of a set with one threshold: %v", err)
	}
}

// TestDisjointPairs: on a bundle whose positives are its own anchors, the
// pairs are disjoint, each an anchor with one of its listed positives of
// its class, the same on every call; a bundle of stored positives, or of a
// positive pool, has none (its anchors are its units).
func TestDisjointPairs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const n, k = 60, 4
	b := synthetic(rng, n, k)
	if DisjointPairs(b) != nil {
		t.Error("stored positives: pairs")
	}
	b.Positives = nil
	b.Labels = make([]int64, n)
	b.PositiveIndex = make([]int64, n*k)
	for i := range n {
		b.Labels[i] = int64(i % 3)
		for a := range k {
			j := rng.IntN(n/3)*3 + i%3 // an anchor of i's class
			if j == i {
				j = (j + 3) % n
			}
			b.PositiveIndex[i*k+a] = int64(j)
		}
	}
	pairs := DisjointPairs(b)
	used := map[int]bool{}
	for _, p := range pairs {
		i, j := p[0], int(b.PositiveIndex[p[0]*k+p[1]])
		if used[i] || used[j] || i == j || b.Labels[i] != b.Labels[j] {
			t.Fatalf("pair %v (anchor %d, positive %d) is not disjoint from the others or crosses classes", p, i, j)
		}
		used[i], used[j] = true, true
	}
	if len(pairs) < n/4 || !slices.Equal(DisjointPairs(b), pairs) {
		t.Errorf("%d pairs of %d anchors, or not the same twice", len(pairs), n)
	}
	b.PositivePool = make([]float32, 5*b.D)
	if DisjointPairs(b) != nil {
		t.Error("a positive pool: pairs")
	}
	// Calibrated per class or marginally, the set counts the pairs and
	// says so; its file reads back, and pairs for a pooled set are refused.
	b.PositivePool = nil
	s, err := Calibrate(geometry.Ball{D: 2}, b, 0.5, Options{Mode: Class})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range s.Classes {
		total += c.N
	}
	if !s.Calibration.Pairs || total != len(pairs) || s.Calibration.N != len(pairs) {
		t.Errorf("pairs %v, classes hold %d and n is %d, want %d", s.Calibration.Pairs, total, s.Calibration.N, len(pairs))
	}
	// The marginal set calibrates on the pairs too, as many of each class's
	// as keep the classes' shares of the anchors (20 each here).
	m, err := Calibrate(geometry.Ball{D: 2}, b, 0.5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	made := map[int64]int{}
	for _, p := range pairs {
		made[b.Labels[p[0]]]++
	}
	want := 3 * min(made[0], made[1], made[2])
	if !m.Calibration.Pairs || m.Calibration.N != want {
		t.Errorf("marginal: pairs %v, n %d, want %d (pairs by class %v)", m.Calibration.Pairs, m.Calibration.N, want, made)
	}
	// Its check on the bundle counts the pairs it keeps, and says how
	// many there were where it kept fewer.
	if e, err := m.CheckExchangeable(b); err != nil || !e.Pairs || e.Units != want || (want < len(pairs)) != (e.PairsFound == len(pairs)) {
		t.Errorf("marginal check: %+v, %v; want %d units of %d pairs found", e, err, want, len(pairs))
	}
	// Units counts them without scoring, from the indices alone: what
	// ccs bundle warns of below 100.
	if u := Units(&bundle.Bundle{N: b.N, K: b.K, Labels: b.Labels, PositiveIndex: b.PositiveIndex}); u != want {
		t.Errorf("Units %d, want %d", u, want)
	}
	w := FewUnitsWarning(b)
	if wantW := fmt.Sprintf("the calibration split gives %d calibration scores (its 60 anchors' disjoint pairs of an anchor and a positive, %d of %d kept", want, want, len(pairs)); !strings.HasPrefix(w, wantW) ||
		!strings.Contains(w, fmt.Sprintf("α ≥ 1/(n+1) = %.3g", 1/float64(want+1))) {
		t.Errorf("warning %q, want %q…", w, wantW)
	}
	if Units(synthetic(rng, 150, 2)) != 150 || FewUnitsWarning(synthetic(rng, 150, 2)) != "" || !strings.Contains(FewUnitsWarning(synthetic(rng, 12, 2)), "12 calibration scores: a finite threshold needs α ≥ 1/(n+1) = 0.0769, no finite threshold at α = 0.05 (it needs 19), and α = 0.01 needs 99; more items, or a larger calibration share (-split; split= in Python), give more") {
		t.Errorf("stored positives: %q", FewUnitsWarning(synthetic(rng, 12, 2)))
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if back, err := ReadJSON(bytes.NewReader(buf.Bytes())); err != nil || !back.Calibration.Pairs {
		t.Errorf("read back: %v", err)
	}
	s.Calibration.Mode, s.Classes = Pooled, nil
	buf.Reset()
	// WriteJSON refuses, writing nothing, what ReadJSON would refuse.
	if err := s.WriteJSON(&buf); err == nil || !strings.Contains(err.Error(), "calibration.pairs given for mode pooled") || buf.Len() != 0 {
		t.Errorf("pairs for pooled: %v, %d bytes written", err, buf.Len())
	}
}

// TestTrim: a marginal calibration on pairs that leaves out a tenth of
// them or more to keep the classes' shares records how many and which
// class set the share, warns of it by the class's name, and its file
// reads back; a trim that contradicts the rest of the file is refused.
// One that leaves out fewer records nothing.
func TestTrim(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	// Class 0: 200 anchors in 100 pairs (each the other's positive);
	// class 1: 3 anchors, 1 pair; the share 1/3 leaves 66 of class 0's.
	const n, k = 203, 1
	b := synthetic(rng, n, k)
	b.Positives, b.Labels, b.PositiveIndex = nil, make([]int64, n), make([]int64, n)
	for i := range 200 {
		b.PositiveIndex[i] = int64(i ^ 1)
	}
	b.Labels[200], b.Labels[201], b.Labels[202] = 1, 1, 1
	b.PositiveIndex[200], b.PositiveIndex[201], b.PositiveIndex[202] = 201, 200, 200
	s, err := Calibrate(geometry.Ball{D: 2}, b, 0.1, Options{LabelNames: []string{"coat", "rare"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &Trim{Pairs: 101, Class: 1, Name: "rare", Anchors: 3, ClassPairs: 1}
	if s.Calibration.N != 67 || s.Calibration.Trim == nil || *s.Calibration.Trim != *want {
		t.Fatalf("n %d, trim %+v, want 67 and %+v", s.Calibration.N, s.Calibration.Trim, want)
	}
	w := strings.Join(s.Warnings(), "\n")
	if !strings.Contains(w, `67 of the 101 disjoint calibration pairs were kept, to keep each class's share of the anchors as a test split has it: class "rare" has 3 calibration anchors and 1 pair, a share of 0.333`) {
		t.Errorf("warnings:\n%s", w)
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	file := buf.String()
	if back, err := ReadJSON(strings.NewReader(file)); err != nil || back.Calibration.Trim == nil || *back.Calibration.Trim != *want {
		t.Errorf("read back: %v", err)
	}
	for _, c := range []struct{ old, new, want string }{
		{`"pairs": 101`, `"pairs": 67`, "calibration.trim.pairs 67: want more than n = 67"},
		{`"class_pairs": 1`, `"class_pairs": 2`, "calibration.trim: 2 pairs of 3 anchors in class 1"},
		{`"pairs": true`, `"pairs": false`, "calibration.trim given without pairs"},
	} {
		if _, err := ReadJSON(strings.NewReader(strings.Replace(file, c.old, c.new, 1))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.old, c.new, err, c.want)
		}
	}
	// Per class, every pair is kept; so with the small class's three
	// anchors out of the bundle.
	if c, err := Calibrate(geometry.Ball{D: 2}, b, 0.1, Options{Mode: Class, AllowInfinite: true}); err != nil || c.Calibration.Trim != nil || c.Calibration.N != 101 {
		t.Errorf("class-conditional: %v, %+v", err, c.Calibration)
	}
	b.PositiveIndex[201] = 202 // class 1: 1 pair of 3 still; now give it 4 anchors, 2 pairs
	b.N++
	b.Anchors = append(b.Anchors, 0, 0)
	b.Labels = append(b.Labels, 1)
	b.PositiveIndex = append(b.PositiveIndex, 201)
	b.PositiveIndex[202] = 203
	b.PositiveIndex[200] = 201
	if m, err := Calibrate(geometry.Ball{D: 2}, b, 0.1, Options{}); err != nil || m.Calibration.Trim != nil || m.Calibration.N != 102 {
		t.Errorf("shares alike: %v, %+v", err, m.Calibration)
	}
}

// TestProportionalExact: the class whose share of pairs to anchors sets ρ
// keeps every pair it has, and each class ⌊ρ·m⌋ exactly, where ρ·m in
// floating point falls just short of a whole number (1/49 · 49).
func TestProportionalExact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ big, small, smallPairs int }{{100, 49, 1}, {200, 44, 15}} {
		n := c.big + c.small
		b := &bundle.Bundle{N: n, Labels: make([]int64, n)}
		var pairs [][2]int
		for i := 0; i+1 < c.big; i += 2 {
			pairs = append(pairs, [2]int{i, i + 1})
		}
		for j := range c.small {
			b.Labels[c.big+j] = 1
		}
		for j := range c.smallPairs {
			pairs = append(pairs, [2]int{c.big + 2*j, c.big + 2*j + 1})
		}
		out, trim := proportional(b, pairs)
		kept := map[int64]int{}
		for _, p := range out {
			kept[b.Labels[p[0]]]++
		}
		// ρ = smallPairs/small: class 0 keeps ⌊smallPairs·big/small⌋.
		if want := c.smallPairs * c.big / c.small; kept[1] != c.smallPairs || kept[0] != want || trim == nil || trim.Class != 1 {
			t.Errorf("%+v: kept %v, trim %+v; want class 1's %d pairs and %d of class 0's", c, kept, trim, c.smallPairs, want)
		}
	}
}

// TestOwnSplit: a set knows the bundle it was calibrated on by its anchors'
// digest, through its file too, and warns of it as a test split (not when
// resplits recalibrate on it); the splits its geometry was fitted on
// likewise; another bundle, or one differing in a single value, is not.
func TestOwnSplit(t *testing.T) {
	// pooled is b with its positives as rows of a pool, as ccs bundle
	// writes a bundle of queries and their relevant rows.
	pooled := func(b *bundle.Bundle) *bundle.Bundle {
		c := *b
		c.PositivePool, c.PositiveIndex, c.Positives = b.Positives, make([]int64, b.N*b.K), nil
		for i := range c.PositiveIndex {
			c.PositiveIndex[i] = int64(i)
		}
		return &c
	}
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 9))
	cal, test, fit := synthetic(rng, 30, 2), synthetic(rng, 30, 2), synthetic(rng, 30, 2)
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Fit = &FitInfo{Method: "test", Splits: map[string]string{"fit": fit.Digest()}, Seen: bundle.NewRowFilter(fit)}
	s.KeepRows(cal)
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Calibration.Rows == nil || back.Calibration.Rows.Count(cal) != 30 || back.Fit.Seen.Count(fit) != 30 {
		t.Fatal("the rows did not read back")
	}
	changed := *cal
	changed.Anchors = slices.Clone(cal.Anchors)
	changed.Anchors[7] = math.Nextafter32(changed.Anchors[7], 1e9)
	// Bundles of other rows but for some of the set's (another
	// bundling's test split): 3 of 30 rows warn, 2 do not.
	with := func(src *bundle.Bundle, shared int) *bundle.Bundle {
		b := synthetic(rng, 30, 2)
		copy(b.Anchors, src.Anchors[:2*shared])
		return b
	}
	for _, c := range []struct {
		b            *bundle.Bundle
		recalibrated bool
		role, want   string
	}{
		{cal, false, "calibration", "this is the set's calibration split: its coverage is near 1−α by construction"},
		{cal, true, "calibration", ""},
		{fit, false, "fit", "this is the fit split the set's geometry was fitted on"},
		{fit, true, "fit", "this is the fit split"},
		{test, false, "", ""},
		{&changed, false, "", "about 29 of its 30 anchors are rows of the set's calibration split (another bundling of the same embeddings?): its coverage is pulled toward 1−α"},
		{&changed, true, "", ""},
		{with(fit, 3), false, "", "about 3 of its 30 anchors are rows the set's geometry was fitted or validated on (another bundling of the same embeddings?): its figures are optimistic"},
		{with(fit, 3), true, "", "about 3 of its 30 anchors are rows the set's geometry was fitted or validated on"},
		{with(fit, 2), false, "", ""},
		{with(cal, 3), false, "", "about 3 of its 30 anchors are rows of the set's calibration split"},
		{with(cal, 2), false, "", ""},
		// Queries with relevant rows (a positive pool): the same queries
		// again may come with other positives — a recommender's users and
		// their later interactions — which is no calibration by
		// construction, and the warning says both.
		{pooled(&changed), false, "", "about 29 of its 30 anchors are queries of the set's calibration split: with the calibration's positives its coverage is pulled toward 1−α by construction, no test of the guarantee; with other positives of the same queries (their later interactions: a time split of one set of users) it tests those queries again, not new ones"},
		{pooled(cal), false, "calibration", "this is the set's calibration split (its anchors, the same queries in the same order): with the calibration's positives its coverage is near 1−α by construction, no test of the guarantee; with other positives of the same queries (their later interactions: a time split of one set of users) it tests those queries again, not new ones"},
	} {
		for _, set := range []*Set{s, back} {
			// As the per-input OOD test's calibration inputs, the fit
			// split, or many of its rows, are refused.
			fitRows := c.b == fit || strings.Contains(c.want, "fitted or validated on")
			if err := set.CheckOODInputs(c.b); (err != nil) != fitRows {
				t.Errorf("%s (%q): CheckOODInputs %v", c.role, c.want, err)
			}
			if got := set.OwnSplit(c.b); got != c.role {
				t.Errorf("OwnSplit %q, want %q", got, c.role)
			}
			if w := set.OwnSplitWarning(c.b, c.recalibrated); (c.want == "") != (w == "") || !strings.HasPrefix(w, c.want) {
				t.Errorf("%s (recalibrated %v): warning %q, want %q", c.role, c.recalibrated, w, c.want)
			}
		}
	}
}

// TestChecksum: a set file ends with the SHA-256 of what precedes it; a
// value edited after (a threshold halved, as an operator once did) or the
// file reformatted is refused, naming what happened; without the field
// (files written before it) it reads; a set embedded in a document has
// none.
func TestChecksum(t *testing.T) {
	t.Parallel()
	s, err := Calibrate(geometry.Ball{D: 2}, synthetic(rand.New(rand.NewPCG(4, 4)), 40, 2), 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	file := buf.String()
	if !regexp.MustCompile(`,\n  "checksum": "sha256:[0-9a-f]{64}"\n}\n$`).MatchString(file) {
		t.Fatalf("the file does not end with its checksum:\n%s", file[max(0, len(file)-200):])
	}
	if _, err := ReadJSON(strings.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(`"threshold": %v`, s.Threshold)
	if !strings.Contains(file, q) {
		t.Fatalf("no %s in the file", q)
	}
	without := regexp.MustCompile(`,\n  "checksum": "[^"]*"`).ReplaceAllString(file, "")
	for _, c := range []struct{ name, file, want string }{
		{"threshold halved", strings.Replace(file, q, fmt.Sprintf(`"threshold": %v`, s.Threshold/2), 1), "checksum: the file was changed after ccs wrote it"},
		{"reformatted", strings.ReplaceAll(file, "\n  ", "\n    "), `checksum "sha256:`},
		{"a checksum not of its form", strings.Replace(file, `"sha256:`, `"md5:`, 1), `checksum "md5:`},
		{"no checksum", without, ""},
	} {
		_, err := ReadJSON(strings.NewReader(c.file))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "calibrate the set again")) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	buf.Reset()
	if err := s.EmbedJSON(&buf); err != nil || buf.String() != without {
		t.Errorf("EmbedJSON: %v, or not the file without its checksum", err)
	}
	// Read without its checksum, the set says nothing checks its
	// threshold (a hand-edited file that dropped the field was served as
	// "exact", silently); with it, nothing of the kind.
	for _, c := range []struct {
		file string
		want bool
	}{{file, false}, {without, true}, {strings.Replace(without, q, fmt.Sprintf(`"threshold": %v`, s.Threshold*9), 1), true}} {
		r, err := ReadJSON(strings.NewReader(c.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(r.Warnings(), UncheckedWarning); got != c.want {
			t.Errorf("threshold %v: the unchecked warning %v, want %v: %q", r.Threshold, got, c.want, r.Warnings())
		}
	}
}

// TestLabelsByName: a test bundle of string labels numbered otherwise than
// the set's classes (a class more or less shifts every later number) is
// judged by its classes' names, not their numbers; a class the set has no
// threshold for is refused by its name; without names on either side, or
// for a set with one threshold, the labels are kept as they are.
func TestLabelsByName(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(3, 4)), 120, 3)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i / 40) // 40 each of "coat", "rare", "shirt"
	}
	named, err := Calibrate(geometry.Ball{D: 2}, cal, 0.2, Options{Mode: Class, LabelNames: []string{"coat", "rare", "shirt"}})
	if err != nil {
		t.Fatal(err)
	}
	unnamed, err := Calibrate(geometry.Ball{D: 2}, cal, 0.2, Options{Mode: Class})
	if err != nil {
		t.Fatal(err)
	}
	marginal, err := Calibrate(geometry.Ball{D: 2}, cal, 0.2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		set        *Set
		labels     []int64
		names      []string
		want       []int64
		renumbered bool
		err        string
	}{
		{"same numbering", named, []int64{0, 1, 2, 2}, []string{"coat", "rare", "shirt"}, []int64{0, 1, 2, 2}, false, ""},
		{"a class more in the test bundle, held out", named, []int64{0, 2, 3}, []string{"coat", "disease", "rare", "shirt"}, []int64{0, 1, 2}, true, ""},
		{"a class fewer", named, []int64{0, 1, 1}, []string{"coat", "shirt"}, []int64{0, 2, 2}, true, ""},
		{"a class the set lacks", named, []int64{0, 1}, []string{"coat", "disease", "rare", "shirt"}, nil, false,
			`conformal: class "disease" (label 1 of the test bundle) is not one of the set's classes, so it has no threshold: the set's classes: 0 "coat", 1 "rare", 2 "shirt"; leave its rows out of the test bundle (ccs bundle -ood-classes)`},
		{"a near miss", named, []int64{0}, []string{"shirts"}, nil, false, `(did you mean "shirt"?)`},
		{"several classes the set lacks, named at once", named, []int64{0, 3, 1, 4, 1}, []string{"disease", "flu", "coat", "real estate", "gaming"}, nil, false,
			`conformal: 4 classes of the test bundle are not among the set's classes, so they have no threshold: "disease", "flu", "gaming", "real estate"; the set's classes: 0 "coat", 1 "rare", 2 "shirt"; leave their rows out of the test bundle (ccs bundle -ood-classes "disease,flu,gaming,real estate")`},
		{"a label without a name", named, []int64{0, 5}, []string{"coat", "rare", "shirt"}, nil, false, "conformal: label 5 of row 1 has no name (3 names)"},
		{"no names in the test bundle", named, []int64{0, 1, 1}, nil, []int64{0, 1, 1}, false, ""},
		{"no names in the set", unnamed, []int64{0, 1, 1}, []string{"coat", "shirt"}, []int64{0, 1, 1}, false, ""},
		{"one threshold", marginal, []int64{0, 1, 1}, []string{"coat", "shirt"}, []int64{0, 1, 1}, false, ""},
	} {
		got, renumbered, err := c.set.LabelsByName(c.labels, c.names)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !slices.Equal(got, c.want) || renumbered != c.renumbered:
			t.Errorf("%s: %v (renumbered %v), want %v (%v)", c.name, got, renumbered, c.want, c.renumbered)
		}
	}
}

// TestClassWarningsSummarised: a class-conditional set of a long tail —
// a protein-family user's 449 families, 395 of them too small for α =
// 0.1 — said so in 435 warnings, one a class, on every command that read
// the set and as as many CCSWarnings in a notebook. Up to five classes
// are each a warning of their own; more make one warning that counts
// them and names the first five. The refusal without AllowInfinite
// counts the others too.
func TestClassWarningsSummarised(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		small, big int    // classes of 4 anchors (whole space at α = 0.05) and of 200
		rankN      int    // classes of 19 anchors (rank n at α = 0.05)
		want       string // in the warnings
		lines      int    // warnings about classes
		refusal    string // the end of Calibrate's error without AllowInfinite
	}{
		{small: 2, big: 2, lines: 2, want: `class "f01": 4 calibration scores are too few for alpha 0.05`, refusal: `; 1 more class has too few too: class "f01" (4)`},
		{small: 5, big: 1, lines: 5, want: `class "f04": 4 calibration scores are too few`, refusal: `; 4 more classes have too few too: class "f01" (4), class "f02" (4), class "f03" (4), class "f04" (4)`},
		{small: 6, big: 1, lines: 1, want: `6 of the 7 classes' sets are the whole space (threshold +Inf): their calibration scores are too few for alpha 0.05, which needs at least 19 a class (class "f00" (4), class "f01" (4), class "f02" (4), class "f03" (4), class "f04" (4), … 6 in all)`},
		{small: 40, big: 3, rankN: 7, lines: 2, want: `7 classes' thresholds are their largest calibration score (rank n; the guarantee holds, but one outlying score sets each such class's set; 39 would lift it off the maximum): class "f43" (19)`,
			refusal: `; 39 more classes have too few too: class "f01" (4), class "f02" (4), class "f03" (4), class "f04" (4), class "f05" (4), class "f06" (4), class "f07" (4), class "f08" (4), class "f09" (4), class "f10" (4), …`},
	} {
		t.Run(fmt.Sprint(c.small, c.big, c.rankN), func(t *testing.T) {
			var labels []int64
			var names []string
			for l := range c.small + c.big + c.rankN {
				n := 4
				if l >= c.small {
					n = 200
				}
				if l >= c.small+c.big {
					n = 19
				}
				for range n {
					labels = append(labels, int64(l))
				}
				names = append(names, fmt.Sprintf("f%02d", l))
			}
			cal := synthetic(rand.New(rand.NewPCG(3, 4)), len(labels), 2)
			cal.Labels = labels
			opt := Options{Mode: Class, LabelNames: names}
			_, err := Calibrate(geometry.Ball{D: 2}, cal, 0.05, opt)
			if !errors.Is(err, ErrTooFewCalibration) || !strings.HasPrefix(err.Error(), `class "f00": conformal: 4 calibration scores are too few`) {
				t.Errorf("refusal: %v", err)
			}
			if c.refusal != "" && (err == nil || !strings.HasSuffix(err.Error(), c.refusal)) {
				t.Errorf("refusal:\n%v\nwant the end %q", err, c.refusal)
			}
			opt.AllowInfinite = true
			s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.05, opt)
			if err != nil {
				t.Fatal(err)
			}
			w := s.Warnings()
			lines := 0
			for _, l := range w {
				if strings.Contains(l, "class") {
					lines++
				}
			}
			if lines != c.lines || !strings.Contains(strings.Join(w, "\n"), c.want) {
				t.Errorf("%d warnings about classes (want %d):\n%s\nwant %q", lines, c.lines, strings.Join(w, "\n"), c.want)
			}
		})
	}
}

// TestOverAllClasses: a class-conditional set judged over all classes
// has the marginal set's threshold, units, rank and trim, on bundles
// whose classes pair unevenly (its own pairs untrimmed gave another
// threshold before); the file keeps them, and a file whose over_all
// contradicts the rest is refused.
func TestOverAllClasses(t *testing.T) {
	t.Parallel()
	trimmed := 0
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 17))
		n, k, classes := 60+rng.IntN(200), 1+rng.IntN(4), 2+rng.IntN(4)
		b := synthetic(rng, n, k)
		b.Positives, b.Labels, b.PositiveIndex = nil, make([]int64, n), make([]int64, n*k)
		byClass := make([][]int, classes)
		for i := range n {
			b.Labels[i] = int64(rng.IntN(classes))
			if i < 2*classes {
				b.Labels[i] = int64(i % classes) // every class two anchors or more
			}
			byClass[b.Labels[i]] = append(byClass[b.Labels[i]], i)
		}
		for i := range n {
			for a := range k { // a random other anchor of i's class
				own := byClass[b.Labels[i]]
				j := own[rng.IntN(len(own))]
				for j == i {
					j = own[rng.IntN(len(own))]
				}
				b.PositiveIndex[i*k+a] = int64(j)
			}
		}
		alpha := 0.05 + 0.3*rng.Float64()
		delta := 0.0
		if seed%3 == 0 {
			delta = 0.1
		}
		m, err := Calibrate(geometry.Ball{D: 2}, b, alpha, Options{Mode: map[bool]Mode{true: PAC, false: OnePerAnchor}[delta > 0], Delta: delta, AllowInfinite: true})
		if err != nil {
			t.Fatal(err)
		}
		c, err := Calibrate(geometry.Ball{D: 2}, b, alpha, Options{Mode: Class, Delta: delta, AllowInfinite: true})
		if errors.Is(err, ErrTooFewCalibration) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if c.Calibration.OverAll != nil {
			trimmed++
		}
		o := c.OverAllClasses()
		same := func(a, b *Trim) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
		if o.Threshold != m.Threshold && !(math.IsInf(o.Threshold, 1) && math.IsInf(m.Threshold, 1)) ||
			o.Calibration.N != m.Calibration.N || o.Calibration.Rank != m.Calibration.Rank || o.Calibration.Mode != m.Calibration.Mode || !same(o.Calibration.Trim, m.Calibration.Trim) {
			t.Fatalf("seed %d: over all classes %v (n %d, rank %d, trim %+v), marginal %v (n %d, rank %d, trim %+v)", seed,
				o.Threshold, o.Calibration.N, o.Calibration.Rank, o.Calibration.Trim, m.Threshold, m.Calibration.N, m.Calibration.Rank, m.Calibration.Trim)
		}
		var buf bytes.Buffer
		if err := c.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadJSON(&buf)
		if err != nil {
			t.Fatalf("seed %d: read back: %v", seed, err)
		}
		if ob := back.OverAllClasses(); ob.Threshold != o.Threshold && !math.IsInf(o.Threshold, 1) || ob.Calibration.N != o.Calibration.N || ob.Calibration.Rank != o.Calibration.Rank {
			t.Fatalf("seed %d: read back over all classes %v (n %d), want %v (n %d)", seed, ob.Threshold, ob.Calibration.N, o.Threshold, o.Calibration.N)
		}
	}

	if trimmed < 50 {
		t.Errorf("only %d of 200 bundles left pairs out over all classes: the test shows little", trimmed)
	}

	// TestTrim's bundle: class "rare" sets a share of 1/3; judged over all
	// classes the class set warns as the marginal one does, with the
	// labels for remedy.
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 203
	b := synthetic(rng, n, 1)
	b.Positives, b.Labels, b.PositiveIndex = nil, make([]int64, n), make([]int64, n)
	for i := range 200 {
		b.PositiveIndex[i] = int64(i ^ 1)
	}
	b.Labels[200], b.Labels[201], b.Labels[202] = 1, 1, 1
	b.PositiveIndex[200], b.PositiveIndex[201], b.PositiveIndex[202] = 201, 200, 200
	c, err := Calibrate(geometry.Ball{D: 2}, b, 0.1, Options{Mode: Class, AllowInfinite: true, LabelNames: []string{"coat", "rare"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Calibration.N != 101 || c.Calibration.OverAll == nil || c.Calibration.OverAll.N != 67 {
		t.Fatalf("calibration %+v, want n 101 and over all 67", c.Calibration)
	}
	if w := strings.Join(c.Warnings(), "\n"); strings.Contains(w, "disjoint calibration pairs were kept") {
		t.Errorf("the class set warns of its threshold over all classes:\n%s", w)
	}
	// In full where it is news (ccs calibrate prints TrimWarning), short
	// where the threshold over all classes judges.
	w := c.TrimWarning()
	if !strings.Contains(w, `the threshold over all classes, which judges anchors of no known class (-unlabeled marginal), was taken on 67 of the 101 disjoint calibration pairs, to keep`) ||
		!strings.Contains(w, `class "rare" has 3 calibration anchors`) ||
		!strings.Contains(w, "judge anchors whose class is known by their class's threshold") || strings.Contains(w, "-calibration class") {
		t.Errorf("the class set's trim warning:\n%s", w)
	}
	w = strings.Join(c.OverAllClasses().Warnings(), "\n")
	if want := `the threshold over all classes was taken on 67 of the 101 disjoint calibration pairs (every class kept class "rare"'s share: 1 pair of 3 anchors); ccs calibrate warned why`; !strings.Contains(w, want) || strings.Contains(w, "hold that class out") {
		t.Errorf("warnings over all classes:\n%s\nwant one short line %q", w, want)
	}
	if m := c.OverAllClasses().TrimWarning(); !strings.Contains(m, "67 of the 101 disjoint calibration pairs were kept") {
		t.Errorf("the set judged over all classes' TrimWarning: %q", m)
	}
	var buf bytes.Buffer
	if err := c.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	file := buf.String()
	for _, e := range []struct{ old, new, want string }{
		{`"n": 67`, `"n": 101`, "calibration.over_all.n 101: want 1 ≤ n < calibration.n = 101"},
		{`"rank": 62`, `"rank": 61`, "calibration.over_all.rank 61, but n = 67 and alpha = 0.1 give 62"},
		{`"pairs": true`, `"pairs": false`, "calibration.over_all given for mode class without pairs"},
		{`"pairs": 101`, `"pairs": 100`, "calibration.over_all.trim.pairs 100: want calibration.n = 101"},
	} {
		if !strings.Contains(file, e.old) {
			t.Fatalf("file lacks %q:\n%s", e.old, file)
		}
		if _, err := ReadJSON(strings.NewReader(strings.Replace(file, e.old, e.new, 1))); err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%q → %q: %v, want %q", e.old, e.new, err, e.want)
		}
	}
	// A trim where a tenth or more were left out, and only there: a file
	// without it would judge over all classes without its warning.
	if err := checkOverAll(Info{Mode: Class, N: 101, Rank: 92, Pairs: true, OverAll: &OverAll{N: 67, Rank: 62}}, 0.1); err == nil || !strings.Contains(err.Error(), "67 of the 101 pairs kept, and no trim") {
		t.Errorf("over_all without its trim: %v", err)
	}
	r95, _ := Rank(95, 0.1)
	if err := checkOverAll(Info{Mode: Class, N: 101, Rank: 92, Pairs: true, OverAll: &OverAll{N: 95, Rank: r95, Trim: &Trim{Pairs: 101, Anchors: 30, ClassPairs: 1}}}, 0.1); err == nil || !strings.Contains(err.Error(), "95 of the 101 pairs kept, and a trim") {
		t.Errorf("over_all with a trim of less than a tenth: %v", err)
	}
	if err := checkOverAll(Info{Mode: Class, N: 101, Rank: 92, Pairs: true, OverAll: &OverAll{N: 95, Rank: r95}}, 0.1); err != nil {
		t.Errorf("over_all of less than a tenth left out, without a trim: %v", err)
	}
	// A marginal calibration on pairs: refused for its mode, not said to
	// lack the pairs it has.
	if err := checkOverAll(Info{Mode: OnePerAnchor, N: 101, Rank: 92, Pairs: true, OverAll: &OverAll{N: 67, Rank: 62}}, 0.1); err == nil || strings.Contains(err.Error(), "without pairs") || !strings.Contains(err.Error(), "for mode one-per-anchor (only") {
		t.Errorf("over_all of a marginal set on pairs: %v", err)
	}
}

// TestClassOfLabelAndName: a class's label and name as answers give
// them, nil and "" for no class; the label a copy, not the set's own.
func TestClassOfLabelAndName(t *testing.T) {
	for _, c := range []struct {
		class *ClassOf
		label *int64
		name  string
	}{
		{nil, nil, ""},
		{&ClassOf{Label: 3}, ptr(int64(3)), ""},
		{&ClassOf{Label: 0, Name: "coat"}, ptr(int64(0)), "coat"},
	} {
		label, name := c.class.LabelAndName()
		if (label == nil) != (c.label == nil) || label != nil && *label != *c.label || name != c.name {
			t.Errorf("%+v: %v, %q, want %v, %q", c.class, label, name, c.label, c.name)
		}
		if label != nil {
			*label = 99
			if c.class.Label == 99 {
				t.Errorf("%+v: the label returned is the class's own", c.class)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
