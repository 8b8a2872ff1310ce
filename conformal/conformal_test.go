package conformal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/race"
)

// TestQuantileVectors: the known ranks, and +Inf past n.
func TestQuantileVectors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		alpha float64
		n     int
		rank  int // 0: +Inf
	}{
		{0.1, 9, 9}, {0.1, 8, 0}, {0.05, 19, 19}, {0.05, 18, 0},
		{0.05, 1000, 951}, {0.05, 101, 97},
		// Decimal α: 0.3 is 3/10, so ⌈0.7·10⌉ = 7, where the binary double
		// 0.29999999999999998890 taken exactly gives 8 (0.15, n = 19: 17
		// not 18); float64 arithmetic gives (1−0.7)·10 = 3.0000000000000004,
		// ceiling 4 where 3 is right.
		{0.3, 9, 7}, {0.15, 19, 17}, {0.7, 9, 3}, {0.2, 4, 4}, {0.5, 1, 1}, {0.9, 1, 1},
		// (1−0.45)·100 is 55.00000000000001 in float64: ceiling 56, where 55 is right.
		{0.45, 99, 55},
	} {
		scores := make([]float64, c.n)
		for i := range scores {
			scores[i] = float64(c.n - i) // the r-th smallest is r
		}
		q, err := Threshold(scores, c.alpha)
		if c.rank == 0 {
			var tf *TooFewError
			if !math.IsInf(q, 1) || !errors.Is(err, ErrTooFewCalibration) || !errors.As(err, &tf) {
				t.Errorf("α=%v n=%d: got %v, %v; want +Inf and ErrTooFewCalibration", c.alpha, c.n, q, err)
			}
			continue
		}
		if err != nil || q != float64(c.rank) {
			t.Errorf("α=%v n=%d: threshold %v (%v), want the %d-th smallest", c.alpha, c.n, q, err, c.rank)
		}
	}
}

func TestTooFewMessage(t *testing.T) {
	t.Parallel()
	_, err := Threshold(make([]float64, 8), 0.1)
	if err == nil || !strings.Contains(err.Error(), "needs at least 9") || !strings.Contains(err.Error(), "+Inf") {
		t.Errorf("error %q should say +Inf and that alpha 0.1 needs at least 9", err)
	}
}

func TestThresholdErrors(t *testing.T) {
	t.Parallel()
	for _, a := range []float64{0, 1, -0.1, 1.5, math.NaN()} {
		if _, err := Threshold([]float64{1, 2, 3}, a); !errors.Is(err, ErrAlpha) {
			t.Errorf("alpha %v: error %v, want ErrAlpha", a, err)
		}
	}
	if _, err := Threshold(nil, 0.1); err == nil {
		t.Error("no scores: no error")
	}
	if _, err := Threshold([]float64{1, math.NaN(), 3}, 0.5); err == nil || !strings.Contains(err.Error(), "score 1 is NaN") {
		t.Errorf("NaN score: error %v", err)
	}
}

// TestSelectMatchesSort on random inputs with many ties, and on sorted and
// reversed inputs.
func TestSelectMatchesSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + rng.IntN(200)
		x := make([]float64, n)
		for i := range x {
			switch trial % 3 {
			case 0:
				x[i] = float64(rng.IntN(5)) // ties
			case 1:
				x[i] = rng.NormFloat64()
			default:
				x[i] = float64(i) // sorted
			}
		}
		sorted := slices.Sorted(slices.Values(x))
		r := 1 + rng.IntN(n)
		y := slices.Clone(x)
		if got := Select(y, r); got != sorted[r-1] {
			t.Fatalf("n=%d r=%d: Select %v, sort %v", n, r, got, sorted[r-1])
		}
		slices.Sort(y)
		if !slices.Equal(y, sorted) {
			t.Fatalf("Select lost or changed elements")
		}
	}
}

// TestPermutationInvariance: reordering the calibration scores leaves q̂
// unchanged, and a monotone transform of the scores moves q̂ with it.
func TestPermutationInvariance(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 501)
	for i := range x {
		x[i] = rng.ExpFloat64()
	}
	q0, _ := Threshold(slices.Clone(x), 0.1)
	for range 5 {
		rng.Shuffle(len(x), func(i, j int) { x[i], x[j] = x[j], x[i] })
		if q, _ := Threshold(slices.Clone(x), 0.1); q != q0 {
			t.Fatalf("threshold %v after a shuffle, %v before", q, q0)
		}
	}
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = math.Exp(3 * v)
	}
	if q, _ := Threshold(y, 0.1); q != math.Exp(3*q0) {
		t.Errorf("monotone transform: threshold %v, want %v", q, math.Exp(3*q0))
	}
}

