package train

import (
	"fmt"
	"math"
	"slices"

	"github.com/ccsets/ccs/objective"
)

// headBatch is the scratch space of one head step: the batch's backbone
// rows, their projections, the projected differences, and gradients.
type headBatch struct {
	a, p, n       []float32 // backbone rows: anchors, positives, negatives
	za, zp, zn    []float32 // projected rows
	xp, xn        []float32 // projected differences anchor − point
	posW, negW    []float64 // ∂set loss/∂φ per difference row
	gxp, gxn      []float64 // ∂φ/∂x of the rows that carry weight
	sub           []float32
	ga, gp, gn    []float64 // ∂loss/∂z
	nca, ncp, ncn []float64 // ∂InfoNCE/∂z
}

func grow[T any](s []T, n int) []T { return slices.Grow(s[:0], n)[:n] }

// headEpoch updates the head for one epoch with the set frozen.
func (t *trainer) headEpoch(lr float64) (epochStats, error) {
	var st epochStats
	n := 0
	p := t.head
	err := t.batches(func(ids []int) error {
		loss, thr, nce, err := t.headGrad(ids, p.grad)
		if err != nil {
			return err
		}
		st.loss += loss
		st.t += thr
		st.infoNCE += nce
		n++
		step(p.theta, p.grad, p.velocity, t.cfg, lr, p.steps == 0)
		p.steps++
		t.h.SetParams(p.theta)
		return nil
	})
	st.loss /= float64(n)
	st.t /= float64(n)
	st.infoNCE /= float64(n)
	return st, err
}

// headGrad computes the head's loss on the batch of anchors ids — the set
// objective on the projected differences (with a square head, the volume
// measured in the backbone's space: log Vol − log|det W|, unless
// ProjectedVolume) plus
// λ_InfoNCE·InfoNCE on the projected embeddings — and writes its gradient
// with respect to the head's parameters into grad.
func (t *trainer) headGrad(ids []int, grad []float64) (loss, thr, nce float64, err error) {
	hb, fit, h := &t.hb, t.fit, t.h
	B, K, Kn, in, out := len(ids), fit.K, fit.KNeg, h.In, h.Out
	hb.a = grow(hb.a, B*in)
	hb.n = grow(hb.n, B*Kn*in)
	hb.p = grow(hb.p, B*K*in)
	for k, i := range ids {
		copy(hb.a[k*in:(k+1)*in], fit.Anchor(i))
		fit.PositiveRows(hb.p[k*K*in:(k+1)*K*in], i)
		fit.NegativeRows(hb.n[k*Kn*in:(k+1)*Kn*in], i)
	}
	hb.za = h.Forward(grow(hb.za, B*out), hb.a)
	hb.zp = h.Forward(grow(hb.zp, B*K*out), hb.p)
	hb.zn = h.Forward(grow(hb.zn, B*Kn*out), hb.n)
	v, nce, err := t.embeddingGrads(B)
	if err != nil {
		return 0, 0, 0, err
	}
	clear(grad)
	h.AddGrads(grad, hb.a, hb.ga)
	h.AddGrads(grad, hb.p, hb.gp)
	h.AddGrads(grad, hb.n, hb.gn)
	loss = v.Loss + t.cfg.InfoNCE.Weight*nce
	if _, vol := t.cfg.Objective.Weights(); vol != 0 && h.In == h.Out && !t.cfg.InfoNCE.ProjectedVolume {
		loss -= vol * h.LogAbsDet()
		if err := h.AddLogAbsDetGrad(grad, -vol); err != nil {
			return 0, 0, 0, err
		}
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, 0, 0, fmt.Errorf("%w: head loss %v (set loss %v, InfoNCE %v)", objective.ErrNonFinite, loss, v.Loss, nce)
	}
	for i, g := range grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return 0, 0, 0, fmt.Errorf("%w: head gradient[%d] = %v", objective.ErrNonFinite, i, g)
		}
	}
	return loss, v.T, nce, nil
}

