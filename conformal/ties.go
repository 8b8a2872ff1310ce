package conformal

import (
	"fmt"
	"math"

	"github.com/ccsets/ccs/bundle"
)

// Tie says that a threshold equals calibration scores above its rank:
// scores that take few values (binary or quantised embeddings, a
// Hamming distance) put several units at the threshold, and a set holds
// every score equal to it at once. Its coverage is then above the
// rank's r/(n+1) — about AtOrBelow/n, the share of calibration scores it
// holds — and a threshold just below the tie would hold about Below/n,
// short of 1−α: no threshold of such a score gives 1−α more closely. The
// guarantee (coverage ≥ 1−α) holds; it is conservative by the tie.
// Warnings and the check of a test bundle speak of a tie that lifts the
// coverage by half a point or more.
type Tie struct {
	// Below is how many calibration scores lie below the threshold, and
	// AtOrBelow how many at or below it (more than the rank).
	Below     int `json:"below"`
	AtOrBelow int `json:"at_or_below"`
}

// tieAt is the Tie of threshold q, of rank r among scores, or nil where
// no score above rank r equals q (or q is +Inf, the whole space).
func tieAt(scores []float64, q float64, r int) *Tie {
	if math.IsInf(q, 1) || math.IsNaN(q) {
		return nil
	}
	t := Tie{}
	for _, v := range scores {
		switch {
		case v < q:
			t.Below++
			t.AtOrBelow++
		case v == q:
			t.AtOrBelow++
		}
	}
	if t.AtOrBelow <= r {
		return nil
	}
	return &t
}

// material reports whether the tie lifts the coverage of a threshold of
// rank r among n scores by half a point or more — (AtOrBelow − r)/(n+1)
// ≥ 0.005 —, which Warnings says: two float scores equal by chance among
// thousands lift it by a few hundredths.
func (t *Tie) material(n, r int) bool {
	return t != nil && float64(t.AtOrBelow-r) >= 0.005*float64(n+1)
}

// coverageText says what a tie makes of a threshold of rank r among n
// scores: the share it holds against the rank's, and below the tie.
func (t *Tie) coverageText(n, r int) string {
	return fmt.Sprintf("ties %d other calibration scores (%d of the %d share its value): the set holds every score equal to it, so it covers about %.1f%% of positives drawn as the calibration's (the share of its scores at or below it), not the rank's %d/(n+1) = %.1f%%; a threshold just below the tie would cover about %.1f%%, short of 1−α",
		t.AtOrBelow-t.Below-1, t.AtOrBelow-t.Below, n, 100*float64(t.AtOrBelow)/float64(n), r, 100*float64(r)/float64(n+1), 100*float64(t.Below)/float64(n))
}

// tieRemedy is what a tie warning adds: why, and what the guarantee is.
const tieRemedy = "scores that take few values (binary or quantised embeddings, rows repeated) cannot give 1−α more closely; the guarantee (at least 1−α) holds, conservatively: a geometry whose scores take more values (a learned set, the ellipsoid, float embeddings) comes closer"

// copies counts the units of cal (anchor i with its j-th positive) that
// repeat an earlier unit exactly: the same anchor embedding and the same
// positive embedding, bit for bit — a record exported twice
// (bundle.CountCopies of the units' rows side by side). The rank counts
// each copy as a unit of its own, exchangeable with a test anchor, which
// it is not.
func copies(cal *bundle.Bundle, units [][2]int) int {
	d := cal.D
	rows := make([]float32, 0, 2*d*len(units))
	for _, u := range units {
		rows = append(append(rows, cal.Anchor(u[0])...), cal.Positive(u[0], u[1])...)
	}
	return bundle.CountCopies(rows, 2*d)
}

// quantisedValues is the most distinct coordinate values the units'
// embeddings may take and be quantised (quantised): 8-bit codes take 256.
const quantisedValues = 256

// quantised reports whether the anchors' and positives' coordinates of
// units take at most quantisedValues distinct values, each repeated four
// times on average or more: binary or 8-bit codes, whose units repeat one
// another by chance (6-bit codes: 37 of 200 units in a reviewer's draws,
// every draw, the coverage unharmed). It stops at the first value past
// the limit: float embeddings, after a few hundred coordinates.
func quantised(cal *bundle.Bundle, units [][2]int) bool {
	seen := make(map[float32]struct{}, quantisedValues+1)
	for _, u := range units {
		for _, row := range [][]float32{cal.Anchor(u[0]), cal.Positive(u[0], u[1])} {
			for _, v := range row {
				if _, ok := seen[v]; !ok {
					if seen[v] = struct{}{}; len(seen) > quantisedValues {
						return false
					}
				}
			}
		}
	}
	return 4*len(seen) <= 2*len(units)*cal.D
}

// CopiesWarning is what a set calibrated on units that repeat others
// exactly (Info.Copies) says of it.
func CopiesWarning(copies, n int) string {
	return fmt.Sprintf("%d of the %d calibration units repeat another exactly (the same anchor and positive embeddings: records exported twice?): the rank counts each copy as a unit of its own, exchangeable with a test anchor, which a copy is not, so coverage can fall below 1−α (a test: 30 copies among 60 units gave 85.0%% at α = 0.1); drop the copies and calibrate again (ccs bundle warns of repeated rows)", copies, n)
}

// pacBelowMarginal is the marginal rank ⌈(n+1)(1−α)⌉ (n+1 where it
// exceeds n) when a PAC rank r among n is below it: a δ near one half
// (from about 0.37) takes a rank under the marginal one, and the set no
// longer keeps the marginal 1−α on average over calibration draws; 0
// otherwise.
func pacBelowMarginal(n, r int, alpha float64) int {
	m, err := Rank(n, alpha)
	if err != nil || r >= m {
		return 0
	}
	return m
}

// pacBelowText says what a PAC rank r below the marginal rank m makes of
// the set (or a class's, what).
func pacBelowText(what string, n, r, m int, alpha, delta float64) string {
	marginal := fmt.Sprintf("the marginal rank ⌈(n+1)(1−α)⌉ = %d", m)
	if m > n {
		marginal = fmt.Sprintf("the marginal rank ⌈(n+1)(1−α)⌉ = %d, beyond the n = %d scores (a marginal calibration refuses so few)", m, n)
	}
	return fmt.Sprintf("%s: δ = %v takes PAC rank %d of n = %d, below %s: P(coverage ≥ 1−α) ≥ 1−δ holds, but the mean coverage over calibration draws, %d/(n+1) = %.2f%%, is below 1−α = %.4g%% — the marginal guarantee is lost; a δ of 0.1 or less never does this (more calibration anchors, or a smaller δ)",
		what, delta, r, n, marginal, r, 100*float64(r)/float64(n+1), 100*(1-alpha))
}
