package conformal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/race"
)

// TestPACRankVectors: ranks computed independently, in exact rational
// arithmetic with Python's fractions module:
//
//	def pac_rank(n, alpha, delta):
//	    p, q, target = 1 - F(str(alpha)), F(str(alpha)), 1 - F(str(delta))
//	    cdf = F(0)
//	    for r in range(1, n + 1):
//	        cdf += comb(n, r - 1) * p**(r - 1) * q**(n - r + 1)
//	        if cdf >= target: return r
//	    return n + 1
func TestPACRankVectors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n            int
		alpha, delta float64
		rank         int
	}{
		{100, 0.1, 0.1, 95}, {1000, 0.05, 0.01, 966}, {19, 0.05, 0.1, 20}, {50, 0.1, 0.05, 49},
		{200, 0.05, 0.1, 195}, {500, 0.1, 0.01, 466}, {59, 0.05, 0.05, 59}, {58, 0.05, 0.05, 59}, {10, 0.5, 0.2, 7},
	} {
		r, err := PACRank(c.n, c.alpha, c.delta)
		if err != nil || r != c.rank {
			t.Errorf("PACRank(%d, %v, %v) = %d, %v; want %d", c.n, c.alpha, c.delta, r, err, c.rank)
		}
	}
}

// TestPACRankPaths: the exact integer sum and the incomplete-beta path
// agree where both run, and the PAC rank is never below the marginal one
// for δ ≤ 0.1 (at δ = 1/2 it can be: n = 7, α = 0.1 gives 7 against 8,
// the median of Beta(r, n+1−r) lying above its mean). Numbers alone, no
// goroutine on the way: not under the race detector.
func TestPACRankPaths(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	for _, n := range []int{1, 7, 99, 500, 999, 4999, 20000} {
		for _, a := range []float64{0.01, 0.05, 0.1, 0.3} {
			for _, d := range []float64{0.01, 0.1, 0.5} {
				exact, err := exactPACRank(n, a, d)
				if err != nil {
					t.Fatal(err)
				}
				if f := floatPACRank(n, a, d); f != exact {
					t.Errorf("n=%d α=%v δ=%v: exact %d, incomplete beta %d", n, a, d, exact, f)
				}
				if m, _ := Rank(n, a); d <= 0.1 && exact < m {
					t.Errorf("n=%d α=%v δ=%v: PAC rank %d below the marginal %d", n, a, d, exact, m)
				}
			}
		}
	}
	if r, err := PACRank(100000, 0.05, 0.1); err != nil || r < 95000 || r > 95300 {
		t.Errorf("n = 10⁵: rank %d, %v", r, err)
	}
	// Small δ: the float path works on the upper tail, not 1 − δ.
	for _, c := range []struct {
		n            int
		alpha, delta float64
	}{{20000, 0.1, 1e-12}, {20000, 0.01, 1e-12}, {5000, 0.05, 1e-9}} {
		exact, _ := exactPACRank(c.n, c.alpha, c.delta)
		if f := floatPACRank(c.n, c.alpha, c.delta); f != exact {
			t.Errorf("n=%d α=%v δ=%v: exact %d, incomplete beta %d", c.n, c.alpha, c.delta, exact, f)
		}
	}
	if _, err := PACRank(1000, 0.1, 1e-13); err == nil {
		t.Error("δ below MinDelta accepted")
	}
	// The smallest n is (1 − α)^n ≤ δ, found at once even for tiny δ.
	if n := minPACCalibration(0.001, 1e-12); n != 27618 {
		t.Errorf("α = 0.001, δ = 1e-12: smallest n %d, want 27618", n)
	}
}

// TestPACTooFew: the whole-space case names the smallest n that works.
func TestPACTooFew(t *testing.T) {
	t.Parallel()
	scores := make([]float64, 58)
	q, r, err := Quantile(scores, 0.05, Options{Mode: PAC, Delta: 0.05})
	var tf *TooFewError
	if !math.IsInf(q, 1) || r != 59 || !errors.As(err, &tf) || !strings.Contains(err.Error(), "needs at least 59") {
		t.Errorf("n = 58, α = δ = 0.05: q %v, rank %d, error %v", q, r, err)
	}
	for _, d := range []float64{0, 1, -0.1, math.NaN()} {
		if _, err := PACRank(100, 0.1, d); err == nil {
			t.Errorf("δ = %v accepted", d)
		}
	}
}