// synthetic draws n anchors in d = 2, each with k positives around it at an
// anchor-specific spread (heavy-tailed, so the ℓ2 score is far from
// pivotal); anchors are i.i.d., hence exchangeable.
func synthetic(rng *rand.Rand, n, k int) *bundle.Bundle {
	const d = 2
	b := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d)}
	for i := range n {
		s := math.Exp(rng.NormFloat64())
		for j := range d {
			b.Anchors[i*d+j] = float32(5 * rng.NormFloat64())
		}
		for a := range k {
			for j := range d {
				b.Positives[(i*k+a)*d+j] = b.Anchors[i*d+j] + float32(s*rng.NormFloat64())
			}
		}
	}
	return b
}

// TestCoverageGuarantee is Lemma 1 as a property test: over R seeded
// resplits, one-per-anchor calibration on n anchors gives a mean test
// coverage in [1−α, 1−α + 1/(n+1)], up to 4.5 Monte-Carlo standard errors
// (Bonferroni over the 9 cases at a family-wise level of about 1e-4).
// Under the race detector, 200 resplits (the bounds are the count's): the
// concurrency is Calibrate's, the same in each.
func TestCoverageGuarantee(t *testing.T) {
	t.Parallel()
	const k, nTest = 4, 400
	trials := 2000
	if race.Enabled {
		trials = 200
	}
	for _, n := range []int{19, 99, 999} {
		if n == 999 && testing.Short() {
			continue // long variant
		}
		for _, alpha := range []float64{0.05, 0.1, 0.2} {
			rng := rand.New(rand.NewPCG(uint64(n), math.Float64bits(alpha)))
			g := geometry.Ball{D: 2}
			cov := make([]float64, trials)
			test := make([]float32, nTest*2)
			scores := make([]float64, nTest)
			for tr := range trials {
				cal := synthetic(rng, n, k)
				set, err := Calibrate(g, cal, alpha, Options{Seed: uint64(tr)})
				if err != nil {
					t.Fatal(err)
				}
				// One positive of each of nTest fresh test anchors.
				tb := synthetic(rng, nTest, 1)
				for i := range nTest {
					tb.PositiveDiff(test[i*2:(i+1)*2], i, 0)
				}
				in := 0
				for _, s := range g.Scores(scores, test) {
					if s <= set.Threshold {
						in++
					}
				}
				cov[tr] = float64(in) / nTest
			}
			mean, se := meanSE(cov)
			lo, hi := 1-alpha, 1-alpha+1/float64(n+1)
			if mean < lo-4.5*se || mean > hi+4.5*se {
				t.Errorf("n=%d α=%v: mean coverage %.4f ± %.4f outside [%.4f, %.4f]", n, alpha, mean, se, lo, hi)
			}
		}
	}
}

// TestPooledIsNotTheGuarantee shows why pooled calibration is labelled
// approximate: when each anchor's positives share a spread, pooling k of them
// makes the n·k scores dependent and the n = 19 threshold undercovers.
func TestPooledIsNotTheGuarantee(t *testing.T) {
	t.Parallel()
	const trials, n, k, alpha = 3000, 19, 20, 0.05
	rng := rand.New(rand.NewPCG(11, 12))
	g := geometry.Ball{D: 2}
	var covOne, covPooled []float64
	test := make([]float32, 400*2)
	for tr := range trials {
		cal := synthetic(rng, n, k)
		one, err1 := Calibrate(g, cal, alpha, Options{Seed: uint64(tr)})
		pooled, err2 := Calibrate(g, cal, alpha, Options{Mode: Pooled})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if pooled.Guaranteed() || !one.Guaranteed() || len(pooled.Warnings()) != 1 {
			t.Fatal("pooled set not labelled approximate")
		}
		tb := synthetic(rng, 400, 1)
		for i := range 400 {
			tb.PositiveDiff(test[i*2:(i+1)*2], i, 0)
		}
		s := g.Scores(nil, test)
		covOne = append(covOne, frac(s, one.Threshold))
		covPooled = append(covPooled, frac(s, pooled.Threshold))
	}
	mOne, seOne := meanSE(covOne)
	mPool, sePool := meanSE(covPooled)
	if mOne < 1-alpha-4*seOne {
		t.Errorf("one-per-anchor coverage %.4f below 1−α", mOne)
	}
	if mPool > 1-alpha-3*sePool {
		t.Errorf("pooled coverage %.4f ± %.4f: expected it to fall below 1−α here", mPool, sePool)
	}
}

