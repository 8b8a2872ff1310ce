package ood

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/ccsets/ccs/conformal"
)

// Conformal OOD tests (docs/design.md §7). Any detector's anomaly score s
// (higher = more likely OOD) becomes a test with a guaranteed false-alarm
// rate: calibrate it on n held-out in-distribution inputs s_1..s_n, disjoint
// from everything the detector was built from, and give an input x the
// conformal p-value
//
//	p(x) = (1 + #{j : s_j ≥ s(x)}) / (n + 1)
//
// (ties count against x). Flagging x when p(x) ≤ α keeps P(flag | x is ID)
// ≤ α for ID inputs exchangeable with the calibration inputs, marginally
// over the calibration draw.
//
// The false-alarm rate of one calibration draw is itself random: about half
// the draws exceed α. A calibration-conditional test (confidence δ) raises
// the p-values so that, with probability ≥ 1−δ over the calibration draw,
// the false-alarm rate of that calibration is ≤ α. Two corrections:
//
//   - exact at each level (the default): with j = (n+1)·p(x), the rate of
//     the test that flags p ≤ j/(n+1) is, over calibration draws, a
//     Beta(j, n+1−j) variable (an order statistic of uniforms; Vovk,
//     "Conditional validity of inductive conformal predictors", 2012), so
//     p̃(x) = its (1−δ)-quantile: flagging p̃ ≤ α has, with probability
//     ≥ 1−δ, a false-alarm rate ≤ α, for any level α fixed in advance;
//   - simultaneous (Bates, Candès, Lei, Romano and Sesia, "Testing for
//     outliers with conformal p-values", Ann. Stat. 2023): p̃ = p + ε with
//     ε = sqrt(log(1/δ)/(2n)), the one-sided Dvoretzky–Kiefer–Wolfowitz
//     bound with Massart's constant (Ann. Probab. 1990; valid for
//     δ ≤ 1/2): only the empirical distribution's excess on one side
//     matters for false alarms. It holds for every level at once (a
//     threshold chosen after seeing the p-values), at a cost in power
//     (n = 999, δ = 0.1, α = 0.05: the exact test flags at p ≤ 0.041,
//     this one at p ≤ 0.016).

// Calibration holds a detector's anomaly scores on held-out
// in-distribution inputs, sorted, for conformal p-values.
type Calibration struct {
	scores []float64

	mu   sync.Mutex // guards beta
	beta betaTable  // the exact conditional p-values, filled as needed
}

// betaTable caches, for one δ, the (1−δ)-quantile of Beta(j, n+1−j) for
// j = 1..n (0: not yet computed).
type betaTable struct {
	delta float64
	q     []float64
}

// NewCalibration keeps a copy of scores (at least one, all finite).
func NewCalibration(scores []float64) (*Calibration, error) {
	if len(scores) == 0 {
		return nil, errors.New("ood: no calibration scores")
	}
	for i, v := range scores {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("ood: calibration score %d is %v", i, v)
		}
	}
	s := slices.Clone(scores)
	slices.SortFunc(s, cmp.Compare[float64])
	return &Calibration{scores: s}, nil
}

// N is the number of calibration scores.
func (c *Calibration) N() int { return len(c.scores) }

// Scores returns the calibration scores, sorted (a copy).
func (c *Calibration) Scores() []float64 { return slices.Clone(c.scores) }

// counts returns #{s_j > s} and #{s_j = s}.
func (c *Calibration) counts(s float64) (above, tied int) {
	n := len(c.scores)
	lo := sort.SearchFloat64s(c.scores, s) // first ≥ s
	hi := lo
	for hi < n && c.scores[hi] == s {
		hi++
	}
	return n - hi, hi - lo
}

// rank is (n+1)·PValue(s) = 1 + #{j : s_j ≥ s}.
func (c *Calibration) rank(s float64) int {
	above, tied := c.counts(s)
	return 1 + above + tied
}

// PValue is (1 + #{j : s_j ≥ s}) / (n + 1).
func (c *Calibration) PValue(s float64) float64 {
	return float64(c.rank(s)) / float64(len(c.scores)+1)
}

// PValues returns the marginal p-values of scores (PValue of each): the
// ones Benjamini–Hochberg needs.
func (c *Calibration) PValues(scores []float64) []float64 {
	return Test{}.PValues(c, scores)
}

// betaQuantile is the (1−δ)-quantile of Beta(j, n+1−j), 1 ≤ j ≤ n, cached.
func (c *Calibration) betaQuantile(j int, delta float64) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.beta.delta != delta || c.beta.q == nil {
		c.beta = betaTable{delta: delta, q: make([]float64, len(c.scores)+1)}
	}
	if v := c.beta.q[j]; v != 0 {
		return v
	}
	v := exactLevel(len(c.scores), j, delta)
	c.beta.q[j] = v
	return v
}

