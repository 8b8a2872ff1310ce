package ood

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Conformal OOD tests (DESIGN §2.7). Any detector's anomaly score s
// (higher = more likely OOD) becomes a test with a guaranteed false-alarm
// rate: calibrate it on n held-out in-distribution inputs s_1..s_n, disjoint
// from everything the detector was built from, and give an input x the
// conformal p-value
//
//	p(x) = (1 + #{j : s_j ≥ s(x)}) / (n + 1)
//
// (ties count against x). Flagging x when p(x) ≤ α keeps P(flag | x is ID)
// ≤ α for ID inputs exchangeable with the calibration inputs, marginally
// over the calibration draw. Calibration-conditionally (Bates, Candès, Lei,
// Romano and Sesia, "Testing for outliers with conformal p-values", Ann.
// Stat. 2023) the p-values are raised by ε = sqrt(log(2/δ)/(2n)), the
// Dvoretzky–Kiefer–Wolfowitz–Massart bound: then, with probability ≥ 1−δ
// over the calibration draw, P(p̃(x) ≤ t | calibration) ≤ t for every t at
// once, so the false-alarm rate of this calibration is ≤ α.

// Calibration holds a detector's anomaly scores on held-out
// in-distribution inputs, sorted, for conformal p-values.
type Calibration struct {
	scores []float64
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

// PValue is (1 + #{j : s_j ≥ s}) / (n + 1).
func (c *Calibration) PValue(s float64) float64 {
	above, tied := c.counts(s)
	return float64(1+above+tied) / float64(len(c.scores)+1)
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
	// of this calibration is ≤ Alpha (p-values raised by
	// sqrt(log(2/δ)/(2n))). 0 means the marginal guarantee.
	Delta float64
}

// Slack is what a calibration-conditional test adds to every p-value of a
// calibration of n scores: sqrt(log(2/δ)/(2n)); 0 for the marginal test.
func (t Test) Slack(n int) float64 {
	if t.Delta == 0 {
		return 0
	}
	return math.Sqrt(math.Log(2/t.Delta) / (2 * float64(n)))
}

// MinAlpha is the smallest Alpha the test can keep with n calibration
// scores: the smallest p-value, 1/(n+1) (plus the slack).
func (t Test) MinAlpha(n int) float64 { return 1/float64(n+1) + t.Slack(n) }

// Check returns an error unless 0 < Alpha < 1, 0 ≤ Delta < 1 and n
// calibration scores can reach Alpha (saying how many it would take).
func (t Test) Check(n int) error {
	switch {
	case !(t.Alpha > 0 && t.Alpha < 1):
		return fmt.Errorf("ood: α_ood = %v, want 0 < α_ood < 1", t.Alpha)
	case !(t.Delta >= 0 && t.Delta < 1):
		return fmt.Errorf("ood: δ = %v, want 0 ≤ δ < 1 (0: the marginal guarantee)", t.Delta)
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

// String says what the test guarantees, in words.
func (t Test) String() string {
	if t.Delta == 0 {
		return fmt.Sprintf("an in-distribution input is flagged with probability at most %v (exchangeable with the calibration inputs; marginal over the calibration draw)", t.Alpha)
	}
	return fmt.Sprintf("with probability at least %v over the calibration draw, the false-alarm rate on in-distribution inputs is at most %v", 1-t.Delta, t.Alpha)
}

// PValues returns the test's p-values of scores: PValue plus the slack,
// capped at 1.
func (t Test) PValues(c *Calibration, scores []float64) []float64 {
	eps := t.Slack(c.N())
	out := make([]float64, len(scores))
	for i, s := range scores {
		out[i] = min(1, c.PValue(s)+eps)
	}
	return out
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