func frac(s []float64, q float64) float64 {
	in := 0
	for _, v := range s {
		if v <= q {
			in++
		}
	}
	return float64(in) / float64(len(s))
}

func meanSE(x []float64) (mean, se float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

func TestCalibrateInfinite(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(5, 5)), 8, 2)
	if _, err := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{}); !errors.Is(err, ErrTooFewCalibration) {
		t.Fatalf("n=8 α=0.1: error %v, want ErrTooFewCalibration", err)
	}
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{AllowInfinite: true})
	if err != nil || !math.IsInf(s.Threshold, 1) || len(s.Warnings()) != 1 {
		t.Fatalf("AllowInfinite: %v, %v, warnings %v", s, err, s.Warnings())
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	s2, err := ReadJSON(&buf)
	if err != nil || !math.IsInf(s2.Threshold, 1) {
		t.Fatalf("+Inf threshold round trip: %v, %v", s2, err)
	}
}

func TestSetFileRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 6))
	cal := synthetic(rng, 50, 3)
	el, _ := geometry.NewEllipsoid(2, []float64{2, 0.3, 0.3, 1})
	nm, _ := geometry.NewNorm(2, []float64{1, 0.2, -0.1, 0.9}, 1.5)
	gb, _ := geometry.NewGenBall([]float64{0.5, 2}, []float64{1.2, 3})
	shifted, _ := geometry.NewShifted(gb, []float64{0.3, -1.25})
	for _, g := range []geometry.Geometry{geometry.Ball{D: 2}, el, nm, gb, shifted} {
		s, err := Calibrate(g, cal, 0.1, Options{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		s.Fit = &FitInfo{Method: "test", N: 7, Training: json.RawMessage(`{"epochs":3}`)}
		var buf bytes.Buffer
		if err := s.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		s2, err := ReadJSON(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%v: %v\n%s", g.Kind(), err, buf.String())
		}
		if s2.Threshold != s.Threshold || s2.Alpha != s.Alpha || s2.Calibration != s.Calibration || !sameFit(s2.Fit, s.Fit) {
			t.Errorf("%v: set changed in a round trip", g.Kind())
		}
		d := cal.PositiveDiffs(nil, 0)
		if !slices.Equal(s.Geometry.Scores(nil, d), s2.Geometry.Scores(nil, d)) {
			t.Errorf("%v: loaded geometry scores differently", g.Kind())
		}
		if g == shifted && (s2.Geometry.(*geometry.Shifted).Shift[1] != -1.25 || !strings.Contains(buf.String(), `"shift": [0.30000001192092896, -1.25]`)) {
			t.Errorf("the shift in a round trip:\n%s", buf.String())
		}
	}
}

func TestSetFileValidation(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(7, 7)), 50, 3)
	s, _ := Calibrate(geometry.UnitGenBall(2, 2), cal, 0.1, Options{})
	var buf bytes.Buffer
	s.WriteJSON(&buf)
	good := buf.String()
	for _, c := range []struct{ from, to, want string }{
		{`"version": 1`, `"version": 2`, "version 2"},
		{`"format": "ccs-set"`, `"format": "other"`, `format "other"`},
		{`"alpha": 0.1`, `"alpha": 1.1`, "alpha"},
		{`"rank": 46`, `"rank": 45`, "calibration.rank 45"},
		{`"guarantee": "exact"`, `"guarantee": "approximate"`, "contradicts"},
		{`"kind": "genball"`, `"kind": "cube"`, "unknown geometry"},
		{`"dim": 2,`, `"dim": 3,`, "the geometry (and head) take"},
		{`"mode": "one-per-anchor"`, `"mode": "pooled", "extra": 1`, "unknown field"},
		{`"exponents": [`, `"exponents": [-1, `, "exponent"},
		{`"dim": 2,`, `"dim": 2, "shift": [1],`, "shift: geometry: a shift of 1 values for a geometry of dimension 2"},
		{`"dim": 2,`, `"dim": 2, "shift": [1, 1e39],`, "shift: geometry: shift[1] is 1e+39"},
		{`"mode": "one-per-anchor"`, `"mode": "one-per-anchor", "mode": "pooled"`, "calibration.mode is given twice"},
		{`"kind": "genball",`, ``, "geometry.kind is missing"},
	} {
		if !strings.Contains(good, c.from) {
			t.Fatalf("fixture lacks %q:\n%s", c.from, good)
		}
		bad := strings.Replace(good, c.from, c.to, 1)
		_, err := ReadJSON(strings.NewReader(bad))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "conformal: ") {
			t.Errorf("%s → %s: error %v, want it to mention %q, after the package's prefix", c.from, c.to, err, c.want)
		}
		if strings.HasPrefix(c.to, `"alpha"`) && !errors.Is(err, ErrAlpha) {
			t.Errorf("a bad alpha: error %v is not ErrAlpha", err)
		}
	}
}

