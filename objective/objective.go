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
	"runtime"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"

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
		hint := ""
		if strings.ContainsAny(s, " \t") {
			hint = ": the terms are joined by commas alone, \"neg,vol\""
		}
		return 0, false, fmt.Errorf("unknown objective %q (want \"neg\", \"vol\" or \"neg,vol\", each optionally with \",infonce\")%s", s, hint)
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
	// Anchors, when not nil, makes the batch the rows of these anchors,
	// read where they lie: Pos and Neg then hold a whole split's rows,
	// PosPer and NegPer rows per anchor (anchor a's from row a·PosPer on),
	// and the batch's positives are anchor Anchors[0]'s, then
	// Anchors[1]'s, and so on; its negatives likewise. The numbers are
	// those of the rows gathered into Pos and Neg in that order, without
	// the copy (a trainer's batches: a split's rows prepared once).
	Anchors        []int
	PosPer, NegPer int
}

// side is one side of a batch: n rows of d, contiguous in data (ids nil)
// or the per rows of each anchor in ids, in place.
type side struct {
	data []float32
	d    int
	ids  []int
	per  int
	n    int
}

func (b Batch) sides(d int) (pos, neg side, err error) {
	pos, neg = side{data: b.Pos, d: d}, side{data: b.Neg, d: d}
	if b.Anchors == nil {
		pos.n, neg.n = len(b.Pos)/d, len(b.Neg)/d
		return pos, neg, nil
	}
	pos.ids, pos.per, neg.ids, neg.per = b.Anchors, b.PosPer, b.Anchors, b.NegPer
	for _, s := range []*side{&pos, &neg} {
		if s.per < 0 || len(s.data)%d != 0 {
			return pos, neg, fmt.Errorf("objective: %d values in rows of %d per anchor and dimension %d", len(s.data), s.per, d)
		}
		rows := len(s.data) / d
		for _, a := range s.ids {
			if a < 0 || (a+1)*s.per > rows {
				return pos, neg, fmt.Errorf("objective: anchor %d's %d rows are not among the %d rows given", a, s.per, rows)
			}
		}
		s.n = len(s.ids) * s.per
	}
	// Whole rows, as the contiguous form checks them.
	pos.data, neg.data = pos.data[:len(pos.data)/d*d], neg.data[:len(neg.data)/d*d]
	return pos, neg, nil
}

// spans appends rows lo..hi−1 of s to dst as spans of rows where they lie.
func (s side) spans(dst [][]float32, lo, hi int) [][]float32 {
	d := s.d
	if s.ids == nil {
		return append(dst, s.data[lo*d:hi*d])
	}
	for lo < hi {
		a, r := lo/s.per, lo%s.per
		end := min(s.per, r+hi-lo)
		base := s.ids[a] * s.per
		dst = append(dst, s.data[(base+r)*d:(base+end)*d])
		lo += end - r
	}
	return dst
}

// row returns row i of s.
func (s side) row(i int) []float32 {
	d := s.d
	if s.ids != nil {
		i = s.ids[i/s.per]*s.per + i%s.per
	}
	return s.data[i*d : (i+1)*d]
}

// kernels are a geometry's score kernels on spans of rows: its Streamed
// kernels, or its contiguous ones, given one span or a copy of several.
type kernels struct {
	scores     func(dst []float64, spans [][]float32)
	scoreGrads func(dtheta, scores []float64, spans [][]float32, w geometry.Weights)
}

func kernelsOf(g geometry.Learnable, prepared bool) (kernels, error) {
	scores, scoreGrads := g.Scores, g.ScoreGrads
	if prepared {
		gp, ok := g.(geometry.Prepared)
		if !ok {
			return kernels{}, fmt.Errorf("objective: a prepared batch for a %v geometry, which has no prepared kernel", g.Kind())
		}
		if gs, ok := gp.(geometry.Streamed); ok {
			return kernels{
				scores:     func(dst []float64, sp [][]float32) { gs.ScoresSpans(dst, sp) },
				scoreGrads: func(dt, sc []float64, sp [][]float32, w geometry.Weights) { gs.ScoreGradsSpans(dt, sc, sp, w) },
			}, nil
		}
		scores, scoreGrads = gp.ScoresPrepared, gp.ScoreGradsPrepared
	}
	return kernels{
		scores: func(dst []float64, sp [][]float32) { scores(dst, kernel.Spans(sp).Joined()) },
		scoreGrads: func(dt, sc []float64, sp [][]float32, w geometry.Weights) {
			scoreGrads(dt, sc, kernel.Spans(sp).Joined(), w)
		},
	}, nil
}

