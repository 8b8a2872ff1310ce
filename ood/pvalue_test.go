package ood

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/race"
)

// TestPValueByHand: p = (1 + #{s_j ≥ s})/(n+1), ties against the input;
// the randomised p-value lies between the counts with and without the
// ties.
func TestPValueByHand(t *testing.T) {
	t.Parallel()
	c, err := NewCalibration([]float64{3, 1, 2, 2, 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ s, want float64 }{{0, 1}, {1, 1}, {2, 5.0 / 6}, {2.5, 3.0 / 6}, {5, 2.0 / 6}, {9, 1.0 / 6}} {
		if got := c.PValue(tc.s); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("p(%v) = %v, want %v", tc.s, got, tc.want)
		}
	}
	if lo, hi := c.PValueRandom(2, 0), c.PValueRandom(2, 0.999999); lo != 2.0/6 || hi >= 5.0/6 || hi < 4.99/6 {
		t.Errorf("randomised p(2) in [%v, %v], want [2/6, 5/6)", lo, hi)
	}
	for _, bad := range [][]float64{nil, {1, math.NaN()}, {math.Inf(1)}} {
		if _, err := NewCalibration(bad); err == nil {
			t.Errorf("calibration %v: no error", bad)
		}
	}
}

// TestCheck: α_ood outside (0, 1), δ outside [0, 1) and an α_ood below the
// smallest p-value are refused, the latter saying how many calibration
// scores it would take.
func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		test Test
		n    int
		want string
	}{
		{Test{Alpha: 0}, 100, "0 < α_ood < 1"},
		{Test{Alpha: 1.2}, 100, "0 < α_ood < 1"},
		{Test{Alpha: 5}, 100, "(a percentage? 0.05)"},
		{Test{Alpha: 0.05, Delta: 1}, 100, "0 ≤ δ < 0.5"},
		{Test{Alpha: 0.05, Delta: 0.9}, 100000, "not a confidence level: 0.05 or 0.1, not 0.9 or 0.95"},
		{Test{Alpha: 0.005}, 99, "needs at least 199"},
		{Test{Alpha: 0.05, Delta: 0.1, Simultaneous: true}, 99, "needs at least"},
		{Test{Alpha: 0.01, Delta: 0.1}, 99, "needs at least 230"},
	} {
		err := tc.test.Check(tc.n)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v, n=%d: error %v, want %q", tc.test, tc.n, err, tc.want)
		}
	}
	if err := (Test{Alpha: 0.01}).Check(99); err != nil {
		t.Errorf("α 0.01 with n = 99: %v", err)
	}
	// The smallest n the message names does reach α.
	tt := Test{Alpha: 0.05, Delta: 0.1, Simultaneous: true}
	err := tt.Check(99)
	var need int
	if i := strings.Index(err.Error(), "needs at least "); i >= 0 {
		for _, r := range err.Error()[i+len("needs at least "):] {
			if r < '0' || r > '9' {
				break
			}
			need = need*10 + int(r-'0')
		}
	}
	if tt.Check(need) != nil || tt.Check(need-1) == nil {
		t.Errorf("%v: n = %d is not the smallest that reaches α", err, need)
	}
}

// trueFAR is the false-alarm rate of a calibration of U(0,1) scores on a
// fresh U(0,1) input: P(p̃(S) ≤ α) = P(S > s_(n−c)) with c the largest count
// of calibration scores above S that still flags it (p̃ = level(n, c+1)).
func trueFAR(cal []float64, test Test) float64 {
	n := len(cal)
	c := -1
	for c+1 < n && test.level(n, c+2) <= test.Alpha {
		c++
	}
	if c < 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(cal))
	return 1 - s[n-1-c]
}