func TestUncalibratedRoundTrip(t *testing.T) {
	t.Parallel()
	s := Uncalibrated(geometry.UnitGenBall(3, 2), &FitInfo{Method: "trained"})
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"alpha", "threshold", "calibration", "guarantee"} {
		if strings.Contains(buf.String(), `"`+field+`"`) {
			t.Errorf("uncalibrated file has %q:\n%s", field, buf.String())
		}
	}
	s2, err := ReadJSON(&buf)
	if err != nil || s2.Calibrated() || s2.Fit.Method != "trained" {
		t.Fatalf("round trip: %+v, %v", s2, err)
	}
	bad := `{"format": "ccs-set", "version": 1, "dim": 1, "alpha": 0.1, "geometry": {"kind": "ball", "dim": 1}}`
	if _, err := ReadJSON(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "without calibration") {
		t.Errorf("alpha without calibration: error %v", err)
	}
}

// sameFit compares fit records, the training JSON by content (the file's
// indentation reformats it).
func sameFit(a, b *FitInfo) bool {
	var ca, cb bytes.Buffer
	json.Compact(&ca, a.Training)
	json.Compact(&cb, b.Training)
	x, y := *a, *b
	x.Training, y.Training = nil, nil
	return reflect.DeepEqual(x, y) && ca.String() == cb.String()
}

// TestSetFileNull: a null anywhere in a set file — a coordinate of the
// reference pool, an OOD calibration score, a geometry's parameter, the
// threshold — is refused by name, not read as 0.
func TestSetFileNull(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(7, 7)), 50, 3)
	s, err := Calibrate(geometry.UnitGenBall(2, 2), cal, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Reference, err = NewReferenceRows([]float32{1, 2, 3, 4, 5, 6}, 2, "test"); err != nil {
		t.Fatal(err)
	}
	s.OOD = &OODCalibration{K: 1, Source: "test", N: 3, Scores: []float64{0.5, 1, 2}}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if _, err := ReadJSON(strings.NewReader(good)); err != nil {
		t.Fatalf("the file as written: %v", err)
	}
	compact := func(s string) string { return strings.Join(strings.Fields(s), "") }
	for _, c := range []struct{ from, to, want string }{
		{`"rows":[1,2,3,4,5,6]`, `"rows":[1,2,null,4,5,6]`, "ood_reference.rows[2] is null"},
		{`"scores":[0.5,1,2]`, `"scores":[0.5,null,2]`, "ood_calibration.scores[1] is null"},
		{`"exponents":[2,2]`, `"exponents":[2,null]`, "geometry.exponents[1] is null"},
		{`"threshold":`, `"threshold":null,"x":`, "threshold is null"},
		{`"ood_reference":{`, `"ood_reference":null,"y":{`, "ood_reference is null"},
	} {
		g := compact(good)
		if !strings.Contains(g, c.from) {
			t.Fatalf("fixture lacks %q:\n%s", c.from, g)
		}
		_, err := ReadJSON(strings.NewReader(strings.Replace(g, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.from, c.to, err, c.want)
		}
	}
}

// TestSetFileOverflow: a file whose n and rank were computed with an
// overflowing n + 1 (n = 2⁶³ − 1, rank −8762203435012037016 for α = 0.05)
// is refused, and so is any n beyond 2⁵³.
func TestSetFileOverflow(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(8, 8)), 50, 3)
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.05, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	s.WriteJSON(&buf)
	good := buf.String()
	from := fmt.Sprintf(`"n": %d,`, s.Calibration.N)
	rank := fmt.Sprintf(`"rank": %d,`, s.Calibration.Rank)
	if !strings.Contains(good, from) || !strings.Contains(good, rank) {
		t.Fatalf("fixture lacks %q or %q:\n%s", from, rank, good)
	}
	for _, c := range []struct{ n, rank string }{
		{"9223372036854775807", "-8762203435012037016"},
		{"9007199254740993", "8556839292003944"},
	} {
		bad := strings.Replace(strings.Replace(good, from, `"n": `+c.n+`,`, 1), rank, `"rank": `+c.rank+`,`, 1)
		if _, err := ReadJSON(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "want 1 to 2⁵³") {
			t.Errorf("n = %s, rank %s: %v, want it refused", c.n, c.rank, err)
		}
	}
	// The largest n allowed still computes its exact rank.
	if r, err := Rank(MaxCalibration, 0.05); err != nil || r != 8556839292003944 {
		t.Errorf("Rank(2⁵³, 0.05) = %d, %v; want ⌈0.95·(2⁵³+1)⌉ = 8556839292003944", r, err)
	}
}