// Value is the objective at one point.
type Value struct {
	Loss    float64 // the loss to minimise
	T       float64 // the batch threshold
	NegTerm float64 // mean σ_T(φ(neg) − t); NaN when the objective has no Neg term
	LogVol  float64 // log Vol(N_t)
}

// negPass is the negatives' pass as parallel tasks (negTasks): n tasks,
// the extra ones first, then one a chunk; once every task has run, sum
// returns Σ_j σ_T(φ_j − t) and Σ_j σ'_T(φ_j − t), and with a gradient
// wanted, e.partial holds the chunks' partial gradients (sumTasks).
type negPass struct {
	n, chunks int
	task      func(task int)
	sum       func() (s, ds float64)
}

// negTasks is the negatives' pass as parallel tasks. They score the
// negatives into e.neg. With a non-nil negW they write each row's
// ∂Loss/∂φ_j = −a·σ'_j/n into it. With a non-nil grad they compute the
// negatives' parameter gradient, a partial one per chunk, fused: one pass
// per parallel chunk, in which each negative's score gives its sigmoid
// and its weight −a·σ'_j/n, applied by the kernel at once (a block of rows
// at a time: kernel.Sigmoids runs on vectors where the build has them).
// The sums are taken per chunk, then over the chunks in order. extra run
// as the first tasks, before the chunks. params is the geometry's number
// of parameters (the chunks' length follows it: chunkRows).
func (e *Evaluator) negTasks(k kernels, neg side, params int, t float64, grad, negW []float64, extra []func()) negPass {
	n := neg.n
	a, _ := e.cfg.Weights()
	cp := chunksOf(n, neg.d, params)
	nc := cp.nc
	sums := make([][2]float64, nc)
	e.partial = growRows(e.partial, nc)
	e.spans = growRows(e.spans, nc)
	first := len(extra)
	task := func(task int) {
		if task < first {
			extra[task]()
			return
		}
		c := task - first
		lo, hi := cp.bounds(c)
		var s, ds float64
		var sig, der []float64
		weights := func(k0 int, phi, w []float64) {
			sig, der = grow(sig, len(phi)), grow(der, len(phi))
			kernel.Sigmoids(e.cfg.T, t, phi, sig, der)
			kernel.MulDiv(w, der, -a, float64(n)) // w_k = −a·σ'_k/n, on vectors
			ls, lds := s, ds                      // the captured sums in registers, added in the same order
			for k := range phi {
				ls += sig[k]
				lds += der[k]
			}
			s, ds = ls, lds
			if negW != nil {
				copy(negW[lo+k0:], w)
			}
		}
		sp := neg.spans(e.spans[c][:0], lo, hi)
		e.spans[c] = sp
		if grad == nil {
			k.scores(e.neg[lo:hi], sp)
			e.partial[c] = grow(e.partial[c], hi-lo)
			weights(0, e.neg[lo:hi], e.partial[c])
		} else {
			p := grow(e.partial[c], len(grad))
			e.partial[c] = p
			clear(p)
			k.scoreGrads(p, e.neg[lo:hi], sp, weights)
		}
		sums[c] = [2]float64{s, ds}
	}
	sum := func() (s, ds float64) {
		for _, p := range sums {
			s += p[0]
			ds += p[1]
		}
		return s, ds
	}
	return negPass{n: nc + first, chunks: nc, task: task, sum: sum}
}

// sumTasks adds the first nc chunks' partial gradients into grad, in
// chunk order for every entry, as parallel tasks: a range of entries each
// (whole cache lines, at least minBlock entries), up to four a worker, so
// that a goroutine that had another task first (the volume term's) takes
// fewer. Every entry's sum is the same however the entries are shared
// out. With fixed ranges of 2048 entries a single-norm at d = 128 had 9
// to share among 16 workers, and the sum (50 partials of 16 385 entries,
// read from the cores that wrote them) took about 300 µs a step at 16
// threads on a lent Xeon.
func (e *Evaluator) sumTasks(grad []float64, nc int) (int, func(r int)) {
	const minBlock = 1024
	workers := e.cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nr := max(1, min(4*workers, len(grad)/minBlock))
	at := func(r int) int {
		if r == nr {
			return len(grad)
		}
		return r * len(grad) / nr &^ 7
	}
	return nr, func(r int) {
		lo, hi := at(r), at(r+1)
		for _, p := range e.partial[:nc] {
			floats.Add(grad[lo:hi], p[lo:hi]) // grad += 1·p: the bits of grad[i] += p[i], two lanes at a time
		}
	}
}

