package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// ResplitResult is the distribution of a set's coverage over random
// calibration/test resplits of one bundle: what the guarantee promises,
// seen draw by draw.
type ResplitResult struct {
	Resplits int     `json:"resplits"`
	NCal     int     `json:"n_calibration"` // calibration anchors per resplit
	NTest    int     `json:"n_test"`        // held-out anchors per resplit
	Alpha    float64 `json:"alpha"`
	Mode     string  `json:"mode"`
	Delta    float64 `json:"delta,omitempty"`
	// Coverage is over all held-out positives, per resplit (fractions).
	Coverage   Summary `json:"coverage"`
	P05        float64 `json:"coverage_p05"`         // 5th percentile
	BelowShare float64 `json:"coverage_below_share"` // share of resplits covering < 1−α
	Exclusion  Summary `json:"exclusion"`            // NaN without negatives
	// Band is the marginal guarantee's [1−α, 1−α + 1/(n+1)] for the mean
	// (one positive per anchor, the marginal rank).
	Band [2]float64 `json:"band"`
	// Coverages are each resplit's coverage, in order: the distribution
	// the summary above describes.
	Coverages []float64 `json:"coverages,omitempty"`
}

// Resplits measures s's geometry recalibrated on random halves of b:
// resplits times, b's anchors are shuffled (seeded by seed and the resplit),
// a calFraction of them calibrate the threshold at s's α with s's mode (and
// PAC's δ), and the others' positives and negatives are counted. b must be
// disjoint from everything that chose the geometry. Every score is computed
// once.
func Resplits(s *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64) (ResplitResult, error) {
	if !s.Calibrated() {
		return ResplitResult{}, conformal.ErrNotCalibrated
	}
	if s.Geometry.Dim() != b.D {
		return ResplitResult{}, fmt.Errorf("set has dimension %d, the bundle %d", s.Geometry.Dim(), b.D)
	}
	if err := s.OneThreshold(); err != nil {
		return ResplitResult{}, err
	}
	if resplits < 1 {
		return ResplitResult{}, fmt.Errorf("resplits %d, want at least 1", resplits)
	}
	nCal := int(calFraction * float64(b.N))
	if !(calFraction > 0 && calFraction < 1) || nCal < 1 || nCal >= b.N {
		return ResplitResult{}, fmt.Errorf("calibration fraction %v of %d anchors leaves no calibration or no test anchors", calFraction, b.N)
	}
	c := s.Calibration
	// Every resplit calibrates on the same number of scores: one rank.
	nScores := nCal
	if c.Mode == conformal.Pooled {
		nScores = nCal * b.K
	}
	rank, err := conformal.RankOf(c.Mode, nScores, s.Alpha, c.Delta)
	if err != nil {
		return ResplitResult{}, err
	}
	if rank > nScores {
		return ResplitResult{}, &conformal.TooFewError{N: nScores, Rank: rank, Alpha: s.Alpha, Delta: c.Delta}
	}
	// Every positive's and negative's score, once.
	pos := make([]float64, b.N*b.K)
	neg := make([]float64, b.N*b.KNeg)
	pd := make([]float32, b.K*b.D)
	nd := make([]float32, b.KNeg*b.D)
	for i := range b.N {
		s.Geometry.Scores(pos[i*b.K:(i+1)*b.K], b.PositiveDiffs(pd, i))
		if b.HasNegatives() {
			s.Geometry.Scores(neg[i*b.KNeg:(i+1)*b.KNeg], b.NegativeDiffs(nd, i))
		}
	}
	res := ResplitResult{Resplits: resplits, NCal: nCal, NTest: b.N - nCal, Alpha: s.Alpha, Mode: c.Mode.String(), Delta: c.Delta,
		Band: [2]float64{1 - s.Alpha, 1 - s.Alpha + 1/float64(nCal+1)}}
	cov := make([]float64, resplits)
	exc := make([]float64, resplits)
	below := 0
	var cal []float64
	for r := range resplits {
		rng := rand.New(rand.NewPCG(seed, uint64(r)))
		perm := rng.Perm(b.N)
		cal = cal[:0]
		for _, i := range perm[:nCal] {
			switch c.Mode {
			case conformal.Pooled:
				cal = append(cal, pos[i*b.K:(i+1)*b.K]...)
			default: // one positive per anchor
				cal = append(cal, pos[i*b.K+rng.IntN(b.K)])
			}
		}
		q := conformal.Select(cal, rank)
		in, out := 0, 0
		for _, i := range perm[nCal:] {
			for _, v := range pos[i*b.K : (i+1)*b.K] {
				if v <= q {
					in++
				}
			}
			for _, v := range neg[i*b.KNeg : (i+1)*b.KNeg] {
				if v > q {
					out++
				}
			}
		}
		cov[r] = float64(in) / float64(res.NTest*b.K)
		exc[r] = math.NaN()
		if b.HasNegatives() {
			exc[r] = float64(out) / float64(res.NTest*b.KNeg)
		}
		if cov[r] < 1-s.Alpha {
			below++
		}
	}
	res.Coverage, res.Exclusion, res.Coverages = Summarize(cov), Summarize(exc), cov
	res.BelowShare = float64(below) / float64(resplits)
	sorted := slices.Sorted(slices.Values(cov))
	res.P05 = sorted[int(0.05*float64(resplits-1))]
	return res, nil
}