// TestTooFewTinyAlpha: an α no file can reach says so rather than an
// overflowed count.
func TestTooFewTinyAlpha(t *testing.T) {
	t.Parallel()
	_, err := Threshold(make([]float64, 100), 1e-300)
	if err == nil || !strings.Contains(err.Error(), "needs more than 2⁵³ calibration scores") || strings.Contains(err.Error(), "9223372036854775807") {
		t.Errorf("α = 1e-300: %v", err)
	}
	_, _, err = Quantile(make([]float64, 100), 1e-300, Options{Mode: PAC, Delta: 0.1})
	if err == nil || strings.Contains(err.Error(), "9223372036854775807") || strings.Contains(err.Error(), "-9223372036854775808") {
		t.Errorf("PAC α = 1e-300: %v", err)
	}
}

// TestSelectLarge: above sampledMin, Select (the sample's bracket, then
// quickselect) returns the sort's r-th value and leaves x partitioned
// around it, for random, tied, sorted, reversed and constant inputs and
// ranks at both ends; and it falls back where the bracket misses (a
// sample of a sorted run that hides the rest). Under the race detector,
// 24 trials (four of each kind): Select starts no goroutine.
func TestSelectLarge(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	trials := 200
	if race.Enabled {
		trials = 24
	}
	for trial := range trials {
		n := sampledMin + rng.IntN(30000)
		x := make([]float64, n)
		for i := range x {
			switch trial % 6 {
			case 0:
				x[i] = float64(rng.IntN(7))
			case 1:
				x[i] = rng.NormFloat64()
			case 2:
				x[i] = float64(i)
			case 3:
				x[i] = float64(n - i)
			case 4:
				x[i] = 1.5
			default: // sorted, with a run the evenly spaced sample misses
				x[i] = float64(i)
				if i%97 == 3 {
					x[i] = -1e9 - float64(i)
				}
			}
		}
		sorted := slices.Sorted(slices.Values(x))
		for _, r := range []int{1, n, 1 + rng.IntN(n), n / 2, 1 + n/20} {
			z := slices.Clone(x)
			if v, ok := selectSampled(z, r-1, false); ok && (v != sorted[r-1] || !slices.Equal(z, x)) {
				t.Fatalf("trial %d n=%d r=%d: the value path gives %v (sort %v) or moved x", trial, n, r, v, sorted[r-1])
			}
			y := slices.Clone(x)
			got := Select(y, r)
			if got != sorted[r-1] {
				t.Fatalf("trial %d n=%d r=%d: Select %v, sort %v", trial, n, r, got, sorted[r-1])
			}
			for i, v := range y {
				if i < r-1 && v > got || i > r-1 && v < got {
					t.Fatalf("trial %d n=%d r=%d: element %d = %v on the wrong side of %v", trial, n, r, i, v, got)
				}
			}
			slices.Sort(y)
			if !slices.Equal(y, sorted) {
				t.Fatalf("trial %d: Select lost or changed elements", trial)
			}
		}
	}
}