// exactLevel is the (1−δ)-quantile of Beta(j, n+1−j): with probability
// 1−δ over the calibration draw, the test flagging p ≤ j/(n+1) has a
// false-alarm rate at most this. 1 for j > n (p = 1 never flags), and for
// a δ outside 0 < δ < 1, which has no such quantile (Test.Check refuses
// it).
func exactLevel(n, j int, delta float64) float64 {
	if j > n || !(delta > 0 && delta < 1) {
		return 1
	}
	if j == 1 { // closed form: 1 − δ^{1/n}
		return -math.Expm1(math.Log(delta) / float64(n))
	}
	return distuv.Beta{Alpha: float64(j), Beta: float64(n + 1 - j)}.Quantile(1 - delta)
}

// PValueRandom is the randomised p-value, ties broken by u ∈ [0, 1):
// (#{s_j > s} + u·(1 + #{s_j = s})) / (n + 1). For a continuous score it is
// exactly uniform on in-distribution inputs (PValue is its largest value).
func (c *Calibration) PValueRandom(s, u float64) float64 {
	above, tied := c.counts(s)
	return (float64(above) + u*float64(1+tied)) / float64(len(c.scores)+1)
}

// Test is a conformal OOD test: flag an input when its p-value is at most
// Alpha.
type Test struct {
	// Alpha bounds the false-alarm rate on in-distribution inputs.
	Alpha float64
	// Delta, when positive, makes the bound calibration-conditional: with
	// probability ≥ 1−Delta over the calibration draw, the false-alarm rate
	// of this calibration is ≤ Alpha. 0 means the marginal guarantee.
	Delta float64
	// Simultaneous, with Delta (at most 1/2), uses Bates et al.'s
	// correction (p-values raised by sqrt(log(1/δ)/(2n))), valid at every
	// level at once, instead of the exact one at the level Alpha; it needs
	// more calibration inputs and flags fewer.
	Simultaneous bool
}

// level is the test's p-value of an input whose marginal p-value is
// j/(n+1); 1 for a Delta outside 0 ≤ δ < 1 (see PValues).
func (t Test) level(n, j int) float64 {
	switch {
	case t.Delta == 0:
		return float64(j) / float64(n+1)
	case !(t.Delta > 0 && t.Delta < 1):
		return 1
	case t.Simultaneous:
		return min(1, float64(j)/float64(n+1)+t.Slack(n))
	default:
		return exactLevel(n, j, t.Delta)
	}
}

// Slack is what the simultaneous calibration-conditional correction adds
// to every p-value of a calibration of n scores, sqrt(log(1/δ)/(2n)) (the
// one-sided DKW bound, Massart 1990, for δ ≤ 1/2); 0 for the other tests.
func (t Test) Slack(n int) float64 {
	if t.Delta == 0 || !t.Simultaneous {
		return 0
	}
	return math.Sqrt(math.Log(1/t.Delta) / (2 * float64(n)))
}

// MinAlpha is the smallest Alpha the test can keep with n calibration
// scores: its smallest p-value, 1/(n+1) for the marginal test.
func (t Test) MinAlpha(n int) float64 { return t.level(n, 1) }

// Check returns an error unless 0 < Alpha < 1, 0 ≤ Delta < MaxDelta and n
// calibration scores can reach Alpha (saying how many it would take).
func (t Test) Check(n int) error {
	switch {
	case !(t.Alpha > 0 && t.Alpha < 1):
		if a, ok := conformal.PercentAlpha(t.Alpha); ok {
			return fmt.Errorf("ood: α_ood = %v, want 0 < α_ood < 1, the share of in-distribution inputs the test may flag (a percentage? %v)", t.Alpha, a)
		}
		return fmt.Errorf("ood: α_ood = %v, want 0 < α_ood < 1", t.Alpha)
	case !(t.Delta >= 0 && t.Delta < conformal.MaxDelta):
		return fmt.Errorf("ood: δ = %v, want 0 ≤ δ < %v, 0 the marginal guarantee (%s; from %v on the test flags more in-distribution inputs than without δ)", t.Delta, conformal.MaxDelta, conformal.DeltaHint, conformal.MaxDelta)
	case t.Alpha < t.MinAlpha(n):
		need := n
		for t.Alpha < t.MinAlpha(need) && need < 1<<40 {
			need *= 2
		}
		lo := need / 2
		for lo+1 < need { // the smallest n that reaches Alpha
			mid := (lo + need) / 2
			if t.Alpha < t.MinAlpha(mid) {
				lo = mid
			} else {
				need = mid
			}
		}
		return fmt.Errorf("ood: %d calibration scores cannot certify α_ood = %v: the smallest p-value is %.4g; α_ood = %v needs at least %d",
			n, t.Alpha, t.MinAlpha(n), t.Alpha, need)
	}
	return nil
}