// growRows returns s with at least n entries, keeping those it has.
func growRows[E any](s []E, n int) []E {
	for len(s) < n {
		var zero E
		s = append(s, zero)
	}
	return s
}

// ErrNonFinite reports a NaN or infinite loss or gradient.
var ErrNonFinite = errors.New("non-finite objective")

// chunkRows is the number of rows of d a parallel chunk aims at, for a
// geometry of params parameters: about 32 768 values (128 KiB of float32,
// well inside a core's L2 cache), between 256 and 4096 rows and a
// multiple of 16 (the kernels' blocks), so that a batch of a few thousand
// rows still makes tens of chunks to share out — and at least 4·params/d
// rows, so that a chunk's partial gradient (params float64s, cleared,
// accumulated and summed with the others) is at most half its rows'
// bytes. A single-norm at d = 128 has 16 385 parameters, 128 KiB of
// partial gradient a chunk: a step of the paper's batch made 48 chunks
// of 256 or 272 rows, 6.3 MB of partials to clear, fill and sum against
// 6.5 MB of rows, and summing them took 9.3–10.2 ms of a 390 ms epoch on
// one thread. In 32 chunks of 400 rows, single-norm epochs on a 2-vCPU
// AMD EPYC, three alternating runs each: 390–394 ms on one thread and
// 220–229 on two, against 406–412 and 226–236 in 48. (16 chunks of 800
// rows: 374–393 ms on one thread but 234–246 on two, a chunk of about 300
// µs left to one goroutine at each pass's end.)
func chunkRows(d, params int) int {
	return min(4096, max(256, 32768/d/16*16, ((4*params+d-1)/d+15)/16*16))
}

// chunking is how a call's n rows are cut into parallel chunks: fixed for
// n and d, never for the number of goroutines, so that results do not
// depend on it. More than eight chunks of chunkRows become the nearest
// multiple of 16 chunks (at least 16), of whole blocks of 16 rows shared
// out evenly, so that 2, 4, 8, 12 or 16 goroutines get as many rows each.
// A step of the paper's batch (12 800 rows at d = 128) made 50 chunks of
// 256 rows, on 16 goroutines four rounds, the fourth on two of them; 48
// chunks of 256 or 272 rows make three. Traced on a lent 16-core Xeon
// (twenty generalized epochs), the calls took 177 µs at the median
// instead of 191, the epochs 388 ms instead of 431; the epochs alone,
// alternating, were within that host's noise (17.8–21.1 ms against
// 17.9–20.8). 64 chunks of 200 rows were slower (17.9–22.0 ms), probably
// for the partial gradient each chunk clears and adds.
type chunking struct {
	n, nc  int // rows and chunks
	blocks int // blocks of 16 rows (the last may be short)
}

func chunksOf(n, d, params int) chunking {
	const block = 16
	nb := (n + block - 1) / block
	nc := parallel.Chunks(n, chunkRows(d, params))
	if nc > 8 {
		nc = max(16, (nc+8)/16*16)
	}
	return chunking{n: n, nc: min(nc, nb), blocks: nb}
}

// bounds returns chunk c's rows [lo, hi).
func (p chunking) bounds(c int) (lo, hi int) {
	const block = 16
	lo = c * p.blocks / p.nc * block
	hi = min(p.n, (c+1)*p.blocks/p.nc*block)
	return lo, hi
}

// Evaluator computes an objective and its gradient. It keeps scratch space
// between calls and is not safe for concurrent use; the geometry's Scores
// and ScoreGrads must be safe for concurrent use (all of package geometry's
// are).
type Evaluator struct {
	cfg      Config
	pos, neg []float64
	sel      []float64 // a copy of pos (or a part) for selection
	idx      []int32
	cand     []int32       // rows inside the bracket (bracketed)
	partial  [][]float64   // one gradient (or weights) per parallel chunk
	spans    [][][]float32 // one chunk's rows per parallel chunk
	vol      []float64     // the volume term's gradient
	thrRows  []float32     // the threshold's rows, gathered beside the negatives
	rankN    int           // the batch size rank is for
	rank     int           // the threshold's rank for rankN positives
	// The guess of the window's scores, and each chunk's rows against it
	// (window.go).
	guess     bracket
	chunkRows []brackets
	nChunks   int
	hits      int // batches whose window the guess bracketed
}

