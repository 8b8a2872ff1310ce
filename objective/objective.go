// Package objective holds the training objectives of contrastive conformal
// sets (paper §4.2, DESIGN §2.3) over a batch of positive and negative
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
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
)

// Objective selects the loss.
type Objective int

// The objectives.
const (
	Neg Objective = iota + 1
	Vol
	NegVol
)

// String returns "neg", "vol" or "neg,vol" (the command-line spelling).
func (o Objective) String() string {
	switch o {
	case Neg:
		return "neg"
	case Vol:
		return "vol"
	case NegVol:
		return "neg,vol"
	}
	return fmt.Sprintf("Objective(%d)", int(o))
}

// MarshalText implements encoding.TextMarshaler.
func (o Objective) MarshalText() ([]byte, error) {
	if o < Neg || o > NegVol {
		return nil, fmt.Errorf("unknown objective %d", int(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Objective) UnmarshalText(b []byte) error {
	v, err := ParseObjective(string(b))
	if err == nil {
		*o = v
	}
	return err
}

// ParseObjective reads neg, vol or neg,vol (also vol,neg and neg+vol).
func ParseObjective(s string) (Objective, error) {
	switch s {
	case "neg":
		return Neg, nil
	case "vol":
		return Vol, nil
	case "neg,vol", "vol,neg", "neg+vol":
		return NegVol, nil
	}
	return 0, fmt.Errorf("unknown objective %q (want neg, vol or neg,vol)", s)
}

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

var modeNames = map[ThresholdMode]string{Soft: "soft", OrderStatistic: "order-statistic", Detached: "detached"}

// String returns soft, order-statistic or detached.
func (m ThresholdMode) String() string {
	if s, ok := modeNames[m]; ok {
		return s
	}
	return fmt.Sprintf("ThresholdMode(%d)", int(m))
}

// MarshalText implements encoding.TextMarshaler.
func (m ThresholdMode) MarshalText() ([]byte, error) {
	if _, ok := modeNames[m]; !ok {
		return nil, fmt.Errorf("unknown threshold mode %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *ThresholdMode) UnmarshalText(b []byte) error {
	v, err := ParseThresholdMode(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// ParseThresholdMode reads soft, order-statistic or detached.
func ParseThresholdMode(s string) (ThresholdMode, error) {
	for m, name := range modeNames {
		if name == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown threshold mode %q (want soft, order-statistic or detached)", s)
}

// Config configures an objective. Zero fields take the paper's values.
type Config struct {
	Objective Objective     `json:"objective"`
	Alpha     float64       `json:"alpha"`     // 0 means 0.05
	T         float64       `json:"T"`         // sigmoid steepness; 0 means 7
	Lambda    float64       `json:"lambda"`    // NegVol's volume weight; 0 means 0.001
	Threshold ThresholdMode `json:"threshold"` // 0 means Soft
	Window    int           `json:"window"`    // Soft's ± neighbours; 0 means 5
	Workers   int           `json:"-"`         // goroutines; 0 means GOMAXPROCS
}

// WithDefaults returns c with zero fields set to the paper's values.
func (c Config) WithDefaults() Config {
	if c.Alpha == 0 {
		c.Alpha = 0.05
	}
	if c.T == 0 {
		c.T = 7
	}
	if c.Lambda == 0 {
		c.Lambda = 0.001
	}
	if c.Threshold == 0 {
		c.Threshold = Soft
	}
	if c.Window == 0 {
		c.Window = 5
	}
	return c
}

// Validate checks the configuration (after WithDefaults).
func (c Config) Validate() error {
	if c.Objective < Neg || c.Objective > NegVol {
		return fmt.Errorf("objective: unknown objective %d", int(c.Objective))
	}
	if err := conformal.CheckAlpha(c.Alpha); err != nil {
		return fmt.Errorf("objective: %w", err)
	}
	if !(c.T > 0) || math.IsInf(c.T, 0) {
		return fmt.Errorf("objective: T = %v, want a finite T > 0", c.T)
	}
	if !(c.Lambda >= 0 && c.Lambda <= 1) {
		return fmt.Errorf("objective: lambda = %v, want 0 ≤ λ ≤ 1", c.Lambda)
	}
	if _, ok := modeNames[c.Threshold]; !ok {
		return fmt.Errorf("objective: unknown threshold mode %d", int(c.Threshold))
	}
	if c.Window < 0 {
		return fmt.Errorf("objective: window %d < 0", c.Window)
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
	idx      []int32
	cand     []int32     // rows inside the bracket (bracketed)
	partial  [][]float64 // one gradient per parallel chunk
}

// New returns an evaluator for cfg (zero fields take the paper's values).
func New(cfg Config) (*Evaluator, error) {
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

// Eval computes the objective on b under g. If grad is not nil it is
// overwritten with ∂Loss/∂θ.
func (e *Evaluator) Eval(g geometry.Learnable, b Batch, grad []float64) (Value, error) {
	d := g.Dim()
	a, bv := e.cfg.Weights()
	if len(b.Pos) == 0 || len(b.Pos)%d != 0 {
		return Value{}, fmt.Errorf("objective: %d positive values is not a positive number of rows of %d", len(b.Pos), d)
	}
	if a != 0 && (len(b.Neg) == 0 || len(b.Neg)%d != 0) {
		return Value{}, fmt.Errorf("objective %v: %d negative values is not a positive number of rows of %d", e.cfg.Objective, len(b.Neg), d)
	}
	if grad != nil {
		if len(grad) != g.NumParams() {
			panic("ccs/objective: slice length mismatch")
		}
		clear(grad)
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
	nPos := len(b.Pos) / d
	e.pos = grow(e.pos, nPos)
	parallel.For(nPos, chunk, e.cfg.Workers, func(_, lo, hi int) {
		scores(e.pos[lo:hi], b.Pos[lo*d:hi*d])
	})

	// The batch threshold and the rows (and weights) its value is made of.
	t, rows, wts := e.threshold(nPos)
	v := Value{T: t, NegTerm: math.NaN(), LogVol: g.LogVolume(t)}

	var cT float64 // ∂Loss/∂t
	if a != 0 {
		nNeg := len(b.Neg) / d
		e.neg = grow(e.neg, nNeg)
		T := e.cfg.T
		// One pass per chunk: each negative's score gives its sigmoid and
		// its weight −a·σ'_j/nNeg, which the fused kernel applies at once
		// (a block of rows at a time: sigmoids runs on vectors where the
		// build has them).
		nc := parallel.Chunks(nNeg, chunk)
		sums := make([][2]float64, nc)
		for len(e.partial) < nc {
			e.partial = append(e.partial, nil)
		}
		parallel.For(nNeg, chunk, e.cfg.Workers, func(c, lo, hi int) {
			var s, ds float64
			var sig, der []float64
			weights := func(_ int, phi, w []float64) {
				sig, der = grow(sig, len(phi)), grow(der, len(phi))
				kernel.Sigmoids(T, t, phi, sig, der)
				for k := range phi {
					s += sig[k]
					ds += der[k]
					w[k] = -a * der[k] / float64(nNeg)
				}
			}
			if grad == nil {
				scores(e.neg[lo:hi], b.Neg[lo*d:hi*d])
				weights(lo, e.neg[lo:hi], make([]float64, hi-lo))
			} else {
				p := grow(e.partial[c], len(grad))
				e.partial[c] = p
				clear(p)
				scoreGrads(p, e.neg[lo:hi], b.Neg[lo*d:hi*d], weights)
			}
			sums[c] = [2]float64{s, ds}
		})
		var s, ds float64
		for c, p := range sums {
			s += p[0]
			ds += p[1]
			if grad != nil {
				for i, v := range e.partial[c] {
					grad[i] += v
				}
			}
		}
		v.NegTerm = s / float64(nNeg)
		cT += a * ds / float64(nNeg)
	}
	v.Loss = bv * v.LogVol
	if a != 0 {
		v.Loss -= a * v.NegTerm
	}
	if grad != nil {
		if bv != 0 {
			cT += bv * g.LogVolumeGrad(grad, t, bv)
		}
		if e.cfg.Threshold != Detached {
			sub := make([]float32, 0, len(rows)*d)
			w := make([]float64, len(rows))
			for k, r := range rows {
				sub = append(sub, b.Pos[int(r)*d:(int(r)+1)*d]...)
				w[k] = cT * wts[k]
			}
			scoreGrads(grad, make([]float64, len(rows)), sub, geometry.Fixed(w))
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

// threshold returns t from e.pos and the positive rows it is made of, with
// their weights (one row of weight 1 except in Soft mode).
func (e *Evaluator) threshold(n int) (float64, []int32, []float64) {
	r, err := conformal.Rank(n, e.cfg.Alpha)
	if err != nil || r > n {
		r = n // a batch smaller than the rank needs: its largest score
	}
	lo, hi := r, r
	if e.cfg.Threshold == Soft {
		lo, hi = max(1, r-e.cfg.Window), min(n, r+e.cfg.Window)
	}
	win := e.window(n, lo, hi)
	rows := slices.Clone(win)
	wts := make([]float64, len(rows))
	var z, t float64
	for k := range rows {
		wts[k] = math.Exp(-math.Abs(float64(lo + k - r)))
		z += wts[k]
	}
	for k, i := range rows {
		wts[k] /= z
		t += wts[k] * e.pos[i]
	}
	return t, rows, wts
}

// cmpKey orders rows by score, then by index: a total order, so the
// selection is deterministic under ties.
func cmpKey(s []float64, x, y int32) int {
	switch {
	case s[x] < s[y]:
		return -1
	case s[x] > s[y]:
		return 1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// window returns the rows of ranks lo..hi (1-based) of e.pos[:n] under
// cmpKey, in order: in one pass over the scores when a sample brackets the
// window (bracketed), else by selection among all rows (among).
func (e *Evaluator) window(n, lo, hi int) []int32 {
	pos := e.pos[:n]
	if w, ok := e.bracketed(pos, lo, hi); ok {
		return w
	}
	return e.among(pos, nil, lo, hi)
}

// among returns the rows of ranks lo..hi (1-based) under cmpKey among rows
// (ascending row indices; every row of pos when nil), in order. It selects
// the two scores by value (conformal.Select on a copy: contiguous,
// three-way) and then gathers the rows between them in one pass; only those
// few are sorted. With a NaN score, which has no place in the order, it
// sorts every row by cmpKey.
func (e *Evaluator) among(pos []float64, rows []int32, lo, hi int) []int32 {
	n := len(rows)
	if rows == nil {
		n = len(pos)
	}
	row := func(k int) int32 {
		if rows == nil {
			return int32(k)
		}
		return rows[k]
	}
	vals := grow(e.sel, n)
	e.sel = vals
	for k := range n {
		vals[k] = pos[row(k)]
	}
	vlo := conformal.Select(vals, lo)
	vhi := conformal.Select(vals[lo-1:], hi-lo+1)
	below := 0 // rows of score < vlo: they rank before the window
	e.idx = e.idx[:0]
	nan := math.IsNaN(vlo) || math.IsNaN(vhi)
	for k := range n {
		i := row(k)
		switch v := pos[i]; {
		case v < vlo:
			below++
		case v <= vhi:
			e.idx = append(e.idx, i)
		case v != v:
			nan = true
		}
	}
	if nan {
		e.idx = e.idx[:0]
		for k := range n {
			e.idx = append(e.idx, row(k))
		}
		below = 0
	}
	slices.SortFunc(e.idx, func(x, y int32) int { return cmpKey(pos, x, y) })
	return e.idx[lo-1-below : hi-below]
}

// bracketSample is the sample bracketed uses; below 8 samples' worth of
// rows it does not pay.
const bracketSample = 1024

// bracketed is window in one pass over the scores (Floyd–Rivest's idea): two
// order statistics of a fixed, evenly strided sample bracket the window's
// scores with high probability; one pass counts the rows below the bracket
// and gathers those inside it (a few percent of them), and the window is
// selected among those. It reports false — window then selects among all
// rows — when the bracket misses the window, for few rows, or with a NaN.
func (e *Evaluator) bracketed(pos []float64, lo, hi int) ([]int32, bool) {
	n, s := len(pos), bracketSample
	if n < 8*s {
		return nil, false
	}
	sample := grow(e.sel, s)
	e.sel = sample
	for j := range s {
		sample[j] = pos[j*n/s]
	}
	// The window's ranks in the sample, widened by three standard
	// deviations of a sample quantile and a little more.
	q := float64(lo) / float64(n)
	delta := int(3*math.Sqrt(float64(s)*q*(1-q))) + 8
	rl, rh := lo*s/n-delta, (hi*s+n-1)/n+delta
	a, b := math.Inf(-1), math.Inf(1)
	if rl >= 1 {
		a = conformal.Select(sample, rl)
	}
	if rh <= s {
		b = conformal.Select(sample, rh)
	}
	if math.IsNaN(a) || math.IsNaN(b) {
		return nil, false
	}
	below := 0 // rows of score < a: they rank before every row in the bracket
	cand := e.cand[:0]
	for i, v := range pos {
		switch {
		case v < a:
			below++
		case v <= b:
			cand = append(cand, int32(i))
		case v != v:
			e.cand = cand
			return nil, false
		}
	}
	e.cand = cand
	if below >= lo || below+len(cand) < hi {
		return nil, false
	}
	// Ranks lo..hi overall are ranks lo−below..hi−below among cand.
	return e.among(pos, cand, lo-below, hi-below), true
}

// EvalRows computes the objective on b under g, as Eval does, and writes
// ∂Loss/∂φ of every row into posW (one per positive row) and negW (one per
// negative row; nil for Vol): what a caller needs to carry the gradient
// into the difference vectors themselves (a projection head's weights,
// through geometry.InputGrads). Positive rows outside the threshold's
// window have weight 0; in Detached mode all of them do.
func (e *Evaluator) EvalRows(g geometry.Learnable, b Batch, posW, negW []float64) (Value, error) {
	d := g.Dim()
	a, bv := e.cfg.Weights()
	nPos, nNeg := len(b.Pos)/d, len(b.Neg)/d
	if len(b.Pos) == 0 || len(b.Pos)%d != 0 || (a != 0 && (nNeg == 0 || len(b.Neg)%d != 0)) {
		return Value{}, fmt.Errorf("objective: %d positive and %d negative values are not whole, nonempty sets of rows of %d", len(b.Pos), len(b.Neg), d)
	}
	if len(posW) != nPos || (a != 0 && len(negW) != nNeg) {
		panic("ccs/objective: slice length mismatch")
	}
	scores := g.Scores
	if b.Prepared {
		gp, ok := g.(geometry.Prepared)
		if !ok {
			return Value{}, fmt.Errorf("objective: a prepared batch for a %v geometry, which has no prepared kernel", g.Kind())
		}
		scores = gp.ScoresPrepared
	}
	e.pos = grow(e.pos, nPos)
	parallel.For(nPos, chunk, e.cfg.Workers, func(_, lo, hi int) { scores(e.pos[lo:hi], b.Pos[lo*d:hi*d]) })
	t, rows, wts := e.threshold(nPos)
	v := Value{T: t, NegTerm: math.NaN(), LogVol: g.LogVolume(t)}
	var cT float64
	if a != 0 {
		e.neg = grow(e.neg, nNeg)
		parallel.For(nNeg, chunk, e.cfg.Workers, func(_, lo, hi int) { scores(e.neg[lo:hi], b.Neg[lo*d:hi*d]) })
		var s, ds float64
		for i, phi := range e.neg {
			sig := kernel.Sigmoid(e.cfg.T * (phi - t))
			der := e.cfg.T * sig * (1 - sig)
			s += sig
			ds += der
			negW[i] = -a * der / float64(nNeg)
		}
		v.NegTerm = s / float64(nNeg)
		cT += a * ds / float64(nNeg)
	}
	v.Loss = bv * v.LogVol
	if a != 0 {
		v.Loss -= a * v.NegTerm
	}
	if bv != 0 {
		cT += bv * g.LogVolumeGrad(make([]float64, g.NumParams()), t, bv)
	}
	clear(posW)
	if e.cfg.Threshold != Detached {
		for k, r := range rows {
			posW[r] = cT * wts[k]
		}
	}
	if math.IsNaN(v.Loss) || math.IsInf(v.Loss, 0) {
		return v, fmt.Errorf("%w: loss %v (threshold %v, log-volume %v)", ErrNonFinite, v.Loss, v.T, v.LogVol)
	}
	return v, nil
}