// TieWarning is what a reader of the test's flags must know where c's
// scores tie at the level the test flags (conformal.OODCalibration's
// TieWarning, at the test's FlaggedRank): it flags far fewer
// in-distribution inputs than its α_ood allows. "" otherwise.
func (t Test) TieWarning(c *conformal.OODCalibration) string {
	if c == nil || c.N < 1 {
		return ""
	}
	level := fmt.Sprintf("α_ood = %v", t.Alpha)
	if t.Delta > 0 {
		level += fmt.Sprintf(" with δ = %v", t.Delta)
		if t.Simultaneous {
			level += " (simultaneous)"
		}
	}
	return c.TieWarning(level, t.FlaggedRank(c.N))
}

// Warning is what a reader of the test's flags must know of an α_ood
// above one half, legal but seldom meant: α_ood is the share of
// in-distribution inputs the test may flag, and α_ood = 0.95 flags up to
// 95% of them (read as a confidence level, it is 0.05). "" otherwise.
func (t Test) Warning() string {
	if t.Alpha <= 0.5 {
		return ""
	}
	return fmt.Sprintf("α_ood = %v: the test may flag up to %.3g%% of in-distribution inputs; α_ood is the false-alarm rate it allows (0.05 flags at most 5%%), not a confidence level", t.Alpha, 100*t.Alpha)
}

// String says what the test guarantees, in words.
func (t Test) String() string {
	switch {
	case t.Delta == 0:
		return fmt.Sprintf("an in-distribution input is flagged with probability at most %v (exchangeable with the calibration inputs; marginal over the calibration draw)", t.Alpha)
	case t.Simultaneous:
		return fmt.Sprintf("with probability at least %.6g over the calibration draw, the false-alarm rate on in-distribution inputs is at most %v, and at most t for a threshold t on the p-values at every level at once", 1-t.Delta, t.Alpha)
	}
	return fmt.Sprintf("with probability at least %.6g over the calibration draw, the false-alarm rate on in-distribution inputs is at most %v", 1-t.Delta, t.Alpha)
}

// PValues returns the test's p-values of scores: the marginal ones, or
// their calibration-conditional correction. It does not check the test
// (Check does, and NewConformal, With and Conformal.Answer call it): a
// Delta outside 0 ≤ δ < 1, which no calibration draw can keep, gives
// p-values of 1, which flag no input.
func (t Test) PValues(c *Calibration, scores []float64) []float64 {
	n := c.N()
	out := make([]float64, len(scores))
	for i, s := range scores {
		j := c.rank(s)
		if t.Delta > 0 && !t.Simultaneous {
			out[i] = 1
			if j <= n {
				out[i] = c.betaQuantile(j, t.Delta)
			}
			continue
		}
		out[i] = t.level(n, j)
	}
	return out
}

// FlaggedRank is the largest rank l, 0 … n, that the test flags among n
// calibration scores: an input is flagged exactly when its score exceeds
// the l-th largest of them (more than l−1 of them lie below it; 0: none
// is flagged). For the marginal test l = ⌊Alpha·(n+1)⌋, as p = j/(n+1) ≤
// Alpha decides it; with Delta, the rank whose p-value, the
// calibration-conditional level, is still at most Alpha — which can be
// more than the marginal test's rank for Delta above 1/e. Like PValues it
// does not check the test: 0 for a Delta outside 0 ≤ δ < 1.
func (t Test) FlaggedRank(n int) int {
	flagged := func(j int) bool {
		if t.Delta > 0 && !t.Simultaneous {
			return exactLevel(n, j, t.Delta) <= t.Alpha
		}
		return t.level(n, j) <= t.Alpha
	}
	// The p-value rises with the rank: the last rank flagged, by halving.
	lo, hi := 0, n // flagged(lo) or lo = 0; !flagged(hi+1)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if flagged(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Flags reports, for each p-value, whether the test flags it (p ≤ Alpha).
func (t Test) Flags(p []float64) []bool {
	out := make([]bool, len(p))
	for i, v := range p {
		out[i] = v <= t.Alpha
	}
	return out
}

// BenjaminiHochberg returns the inputs the Benjamini–Hochberg procedure
// flags at level q (in increasing order): the k smallest p-values, k the
// largest with p_(k) ≤ q·k/m. Over conformal p-values sharing one
// calibration set (PRDS, Bates et al. 2023) it keeps the false discovery
// rate — the expected share of in-distribution inputs among the flagged
// ones — at most q·m₀/m ≤ q.
func BenjaminiHochberg(p []float64, q float64) ([]int, error) {
	if !(q > 0 && q < 1) {
		return nil, fmt.Errorf("ood: FDR level q = %v, want 0 < q < 1", q)
	}
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
		if v := p[i]; !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("ood: p-value %d is %v, want a number in [0, 1]", i, v)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	k := 0
	for r := m; r >= 1; r-- {
		if p[order[r-1]] <= q*float64(r)/float64(m) {
			k = r
			break
		}
	}
	out := slices.Clone(order[:k])
	slices.Sort(out)
	return out, nil
}