// New returns an evaluator for cfg (zero fields take PaperConfig's
// values).
func New(cfg Config) (*Evaluator, error) {
	if cfg.Objective < Neg || cfg.Objective > NegVol {
		if cfg.Objective == 0 {
			return nil, errors.New("objective: no objective (Config.Objective is 0): set objective.Neg, objective.Vol or objective.NegVol, as ccs fit -objective does (train.Config.Objective.Objective)")
		}
		return nil, fmt.Errorf("objective: unknown objective %d: want objective.Neg, objective.Vol or objective.NegVol", int(cfg.Objective))
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
	pos, neg, err := b.sides(d)
	if err != nil {
		return Value{}, err
	}
	if pos.n == 0 || (b.Anchors == nil && len(b.Pos)%d != 0) {
		return Value{}, fmt.Errorf("objective: %d positive values is not a positive number of rows of %d", len(b.Pos), d)
	}
	if a != 0 && (neg.n == 0 || (b.Anchors == nil && len(b.Neg)%d != 0)) {
		return Value{}, fmt.Errorf("objective %v: %d negative values is not a positive number of rows of %d", e.cfg.Objective, len(b.Neg), d)
	}
	nPos, nNeg := pos.n, neg.n
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
	k, err := kernelsOf(g, b.Prepared)
	if err != nil {
		return Value{}, err
	}
	e.pos = grow(e.pos, nPos)
	cp := chunksOf(nPos, d, g.NumParams())
	nc := cp.nc
	e.spans = growRows(e.spans, nc)
	e.nChunks = nc
	e.chunkRows = growRows(e.chunkRows, nc)
	// A staged volume term (geometry.VolumeStaged: the single-norm's
	// factorisation of M, then the solves for M⁻ᵀ) runs beside the
	// positives' chunks and then the negatives', not in the serial part.
	staged, _ := g.(geometry.VolumeStaged)
	if bv == 0 {
		staged = nil
	}
	var pre []func()
	if staged != nil {
		pre = []func(){staged.PrepareVolume}
	}
	posTask := func(task int) {
		if task < len(pre) {
			pre[task]()
			return
		}
		c := task - len(pre)
		lo, hi := cp.bounds(c)
		sp := pos.spans(e.spans[c][:0], lo, hi)
		e.spans[c] = sp
		k.scores(e.pos[lo:hi], sp)
		e.bracketChunk(c, lo, hi)
	}

	// Between the positives' pass and the negatives' (mid, run by the
	// goroutine that finishes the positives' last chunk): the batch
	// threshold and the rows (and weights) its value is made of, and the
	// negatives' tasks.
	var (
		t         float64
		rows      []int32
		wts       []float64
		v         Value
		cT        float64 // ∂Loss/∂t
		dLogVolDt float64 // ∂logVol/∂t
		volume    func()
		negS      float64 // Σ_j σ_T(φ_j − t)
		negDS     float64 // Σ_j σ'_T(φ_j − t)
	)
	// The volume term: log Vol(N_t) and, when a gradient is wanted, its
	// gradient into e.vol.
	volGrad := bv != 0 && (grad != nil || out.Pos != nil)
	thrGrad := e.cfg.Threshold != Detached && grad != nil
	// After the negatives' pass (run by the goroutine that finishes its
	// last chunk): the negatives' sums, and a last phase, when it has more
	// than one task, of a staged volume term (its costly part done beside
	// the negatives) and the sum of the chunks' partial gradients.
	last := func(np *negPass) func() parallel.Phase {
		return func() parallel.Phase {
			lead, nr, sum := 0, 0, func(int) {}
			if staged != nil {
				lead = 1
			}
			if np != nil {
				negS, negDS = np.sum()
				if grad != nil {
					nr, sum = e.sumTasks(grad, np.chunks)
				}
			}
			do := func(i int) {
				if i < lead {
					volume()
					return
				}
				sum(i - lead)
			}
			if lead+nr == 1 {
				do(0)
				return parallel.Phase{}
			}
			return parallel.Phase{N: lead + nr, Lead: lead, Do: do}
		}
	}

	mid := func() parallel.Phase {
		t, rows, wts = e.threshold(nPos)
		v = Value{T: t, NegTerm: math.NaN()}
		volume = func() {
			v.LogVol = g.LogVolume(t)
			if volGrad {
				e.vol = grow(e.vol, g.NumParams())
				clear(e.vol)
				dLogVolDt = g.LogVolumeGrad(e.vol, t, bv)
			}
		}
		// Beside the negatives' chunks (alone without a Neg term): the
		// volume term, or a staged one's gradient tasks, the volume term
		// following with its costly part done.
		extra := []func(){volume}
		if staged != nil {
			extra = nil
			if volGrad {
				extra = staged.VolumeGradTasks()
			}
		}
		// The threshold's rows (for its gradient after the negatives) are
		// gathered beside the negatives too: they lie anywhere in the
		// split's rows, and read in the serial part each cost a TLB miss
		// (28 µs for the 11 rows of a generalized-ball step, against 3 for
		// their kernel).
		if thrGrad {
			e.thrRows = grow(e.thrRows, len(rows)*d)
			// Copies for the task to capture by value: rows is assigned
			// in mid, and a closure over it would share the variable.
			ps, buf, rs := pos, e.thrRows, rows
			extra = append(extra[:len(extra):len(extra)], func() { // never into the geometry's slice
				for k, r := range rs {
					copy(buf[k*d:(k+1)*d], ps.row(int(r)))
				}
			})
		}
		if a == 0 {
			return parallel.Phase{N: len(extra), Lead: len(extra), Do: func(i int) { extra[i]() }, Then: last(nil)}
		}
		e.neg = grow(e.neg, nNeg)
		np := e.negTasks(k, neg, g.NumParams(), t, grad, out.Neg, extra)
		// The extra tasks (the volume's, the threshold's rows) are handed
		// out first, one to each goroutine, before the chunks' shares.
		return parallel.Phase{N: np.n, Lead: len(extra), Do: np.task, Then: last(&np)}
	}
	// One parallel call for both passes (and the partial gradients' sum
	// after them, last): its goroutines wait for mid and last rather than
	// leave and be invited again, and each mostly scores the
	// same chunks every step (parallel.Phases). Two-thread generalized
	// epochs on a 2-vCPU AMD EPYC, alternating processes: 45.0–51.9 ms
	// against 54.5–56.4 (and 70.4 in a slow spell) as two calls of Tasks.
	parallel.Phases(e.cfg.Workers, parallel.Phase{N: len(pre) + nc, Lead: len(pre), Do: posTask, Then: mid})
	if a != 0 {
		v.NegTerm = negS / float64(nNeg)
		cT += a * negDS / float64(nNeg)
	}
	v.Loss = bv * v.LogVol
	if a != 0 {
		v.Loss -= a * v.NegTerm
	}
	if volGrad {
		if grad != nil {
			for i, x := range e.vol {
				grad[i] += x
			}
		}
		cT += bv * dLogVolDt
	}
	if out.Pos != nil {
		clear(out.Pos)
	}
	if e.cfg.Threshold != Detached {
		w := make([]float64, len(rows))
		for k := range rows {
			w[k] = cT * wts[k]
		}
		if thrGrad {
			k.scoreGrads(grad, make([]float64, len(rows)), [][]float32{e.thrRows}, geometry.Fixed(w))
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
	if i := firstNonFinite(grad); i >= 0 {
		return v, fmt.Errorf("%w: gradient[%d] = %v (threshold %v, log-volume %v)", ErrNonFinite, i, grad[i], v.T, v.LogVol)
	}
	return v, nil
}

// firstNonFinite returns the index of x's first NaN or ±Inf, or −1. x·0 is
// ±0 for a finite x and NaN otherwise, so a sum of them in four lanes is 0
// unless x holds one; only then does it look for which (a check a value at
// a time took 16 µs for the single-norm's 16 385 at d = 128, this 5.7, in
// a training step's serial part).
func firstNonFinite(x []float64) int {
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a0 += x[i] * 0
		a1 += x[i+1] * 0
		a2 += x[i+2] * 0
		a3 += x[i+3] * 0
	}
	for ; i < len(x); i++ {
		a0 += x[i] * 0
	}
	if a0+a1+a2+a3 == 0 {
		return -1
	}
	return slices.IndexFunc(x, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
}