// TestGuarantee is the property test of the false-alarm guarantee, over
// 2000 seeded calibration draws of exchangeable (uniform) scores for
// α_ood ∈ {0.01, 0.05, 0.1} and n ∈ {99, 999}: the mean false-alarm rate
// is at most α_ood (and within 1/(n+1) of it: the test is not vacuous);
// calibration-conditionally (δ = 0.1, exact and simultaneous), the share of
// draws whose rate exceeds α_ood is at most δ — and, for the exact
// correction, not far below it (it is not vacuous either). Each draw's
// rate is exact (uniform scores: the rate is 1 − the order statistic), so
// the only Monte-Carlo error is that of the draws: 3 standard errors.
// Numbers alone, no goroutine on the way: not under the race detector.
func TestGuarantee(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	const draws, delta = 2000, 0.1
	rng := rand.New(rand.NewPCG(81, 81))
	band := 3 * math.Sqrt(delta*(1-delta)/draws)
	for _, n := range []int{99, 999} {
		for _, alpha := range []float64{0.01, 0.05, 0.1} {
			var sum, sum2 float64
			exceed := 0
			conds := []Test{{Alpha: alpha, Delta: delta}, {Alpha: alpha, Delta: delta, Simultaneous: true}}
			condExceed := make([]int, len(conds))
			condSum := make([]float64, len(conds))
			for range draws {
				cal := make([]float64, n)
				for i := range cal {
					cal[i] = rng.Float64()
				}
				far := trueFAR(cal, Test{Alpha: alpha})
				sum += far
				sum2 += far * far
				if far > alpha {
					exceed++
				}
				for c, cond := range conds {
					if cond.Check(n) != nil {
						continue
					}
					f := trueFAR(cal, cond)
					condSum[c] += f
					if f > alpha {
						condExceed[c]++
					}
				}
			}
			mean := sum / draws
			se := math.Sqrt((sum2/draws - mean*mean) / draws)
			if mean > alpha+3*se || mean < alpha-1/float64(n+1)-3*se {
				t.Errorf("n=%d α=%v: mean false-alarm rate %.5f ± %.5f, want ≤ α and ≥ α − 1/(n+1)", n, alpha, mean, se)
			}
			msg := fmt.Sprintf("n=%d α=%v: mean FAR %.5f (se %.5f), %.3f of draws above α marginally", n, alpha, mean, se, float64(exceed)/draws)
			for c, cond := range conds {
				if cond.Check(n) != nil {
					msg += fmt.Sprintf("; %s: n too small", map[bool]string{false: "exact", true: "simultaneous"}[cond.Simultaneous])
					continue
				}
				share := float64(condExceed[c]) / draws
				if share > delta+band {
					t.Errorf("n=%d α=%v %+v: %.3f of the draws exceed α, want ≤ δ", n, alpha, cond, share)
				}
				// The exact correction is tight up to the discreteness of
				// the ranks: the next rank up would exceed δ.
				if !cond.Simultaneous && n == 999 && share < delta/3 {
					t.Errorf("n=%d α=%v %+v: only %.3f of the draws exceed α: the exact correction is too conservative", n, alpha, cond, share)
				}
				msg += fmt.Sprintf("; %s δ=%v: %.3f above α, mean FAR %.5f", map[bool]string{false: "exact", true: "simultaneous"}[cond.Simultaneous],
					delta, share, condSum[c]/draws)
			}
			t.Log(msg)
		}
	}
}

// TestGuaranteeEmpirical checks the same through PValues and Flags on
// finite test samples of a skewed score (exchangeable, not uniform), so
// that the code path a user calls is the one tested: over 1000 draws the
// mean share of flagged in-distribution test inputs is at most α_ood.
// Numbers alone, no goroutine on the way: not under the race detector.
func TestGuaranteeEmpirical(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	const draws, nTest = 1000, 200
	rng := rand.New(rand.NewPCG(82, 82))
	for _, n := range []int{99, 999} {
		for _, alpha := range []float64{0.01, 0.05, 0.1} {
			test := Test{Alpha: alpha}
			var sum, sum2 float64
			for range draws {
				cal := make([]float64, n)
				for i := range cal {
					cal[i] = math.Exp(rng.NormFloat64())
				}
				c, err := NewCalibration(cal)
				if err != nil {
					t.Fatal(err)
				}
				x := make([]float64, nTest)
				for i := range x {
					x[i] = math.Exp(rng.NormFloat64())
				}
				flagged := 0
				for _, f := range test.Flags(test.PValues(c, x)) {
					if f {
						flagged++
					}
				}
				far := float64(flagged) / nTest
				sum += far
				sum2 += far * far
			}
			mean := sum / draws
			se := math.Sqrt((sum2/draws - mean*mean) / draws)
			if mean > alpha+3*se {
				t.Errorf("n=%d α=%v: mean share flagged %.5f ± %.5f, above α", n, alpha, mean, se)
			}
		}
	}
}