// embeddingGrads computes, for the B anchors whose projected embeddings are
// in hb.za, hb.zp and hb.zn, the set objective on their differences and
// the InfoNCE loss, and writes the gradient of set loss + λ·InfoNCE with
// respect to each projected embedding into hb.ga, hb.gp and hb.gn.
func (t *trainer) embeddingGrads(B int) (v objective.Value, nce float64, err error) {
	hb := &t.hb
	K, Kn, out := t.fit.K, t.fit.KNeg, t.g.Dim()
	hb.xp = diffs(grow(hb.xp, B*K*out), hb.za, hb.zp, K, out)
	hb.xn = diffs(grow(hb.xn, B*Kn*out), hb.za, hb.zn, Kn, out)

	// The set objective, carried from the scores to the embeddings.
	hb.posW = grow(hb.posW, B*K)
	hb.negW = grow(hb.negW, B*Kn)
	v, err = t.ev.Eval(t.g, objective.Batch{Pos: hb.xp, Neg: hb.xn}, objective.Grads{Pos: hb.posW, Neg: hb.negW})
	if err != nil {
		return v, 0, err
	}
	hb.ga, hb.gp, hb.gn = grow(hb.ga, B*out), grow(hb.gp, B*K*out), grow(hb.gn, B*Kn*out)
	clear(hb.ga)
	clear(hb.gp)
	clear(hb.gn)
	// Positives: only the rows the threshold is made of carry weight.
	var rows []int
	hb.sub = hb.sub[:0]
	for r, w := range hb.posW {
		if w != 0 {
			rows = append(rows, r)
			hb.sub = append(hb.sub, hb.xp[r*out:(r+1)*out]...)
		}
	}
	hb.gxp = t.g.InputGrads(grow(hb.gxp, len(hb.sub)), hb.sub)
	for q, r := range rows {
		spread(hb.ga, hb.gp, hb.gxp[q*out:(q+1)*out], hb.posW[r], r/K, r, out)
	}
	if neg, _ := t.cfg.Objective.Weights(); neg != 0 {
		hb.gxn = t.g.InputGrads(grow(hb.gxn, len(hb.xn)), hb.xn)
		for r, w := range hb.negW {
			spread(hb.ga, hb.gn, hb.gxn[r*out:(r+1)*out], w, r/Kn, r, out)
		}
	}

	// InfoNCE on the projected embeddings.
	lambda := t.cfg.InfoNCE.Weight
	hb.nca, hb.ncp, hb.ncn = grow(hb.nca, len(hb.ga)), grow(hb.ncp, len(hb.gp)), grow(hb.ncn, len(hb.gn))
	nce, err = objective.InfoNCE(objective.Pairs{N: B, K: K, KNeg: Kn, D: out, Anchors: hb.za, Positives: hb.zp, Negatives: hb.zn},
		t.cfg.InfoNCE.Tau, hb.nca, hb.ncp, hb.ncn, t.cfg.Workers)
	if err != nil {
		return v, 0, err
	}
	for _, pair := range [][2][]float64{{hb.ga, hb.nca}, {hb.gp, hb.ncp}, {hb.gn, hb.ncn}} {
		for i, g := range pair[1] {
			pair[0][i] += lambda * g
		}
	}

	return v, nce, nil
}

// diffs writes za_i − z_ij for the k rows z_ij of each anchor i.
func diffs(dst, za, z []float32, k, d int) []float32 {
	for r := range len(z) / d {
		a := za[(r/k)*d : (r/k+1)*d]
		for j, v := range z[r*d : (r+1)*d] {
			dst[r*d+j] = a[j] - v
		}
	}
	return dst
}

// spread carries w·∂φ/∂x of the difference row r (x = z_anchor − z_r) to
// the anchor's and the point's gradients.
func spread(ga, gz, gx []float64, w float64, anchor, r, d int) {
	a, z := ga[anchor*d:(anchor+1)*d], gz[r*d:(r+1)*d]
	for j, g := range gx {
		a[j] += w * g
		z[j] -= w * g
	}
}
