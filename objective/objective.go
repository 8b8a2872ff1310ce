// Package objective holds the training objectives of contrastive conformal
// sets (paper §4.2, docs/design.md §3) over a batch of positive and negative
// difference vectors, with analytic gradients.
//
// With t the batch threshold (below), σ_T(u) = 1/(1+e^{−T·u}) and
// neg = mean_j σ_T(φ(x_neg,j) − t), the losses to minimise are
//
//	Neg     −neg
//	Vol     log Vol(N_t)
//	NegVol  −[(1−λ)·neg − λ·log Vol(N_t)]
//
// The batch threshold t is the r-th smallest of the batch's N positive scores,
// r = ⌈(1−α)(N+1)⌉ (capped at N for tiny batches). How its gradient flows is
// the ThresholdMode: Soft (default; a softmax-weighted average of the ±5
// sorted neighbours of rank r, weights softmax(−|i−r|), the paper's public
// code), OrderStatistic (the single score at rank r) or Detached (no gradient
// through t, the paper's text). docs/threshold.md has the measured comparison.
package objective

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"

	"github.com/ccsets/ccs/internal/enum"
)

// Objective selects the loss.
type Objective int

// The objectives.
const (
	Neg Objective = iota + 1
	Vol
	NegVol
)

var objectives = enum.Names[Objective]{What: "objective", Names: []string{"neg", "vol", "neg,vol"},
	Alias: map[string]Objective{"vol,neg": NegVol, "neg+vol": NegVol}}

// String returns "neg", "vol" or "neg,vol" (the command-line spelling).
func (o Objective) String() string { return objectives.String(o) }

// MarshalText implements encoding.TextMarshaler.
func (o Objective) MarshalText() ([]byte, error) { return objectives.Marshal(o) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Objective) UnmarshalText(b []byte) error { return objectives.Unmarshal(o, b) }

// ParseObjective reads neg, vol or neg,vol (also vol,neg and neg+vol).
func ParseObjective(s string) (Objective, error) { return objectives.Parse(s) }

// ParseObjectives reads a command line's objective list: neg, vol or
// neg,vol, optionally with infonce among the terms (neg,infonce,
// vol,infonce, neg,vol,infonce, in any order). infoNCE reports whether it
// was there.
func ParseObjectives(s string) (o Objective, infoNCE bool, err error) {
	var set []string
	for _, term := range strings.Split(s, ",") {
		if term == "infonce" {
			if infoNCE {
				return 0, false, fmt.Errorf("objective %q names infonce twice", s)
			}
			infoNCE = true
			continue
		}
		set = append(set, term)
	}
	if infoNCE && len(set) == 0 {
		return 0, false, fmt.Errorf("objective %q: infonce trains the head; add the set's objective (neg, vol or neg,vol)", s)
	}
	o, err = ParseObjective(strings.Join(set, ","))
	if err != nil {
		return 0, false, fmt.Errorf("unknown objective %q (want neg, vol or neg,vol, each optionally with ,infonce)", s)
	}
	return o, infoNCE, nil
}

// ThresholdMode is how the gradient flows through the batch threshold.
type ThresholdMode int

// The threshold modes.
const (
	Soft ThresholdMode = iota + 1
	OrderStatistic
	Detached
)

var thresholdModes = enum.Names[ThresholdMode]{What: "threshold mode", Names: []string{"soft", "order-statistic", "detached"}}

// String returns soft, order-statistic or detached.
func (m ThresholdMode) String() string { return thresholdModes.String(m) }

// MarshalText implements encoding.TextMarshaler.
func (m ThresholdMode) MarshalText() ([]byte, error) { return thresholdModes.Marshal(m) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *ThresholdMode) UnmarshalText(b []byte) error { return thresholdModes.Unmarshal(m, b) }

// ParseThresholdMode reads soft, order-statistic or detached.
func ParseThresholdMode(s string) (ThresholdMode, error) { return thresholdModes.Parse(s) }