// TestPACGuarantee: over 20 000 calibration draws of n = 100 uniform
// scores, the coverage of the threshold q̂ is q̂ itself (the scores'
// CDF); the PAC threshold falls below 1 − α in at most δ of the draws (plus
// three Monte-Carlo standard errors), the marginal one in far more.
// Under the race detector, 2 000 draws (the bound is the count's):
// Quantile starts no goroutine.
func TestPACGuarantee(t *testing.T) {
	t.Parallel()
	const n, alpha, delta = 100, 0.1, 0.1
	draws := 20000
	if race.Enabled {
		draws = 2000
	}
	rng := rand.New(rand.NewPCG(20, 20))
	scores := make([]float64, n)
	var pacLow, margLow int
	for range draws {
		for i := range scores {
			scores[i] = rng.Float64()
		}
		q, _, err := Quantile(scores, alpha, Options{Mode: PAC, Delta: delta})
		if err != nil {
			t.Fatal(err)
		}
		if q < 1-alpha {
			pacLow++
		}
		if q, _ = Threshold(scores, alpha); q < 1-alpha {
			margLow++
		}
	}
	pac, marg := float64(pacLow)/float64(draws), float64(margLow)/float64(draws)
	se := math.Sqrt(delta * (1 - delta) / float64(draws))
	t.Logf("coverage below 1−α: PAC %.4f (δ = %v), marginal %.4f", pac, delta, marg)
	if pac > delta+3*se {
		t.Errorf("PAC: %.4f of the draws cover less than 1−α, want ≤ δ = %v", pac, delta)
	}
	if marg < 0.3 {
		t.Errorf("marginal: %.4f of the draws below 1−α; expected a large share (the guarantee is only on average)", marg)
	}
}

// TestPACResplits is the PAC guarantee through the pipeline: over 2000
// seeded calibration draws (n = 100 anchors of the synthetic bundles, one
// positive each, the ℓ2 ball), each draw's coverage measured on 20 000
// fresh test positives; the share of draws below 1 − α is at most δ (plus
// three Monte-Carlo standard errors) for PAC, and far above δ for the
// marginal calibration of the same draws.
func TestPACResplits(t *testing.T) {
	t.Parallel()
	const trials, n, nTest, alpha, delta = 2000, 100, 20000, 0.1, 0.1
	rng := rand.New(rand.NewPCG(21, 21))
	g := geometry.Ball{D: 2}
	tb := synthetic(rng, nTest, 1)
	test := make([]float32, nTest*2)
	for i := range nTest {
		tb.PositiveDiff(test[i*2:(i+1)*2], i, 0)
	}
	ts := g.Scores(nil, test)
	slices.Sort(ts)
	coverage := func(q float64) float64 {
		i, _ := slices.BinarySearch(ts, math.Nextafter(q, math.Inf(1)))
		return float64(i) / nTest
	}
	var pacLow, margLow int
	for tr := range trials {
		cal := synthetic(rng, n, 4)
		pac, err := Calibrate(g, cal, alpha, Options{Mode: PAC, Delta: delta, Seed: uint64(tr)})
		if err != nil {
			t.Fatal(err)
		}
		marg, err := Calibrate(g, cal, alpha, Options{Seed: uint64(tr)})
		if err != nil {
			t.Fatal(err)
		}
		if pac.Calibration.Rank != 95 || marg.Calibration.Rank != 91 {
			t.Fatalf("ranks %d and %d, want 95 and 91", pac.Calibration.Rank, marg.Calibration.Rank)
		}
		if coverage(pac.Threshold) < 1-alpha {
			pacLow++
		}
		if coverage(marg.Threshold) < 1-alpha {
			margLow++
		}
	}
	p, m := float64(pacLow)/trials, float64(margLow)/trials
	t.Logf("draws covering less than 1−α: PAC %.4f, marginal %.4f (δ = %v, %d draws)", p, m, delta, trials)
	if se := math.Sqrt(delta * (1 - delta) / trials); p > delta+3*se {
		t.Errorf("PAC: %.4f of the draws below 1−α, want ≤ %v", p, delta)
	}
	if m < 2*delta {
		t.Errorf("marginal: %.4f of the draws below 1−α, expected far more than δ", m)
	}
}