// TestBenjaminiHochberg: by hand, and the false discovery rate over 2000
// batches of 200 inputs, 20% OOD, at q = 0.1 is at most q.
func TestBenjaminiHochberg(t *testing.T) {
	t.Parallel()
	got, err := BenjaminiHochberg([]float64{0.01, 0.04, 0.03, 0.5, 0.02}, 0.1)
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 4}) {
		t.Errorf("BH = %v, %v; want [0 1 2 4]", got, err)
	}
	if got, _ := BenjaminiHochberg([]float64{0.2, 0.5}, 0.1); len(got) != 0 {
		t.Errorf("BH flagged %v, want none", got)
	}
	for _, bad := range []struct {
		p []float64
		q float64
	}{{[]float64{0.1}, 0}, {[]float64{0.1}, 1}, {[]float64{math.NaN()}, 0.1}, {[]float64{1.5}, 0.1}} {
		if _, err := BenjaminiHochberg(bad.p, bad.q); err == nil {
			t.Errorf("BH(%v, %v): no error", bad.p, bad.q)
		}
	}
	const draws, m, q = 2000, 200, 0.1
	rng := rand.New(rand.NewPCG(83, 83))
	var fdp, power float64
	for range draws {
		cal := make([]float64, 499)
		for i := range cal {
			cal[i] = rng.NormFloat64()
		}
		c, _ := NewCalibration(cal)
		s := make([]float64, m)
		ood := make([]bool, m)
		for i := range s {
			ood[i] = rng.Float64() < 0.2
			s[i] = rng.NormFloat64()
			if ood[i] {
				s[i] += 3
			}
		}
		flagged, err := BenjaminiHochberg(Test{Alpha: 0.5}.PValues(c, s), q)
		if err != nil {
			t.Fatal(err)
		}
		false_, true_ := 0, 0
		for _, i := range flagged {
			if ood[i] {
				true_++
			} else {
				false_++
			}
		}
		if len(flagged) > 0 {
			fdp += float64(false_) / float64(len(flagged))
		}
		power += float64(true_) / (0.2 * m)
	}
	fdr := fdp / draws
	if fdr > q+3*math.Sqrt(q/draws) {
		t.Errorf("BH false discovery rate %.4f, want ≤ %v", fdr, q)
	}
	t.Logf("BH at q = %v: FDR %.4f, power %.3f", q, fdr, power/draws)
}

// TestMonitor: on 1000 exchangeable streams of 500 scores the martingale
// reaches 1/δ (δ = 0.05) in at most δ of them; on a stream that switches
// to larger scores it raises its alarm soon after the switch; Reset starts
// afresh; a non-finite score is refused. Numbers alone, no goroutine on the
// way: not under the race detector.
func TestMonitor(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	const streams, length, delta = 1000, 500, 0.05
	rng := rand.New(rand.NewPCG(84, 84))
	cal := make([]float64, 99)
	for i := range cal {
		cal[i] = rng.NormFloat64()
	}
	c, _ := NewCalibration(cal)
	alarms := 0
	for s := range streams {
		m, err := NewMonitor(c, MonitorOptions{Delta: delta, Seed: uint64(s)})
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, length)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		if _, err := m.Observe(x); err != nil {
			t.Fatal(err)
		}
		if m.State().Alarm {
			alarms++
		}
	}
	if share := float64(alarms) / streams; share > delta+3*math.Sqrt(delta/streams) {
		t.Errorf("%.3f of exchangeable streams raised the alarm, want ≤ %v", share, delta)
	}
	m, _ := NewMonitor(c, MonitorOptions{Delta: delta, Seed: 1})
	x := make([]float64, 400)
	for i := range x {
		x[i] = rng.NormFloat64()
		if i >= 200 {
			x[i] += 2
		}
	}
	m.Observe(x)
	st := m.State()
	if !st.Alarm || st.AlarmAt <= 200 || st.AlarmAt > 260 {
		t.Errorf("a switch at input 200: %+v, want an alarm soon after 200", st)
	}
	t.Logf("%d of %d exchangeable streams alarmed; a +2σ switch at 200 alarmed at %d", alarms, streams, st.AlarmAt)
	m.Reset()
	if st := m.State(); st.N != 0 || st.Alarm || st.Martingale != 1 {
		t.Errorf("after Reset: %+v", st)
	}
	if _, err := m.Observe([]float64{1, math.NaN()}); err == nil || m.State().N != 0 {
		t.Errorf("a NaN score: %v, state %+v", err, m.State())
	}
	// Each run draws its smoothing anew: the same stream after a Reset
	// moves the martingale otherwise, and a monitor of the same seed
	// replays the runs in turn.
	run := func(m *Monitor) float64 {
		m.Reset()
		m.Observe(x[:50])
		return m.State().Martingale
	}
	a, _ := NewMonitor(c, MonitorOptions{Delta: delta, Seed: 7})
	b2, _ := NewMonitor(c, MonitorOptions{Delta: delta, Seed: 7})
	first, second := run(a), run(a)
	if first == second {
		t.Errorf("two runs after a reset: the same martingale %v, want each its own draws", first)
	}
	if r1, r2 := run(b2), run(b2); r1 != first || r2 != second {
		t.Errorf("the same seed's runs %v, %v; want %v, %v", r1, r2, first, second)
	}
}