// Config configures an objective: which loss, and its numbers. Zero fields
// take PaperConfig's values.
type Config struct {
	Objective Objective     `json:"objective"`
	Alpha     float64       `json:"alpha"`     // miscoverage level of the batch threshold
	T         float64       `json:"T"`         // sigmoid steepness of the Neg term
	Lambda    float64       `json:"lambda"`    // NegVol's volume weight, in (0, 1]
	Threshold ThresholdMode `json:"threshold"` // how the gradient flows through the batch threshold
	Window    int           `json:"window"`    // Soft's ± neighbours
	Workers   int           `json:"-"`         // goroutines; 0 means GOMAXPROCS
}

// PaperConfig holds the paper's numbers (docs/design.md §3): α = 0.05, T = 7,
// λ = 0.001, the Soft threshold over ±5 neighbours. Its Objective is the
// caller's choice.
var PaperConfig = Config{Alpha: 0.05, T: 7, Lambda: 0.001, Threshold: Soft, Window: 5}

// WithDefaults returns c with zero fields set to PaperConfig's values.
func (c Config) WithDefaults() Config {
	p := PaperConfig
	c.Alpha, c.T, c.Lambda = cmp.Or(c.Alpha, p.Alpha), cmp.Or(c.T, p.T), cmp.Or(c.Lambda, p.Lambda)
	c.Threshold, c.Window = cmp.Or(c.Threshold, p.Threshold), cmp.Or(c.Window, p.Window)
	return c
}

// Validate checks the objective's numbers (after WithDefaults, so that no
// field is 0). The objective itself is checked by New: a recipe shared by
// rows of several objectives has none yet.
func (c Config) Validate() error {
	if err := conformal.CheckAlpha(c.Alpha); err != nil {
		return fmt.Errorf("objective: %w", err)
	}
	if !(c.T > 0) || math.IsInf(c.T, 0) {
		return fmt.Errorf("objective: T = %v, want a finite T > 0", c.T)
	}
	if !(c.Lambda > 0 && c.Lambda <= 1) {
		return fmt.Errorf("objective: lambda = %v, want 0 < λ ≤ 1 (λ = 0 is the neg objective)", c.Lambda)
	}
	if !thresholdModes.Valid(c.Threshold) {
		return fmt.Errorf("objective: unknown threshold mode %d", int(c.Threshold))
	}
	if c.Window < 1 {
		return fmt.Errorf("objective: window %d < 1", c.Window)
	}
	return nil
}

// Weights returns the loss's coefficients: Loss = −neg·NegTerm + vol·LogVol.
func (c Config) Weights() (neg, vol float64) {
	switch c.Objective {
	case Neg:
		return 1, 0
	case Vol:
		return 0, 1
	default:
		return 1 - c.Lambda, c.Lambda
	}
}

// Batch is one step's data: difference vectors anchor − point, rows of d.
type Batch struct {
	Pos []float32 // positives
	Neg []float32 // negatives (Neg and NegVol need them)
	// Prepared says Pos and Neg hold the geometry's prepared rows
	// (geometry.Prepared.Prepare) rather than raw differences.
	Prepared bool
}

// Value is the objective at one point.
type Value struct {
	Loss    float64 // the loss to minimise
	T       float64 // the batch threshold
	NegTerm float64 // mean σ_T(φ(neg) − t); NaN when the objective has no Neg term
	LogVol  float64 // log Vol(N_t)
}

// negTerm scores the negatives (rows of d) on all cores into e.neg and
// returns Σ_j σ_T(φ_j − t) and Σ_j σ'_T(φ_j − t), summed in row order; with
// a non-nil negW it writes each row's ∂Loss/∂φ_j = −a·σ'_j/n into it.
func (e *Evaluator) negTerm(scores func(dst []float64, rows []float32) []float64, neg []float32, d int, t float64, negW []float64) (s, ds float64) {
	n := len(neg) / d
	parallel.For(n, chunk, e.cfg.Workers, func(_, lo, hi int) { scores(e.neg[lo:hi], neg[lo*d:hi*d]) })
	e.sig, e.der = grow(e.sig, n), grow(e.der, n)
	kernel.Sigmoids(e.cfg.T, t, e.neg, e.sig, e.der)
	a, _ := e.cfg.Weights()
	for j := range n {
		s += e.sig[j]
		ds += e.der[j]
		if negW != nil {
			negW[j] = -a * e.der[j] / float64(n)
		}
	}
	return s, ds
}