// TestPACSetFile: a PAC set keeps its δ and rank through its file, says
// "training-conditional", and a file whose δ, rank or mode disagree is
// refused.
func TestPACSetFile(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(8, 8)), 100, 3)
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{Mode: PAC, Delta: 0.1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Guaranteed() || s.Calibration.Rank != 95 || s.Calibration.Delta != 0.1 {
		t.Fatalf("%+v", s.Calibration)
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	s2, err := ReadJSON(strings.NewReader(good))
	if err != nil || s2.Calibration != s.Calibration || s2.Threshold != s.Threshold {
		t.Fatalf("round trip: %+v, %v", s2, err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"delta": 0.1`, `"delta": 0.2`, "calibration.rank 95"},
		{`"delta": 0.1`, `"delta": 1.5`, "delta must lie"},
		{`"mode": "pac"`, `"mode": "one-per-anchor"`, "only pac and class have one"},
		{`"rank": 95`, `"rank": 91`, "calibration.rank 91"},
		{`"guarantee": "training-conditional"`, `"guarantee": "exact"`, "contradicts"},
	} {
		if !strings.Contains(good, c.from) {
			t.Fatalf("fixture lacks %q:\n%s", c.from, good)
		}
		_, err := ReadJSON(strings.NewReader(strings.Replace(good, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: error %v, want %q", c.from, c.to, err, c.want)
		}
	}
	if _, err := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{Mode: PAC}); err == nil {
		t.Error("PAC without δ: no error")
	}
}

// TestClassSetFileValidation: a class-conditional set's file is refused
// when its classes disagree with their n, α and δ, are out of order, or
// appear under another mode.
func TestClassSetFileValidation(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(9, 9)), 60, 2)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i%2) * 5 // classes 0 and 5, 30 anchors each
	}
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{Mode: Class})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Classes) != 2 || s.Classes[1].Label != 5 || s.Classes[1].Rank != 28 {
		t.Fatalf("classes %+v", s.Classes)
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if _, err := ReadJSON(strings.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"rank": 28,`, `"rank": 27,`, "rank 27, but n = 30"},
		{`"label": 5,`, `"label": -1,`, "increasing order"},
		{`"mode": "class"`, `"mode": "one-per-anchor"`, "only class has them"},
		{`"guarantee": "class-conditional"`, `"guarantee": "exact"`, "contradicts"},
		{`"n": 30,`, `"n": 0,`, "n 0"},
	} {
		if !strings.Contains(good, c.from) {
			t.Fatalf("fixture lacks %q:\n%s", c.from, good)
		}
		_, err := ReadJSON(strings.NewReader(strings.Replace(good, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: error %v, want %q", c.from, c.to, err, c.want)
		}
	}
	// Edited as JSON: a class without its threshold (it would read as 0,
	// an empty set), and classes whose counts do not add up to n.
	edit := func(f func(classes []any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(good), &m); err != nil {
			t.Fatal(err)
		}
		f(m["classes"].([]any))
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, c := range []struct {
		doc, want string
	}{
		{edit(func(cs []any) { delete(cs[0].(map[string]any), "threshold") }), "threshold is missing"},
		{edit(func(cs []any) { cs[0].(map[string]any)["n"], cs[0].(map[string]any)["rank"] = 31, 29 }), "classes hold 61 calibration units in all, but calibration.n is 60"},
	} {
		if _, err := ReadJSON(strings.NewReader(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	cal.Labels = nil
	if _, err := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{Mode: Class}); err == nil {
		t.Error("class calibration without labels: no error")
	}
}

// TestTooFewWords: the reason reads "1 calibration score is", and the
// plural otherwise, under either rule.
func TestTooFewWords(t *testing.T) {
	for _, c := range []struct {
		e    TooFewError
		want string
	}{
		{TooFewError{N: 1, Alpha: 0.05, Rank: 2}, "1 calibration score is too few for alpha 0.05: the rank"},
		{TooFewError{N: 8, Alpha: 0.05, Rank: 9}, "8 calibration scores are too few for alpha 0.05: the rank"},
		{TooFewError{N: 1, Alpha: 0.05, Delta: 0.1}, "1 calibration score is too few for alpha 0.05 at delta 0.1"},
	} {
		if got := c.e.Reason(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v: %q, want %q…", c.e, got, c.want)
		}
	}
}

// TestRankNWarning: a set whose rank is n (19 anchors at α = 0.05; PAC's
// smallest n) says its threshold is its largest score and how many would
// lift it; one with more does not.
func TestRankNWarning(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, c := range []struct {
		n    int
		opt  Options
		want bool
	}{
		{19, Options{}, true}, {40, Options{}, false},
		{45, Options{Mode: PAC, Delta: 0.1}, true}, {200, Options{Mode: PAC, Delta: 0.1}, false},
	} {
		s, err := Calibrate(geometry.Ball{D: 2}, synthetic(rng, c.n, 2), 0.05, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(s.Warnings(), "\n")
		got := strings.Contains(w, fmt.Sprintf("its %d calibration anchors give rank n = %d: its threshold is its largest calibration score", c.n, c.n))
		if got != c.want || c.want && !strings.Contains(w, "would lift it off the maximum") {
			t.Errorf("n = %d, %v: rank %d, warnings %q", c.n, c.opt.Mode, s.Calibration.Rank, w)
		}
	}
}

// TestAlphaWarning: an α above one half (0.95 meant as 95%) is calibrated
// as given — its threshold a low quantile — and warned of; 0.5 and below
// are not.
func TestAlphaWarning(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	b := synthetic(rng, 200, 2)
	for _, c := range []struct {
		alpha float64
		want  string
	}{
		{0.95, "α = 0.95: the set is guaranteed to cover only 1 − α = 5% of positives; α is the share it may miss (0.05 for 95% coverage)"},
		{0.6, "α = 0.6: the set is guaranteed to cover only 1 − α = 40% of positives"},
		{0.5, ""}, {0.05, ""},
	} {
		s, err := Calibrate(geometry.Ball{D: 2}, b, c.alpha, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(s.Warnings(), "\n")
		if c.want == "" && strings.Contains(w, "α = ") || c.want != "" && !strings.Contains(w, c.want) {
			t.Errorf("α = %v: warnings %q, want %q", c.alpha, w, c.want)
		}
	}
}

// TestOODFewWarning: a per-input OOD test calibrated on fewer than 19
// inputs cannot certify α_ood = 0.05, and the set says so; 19 can.
func TestOODFewWarning(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s, err := Calibrate(geometry.Ball{D: 2}, synthetic(rng, 200, 2), 0.05, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    int
		want string
	}{
		{10, `the per-input OOD test is calibrated on 10 inputs (ood-cal.npz (class "zebra")): it certifies α_ood ≥ 1/(n+1) = 0.09091 alone, so α_ood = 0.05 cannot be certified (it needs 19 inputs`},
		{18, "calibrated on 18 inputs"},
		{19, ""},
	} {
		scores := make([]float64, c.n)
		for i := range scores {
			scores[i] = rng.Float64()
		}
		if s.OOD, err = NewOODCalibration(1, scores, `ood-cal.npz (class "zebra")`); err != nil {
			t.Fatal(err)
		}
		w := strings.Join(s.Warnings(), "\n")
		if c.want == "" && strings.Contains(w, "per-input OOD test") || c.want != "" && !strings.Contains(w, c.want) {
			t.Errorf("%d inputs: warnings %q, want %q", c.n, w, c.want)
		}
	}
}