// TestSimultaneousOneSided: the simultaneous correction adds the one-sided
// DKW–Massart slack √(log(1/δ)/(2n)): at α_ood = 0.05, δ = 0.1 it needs
// n ≥ 500 (the two-sided constant needed 639) and with n = 999 flags
// marginal p-values up to 0.016 (0.011 before); δ above 1/2, where
// Massart's one-sided bound is not proved, is refused.
func TestSimultaneousOneSided(t *testing.T) {
	t.Parallel()
	tt := Test{Alpha: 0.05, Delta: 0.1, Simultaneous: true}
	if got, want := tt.Slack(999), math.Sqrt(math.Log(10)/1998); got != want {
		t.Errorf("slack at n = 999: %v, want %v", got, want)
	}
	if tt.Check(500) != nil || tt.Check(499) == nil {
		t.Errorf("n = 500: %v; n = 499: %v; want 500 the smallest n", tt.Check(500), tt.Check(499))
	}
	largest := 0.0 // the largest marginal p-value j/(n+1) the test flags
	for j := 1; j <= 999; j++ {
		if tt.level(999, j) <= tt.Alpha {
			largest = float64(j) / 1000
		}
	}
	if largest != 0.016 {
		t.Errorf("n = 999 flags marginal p ≤ %v, want 0.016", largest)
	}
	if err := (Test{Alpha: 0.05, Delta: 0.6, Simultaneous: true}).Check(10000); err == nil || !strings.Contains(err.Error(), "want 0 ≤ δ < 0.5") {
		t.Errorf("δ = 0.6, simultaneous: %v", err)
	}
}

// TestMonitorBag: the monitor's bag counts the scores above and tied with
// a value as a sorted list does, through thousands of insertions (bucket
// splits) of scores drawn from few values (long runs of ties) and from many.
func TestMonitorBag(t *testing.T) {
	t.Parallel()
	for _, distinct := range []int{3, 50, 0} {
		rng := rand.New(rand.NewPCG(uint64(distinct), 7))
		draw := func() float64 {
			if distinct == 0 {
				return rng.NormFloat64()
			}
			return float64(rng.IntN(distinct))
		}
		cal := make([]float64, 700)
		for i := range cal {
			cal[i] = draw()
		}
		slices.Sort(cal)
		b := newBag(cal)
		all := slices.Clone(cal)
		for i := range 6000 {
			s := draw()
			if i%3 == 0 && len(all) > 0 {
				s = all[rng.IntN(len(all))] // a value already there
			}
			above, tied := b.counts(s)
			wantAbove, wantTied := 0, 0
			for _, x := range all {
				switch {
				case x > s:
					wantAbove++
				case x == s:
					wantTied++
				}
			}
			if above != wantAbove || tied != wantTied {
				t.Fatalf("%d distinct, insertion %d, score %v: counts %d above, %d tied; want %d, %d", distinct, i, s, above, tied, wantAbove, wantTied)
			}
			b.insert(s)
			all = append(all, s)
			if b.n != len(all) || b.rank(math.Inf(1), false) != len(all) {
				t.Fatalf("bag holds %d (rank of +Inf %d), want %d", b.n, b.rank(math.Inf(1), false), len(all))
			}
		}
	}
}

