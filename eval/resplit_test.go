package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/race"
)

// gaussBundle is n anchors with k positives and k negatives each, the
// positives N(anchor, I), the negatives N(anchor, 4I), in d dimensions:
// exchangeable anchors.
func gaussBundle(rng *rand.Rand, n, k, d int) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: k, D: d, KNeg: k}
	b.Anchors = make([]float32, n*d)
	b.Positives = make([]float32, n*k*d)
	b.Negatives = make([]float32, n*k*d)
	for i := range n {
		for j := range d {
			b.Anchors[i*d+j] = float32(rng.NormFloat64())
		}
		for a := range k {
			for j := range d {
				b.Positives[(i*k+a)*d+j] = b.Anchors[i*d+j] + float32(rng.NormFloat64())
				b.Negatives[(i*k+a)*d+j] = b.Anchors[i*d+j] + float32(2*rng.NormFloat64())
			}
		}
	}
	return b
}

// TestResplits: over 2000 resplits with 100 calibration anchors, the
// marginal calibration's mean coverage lies in its band (up to 4 Monte
// Carlo standard errors) with about half the resplits below 1−α, and PAC
// (δ = 0.1) puts at most δ of them below (plus sampling error). Under the
// race detector, 200 resplits (the bounds are the count's): Resplits'
// concurrency is the same at any count.
func TestResplits(t *testing.T) {
	t.Parallel()
	resplits := 2000
	if race.Enabled {
		resplits = 200
	}
	rng := rand.New(rand.NewPCG(30, 30))
	b := gaussBundle(rng, 5100, 4, 2)
	g := geometry.Ball{D: 2}
	frac := 100.0 / 5100
	for _, c := range []struct {
		mode  conformal.Mode
		delta float64
	}{{conformal.OnePerAnchor, 0}, {conformal.PAC, 0.1}} {
		set, err := conformal.Calibrate(g, b, 0.1, conformal.Options{Mode: c.mode, Delta: c.delta})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Resplits(set, b, resplits, frac, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: mean %.4f ± %.4f, p05 %.4f, below 1−α %.3f, exclusion %.3f", c.mode, r.Coverage.Mean, r.Coverage.Std, r.P05, r.BelowShare, r.Exclusion.Mean)
		if r.NCal != 100 || r.NTest != 5000 {
			t.Fatalf("split %d + %d", r.NCal, r.NTest)
		}
		// The per-resplit coverages are the distribution summarised.
		below := 0
		for _, v := range r.Coverages {
			if v < 1-set.Alpha {
				below++
			}
		}
		if s := Summarize(r.Coverages); len(r.Coverages) != resplits || s != r.Coverage || float64(below)/float64(resplits) != r.BelowShare {
			t.Errorf("%d coverages: %+v, %d below 1−α; the summary %+v, %.3f below", len(r.Coverages), s, below, r.Coverage, r.BelowShare)
		}
		switch c.mode {
		case conformal.OnePerAnchor:
			se := r.Coverage.Std / math.Sqrt(float64(resplits))
			if r.Coverage.Mean < r.Band[0]-4*se || r.Coverage.Mean > r.Band[1]+4*se || r.BelowShare < 0.3 {
				t.Errorf("marginal: mean %.4f outside [%.4f, %.4f] ± %.4f, or %.3f below", r.Coverage.Mean, r.Band[0], r.Band[1], 4*se, r.BelowShare)
			}
		case conformal.PAC:
			// The held-out coverage of 20 000 positives adds a little noise
			// to the calibration draw's.
			if r.BelowShare > 0.1+3*math.Sqrt(0.09/float64(resplits))+0.02 {
				t.Errorf("PAC: %.3f of the resplits below 1−α, want ≤ δ = 0.1", r.BelowShare)
			}
		}
	}
	if r, _ := Resplits(mustCalibrate(t, g, b), b, 50, frac, 1); r.TiedShare != 0 {
		t.Errorf("continuous scores: %.2f of the resplits tied at the threshold", r.TiedShare)
	}
	set, _ := conformal.Calibrate(g, b, 0.1, conformal.Options{})
	for _, f := range []float64{0, 1, 0.5 / 5100} {
		if _, err := Resplits(set, b, 10, f, 1); err == nil {
			t.Errorf("calibration fraction %v accepted", f)
		}
	}
}

func mustCalibrate(t *testing.T, g geometry.Geometry, b *bundle.Bundle) *conformal.Set {
	t.Helper()
	s, err := conformal.Calibrate(g, b, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestResplitsTied: positives on a lattice (0/1 differences) tie their
// scores; the threshold of every resplit equals other scores, the mean
// coverage lies above the band's upper end, and TiedShare says so.
func TestResplitsTied(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 40))
	const n, k, d = 3000, 2, 3
	b := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d)}
	for i := range b.Positives {
		if rng.Float64() < 0.4 {
			b.Positives[i] = 1
		}
	}
	r, err := Resplits(mustCalibrate(t, geometry.Ball{D: d}, b), b, 100, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.TiedShare != 1 || r.Coverage.Mean <= r.Band[1] {
		t.Errorf("tied scores: %.2f of the resplits tied, mean %.4f against the band's %.4f", r.TiedShare, r.Coverage.Mean, r.Band[1])
	}
	// Class by class: a class of tied scores (label 0) beside one of
	// continuous scores (label 1) — only the first's thresholds tie, and
	// its mean lies above its band; the resplits tied wherever it did.
	b.Labels = make([]int64, n)
	for i := range n {
		if i%2 == 1 {
			b.Labels[i] = 1
			for j := range k * d {
				b.Positives[i*k*d+j] = float32(rng.NormFloat64())
			}
		}
	}
	class, err := conformal.Calibrate(geometry.Ball{D: d}, b, 0.1, conformal.Options{Mode: conformal.Class})
	if err != nil {
		t.Fatal(err)
	}
	r, classes, err := ResplitsByClass(class, b, 100, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if classes[0].TiedShare != 1 || classes[1].TiedShare != 0 || r.TiedShare != 1 || classes[0].Coverage.Mean <= classes[0].Band[1] {
		t.Errorf("class by class: tied shares %v, %v (all %v), class 0's mean %.4f against its band's %.4f",
			classes[0].TiedShare, classes[1].TiedShare, r.TiedShare, classes[0].Coverage.Mean, classes[0].Band[1])
	}
	// PAC, per class or not, promises no band for the mean.
	for _, opt := range []conformal.Options{{Mode: conformal.PAC, Delta: 0.1}, {Mode: conformal.Class, Delta: 0.1}} {
		set, err := conformal.Calibrate(geometry.Ball{D: d}, b, 0.1, opt)
		if err != nil {
			t.Fatal(err)
		}
		r, classes, err := ResplitsByClass(set, b, 10, 0.5, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.Band != [2]float64{} || classes[0].Band != [2]float64{} {
			t.Errorf("%v, δ %v: bands %v, %v", opt.Mode, opt.Delta, r.Band, classes[0].Band)
		}
	}
}

// twoSpreads is a labelled bundle of two classes whose positives lie at
// spreads 1 (label 0) and 3 (label 1): a threshold over both undercovers
// the wide class.
func twoSpreads(rng *rand.Rand, n, k, d int) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d), Labels: make([]int64, n)}
	for i := range n {
		b.Labels[i] = int64(i % 2)
		sigma := 1 + 2*float64(i%2)
		for p := range k {
			for j := range d {
				b.Positives[(i*k+p)*d+j] = float32(sigma * rng.NormFloat64())
			}
		}
	}
	return b
}

