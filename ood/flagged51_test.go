package ood

import (
	"testing"

	"github.com/ccsets/ccs/conformal"
)

// TestFlaggedRankAgreesWithConformal checks that the marginal test's
// flagged rank (Test.FlaggedRank with δ = 0) and conformal.FlaggedRankAt,
// which the set file's tie warning uses where package ood cannot be
// imported, are one rule: the largest j with j/(n+1) ≤ α, over levels on
// and beside the grid j/(n+1) where float rounding decides.
func TestFlaggedRankAgreesWithConformal(t *testing.T) {
	for n := 1; n <= 400; n++ {
		for _, alpha := range []float64{0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 0.9, 0.999} {
			if got, want := conformal.FlaggedRankAt(alpha, n), (Test{Alpha: alpha}).FlaggedRank(n); got != want {
				t.Fatalf("n %d, α %v: FlaggedRankAt %d, Test.FlaggedRank %d", n, alpha, got, want)
			}
		}
		for j := 0; j <= n; j++ { // α exactly on the grid
			alpha := float64(j) / float64(n+1)
			if alpha <= 0 {
				continue
			}
			if got, want := conformal.FlaggedRankAt(alpha, n), (Test{Alpha: alpha}).FlaggedRank(n); got != want {
				t.Fatalf("n %d, α = %d/%d: FlaggedRankAt %d, Test.FlaggedRank %d", n, j, n+1, got, want)
			}
		}
	}
}
