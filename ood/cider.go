package ood

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// CIDER (Ming et al., ICLR 2023) on frozen features, as the CCS paper runs
// it (appendix: the backbone frozen, only a projection head trained;
// projection dimension 128, 100 epochs, learning rate 0.5, τ = 0.1,
// λ_c = 2, prototype momentum 0.999):
//
//   - head: z = normalise(W₂·relu(W₁·x + b₁) + b₂), D → D → ProjDim;
//   - class prototypes μ_c on the unit sphere, moved after each batch
//     toward the batch's class mean, μ_c ← normalise(m^{n_c}·μ_c +
//     (1 − m^{n_c})·mean z), m = 0.999, n_c the class's count in the batch
//     (the batch form of CIDER's per-sample update);
//   - loss L_dis + λ_c·L_comp: compactness L_comp is the cross-entropy of
//     z·μᵀ/τ against the label; dispersion L_dis = (1/C)·Σ_c log((1/(C−1))·
//     Σ_{c'≠c} exp(μ_c·μ_c'/τ)). Gradients flow into z directly and through
//     this batch's prototype update (as in CIDER's own code, where only the
//     prototypes' past is detached);
//   - SGD, momentum 0.9, weight decay 1e-4, cosine learning rate, batches
//     of 512, seeded shuffles and initialisation (PyTorch's Linear default);
//   - anomaly = the distance of a normalised projected feature to its K-th
//     nearest projected training feature (KNN in the head's space, K = 50).
//
// It needs training labels.
type CIDER struct {
	ProjDim, Epochs, Batch, K int
	LR, Tau, LambdaC, ProtoM  float64
	Seed                      uint64
	// Progress, if not nil, hears the end of each training epoch (the
	// slow part: 100 epochs over 60 000 features take minutes).
	Progress func(epoch, epochs int)
	// Steps, if not nil, hears the k-NN search of its scores (seconds to
	// a minute for thousands of inputs, silent before).
	Steps Steps

	h     *ciderHead
	index *index
}

// Name implements Detector.
func (*CIDER) Name() string { return "CIDER" }

// SetSeed implements Seeded: the next Fit trains under seed.
func (c *CIDER) SetSeed(seed uint64) { c.Seed = seed }

func (c *CIDER) defaults() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	deff := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.ProjDim, 128)
	def(&c.Epochs, 100)
	def(&c.Batch, 512)
	def(&c.K, 50)
	deff(&c.LR, 0.5)
	deff(&c.Tau, 0.1)
	deff(&c.LambdaC, 2)
	deff(&c.ProtoM, 0.999)
}

// Fit implements Detector: it trains the head and indexes the projected
// training features.
func (c *CIDER) Fit(train Sample) error { return c.FitContext(context.Background(), train) }

// FitContext implements ContextFitter: Fit, stopped between epochs by a
// cancelled ctx with its error.
func (c *CIDER) FitContext(ctx context.Context, train Sample) error {
	c.defaults()
	if train.Labels == nil {
		return needsLabels("CIDER", train)
	}
	if train.N <= c.K {
		return fmt.Errorf("CIDER: %d training features for k = %d", train.N, c.K)
	}
	classes := slices.Clone(train.Labels)
	slices.Sort(classes)
	classes = slices.Compact(classes)
	if len(classes) < 2 {
		return errors.New("CIDER: the dispersion loss needs at least 2 classes")
	}
	y := make([]int, train.N)
	for i, l := range train.Labels {
		y[i], _ = slices.BinarySearch(classes, l)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x6369646572)) // "cider"
	h := newCIDERHead(train.D, c.ProjDim, len(classes), rng)
	h.tau, h.lambdaC, h.m = c.Tau, c.LambdaC, c.ProtoM
	grad := make([]float64, len(h.theta))
	vel := make([]float64, len(h.theta))
	const momentum, decay = 0.9, 1e-4
	order := make([]int, train.N)
	for i := range order {
		order[i] = i
	}
	d := train.D
	xb := make([]float64, c.Batch*d)
	yb := make([]int, c.Batch)
	for e := range c.Epochs {
		if err := ctx.Err(); err != nil {
			return err
		}
		lr := c.LR * (1 + math.Cos(math.Pi*float64(e)/float64(c.Epochs))) / 2
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for lo := 0; lo < train.N; lo += c.Batch {
			hi := min(train.N, lo+c.Batch)
			for b, i := range order[lo:hi] {
				copy(xb[b*d:(b+1)*d], train.Features[i*d:(i+1)*d])
				yb[b] = y[i]
			}
			loss, protos := h.lossGrad(grad, xb[:(hi-lo)*d], yb[:hi-lo])
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return fmt.Errorf("CIDER: loss %v at epoch %d", loss, e)
			}
			h.protos = protos
			for k := range h.theta {
				vel[k] = momentum*vel[k] + grad[k] + decay*h.theta[k]
				h.theta[k] -= lr * vel[k]
			}
		}
		if c.Progress != nil {
			c.Progress(e+1, c.Epochs)
		}
	}
	c.h = h
	c.index = newIndex(h.project(train.Features), c.ProjDim)
	return nil
}

