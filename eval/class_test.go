package eval

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
)

// classBundle is n anchors of three classes (label i % 3) with k positives
// N(anchor, σ²I), σ = 1 but 3 for class 2, and k negatives N(anchor, 16I).
func classBundle(rng *rand.Rand, n, k, d int) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: k, D: d, KNeg: k, Labels: make([]int64, n)}
	b.Anchors, b.Positives, b.Negatives = make([]float32, n*d), make([]float32, n*k*d), make([]float32, n*k*d)
	for i := range n {
		b.Labels[i] = int64(i % 3)
		sigma := 1.0
		if i%3 == 2 {
			sigma = 3
		}
		for j := range d {
			b.Anchors[i*d+j] = float32(rng.NormFloat64())
		}
		for a := range k {
			for j := range d {
				b.Positives[(i*k+a)*d+j] = b.Anchors[i*d+j] + float32(sigma*rng.NormFloat64())
				b.Negatives[(i*k+a)*d+j] = b.Anchors[i*d+j] + float32(4*rng.NormFloat64())
			}
		}
	}
	return b
}

// TestClassConditional: when one class's positives are three times wider,
// the marginal threshold undercovers it and overcovers the others; over
// 300 draws (100 calibration anchors per class), the class-conditional
// thresholds give every class a mean coverage within its finite-sample
// band [1−α, 1−α+1/(n_c+1)] (4 Monte-Carlo standard errors).
func TestClassConditional(t *testing.T) {
	t.Parallel()
	const draws, alpha = 300, 0.1
	rng := rand.New(rand.NewPCG(40, 40))
	g := geometry.Ball{D: 2}
	cov := [2][3][]float64{} // marginal, class; class label; draws
	for dr := range draws {
		// Fresh calibration and test anchors each draw: the guarantee's
		// setting (a fixed test sample would add its own bias).
		cal := classBundle(rng, 300, 2, 2)
		test := classBundle(rng, 1500, 4, 2)
		for m, mode := range []conformal.Mode{conformal.OnePerAnchor, conformal.Class} {
			set, err := conformal.Calibrate(g, cal, alpha, conformal.Options{Mode: mode, Seed: uint64(dr)})
			if err != nil {
				t.Fatal(err)
			}
			_, classes, err := ByClass(set, test)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range classes {
				cov[m][c.Label] = append(cov[m][c.Label], c.Coverage)
			}
		}
	}
	for l := range 3 {
		ms, cs := Summarize(cov[0][l]), Summarize(cov[1][l])
		t.Logf("class %d: marginal %.4f, class-conditional %.4f ± %.4f", l, ms.Mean, cs.Mean, cs.Std)
		se := cs.Std / math.Sqrt(draws)
		if cs.Mean < 1-alpha-4*se || cs.Mean > 1-alpha+1.0/101+4*se {
			t.Errorf("class %d: class-conditional mean coverage %.4f outside [%.4f, %.4f] ± %.4f", l, cs.Mean, 1-alpha, 1-alpha+1.0/101, 4*se)
		}
	}
	if m := Summarize(cov[0][2]).Mean; m > 0.8 {
		t.Errorf("the wide class under the marginal threshold: coverage %.4f, expected far below 1−α", m)
	}
}

// TestClassSetFile: a class-conditional set's thresholds survive its file
// and judge the same; labels the calibration never saw, test bundles
// without labels, and malformed classes in a file are refused.
func TestClassSetFile(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 41))
	cal := classBundle(rng, 60, 2, 2)
	set, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{Mode: conformal.Class, Delta: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Classes) != 3 || set.Classes[0].N != 20 || set.Calibration.Delta != 0.2 {
		t.Fatalf("classes %+v, calibration %+v", set.Classes, set.Calibration)
	}
	path := t.TempDir() + "/class.json"
	if err := set.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := conformal.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	test := classBundle(rng, 90, 3, 2)
	r1, c1, err := ByClass(set, test)
	if err != nil {
		t.Fatal(err)
	}
	r2, c2, err := ByClass(back, test)
	if err != nil || r1 != r2 || len(c1) != len(c2) || c1[2] != c2[2] {
		t.Errorf("loaded set judges differently: %+v %+v (%v)", r1, r2, err)
	}
	if r3, err := Evaluate(back, test); err != nil || r3 != r1 {
		t.Errorf("Evaluate %+v, ByClass %+v (%v)", r3, r1, err)
	}
	test.Labels[5] = 7
	if _, _, err := ByClass(set, test); err == nil {
		t.Error("a class the calibration never saw: no error")
	}
	test.Labels = nil
	if _, err := Evaluate(set, test); err == nil {
		t.Error("a test bundle without labels: no error")
	}
	small := classBundle(rng, 12, 2, 2) // 4 anchors per class: too few for α = 0.1
	if _, err := conformal.Calibrate(geometry.Ball{D: 2}, small, 0.1, conformal.Options{Mode: conformal.Class}); err == nil {
		t.Error("classes of 4 anchors at α = 0.1: no error")
	}
	if s, err := conformal.Calibrate(geometry.Ball{D: 2}, small, 0.1, conformal.Options{Mode: conformal.Class, AllowInfinite: true}); err != nil || len(s.Warnings()) < 3 {
		t.Errorf("allowed infinite: %v, warnings %q", err, s.Warnings())
	}
}