// TestResplitsByClass: a class-conditional set, recalibrated class by
// class, covers each class at 1−α on average over resplits; the marginal
// set covers the pair but undercovers the wide class, which per-class
// resplits show.
func TestResplitsByClass(t *testing.T) {
	t.Parallel()
	const alpha = 0.1
	rng := rand.New(rand.NewPCG(9, 9))
	cal, test := twoSpreads(rng, 400, 1, 2), twoSpreads(rng, 1600, 4, 2)
	marginal, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, alpha, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	class, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, alpha, conformal.Options{Mode: conformal.Class})
	if err != nil {
		t.Fatal(err)
	}
	r, classes, err := ResplitsByClass(class, test, 300, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(classes) != 2 || classes[0].NCal != 400 || r.NTest != 800 {
		t.Fatalf("classes %+v, result %+v", classes, r)
	}
	for _, c := range classes {
		// 400 calibration anchors per class: the mean lies in
		// [0.9, 0.9 + 1/401], up to 300 resplits' Monte-Carlo error.
		if c.Coverage.Mean < 1-alpha-0.006 || c.Coverage.Mean > 1-alpha+1.0/401+0.006 {
			t.Errorf("class-conditional, class %d: mean coverage %.4f, want in the band", c.Label, c.Coverage.Mean)
		}
	}
	// Each class's band is its own n's; the resplits' as a whole have
	// none (each class has its own guarantee).
	if classes[0].WholeSpace || classes[1].WholeSpace || r.Band != [2]float64{} || classes[0].Band != [2]float64{1 - alpha, 1 - alpha + 1.0/401} {
		t.Errorf("whole space %v %v, band %v, class band %v", classes[0].WholeSpace, classes[1].WholeSpace, r.Band, classes[0].Band)
	}
	if r.TiedShare != 0 || classes[0].TiedShare != 0 {
		t.Errorf("continuous scores: tied share %v, class 0's %v", r.TiedShare, classes[0].TiedShare)
	}
	// A class of 16 test anchors calibrates on 8 a resplit, too few at
	// α = 0.1 (9 needed): its set is the whole space, said; the band is
	// the other class's, and never above 1.
	small := twoSpreads(rng, 816, 4, 2)
	small.Labels = slices.Clone(small.Labels)
	for i := range small.Labels {
		small.Labels[i] = min(1, int64(i/800)) // 800 of class 0, 16 of class 1
	}
	r, classes, err = ResplitsByClass(class, small, 50, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if classes[0].WholeSpace || !classes[1].WholeSpace || classes[1].Coverage.Mean != 1 || classes[1].Band != [2]float64{} || classes[0].Band != [2]float64{1 - alpha, 1 - alpha + 1.0/401} {
		t.Errorf("a class too small: whole space %v %v, coverage %v, bands %v %v", classes[0].WholeSpace, classes[1].WholeSpace, classes[1].Coverage.Mean, classes[0].Band, classes[1].Band)
	}
	_, mclasses, err := ResplitsByClass(marginal, test, 300, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The classes' mean held-out anchors, rounded, add up to the
	// resplits' (a trial's floors summed to 596 of 600).
	if sum := mclasses[0].NTest + mclasses[1].NTest; sum < test.N/2-1 || sum > test.N/2+1 {
		t.Errorf("marginal: the classes' mean held-out anchors add up to %d of %d", sum, test.N/2)
	}
	if wide := mclasses[1].Coverage.Mean; wide > 1-alpha-0.05 || mclasses[0].Coverage.Mean < 1-alpha+0.05 {
		t.Errorf("marginal: classes %.3f and %.3f, want the wide class well below 1−α and the narrow well above", mclasses[0].Coverage.Mean, wide)
	}
	for _, r := range []int{0, -1} { // refused, not a panic making the counts
		if _, _, err := ResplitsByClass(marginal, test, r, 0.5, 1); err == nil || !strings.Contains(err.Error(), "want at least 1") {
			t.Errorf("marginal set, %d resplits: %v", r, err)
		}
	}
	if _, _, err := ResplitsByClass(class, &bundle.Bundle{N: 1, K: 1, D: 2, Anchors: []float32{0, 0}, Positives: []float32{0, 0}}, 10, 0.5, 1); err == nil {
		t.Error("a bundle without labels accepted")
	}
}

// TestResplitsDeterministic: the resplits run on all cores with the
// numbers of one goroutine, for a marginal set class by class and a
// class-conditional one.
func TestResplitsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(60, 60))
	cal, test := classBundle(rng, 300, 3, 2), classBundle(rng, 600, 4, 2)
	for _, mode := range []conformal.Mode{conformal.OnePerAnchor, conformal.Class} {
		set, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{Mode: mode, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		run := func(procs int) string {
			prev := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(prev)
			r, classes, err := ResplitsByClass(set, test, 97, 0.5, 5)
			return fmt.Sprint(r, classes, err)
		}
		if one, four := run(1), run(4); one != four {
			t.Errorf("%v: 1 goroutine\n%s\n4 goroutines\n%s", mode, one, four)
		}
	}
}