// TestSetFileOtherFormat: another program's JSON given as a set — a
// bundles' manifest.json, nulls and all — is named for what it is, not
// for where its first null is.
func TestSetFileOtherFormat(t *testing.T) {
	for _, doc := range []string{
		`{"format":"ccs-bundles","version":1,"warnings":null,"files":[]}`,
		`{"format":"ccs-bundles","version":1,"files":[]}`,
	} {
		_, err := ReadJSON(strings.NewReader(doc))
		if err == nil || !strings.Contains(err.Error(), `not a ccs set file: format "ccs-bundles"`) {
			t.Errorf("%s: %v, want it named as another format", doc, err)
		}
	} // A bundle or an array given for the set (-set and -test swapped).
	for doc, want := range map[string]string{
		"PK\x03\x04\x14\x00rest of an .npz": "not a ccs set file: a zip archive, as an .npz bundle is",
		"\x93NUMPY\x01\x00rest of an .npy":  "not a ccs set file: a NumPy .npy array",
	} {
		if _, err := ReadJSON(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc[:6], err, want)
		}
	}
	// A set file whose head was edited to the wrong shape is a damaged set
	// file, said so with what to do, not "not a ccs set file".
	pr, err := head.NewProjected(head.Identity(3, 2), geometry.Ball{D: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := &Set{Geometry: pr, Threshold: 1, Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor, N: 20, Rank: 19}}
	var b strings.Builder
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	w := doc["head"].(map[string]any)["w"].([]any)
	doc["head"].(map[string]any)["w"] = w[:1]
	delete(doc, "checksum")
	edited, _ := json.Marshal(doc)
	want := "a damaged ccs set file: head: w has 1 rows, want out = 2: fit or calibrate the set again, or restore the file as ccs wrote it"
	if _, err := ReadJSON(strings.NewReader(string(edited))); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a head of the wrong shape: %v, want %q", err, want)
	}
}

// TestSetFileJSONErrors: a set file's JSON errors name the field as the
// file writes it and what was wanted, never a Go struct or type; NaN (as
// Python's json.dump writes it) is said not to be JSON; a byte-order
// mark before a file ccs wrote is skipped.
func TestSetFileJSONErrors(t *testing.T) {
	t.Parallel()
	s := &Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1, Calibration: Info{Mode: OnePerAnchor, N: 20, Rank: 19}}
	var b strings.Builder
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	written := b.String()
	var doc map[string]any
	if err := json.Unmarshal([]byte(written), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "checksum")
	edit := func(change func(map[string]any)) string {
		d := maps.Clone(doc)
		d["calibration"] = maps.Clone(doc["calibration"].(map[string]any))
		change(d)
		out, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	const damaged = "conformal: a damaged ccs set file: "
	for _, c := range []struct{ name, doc, want string }{
		{"alpha as a string", edit(func(d map[string]any) { d["alpha"] = "0.1" }),
			damaged + `alpha: "0.1" is a string, want a number: fit or calibrate the set again`},
		{"n as a fraction", edit(func(d map[string]any) { d["calibration"].(map[string]any)["n"] = 20.5 }),
			damaged + `calibration.n: 20.5 is not an integer`},
		{"a version string", edit(func(d map[string]any) { d["version"] = "1" }),
			damaged + `version: "1" is a string, want an integer`},
		{"NaN", strings.Replace(edit(func(map[string]any) {}), `"alpha": 0.1`, `"alpha": NaN`, 1),
			damaged + `line 2, column 12: NaN is not JSON (Python's json.dump writes it for a float nan`},
		{"cut short", written[:len(written)/2], `not a ccs set file: the JSON ends before its value does: the file is cut short`},
		{"a byte-order mark before garbage", "\xef\xbb\xbf\xef\xbb\xbf{}", `not a ccs set file: the file begins with a UTF-8 byte-order mark (as Windows editors save), which JSON does not allow`},
	} {
		_, err := ReadJSON(strings.NewReader(c.doc))
		switch {
		case err == nil:
			t.Errorf("%s: read", c.name)
		case !strings.HasPrefix(err.Error(), c.want) && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		case strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "json: "):
			t.Errorf("%s: Go's words in %v", c.name, err)
		}
	}
	// A BOM before the file as ccs wrote it: read, checksum and all.
	got, err := ReadJSON(strings.NewReader("\xef\xbb\xbf" + written))
	if err != nil || got.Threshold != 1 || got.Warnings() != nil {
		t.Errorf("a byte-order mark: %v, %v", got, err)
	}
}