// TestWorstClassAmongAnchored: the worst class is named among classes of
// min anchors or more, where any has that many, counting the others.
func TestWorstClassAmongAnchored(t *testing.T) {
	cls := func(label int64, anchors int, cov float64) ClassResult {
		return ClassResult{Label: label, Anchors: anchors, Result: Result{Coverage: cov}}
	}
	for _, c := range []struct {
		name      string
		classes   []ClassResult
		want      int64
		wantFewer int
	}{
		{"a small class lowest", []ClassResult{cls(0, 40, 0.8), cls(1, 3, 0.0), cls(2, 25, 0.9)}, 0, 1},
		{"every class small", []ClassResult{cls(0, 4, 0.5), cls(1, 3, 0.2)}, 1, 0},
		{"every class large", []ClassResult{cls(0, 40, 0.95), cls(1, 30, 0.7)}, 1, 0},
	} {
		w, fewer := WorstClass(c.classes, MinClassAnchors)
		if w.Label != c.want || fewer != c.wantFewer {
			t.Errorf("%s: worst class %d, %d fewer; want %d, %d", c.name, w.Label, fewer, c.want, c.wantFewer)
		}
		// JudgedClasses, on the test anchors' labels, judges the same
		// classes (nil: all), counting the same others.
		var labels []int64
		for _, k := range c.classes {
			labels = append(labels, slices.Repeat([]int64{k.Label}, k.Anchors)...)
		}
		judged, jFewer := JudgedClasses(labels, MinClassAnchors)
		if jFewer != c.wantFewer || (judged == nil) != (c.wantFewer == 0) {
			t.Errorf("%s: JudgedClasses %v, %d fewer; WorstClass %d fewer", c.name, judged, jFewer, fewer)
		}
		for _, k := range c.classes {
			if in := judged == nil || judged[k.Label]; in != (k.Anchors >= MinClassAnchors || c.wantFewer == 0) {
				t.Errorf("%s: JudgedClasses judges class %d (%d anchors): %v", c.name, k.Label, k.Anchors, in)
			}
		}
	}
}

// TestLogVolNonSquareHead: LogVol/d divides a set's log-volume by the
// dimension of the space it is measured in — behind a head that is not
// square (3 → 2, 3 → 5) its output dimension, behind a square one and
// without one the embeddings' — in Evaluate and in WithClasses (overall
// and each class).
func TestLogVolNonSquareHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 3))
	test := classBundle(rng, 60, 4, 3)
	for _, out := range []int{2, 3, 5} {
		w := make([]float64, out*3)
		for i := range w {
			w[i] = 0.5 * rng.NormFloat64()
		}
		for k := range min(out, 3) {
			w[k*3+k] += 1
		}
		ones, twos := make([]float64, out), make([]float64, out)
		for j := range out {
			ones[j], twos[j] = 1, 2
		}
		gb, _ := geometry.NewGenBall(ones, twos)
		g, err := head.NewProjected(&head.Linear{In: 3, Out: out, W: w, B: make([]float64, out)}, gb)
		if err != nil {
			t.Fatal(err)
		}
		s := &conformal.Set{Geometry: g, Threshold: 2, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90}}
		want := g.LogVolume(2) / float64(out)
		if out == 3 {
			want = g.LogVolume(2) / 3
		}
		r, err := Evaluate(s, test)
		if err != nil {
			t.Fatal(err)
		}
		r2, classes, err := WithClasses(s, test)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.LogVolPerDim-want) > 1e-12 || math.Abs(r2.LogVolPerDim-want) > 1e-12 || math.Abs(classes[0].LogVolPerDim-want) > 1e-12 {
			t.Errorf("3 → %d: LogVol/d %v, %v, class 0 %v; want %v (log Vol %v)", out, r.LogVolPerDim, r2.LogVolPerDim, classes[0].LogVolPerDim, want, g.LogVolume(2))
		}
		if got := VolumeDim(g, 3); got != out {
			t.Errorf("3 → %d: VolumeDim %d", out, got)
		}
	}
}