// Score implements Detector.
func (c *CIDER) Score(x Sample) ([]float64, error) { return c.ScoreContext(context.Background(), x) }

// ScoreContext implements ContextScorer: Score, stopped with ctx's error
// a block of inputs at a time.
func (c *CIDER) ScoreContext(ctx context.Context, x Sample) ([]float64, error) {
	if err := fitted("CIDER", c.index.dim(), c.ProjDim); err != nil {
		return nil, err
	}
	if x.D != c.h.d {
		return nil, fmt.Errorf("CIDER: fitted on dimension %d, scoring dimension %d", c.h.d, x.D)
	}
	return c.index.kthContext(ctx, c.h.project(x.Features), c.K, false, c.Steps.report("CIDER score"))
}

// ciderHead is the two-layer head and its prototypes; theta is
// [W₁ (d×d), b₁ (d), W₂ (p×d), b₂ (p)], row-major.
type ciderHead struct {
	d, p, classes   int
	theta           []float64
	protos          []float64 // classes×p, unit rows
	tau, lambdaC, m float64
}

func newCIDERHead(d, p, classes int, rng *rand.Rand) *ciderHead {
	h := &ciderHead{d: d, p: p, classes: classes, theta: make([]float64, d*d+d+p*d+p)}
	bound := 1 / math.Sqrt(float64(d)) // both layers take d inputs
	for i := range h.theta {
		h.theta[i] = bound * (2*rng.Float64() - 1)
	}
	h.protos = make([]float64, classes*p)
	for c := range classes {
		row := h.protos[c*p : (c+1)*p]
		for j := range row {
			row[j] = rng.NormFloat64()
		}
		normalizeRow(row)
	}
	return h
}

func (h *ciderHead) parts() (w1, b1, w2, b2 []float64) {
	d, p := h.d, h.p
	t := h.theta
	return t[:d*d], t[d*d : d*d+d], t[d*d+d : d*d+d+p*d], t[d*d+d+p*d:]
}

// forward computes a1 = x·W₁ᵀ + b₁, hid = relu(a1), a2 = hid·W₂ᵀ + b₂ for n rows.
func (h *ciderHead) forward(x []float64) (a1, hid, a2 []float64) {
	d, p := h.d, h.p
	n := len(x) / d
	w1, b1, w2, b2 := h.parts()
	a1 = make([]float64, n*d)
	for i := range n {
		copy(a1[i*d:(i+1)*d], b1)
	}
	gemm(blas.NoTrans, blas.Trans, n, d, d, x, w1, 1, a1)
	hid = make([]float64, n*d)
	for i, v := range a1 {
		hid[i] = max(v, 0)
	}
	a2 = make([]float64, n*p)
	for i := range n {
		copy(a2[i*p:(i+1)*p], b2)
	}
	gemm(blas.NoTrans, blas.Trans, n, p, d, hid, w2, 1, a2)
	return a1, hid, a2
}

// project returns the normalised head outputs of the rows of x.
func (h *ciderHead) project(x []float64) []float64 {
	_, _, a2 := h.forward(x)
	return normalized(a2, h.p)
}