// TestCalibrateRefusals: a bundle of anchors alone (an OOD sample's
// features) is refused, not indexed; a fitted set is refused on a split it
// was fitted or validated on, by its recorded digest, and calibrates on
// any other.
func TestCalibrateRefusals(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	fit, val, cal := synthetic(rng, 50, 2), synthetic(rng, 50, 2), synthetic(rng, 50, 2)
	features := &bundle.Bundle{N: 30, D: 2, Anchors: make([]float32, 60)}
	if _, err := Calibrate(geometry.Ball{D: 2}, features, 0.1, Options{}); !errors.Is(err, bundle.ErrFeatures) {
		t.Errorf("features: %v, want ErrFeatures", err)
	}
	fitted := &Set{Geometry: geometry.Ball{D: 2}, Fit: &FitInfo{Method: "test", Splits: map[string]string{"fit": fit.Digest(), "validation": val.Digest()}}}
	for _, c := range []struct {
		b    *bundle.Bundle
		want string // "" for none
	}{{fit, "this is its fit split"}, {val, "this is its validation split"}, {cal, ""}} {
		s, err := CalibrateFitted(fitted, c.b, 0.1, Options{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("an unseen split: %v", err)
		case c.want == "" && s.Fit != fitted.Fit:
			t.Errorf("the calibrated set lost its Fit")
		case c.want != "" && (!errors.Is(err, ErrSeenSplit) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v, want ErrSeenSplit saying %q", err, c.want)
		}
	}
	// A split sharing a tenth of its anchors or more with fit and val,
	// by their rows (another bundling's cal split), is refused; one
	// sharing fewer is not.
	fitted.Fit.Seen = bundle.NewRowFilter(fit, val)
	mixed := func(shared int) *bundle.Bundle {
		b := synthetic(rng, 50, 2)
		for i := range shared { // rows of fit, then of val
			src := []*bundle.Bundle{fit, val}[i%2]
			copy(b.Anchors[i*2:i*2+2], src.Anchors[i*2:i*2+2])
		}
		return b
	}
	if _, err := CalibrateFitted(fitted, mixed(5), 0.1, Options{}); !errors.Is(err, ErrSeenSplit) ||
		!strings.Contains(err.Error(), "5 of the 50 calibration anchors are rows it was fitted or validated on") {
		t.Errorf("5 of 50 rows seen: %v", err)
	}
	if _, err := CalibrateFitted(fitted, mixed(4), 0.1, Options{}); err != nil {
		t.Errorf("4 of 50 rows seen: %v", err)
	}
	if _, err := CalibrateFitted(fitted, cal, 0.1, Options{}); err != nil {
		t.Errorf("an unseen split, by its rows: %v", err)
	}
	// A set that records no splits (made before they were) refuses nothing.
	if _, err := CalibrateFitted(&Set{Geometry: geometry.Ball{D: 2}}, fit, 0.1, Options{}); err != nil {
		t.Errorf("no recorded splits: %v", err)
	}
	// A bundle built by hand is checked as a file's is: a NaN named by the
	// row it is in (not by the calibration pair it would have scored), a
	// row it does not reach (1500 when 100 are scored), slices that are not
	// its N rows.
	for _, c := range []struct {
		name string
		edit func(b *bundle.Bundle)
		want string
	}{
		{"a NaN anchor", func(b *bundle.Bundle) { b.Anchors[2*40+1] = float32(math.NaN()) }, "conformal: calibration bundle: anchors[40][1] is NaN"},
		{"a NaN positive", func(b *bundle.Bundle) { b.Positives[len(b.Positives)-1] = float32(math.Inf(1)) }, "positives[49][1][1] is +Inf"},
		{"N larger than the rows", func(b *bundle.Bundle) { b.N++ }, "conformal: calibration bundle: anchors: 100 values"},
	} {
		b := synthetic(rng, 50, 2)
		c.edit(b)
		if _, err := Calibrate(geometry.Ball{D: 2}, b, 0.1, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestPercentAlpha: an α given as a percentage is read as the coverage
// (≥ 50) or the miscoverage (below) it names; in (0, 1] and from 100 on
// there is no reading.
func TestPercentAlpha(t *testing.T) {
	for _, c := range []struct {
		in, want float64
		ok       bool
	}{{95, 0.05, true}, {97.5, 0.025, true}, {90, 0.1, true}, {5, 0.05, true}, {10, 0.1, true}, {0.95, 0, false}, {1, 0, false}, {100, 0, false}, {-5, 0, false}} {
		got, ok := PercentAlpha(c.in)
		if ok != c.ok || math.Abs(got-c.want) > 1e-15 {
			t.Errorf("PercentAlpha(%v) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
		// CheckAlpha's refusal says the reading (a Go caller's
		// CalibrateFitted(…, 90, …) said only "got 90").
		if err := CheckAlpha(c.in); c.ok && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(a percentage? %v)", c.want))) {
			t.Errorf("CheckAlpha(%v): %v", c.in, err)
		}
	}
}

// TestReferenceTooLarge: a pool over what ccs builds a set with is
// refused with the most rows that fit at its dimension (a protein user's
// d = 1280: 13 107 rows; a 10 000-row pool is kept), drawn from a bundle
// or given as rows.
func TestReferenceTooLarge(t *testing.T) {
	const d = 1280
	b := &bundle.Bundle{N: 14000, D: d, Anchors: make([]float32, 14000*d)}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"drawn", func() error { _, err := NewReference(b, 13108, 1, "cal"); return err }()},
		{"rows", func() error { _, err := NewReferenceRows(make([]float32, 13108*d), d, "fit.npz"); return err }()},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), "at most 13107 rows at this dimension") {
			t.Errorf("%s: %v", c.name, c.err)
		}
	}
	if _, err := NewReference(b, 10000, 1, "cal"); err != nil {
		t.Errorf("10000 rows: %v", err)
	}
}

// TestReferenceFile: a pool over the old cap of 2^22 values (3 276 rows
// at d = 1 280; here 4 500 rows of d = 1 000) is written and read back
// equal; a file whose pool claims more rows (or fewer) than its values
// make is refused naming both — what a file holds is read from it, so a
// claim is checked against it, not obeyed. Under the race detector the
// large pool is left out: writing and reading it run in one goroutine,
// and took 19 s there.
func TestReferenceFile(t *testing.T) {
	t.Parallel()
	if !race.Enabled {
		const n, d = 4500, 1000
		rows := make([]float32, n*d)
		for i := range rows {
			rows[i] = float32(i%13) / 4 // short in JSON: 0.25, 3
		}
		s := Uncalibrated(geometry.Ball{D: d}, nil)
		var err error
		if s.Reference, err = NewReferenceRows(rows, d, "pool.npy"); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "set.json")
		if err := s.Save(path); err != nil {
			t.Fatal(err)
		}
		back, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if r := back.Reference; r == nil || r.N != n || !slices.Equal(r.Rows, rows) || r.Source != "pool.npy" {
			t.Errorf("the pool read back differs from the one written")
		}
	}

	small := Uncalibrated(geometry.Ball{D: 2}, nil)
	var err error
	if small.Reference, err = NewReferenceRows([]float32{1, 2, 3, 4, 5, 6}, 2, "test"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := small.EmbedJSON(&buf); err != nil {
		t.Fatal(err)
	}
	good := strings.Join(strings.Fields(buf.String()), "")
	for _, c := range []struct{ from, to, want string }{
		{`"n":3`, `"n":1000000`, "ood_reference: n = 1000000 rows of dimension 2 are 2000000 values, but its rows hold 6"},
		{`"n":3`, `"n":2`, "ood_reference: n = 2 rows of dimension 2 are 4 values, but its rows hold 6"},
		{`"n":3`, `"n":4611686018427387904`, "ood_reference: n = 4611686018427387904 rows of dimension 2 are 9223372036854775808 values, but its rows hold 6"},
		{`"n":3`, `"n":3,"index":[7,8]`, "ood_reference: index has 2 source rows for its 3 rows"},
		{`"n":3`, `"n":3,"index":[7,8,"x"]`, "ood_reference"},
	} {
		if !strings.Contains(good, c.from) {
			t.Fatalf("fixture lacks %q:\n%s", c.from, good)
		}
		_, err := ReadJSON(strings.NewReader(strings.Replace(good, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.from, c.to, err, c.want)
		}
	}
}