// TestMonitorLimit: a monitor with a limit observes the stream's first
// Limit scores, with the p-values an unlimited one gives them, and then
// nothing until Reset; its state says it is full.
func TestMonitorLimit(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	cal := make([]float64, 199)
	for i := range cal {
		cal[i] = rng.NormFloat64()
	}
	c, _ := NewCalibration(cal)
	x := make([]float64, 500)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	free, _ := NewMonitor(c, MonitorOptions{Delta: 0.01, Seed: 3})
	capped, err := NewMonitor(c, MonitorOptions{Delta: 0.01, Seed: 3, Limit: 300})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := free.Observe(x)
	p1, _ := capped.Observe(x[:250])
	p2, _ := capped.Observe(x[250:])
	got := append(p1, p2...)
	if !slices.Equal(got, want[:300]) {
		t.Errorf("the capped monitor's %d p-values differ from the first 300 of the free one's", len(got))
	}
	st := capped.State()
	if st.N != 300 || !st.Full || st.Limit != 300 {
		t.Errorf("capped: %+v, want n 300, full", st)
	}
	if p, _ := capped.Observe(x[:10]); len(p) != 0 || capped.State().N != 300 {
		t.Errorf("a full monitor observed %d more", len(p))
	}
	capped.Reset()
	if st := capped.State(); st.N != 0 || st.Full {
		t.Errorf("after Reset: %+v", st)
	}
	if _, err := NewMonitor(c, MonitorOptions{Delta: 0.01, Limit: -1}); err == nil {
		t.Error("a negative limit was accepted")
	}
}

