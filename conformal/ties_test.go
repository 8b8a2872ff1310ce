package conformal

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// binaryBundle is n anchors of d bits (0 or 1), each with k positives that
// flip each bit with probability flip, and as many negatives: the ℓ2
// ball's score is the square root of a Hamming distance, d+1 values.
func binaryBundle(rng *rand.Rand, n, d, k int, flip float64) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: k, KNeg: k, D: d, Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d), Negatives: make([]float32, n*k*d)}
	for i := range n {
		for j := range d {
			if rng.Float64() < 0.5 {
				b.Anchors[i*d+j] = 1
			}
		}
		for a := range k {
			for j := range d {
				v := b.Anchors[i*d+j]
				if rng.Float64() < flip {
					v = 1 - v
				}
				b.Positives[(i*k+a)*d+j] = v
				if rng.Float64() < 0.5 {
					b.Negatives[(i*k+a)*d+j] = 1
				}
			}
		}
	}
	return b
}

// TestTie: a threshold among scores of few values (a Hamming distance)
// records how many calibration scores lie below and at or below it, as a
// count of the scores themselves gives; the set warns of it, the check of
// a test bundle expects the share outside as the tie's last rank gives it
// (keeping the untied share, which its probability takes), and the file
// keeps it. Scores of a continuous law record none.
func TestTie(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cal := binaryBundle(rng, 300, 32, 3, 0.08)
	s, err := Calibrate(geometry.Ball{D: 32}, cal, 0.1, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	scores, err := Scores(s.Geometry, cal, OnePerAnchor, 1)
	if err != nil {
		t.Fatal(err)
	}
	below, atOrBelow := 0, 0
	for _, v := range scores {
		if v < s.Threshold {
			below++
		}
		if v <= s.Threshold {
			atOrBelow++
		}
	}
	tie := s.Calibration.Tie
	if tie == nil || tie.Below != below || tie.AtOrBelow != atOrBelow || !(below < s.Calibration.Rank && s.Calibration.Rank < atOrBelow) {
		t.Fatalf("tie %+v, want below %d and at or below %d about rank %d", tie, below, atOrBelow, s.Calibration.Rank)
	}
	w := strings.Join(s.Warnings(), "\n")
	want := "the threshold ties " + strconv.Itoa(atOrBelow-below-1) + " other calibration scores"
	if !strings.Contains(w, want) || !strings.Contains(w, "the guarantee (at least 1−α) holds") {
		t.Errorf("warnings %q, want %q", w, want)
	}
	test := binaryBundle(rng, 2000, 32, 3, 0.08)
	e, err := s.CheckExchangeable(test)
	if err != nil {
		t.Fatal(err)
	}
	n := float64(s.Calibration.N + 1)
	if e.Expected != float64(s.Calibration.N+1-atOrBelow)/n || e.Untied != float64(s.Calibration.N+1-s.Calibration.Rank)/n || !(e.Expected < e.Untied) {
		t.Errorf("expected %v, untied %v: want %v and %v", e.Expected, e.Untied, float64(s.Calibration.N+1-atOrBelow)/n, float64(s.Calibration.N+1-s.Calibration.Rank)/n)
	}
	// What exchangeable anchors leave: the test bundle's share outside
	// lies near the tie's expectation, far below the untied one.
	// (The tie's expectation is the calibration's sample estimate: within
	// its sampling error, and nearer than the untied share.)
	if out := float64(e.Outside) / float64(e.Units); math.Abs(out-e.Expected) > math.Abs(out-e.Untied)/2 {
		t.Errorf("%.4f of the test units outside: expected %.4f (tied), %.4f (untied)", out, e.Expected, e.Untied)
	}
	path := filepath.Join(t.TempDir(), "set.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if *r.Calibration.Tie != *tie {
		t.Errorf("the file's tie %+v, want %+v", r.Calibration.Tie, tie)
	}
	// Continuous scores: no tie, no warning.
	c, err := Calibrate(geometry.Ball{D: 2}, synthetic(rng, 300, 2), 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Calibration.Tie != nil || strings.Contains(strings.Join(c.Warnings(), "\n"), "ties") {
		t.Errorf("continuous scores: tie %+v, warnings %q", c.Calibration.Tie, c.Warnings())
	}
}

// binaryClassSet is a class-conditional ℓ2 ball at α = 0.1 on 400 binary
// anchors of two classes (binaryBundle's, two positives each): scores of
// 33 values, which tie.
func binaryClassSet(t *testing.T) *Set {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	cal := binaryBundle(rng, 400, 32, 2, 0.08)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i % 2)
	}
	s, err := Calibrate(geometry.Ball{D: 32}, cal, 0.1, Options{Mode: Class})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTieClasses: each class's threshold records its own tie, and a
// class-conditional set names the classes that tie.
func TestTieClasses(t *testing.T) {
	s := binaryClassSet(t)
	if s.Calibration.Tie != nil {
		t.Errorf("a class set's own tie %+v: its classes say theirs", s.Calibration.Tie)
	}
	w := strings.Join(s.Warnings(), "\n")
	material := 0
	for _, k := range s.Classes {
		said := strings.Contains(w, k.String()+": its threshold ties")
		switch {
		case k.Tie == nil:
			t.Errorf("class %d: no tie at rank %d of %d (scores of 33 values)", k.Label, k.Rank, k.N)
		case k.Tie.material(k.N, k.Rank) != said:
			t.Errorf("class %d: tie %+v at rank %d of %d, warned %v: %q", k.Label, k.Tie, k.Rank, k.N, said, w)
		case said:
			material++
		}
	}
	if material == 0 {
		t.Errorf("no class's tie lifts its coverage by half a point: %+v", s.Classes)
	}
	path := filepath.Join(t.TempDir(), "set.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range r.Classes {
		if (k.Tie == nil) != (s.Classes[i].Tie == nil) || k.Tie != nil && *k.Tie != *s.Classes[i].Tie {
			t.Errorf("class %d: the file's tie %+v, want %+v", k.Label, k.Tie, s.Classes[i].Tie)
		}
	}
}

// TestTieFileRefused: a file's tie that no threshold of its rank has is
// refused, naming the field.
func TestTieFileRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s, err := Calibrate(geometry.Ball{D: 32}, binaryBundle(rng, 300, 32, 1, 0.08), 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	file := regexp.MustCompile(`,\n  "checksum": "[^"]*"`).ReplaceAllString(b.String(), "")
	tie := regexp.MustCompile(`"at_or_below": \d+`)
	if !tie.MatchString(file) {
		t.Fatalf("no tie in the file:\n%s", file)
	}
	for _, c := range []struct{ name, file, want string }{
		{"beyond n", tie.ReplaceAllString(file, `"at_or_below": 301`), "calibration.tie: "},
		{"at the rank", tie.ReplaceAllString(file, `"at_or_below": `+strconv.Itoa(s.Calibration.Rank)), "want below < rank < at_or_below ≤ n"},
		{"copies", strings.Replace(file, `"n": 300,`, `"n": 300, "copies": 300,`, 1), "calibration.copies 300"},
	} {
		if _, err := ReadJSON(strings.NewReader(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A class's copies beyond its units, and a field a newer ccs writes.
	b.Reset()
	if err := binaryClassSet(t).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	file = regexp.MustCompile(`,\n  "checksum": "[^"]*"`).ReplaceAllString(b.String(), "")
	for _, c := range []struct{ name, file, want string }{
		{"class copies", file[:strings.Index(file, `"classes"`)] + strings.Replace(file[strings.Index(file, `"classes"`):], `"rank": `, `"copies": 1000, "rank": `, 1), "classes[0].copies 1000: want 0 ≤ copies < n"},
		{"unknown field", strings.Replace(file, `"mode": "class"`, `"mode": "class", "from_the_future": 1`, 1), "a field this ccs does not know"},
	} {
		if !strings.Contains(c.file, `"copies": 1000`) && c.name == "class copies" {
			t.Fatalf("%s: the edit missed:\n%s", c.name, c.file)
		}
		if _, err := ReadJSON(strings.NewReader(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestCopies: calibration units that repeat others exactly (a record
// exported twice) are counted and warned of; a bundle of distinct units,
// or one whose anchors repeat with other positives, is not.
func TestCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	b := synthetic(rng, 30, 1)
	s, err := Calibrate(geometry.Ball{D: 2}, b, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Calibration.Copies != 0 || strings.Contains(strings.Join(s.Warnings(), "\n"), "repeat another") {
		t.Errorf("distinct units: copies %d, warnings %q", s.Calibration.Copies, s.Warnings())
	}
	// Three units ten times more each: 30 copies among 60.
	d := &bundle.Bundle{N: 60, K: 1, D: 2}
	for u := range 60 {
		i := u
		if u >= 30 {
			i = (u - 30) / 10
		}
		d.Anchors = append(d.Anchors, b.Anchor(i)...)
		d.Positives = append(d.Positives, b.Positive(i, 0)...)
	}
	s, err = Calibrate(geometry.Ball{D: 2}, d, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(s.Warnings(), "\n"); s.Calibration.Copies != 30 || !strings.Contains(w, "30 of the 60 calibration units repeat another exactly") {
		t.Errorf("copies %d, warnings %q", s.Calibration.Copies, w)
	}
	// The same anchors with positives of their own: distinct units.
	for u := 30; u < 60; u++ {
		d.Positives[2*u] += float32(u)
	}
	if s, err = Calibrate(geometry.Ball{D: 2}, d, 0.1, Options{}); err != nil || s.Calibration.Copies != 0 {
		t.Errorf("anchors repeated with other positives: copies %d (%v)", s.Calibration.Copies, err)
	}
}

// TestPACBelowMarginal: a PAC rank below the marginal rank — δ near one
// half — is warned of, as the set that no longer keeps the marginal 1−α
// (18 anchors at α = 0.05, which a marginal calibration refuses, take
// rank 18 at δ = 0.45); and for δ ≤ 0.1, as docs/calibration.md says,
// the PAC rank is never below the marginal one.
func TestPACBelowMarginal(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	b := synthetic(rng, 18, 1)
	if _, err := Calibrate(geometry.Ball{D: 2}, b, 0.05, Options{}); err == nil {
		t.Fatal("18 anchors at α = 0.05 calibrated marginally")
	}
	s, err := Calibrate(geometry.Ball{D: 2}, b, 0.05, Options{Mode: PAC, Delta: 0.45})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(s.Warnings(), "\n"); s.Calibration.Rank != 18 || !strings.Contains(w, "the marginal guarantee is lost") || !strings.Contains(w, "18/(n+1) = 94.74%") {
		t.Errorf("rank %d, warnings %q", s.Calibration.Rank, w)
	}
	if s, err = Calibrate(geometry.Ball{D: 2}, synthetic(rng, 100, 1), 0.1, Options{Mode: PAC, Delta: 0.1}); err != nil || strings.Contains(strings.Join(s.Warnings(), "\n"), "marginal guarantee") {
		t.Errorf("δ = 0.1: %v, %q", err, s.Warnings())
	}
	for _, alpha := range []float64{0.01, 0.05, 0.1, 0.2, 0.3} {
		for _, delta := range []float64{0.001, 0.05, 0.1} {
			for n := 1; n <= 400; n++ {
				r, err := PACRank(n, alpha, delta)
				if err != nil {
					continue
				}
				if m := pacBelowMarginal(n, r, alpha); m > 0 && r <= n {
					t.Errorf("n = %d, α = %v, δ = %v: PAC rank %d below the marginal %d", n, alpha, delta, r, m)
				}
			}
		}
	}
}

// TestOODTies: the per-input OOD test's warning of calibration scores
// that tie where it flags counts, as the share it flags, the calibration
// inputs it flags when each is judged against the others — the
// leave-one-out p-value (1 + #{j ≠ i : s_j ≥ s_i})/(n+1) ≤ l/(n+1) —, and
// warns only where ties cost more than a fifth of the level.
func TestOODTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 500 {
		n := 1 + rng.IntN(300)
		values := 1 + rng.IntN(12)
		scores := make([]float64, n)
		for i := range scores {
			scores[i] = float64(rng.IntN(values))
			if trial%5 == 0 {
				scores[i] = rng.Float64() // no ties
			}
		}
		c, err := NewOODCalibration(1, scores, "test")
		if err != nil {
			t.Fatal(err)
		}
		// Each input's count of the others scoring as high, #{j ≠ i :
		// s_j ≥ s_i}, by brute force (it does not depend on l).
		ge := make([]int, n)
		for i, v := range c.Scores {
			for j, w := range c.Scores {
				if j != i && w >= v {
					ge[i]++
				}
			}
		}
		for l := 1; l <= n; l++ {
			loo := 0
			for _, g := range ge {
				if 1+g <= l {
					loo++
				}
			}
			if got := c.flagged(l); got != loo {
				t.Fatalf("n = %d, l = %d, scores %v: flagged %d, leave-one-out %d", n, l, c.Scores, got, loo)
			}
			if w := c.TieWarning("α_ood = x", l); (w != "") != (float64(loo) <= 0.8*float64(l)) {
				t.Fatalf("n = %d, l = %d: %d flagged, warning %q", n, l, loo, w)
			}
		}
	}
	// The set's warning at α_ood = 0.05: 999 inputs whose scores take 7
	// values, the largest tie holding the top.
	scores := make([]float64, 999)
	for i := range scores {
		scores[i] = float64(min(6, i/100))
	}
	scores[998] = 7
	s := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1}
	var err error
	if s.OOD, err = NewOODCalibration(1, scores, "test"); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(s.Warnings(), "\n"); !strings.Contains(w, "the per-input OOD test's 999 calibration scores take 8 values: at α_ood = 0.05 it flags only inputs scored above 6, and 1 of them lie above it (398 at it), so it flags about 0.10% of in-distribution inputs, not the 5.00%") {
		t.Errorf("warnings %q", w)
	}
}

// TestFlaggedRankAt: the marginal test's flagged rank, as ood.Test's
// comparison p = j/(n+1) ≤ α gives it.
func TestFlaggedRankAt(t *testing.T) {
	for _, alpha := range []float64{0.001, 0.01, 0.05, 0.1, 1.0 / 3, 0.5, 0.95} {
		for n := 1; n <= 2000; n++ {
			want := 0
			for j := 1; j <= n && float64(j)/float64(n+1) <= alpha; j++ {
				want = j
			}
			if got := FlaggedRankAt(alpha, n); got != want {
				t.Fatalf("α = %v, n = %d: %d, want %d", alpha, n, got, want)
			}
		}
	}
}