// lossGrad computes the loss of one batch and its gradient with respect to
// theta (into grad), and returns the batch's updated prototypes.
func (h *ciderHead) lossGrad(grad, x []float64, y []int) (float64, []float64) {
	d, p, C := h.d, h.p, h.classes
	n := len(y)
	a1, hid, a2 := h.forward(x)
	z := make([]float64, n*p)
	norms := make([]float64, n)
	for i := range n {
		row := a2[i*p : (i+1)*p]
		norms[i] = math.Sqrt(dot(row, row))
		for j, v := range row {
			z[i*p+j] = v / norms[i]
		}
	}
	// This batch's prototype update.
	count := make([]int, C)
	u := make([]float64, C*p)
	for i, c := range y {
		count[c]++
		for j := range p {
			u[c*p+j] += z[i*p+j]
		}
	}
	mix := make([]float64, C) // 1 − m^{n_c}: the batch mean's weight
	unorm := make([]float64, C)
	protos := slices.Clone(h.protos)
	for c := range C {
		if count[c] == 0 {
			continue
		}
		a := math.Pow(h.m, float64(count[c]))
		mix[c] = 1 - a
		row := u[c*p : (c+1)*p]
		for j := range row {
			row[j] = a*h.protos[c*p+j] + mix[c]*row[j]/float64(count[c])
		}
		unorm[c] = math.Sqrt(dot(row, row))
		for j := range row {
			protos[c*p+j] = row[j] / unorm[c]
		}
	}
	gz := make([]float64, n*p)
	gp := make([]float64, C*p)
	// Compactness: λ_c · mean cross-entropy of z·μᵀ/τ.
	var loss float64
	logits := make([]float64, C)
	for i, c := range y {
		zi := z[i*p : (i+1)*p]
		for k := range C {
			logits[k] = dot(zi, protos[k*p:(k+1)*p]) / h.tau
		}
		lse := logSumExp(logits)
		loss += h.lambdaC * (lse - logits[c]) / float64(n)
		for k := range C {
			g := math.Exp(logits[k] - lse)
			if k == c {
				g--
			}
			g *= h.lambdaC / float64(n) / h.tau
			for j := range p {
				gz[i*p+j] += g * protos[k*p+j]
				gp[k*p+j] += g * zi[j]
			}
		}
	}
	// Dispersion.
	sims := make([]float64, C-1)
	for c := range C {
		pc := protos[c*p : (c+1)*p]
		others := make([]int, 0, C-1)
		for k := range C {
			if k != c {
				sims[len(others)] = dot(pc, protos[k*p:(k+1)*p]) / h.tau
				others = append(others, k)
			}
		}
		lse := logSumExp(sims)
		loss += (lse - math.Log(float64(C-1))) / float64(C)
		for s, k := range others {
			g := math.Exp(sims[s]-lse) / float64(C) / h.tau
			for j := range p {
				gp[c*p+j] += g * protos[k*p+j]
				gp[k*p+j] += g * pc[j]
			}
		}
	}
	// Through the prototype update into z.
	for c := range C {
		if count[c] == 0 {
			continue
		}
		pc, g := protos[c*p:(c+1)*p], gp[c*p:(c+1)*p]
		radial := dot(g, pc)
		scale := mix[c] / unorm[c] / float64(count[c])
		for i, yc := range y {
			if yc != c {
				continue
			}
			for j := range p {
				gz[i*p+j] += scale * (g[j] - radial*pc[j])
			}
		}
	}
	// Through z = a2/‖a2‖ and the layers.
	ga2 := gz
	for i := range n {
		zi, gi := z[i*p:(i+1)*p], ga2[i*p:(i+1)*p]
		radial := dot(gi, zi)
		for j := range p {
			gi[j] = (gi[j] - radial*zi[j]) / norms[i]
		}
	}
	_, _, w2, _ := h.parts()
	gw1, gb1, gw2, gb2 := grad[:d*d], grad[d*d:d*d+d], grad[d*d+d:d*d+d+p*d], grad[d*d+d+p*d:]
	gemm(blas.Trans, blas.NoTrans, p, d, n, ga2, hid, 0, gw2)
	colSums(gb2, ga2, p)
	gh := make([]float64, n*d)
	gemm(blas.NoTrans, blas.NoTrans, n, d, p, ga2, w2, 0, gh)
	for i, v := range a1 {
		if v <= 0 {
			gh[i] = 0
		}
	}
	gemm(blas.Trans, blas.NoTrans, d, d, n, gh, x, 0, gw1)
	colSums(gb1, gh, d)
	return loss, protos
}

// gemm computes c = op(a)·op(b) + beta·c for an r×k op(a) and a k×s op(b),
// all dense row-major.
func gemm(ta, tb blas.Transpose, r, s, k int, a, b []float64, beta float64, c []float64) {
	ga := blas64.General{Rows: r, Cols: k, Stride: k, Data: a}
	if ta == blas.Trans {
		ga = blas64.General{Rows: k, Cols: r, Stride: r, Data: a}
	}
	gb := blas64.General{Rows: k, Cols: s, Stride: s, Data: b}
	if tb == blas.Trans {
		gb = blas64.General{Rows: s, Cols: k, Stride: k, Data: b}
	}
	blas64.Gemm(ta, tb, 1, ga, gb, beta, blas64.General{Rows: r, Cols: s, Stride: s, Data: c})
}

func colSums(dst, x []float64, w int) {
	clear(dst)
	for i := 0; i < len(x); i += w {
		for j := range w {
			dst[j] += x[i+j]
		}
	}
}

func normalizeRow(row []float64) {
	n := math.Sqrt(dot(row, row))
	for j := range row {
		row[j] /= n
	}
}