// BenchmarkMonitorTies: 10⁵ copies of one score on a monitor with 10⁴
// calibration scores (each counted by binary search, not one by one).
func BenchmarkMonitorTies(b *testing.B) {
	cal := make([]float64, 10000)
	for i := range cal {
		cal[i] = float64(i % 10)
	}
	c, _ := NewCalibration(cal)
	x := make([]float64, 100000)
	for b.Loop() {
		m, _ := NewMonitor(c, MonitorOptions{Delta: 0.01})
		if _, err := m.Observe(x); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMonitorJumpers: the monitor's value is the four jumpers' capital as
// a direct computation in logarithms has it (each bet's log-capital
// pooled with logaddexp), over p-values down to 10⁻³⁰⁰; after a long
// in-distribution stream a shift is still caught soon, where a plain
// mixture of power martingales (the monitor before the jumps) has lost
// the capital to catch it; and long in-distribution streams alarm at most
// about δ of the time. Numbers alone, no goroutine on the way: not under
// the race detector.
func TestMonitorJumpers(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	c, _ := NewCalibration([]float64{0})
	m, err := NewMonitor(c, MonitorOptions{Delta: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	logAdd := func(a, b float64) float64 {
		hi := max(a, b)
		return hi + math.Log(math.Exp(a-hi)+math.Exp(b-hi))
	}
	logSum := func(x []float64) float64 {
		s := math.Inf(-1)
		for _, v := range x {
			s = logAdd(s, v)
		}
		return s
	}
	K := len(epsilons) + 1
	ref := make([][]float64, len(jumps))
	for j := range ref {
		ref[j] = make([]float64, K)
		for k := range ref[j] {
			ref[j][k] = -math.Log(float64(len(jumps) * K))
		}
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range 3000 {
		p := rng.Float64()
		switch {
		case i%500 == 7:
			p = 1e-300
		case i > 2000:
			p = math.Pow(p, 4) // small p-values: a shift
		}
		m.n++
		m.bet(p)
		all := make([]float64, 0, len(jumps)*K)
		for j, c := range ref {
			tot := logSum(c)
			for k := range c {
				c[k] = logAdd(math.Log1p(-jumps[j])+c[k], math.Log(jumps[j]/float64(K))+tot)
				if k < len(epsilons) {
					c[k] += logEpsilons[k] + (epsilons[k]-1)*math.Log(p)
				}
			}
			all = append(all, c...)
		}
		want := logSum(all)
		if got := m.logValue(); math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
			t.Fatalf("p-value %d (%v): log value %v, want %v", i, p, got, want)
		}
	}
	// A +2σ shift after 20 000 in-distribution inputs.
	cal := make([]float64, 999)
	for i := range cal {
		cal[i] = rng.NormFloat64()
	}
	cc, _ := NewCalibration(cal)
	const prefix = 20000
	x := make([]float64, prefix+2000)
	for i := range x {
		x[i] = rng.NormFloat64()
		if i >= prefix {
			x[i] += 2
		}
	}
	jm, _ := NewMonitor(cc, MonitorOptions{Delta: 0.01, Seed: 5})
	jm.Observe(x)
	// The plain mixture, on the monitor's own p-values.
	pm, _ := NewMonitor(cc, MonitorOptions{Delta: 0.01, Seed: 5})
	ps, _ := pm.Observe(x)
	logM := make([]float64, len(epsilons))
	plainAt := 0
	for i, p := range ps {
		for k, e := range epsilons {
			logM[k] += logEpsilons[k] + (e-1)*math.Log(p)
		}
		if plainAt == 0 && logSum(logM)-math.Log(float64(len(logM))) >= math.Log(100) {
			plainAt = i + 1
		}
	}
	st := jm.State()
	if !st.Alarm || st.AlarmAt <= prefix || st.AlarmAt > prefix+60 || (plainAt != 0 && plainAt-prefix < 2*(st.AlarmAt-prefix)) {
		t.Errorf("a +2σ shift after %d inputs: alarm at %+v, the plain mixture at %d: want the jumpers' within 60, at most half the mixture's delay", prefix, st, plainAt)
	}
	t.Logf("a +2σ shift after %d inputs: the jumpers alarmed %d inputs after it, the plain mixture %d", prefix, st.AlarmAt-prefix, plainAt-prefix)
	// Long exchangeable streams: the alarm share stays about δ (the long
	// suite: a million scores).
	if testing.Short() {
		return
	}
	const streams, length, delta = 200, 5000, 0.05
	alarms := 0
	for s := range streams {
		m, _ := NewMonitor(cc, MonitorOptions{Delta: delta, Seed: uint64(100 + s)})
		for i := range x[:length] {
			x[i] = rng.NormFloat64()
		}
		m.Observe(x[:length])
		if m.State().Alarm {
			alarms++
		}
	}
	if share := float64(alarms) / streams; share > delta+3*math.Sqrt(delta/streams) {
		t.Errorf("%.3f of %d exchangeable streams of %d alarmed, want ≤ %v", share, streams, length, delta)
	}
	t.Logf("%d of %d exchangeable streams of %d alarmed at δ = %v", alarms, streams, length, delta)
}

// TestTieWarning: a test whose calibration scores tie where it flags says
// so at its own level (with δ too); untied scores say nothing.
func TestTieWarning(t *testing.T) {
	tied := make([]float64, 999)
	for i := range tied {
		tied[i] = float64(min(6, i/100))
	}
	untied := make([]float64, 999)
	for i := range untied {
		untied[i] = float64(i)
	}
	for _, c := range []struct {
		scores []float64
		test   Test
		want   string
	}{
		{tied, Test{Alpha: 0.05}, "at α_ood = 0.05 it flags only inputs scored above 6, and 0 of them lie above it (399 at it), so it flags about 0.00%"},
		{tied, Test{Alpha: 0.1, Delta: 0.1}, "at α_ood = 0.1 with δ = 0.1 it flags"},
		{untied, Test{Alpha: 0.05}, ""},
		{untied, Test{Alpha: 0.1, Delta: 0.1, Simultaneous: true}, ""},
	} {
		cal, err := conformal.NewOODCalibration(1, c.scores, "test")
		if err != nil {
			t.Fatal(err)
		}
		w := c.test.TieWarning(cal)
		if c.want == "" && w != "" || c.want != "" && !strings.Contains(w, c.want) {
			t.Errorf("%+v: %q, want %q", c.test, w, c.want)
		}
	}
}