// negTermGrad is negTerm with the negatives' parameter gradient added into
// grad, fused: one pass per parallel chunk, in which each negative's score
// gives its sigmoid and its weight −a·σ'_j/n, applied by the kernel at once
// (a block of rows at a time: kernel.Sigmoids runs on vectors where the
// build has them). The sums are taken per chunk, then over the chunks in
// order.
func (e *Evaluator) negTermGrad(scoreGrads func(dtheta, scores []float64, rows []float32, w geometry.Weights) []float64,
	neg []float32, d int, t float64, grad, negW []float64) (s, ds float64) {
	n := len(neg) / d
	a, _ := e.cfg.Weights()
	nc := parallel.Chunks(n, chunk)
	sums := make([][2]float64, nc)
	for len(e.partial) < nc {
		e.partial = append(e.partial, nil)
	}
	parallel.For(n, chunk, e.cfg.Workers, func(c, lo, hi int) {
		var s, ds float64
		var sig, der []float64
		weights := func(k0 int, phi, w []float64) {
			sig, der = grow(sig, len(phi)), grow(der, len(phi))
			kernel.Sigmoids(e.cfg.T, t, phi, sig, der)
			for k := range phi {
				s += sig[k]
				ds += der[k]
				w[k] = -a * der[k] / float64(n)
			}
			if negW != nil {
				copy(negW[lo+k0:], w)
			}
		}
		p := grow(e.partial[c], len(grad))
		e.partial[c] = p
		clear(p)
		scoreGrads(p, e.neg[lo:hi], neg[lo*d:hi*d], weights)
		sums[c] = [2]float64{s, ds}
	})
	for c, p := range sums {
		s += p[0]
		ds += p[1]
		for i, v := range e.partial[c] {
			grad[i] += v
		}
	}
	return s, ds
}

// ErrNonFinite reports a NaN or infinite loss or gradient.
var ErrNonFinite = errors.New("non-finite objective")

// chunk is the number of rows per parallel chunk (fixed, so results do not
// depend on the number of goroutines).
const chunk = 4096

// Evaluator computes an objective and its gradient. It keeps scratch space
// between calls and is not safe for concurrent use; the geometry's Scores
// and ScoreGrads must be safe for concurrent use (all of package geometry's
// are).
type Evaluator struct {
	cfg      Config
	pos, neg []float64
	sel      []float64 // a copy of pos (or a part) for selection
	sig, der []float64 // the negatives' sigmoids and derivatives (without a parameter gradient)
	idx      []int32
	cand     []int32     // rows inside the bracket (bracketed)
	partial  [][]float64 // one gradient per parallel chunk
}

