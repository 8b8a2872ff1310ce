package objective

import (
	"fmt"
	"math"

	"github.com/ccsets/ccs/internal/parallel"
)

// Pairs is a batch of embeddings for InfoNCE: N anchors (rows of D), K
// positives and KNeg negatives per anchor, all in the projected space.
type Pairs struct {
	N, K, KNeg, D int
	Anchors       []float32 // N×D
	Positives     []float32 // N×K×D
	Negatives     []float32 // N×KNeg×D
}

// CheckTau returns an error unless the InfoNCE temperature τ is finite and
// positive.
func CheckTau(tau float64) error {
	if !(tau > 0) || math.IsInf(tau, 0) {
		return fmt.Errorf("objective: InfoNCE temperature %v, want a finite τ > 0", tau)
	}
	return nil
}

// InfoNCE is the contrastive loss of the paper's eq. (InfoNCE-loss), averaged
// over every (anchor, positive) pair, each against all negatives of its
// anchor:
//
//	L = mean_{i,j} −log( e^{s(z_i, z⁺_ij)/τ} / (e^{s(z_i, z⁺_ij)/τ} + Σ_l e^{s(z_i, z⁻_il)/τ}) )
//
// with s the cosine similarity. If ga, gp and gn are not nil they are
// overwritten with ∂L/∂ of the anchors, positives and negatives (same
// layout as the embeddings). An embedding of zero norm (no direction, so no
// cosine similarity) or a non-finite one is an error naming its row. Work is
// split over anchors in fixed chunks and reduced in order, so the result
// does not depend on the number of goroutines.
func InfoNCE(b Pairs, tau float64, ga, gp, gn []float64, workers int) (float64, error) {
	if err := CheckTau(tau); err != nil {
		return 0, err
	}
	if b.N < 1 || b.K < 1 || b.KNeg < 1 {
		return 0, fmt.Errorf("objective: InfoNCE batch of %d anchors, %d positives and %d negatives each; want at least one of each", b.N, b.K, b.KNeg)
	}
	d := b.D
	if len(b.Anchors) != b.N*d || len(b.Positives) != b.N*b.K*d || len(b.Negatives) != b.N*b.KNeg*d {
		panic("ccs/objective: InfoNCE batch shape mismatch")
	}
	grad := ga != nil
	if grad && (len(ga) != len(b.Anchors) || len(gp) != len(b.Positives) || len(gn) != len(b.Negatives)) {
		panic("ccs/objective: InfoNCE gradient shape mismatch")
	}
	const per = 64 // anchors per chunk
	nc := parallel.Chunks(b.N, per)
	sums := make([]float64, nc)
	errs := make([]error, nc)
	parallel.For(b.N, per, workers, func(c, lo, hi int) {
		rows := 1 + b.K + b.KNeg
		unit := make([]float64, rows*d) // anchor, positives, negatives: unit vectors
		norm := make([]float64, rows)
		logit := make([]float64, 1+b.KNeg)
		gs := make([]float64, rows) // ∂L_i/∂s of each similarity (anchor slot unused)
		for i := lo; i < hi; i++ {
			src := func(r int) (string, int, []float32) {
				switch {
				case r == 0:
					return "anchor", i, b.Anchors[i*d : (i+1)*d]
				case r <= b.K:
					k := i*b.K + r - 1
					return "positive", k, b.Positives[k*d : (k+1)*d]
				}
				k := i*b.KNeg + r - 1 - b.K
				return "negative", k, b.Negatives[k*d : (k+1)*d]
			}
			for r := range rows {
				name, k, x := src(r)
				var ss float64
				for _, v := range x {
					ss += float64(v) * float64(v)
				}
				n := math.Sqrt(ss)
				if !(n > 0) || math.IsInf(n, 0) {
					errs[c] = fmt.Errorf("objective: InfoNCE: projected %s %d has norm %v, so no cosine similarity (want a finite, nonzero embedding)", name, k, n)
					return
				}
				norm[r] = n
				u := unit[r*d : (r+1)*d]
				for j, v := range x {
					u[j] = float64(v) / n
				}
			}
			a := unit[:d]
			sim := func(r int) float64 {
				var s float64
				for j, v := range unit[r*d : (r+1)*d] {
					s += a[j] * v
				}
				return s
			}
			// The negatives' logits, and the sum of their exponentials
			// about their largest mn, are shared by all K positives:
			// O(K + KNeg) per anchor. Each positive's term
			// −log(e^{l₀}/(e^{l₀} + Σ e^{lₙ})) = (m − l₀) + log z is computed
			// about its own maximum m = max(l₀, mn), so z ≥ 1: with one
			// maximum shared by all logits a low positive logit at a small τ
			// would underflow its whole denominator to 0.
			mn := math.Inf(-1)
			for l := range b.KNeg {
				logit[1+l] = sim(1+b.K+l) / tau
				mn = max(mn, logit[1+l])
			}
			var sNeg float64 // Σ e^{lₙ − mn}
			for l := range b.KNeg {
				logit[1+l] = math.Exp(logit[1+l] - mn)
				sNeg += logit[1+l]
			}
			var loss, negW float64 // negW = Σ_j e^{mn − m_j}/z_j
			for j := 1; j <= b.K; j++ {
				l0 := sim(j) / tau
				m := max(l0, mn)
				e0 := math.Exp(l0 - m)
				en := math.Exp(mn - m)
				z := e0 + sNeg*en // ≥ 1: one of its terms is e⁰
				loss += (m - l0) + math.Log(z)
				gs[j] = (e0/z - 1) / tau
				negW += en / z
			}
			for l := range b.KNeg {
				gs[1+b.K+l] = logit[1+l] * negW / tau
			}
			sums[c] += loss
			if !grad {
				continue
			}
			// s = â·û: ∂s/∂a = (û − s·â)/|a|, ∂s/∂u = (â − s·û)/|u|.
			scale := 1 / float64(b.N*b.K)
			gA := ga[i*d : (i+1)*d]
			clear(gA)
			for r := 1; r < rows; r++ {
				_, k, _ := src(r)
				var g []float64
				if r <= b.K {
					g = gp[k*d : (k+1)*d]
				} else {
					g = gn[k*d : (k+1)*d]
				}
				s := sim(r)
				w := gs[r] * scale
				u := unit[r*d : (r+1)*d]
				for j := range d {
					gA[j] += w * (u[j] - s*a[j]) / norm[0]
					g[j] = w * (a[j] - s*u[j]) / norm[r]
				}
			}
		}
	})
	var loss float64
	for c := range nc {
		if errs[c] != nil {
			return 0, errs[c]
		}
		loss += sums[c]
	}
	loss /= float64(b.N * b.K)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("%w: InfoNCE loss %v", ErrNonFinite, loss)
	}
	return loss, nil
}