// New returns an evaluator for cfg (zero fields take PaperConfig's
// values).
func New(cfg Config) (*Evaluator, error) {
	if cfg.Objective < Neg || cfg.Objective > NegVol {
		return nil, fmt.Errorf("objective: unknown objective %d", int(cfg.Objective))
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Evaluator{cfg: cfg}, nil
}

// Config returns the evaluator's configuration with defaults filled in.
func (e *Evaluator) Config() Config { return e.cfg }

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Grads are the gradients Eval computes; it leaves out those whose field
// is nil.
type Grads struct {
	// Params receives ∂Loss/∂θ (NumParams values), overwritten.
	Params []float64
	// Pos and Neg receive ∂Loss/∂φ of each positive and each negative row
	// (one value per row; Neg unused by Vol), overwritten: what a caller
	// needs to carry the gradient into the difference vectors themselves (a
	// projection head's weights, through geometry.InputGrads). Positive rows
	// outside the threshold's window get 0; in Detached mode all of them do.
	// With them, ∂Loss/∂θ = Σ Pos_i·∂φ_i/∂θ + Σ Neg_j·∂φ_j/∂θ + the volume
	// term's own ∂/∂θ.
	Pos, Neg []float64
}

// Eval computes the objective on b under g, and the gradients out asks for.
func (e *Evaluator) Eval(g geometry.Learnable, b Batch, out Grads) (Value, error) {
	d := g.Dim()
	a, bv := e.cfg.Weights()
	if len(b.Pos) == 0 || len(b.Pos)%d != 0 {
		return Value{}, fmt.Errorf("objective: %d positive values is not a positive number of rows of %d", len(b.Pos), d)
	}
	if a != 0 && (len(b.Neg) == 0 || len(b.Neg)%d != 0) {
		return Value{}, fmt.Errorf("objective %v: %d negative values is not a positive number of rows of %d", e.cfg.Objective, len(b.Neg), d)
	}
	nPos, nNeg := len(b.Pos)/d, len(b.Neg)/d
	grad := out.Params
	if grad != nil {
		if len(grad) != g.NumParams() {
			panic("ccs/objective: slice length mismatch")
		}
		clear(grad)
	}
	if (out.Pos != nil && len(out.Pos) != nPos) || (a != 0 && out.Neg != nil && len(out.Neg) != nNeg) {
		panic("ccs/objective: slice length mismatch")
	}
	// The kernels: on raw differences, or on the geometry's prepared rows.
	scores, scoreGrads := g.Scores, g.ScoreGrads
	if b.Prepared {
		gp, ok := g.(geometry.Prepared)
		if !ok {
			return Value{}, fmt.Errorf("objective: a prepared batch for a %v geometry, which has no prepared kernel", g.Kind())
		}
		scores, scoreGrads = gp.ScoresPrepared, gp.ScoreGradsPrepared
	}
	e.pos = grow(e.pos, nPos)
	parallel.For(nPos, chunk, e.cfg.Workers, func(_, lo, hi int) {
		scores(e.pos[lo:hi], b.Pos[lo*d:hi*d])
	})

	// The batch threshold and the rows (and weights) its value is made of.
	t, rows, wts := e.threshold(nPos)
	v := Value{T: t, NegTerm: math.NaN(), LogVol: g.LogVolume(t)}

	var cT float64 // ∂Loss/∂t
	if a != 0 {
		e.neg = grow(e.neg, nNeg)
		var s, ds float64
		if grad == nil {
			s, ds = e.negTerm(scores, b.Neg, d, t, out.Neg)
		} else {
			s, ds = e.negTermGrad(scoreGrads, b.Neg, d, t, grad, out.Neg)
		}
		v.NegTerm = s / float64(nNeg)
		cT += a * ds / float64(nNeg)
	}
	v.Loss = bv * v.LogVol
	if a != 0 {
		v.Loss -= a * v.NegTerm
	}
	if bv != 0 && (grad != nil || out.Pos != nil) {
		dv := grad
		if dv == nil {
			dv = make([]float64, g.NumParams()) // only ∂logVol/∂t is wanted
		}
		cT += bv * g.LogVolumeGrad(dv, t, bv)
	}
	if out.Pos != nil {
		clear(out.Pos)
	}
	if e.cfg.Threshold != Detached {
		w := make([]float64, len(rows))
		for k := range rows {
			w[k] = cT * wts[k]
		}
		if grad != nil {
			sub := make([]float32, 0, len(rows)*d)
			for _, r := range rows {
				sub = append(sub, b.Pos[int(r)*d:(int(r)+1)*d]...)
			}
			scoreGrads(grad, make([]float64, len(rows)), sub, geometry.Fixed(w))
		}
		if out.Pos != nil {
			for k, r := range rows {
				out.Pos[r] = w[k]
			}
		}
	}
	if math.IsNaN(v.Loss) || math.IsInf(v.Loss, 0) {
		return v, fmt.Errorf("%w: loss %v (threshold %v, log-volume %v)", ErrNonFinite, v.Loss, v.T, v.LogVol)
	}
	for i, x := range grad {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return v, fmt.Errorf("%w: gradient[%d] = %v (threshold %v, log-volume %v)", ErrNonFinite, i, x, v.T, v.LogVol)
		}
	}
	return v, nil
}
