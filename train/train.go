// Package train fits a learnable set geometry on a training split with the
// paper's recipe (appendix "Optimization and Hyperparameters", docs/design.md §3):
// mini-batches of anchors with all their positives and negatives, SGD,
// gradient-norm clipping, parameter bounds, validation exclusion after every
// epoch, early stopping and the best checkpoint restored.
//
// Model selection uses the validation split only, never calibration or test
// data: the trainer is never given them. It never prints; progress goes to
// an Observer.
package train

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/hugepage"
	"github.com/ccsets/ccs/internal/parallel"
	"github.com/ccsets/ccs/internal/percent"
	"github.com/ccsets/ccs/objective"

	"github.com/ccsets/ccs/internal/enum"
)

// SGD is stochastic gradient descent as PyTorch's torch.optim.SGD computes
// it: g ← g + WeightDecay·θ; b ← Momentum·b + g (b = g at the first step);
// θ ← θ − lr·b. With Cosine the learning rate follows CosineAnnealingLR over
// MaxEpochs, stepped once per epoch: lr_e = LR·(1 + cos(π·e/MaxEpochs))/2.
type SGD struct {
	LR          float64 `json:"lr"`
	Momentum    float64 `json:"momentum"`
	WeightDecay float64 `json:"weight_decay"`
	Cosine      bool    `json:"cosine"`
}

// Config is a training recipe and the choices of one run (the objective in
// Objective.Objective, α in Objective.Alpha, Seed, Init). Zero fields take
// SimRecipe's values.
type Config struct {
	Objective objective.Config `json:"objective"`
	BatchSize int              `json:"batch_size"` // anchors per batch
	MaxEpochs int              `json:"max_epochs"`
	Patience  int              `json:"patience"`  // epochs without improvement before stopping
	ClipNorm  float64          `json:"clip_norm"` // gradient-norm clip; negative means none
	SGD       SGD              `json:"sgd"`       // zero means SimRecipe's
	Bounds    geometry.Bounds  `json:"bounds"`
	Seed      uint64           `json:"seed"` // batch order
	Workers   int              `json:"-"`    // goroutines; 0 means GOMAXPROCS
	Init      string           `json:"init"` // how the caller initialised the geometry (recorded only)
	// InfoNCE configures joint training with a projection head (TrainHead);
	// nil without one.
	InfoNCE *InfoNCE `json:"infonce,omitempty"`
	// Rows, when set, shares the prepared rows of the splits with the other
	// runs given the same Rows (nil: this run prepares its own).
	Rows *Rows `json:"-"`
	// stream computes the rows a batch at a time even where they would
	// fit in memory (tests: streamed and kept rows train alike).
	stream bool
}

// The paper's recipes (appendix "Optimization and Hyperparameters",
// docs/design.md §3): every number of them is here and nowhere else. The command line's
// flags take their defaults from these values.
var (
	// SimRecipe is the simulation's: batches of 256 anchors, at most 150
	// epochs, early stop after 8 without a better validation exclusion,
	// gradient-norm clip 1, plain SGD with lr 0.3, exponents in [0.1, 10],
	// generalized-ball scales ≥ 1e-3, and the objective's PaperConfig.
	SimRecipe = Config{
		Objective: objective.PaperConfig,
		BatchSize: 256, MaxEpochs: 150, Patience: 8, ClipNorm: 1,
		SGD:    SGD{LR: 0.3},
		Bounds: geometry.Bounds{PMin: 0.1, PMax: 10, MMin: 1e-3},
	}
	// EmbeddingRecipe is the real embeddings': SimRecipe with SGD at lr 0.1,
	// momentum 0.9, weight decay 5e-4 and cosine annealing.
	EmbeddingRecipe = SimRecipe.WithSGD(SGD{LR: 0.1, Momentum: 0.9, WeightDecay: 5e-4, Cosine: true})
	// PaperInfoNCE is the projection head's loss: λ_InfoNCE = 1, τ = 0.1
	// (docs/design.md §4).
	PaperInfoNCE = InfoNCE{Weight: 1, Tau: 0.1}
)

// WithSGD returns c with the optimiser sgd.
func (c Config) WithSGD(sgd SGD) Config {
	c.SGD = sgd
	return c
}

// InfoNCE configures the head's loss: the set objective plus
// Weight·L_InfoNCE at temperature Tau (docs/design.md §4). Zero fields take
// PaperInfoNCE's values.
//
// The set objective's volume term is measured in the backbone's space,
// log Vol(N_t) − log|det W| for a square head, so that shrinking W — which
// shrinks the projected set without changing which points it holds — earns
// nothing. ProjectedVolume measures it in the projected space instead (the
// paper's text read literally); docs/infonce.md compares the two.
type InfoNCE struct {
	Weight          float64 `json:"weight"` // λ_InfoNCE
	Tau             float64 `json:"tau"`
	ProjectedVolume bool    `json:"projected_volume,omitempty"`
}

// WithDefaults returns c with zero fields set to SimRecipe's values (and
// PaperInfoNCE's, with a head).
func (c Config) WithDefaults() Config {
	r := SimRecipe
	c.Objective = c.Objective.WithDefaults()
	c.BatchSize, c.MaxEpochs, c.Patience = cmp.Or(c.BatchSize, r.BatchSize), cmp.Or(c.MaxEpochs, r.MaxEpochs), cmp.Or(c.Patience, r.Patience)
	c.ClipNorm, c.SGD = cmp.Or(c.ClipNorm, r.ClipNorm), cmp.Or(c.SGD, r.SGD)
	b := &c.Bounds
	b.PMin, b.PMax, b.MMin = cmp.Or(b.PMin, r.Bounds.PMin), cmp.Or(b.PMax, r.Bounds.PMax), cmp.Or(b.MMin, r.Bounds.MMin)
	c.Objective.Workers = c.Workers
	if c.InfoNCE != nil {
		n := *c.InfoNCE
		n.Weight, n.Tau = cmp.Or(n.Weight, PaperInfoNCE.Weight), cmp.Or(n.Tau, PaperInfoNCE.Tau)
		c.InfoNCE = &n
	}
	return c
}

// Validate checks every number of the recipe (after WithDefaults, so that
// no field is 0): the objective's (objective.Config.Validate; the objective
// itself is checked when training starts) and the trainer's. A command line
// calls it on the recipe its flags give, before any file is read.
func (c Config) Validate() error {
	if err := c.Objective.Validate(); err != nil {
		return err
	}
	switch {
	case c.BatchSize < 1:
		return fmt.Errorf("train: batch size %d < 1", c.BatchSize)
	case c.MaxEpochs < 1:
		return fmt.Errorf("train: max epochs %d: want at least 1 (Config.MaxEpochs; -epochs; epochs= in Python)", c.MaxEpochs)
	case c.Patience < 1:
		return fmt.Errorf("train: patience %d < 1", c.Patience)
	case math.IsNaN(c.ClipNorm) || c.ClipNorm == 0:
		return fmt.Errorf("train: gradient-norm clip %v, want > 0 (negative: none)", c.ClipNorm)
	case !(c.SGD.LR > 0) || math.IsInf(c.SGD.LR, 0):
		return fmt.Errorf("train: learning rate %v, want > 0", c.SGD.LR)
	case !(c.SGD.Momentum >= 0 && c.SGD.Momentum < 1):
		return fmt.Errorf("train: momentum %v, want 0 ≤ momentum < 1", c.SGD.Momentum)
	case !(c.SGD.WeightDecay >= 0):
		return fmt.Errorf("train: weight decay %v, want ≥ 0", c.SGD.WeightDecay)
	case !(c.Bounds.PMin > 0 && c.Bounds.PMin <= c.Bounds.PMax):
		return fmt.Errorf("train: exponent bounds [%v, %v], want 0 < p_min ≤ p_max", c.Bounds.PMin, c.Bounds.PMax)
	case !(c.Bounds.MMin > 0) || (c.Bounds.MMax != 0 && c.Bounds.MMax < c.Bounds.MMin):
		return fmt.Errorf("train: scale bounds m_min %v, m_max %v: want 0 < m_min, and m_min ≤ m_max where m_max is given (m_max 0: no upper bound)", c.Bounds.MMin, c.Bounds.MMax)
	}
	if c.InfoNCE != nil {
		if w := c.InfoNCE.Weight; !(w > 0) || math.IsInf(w, 0) {
			return fmt.Errorf("train: InfoNCE weight %v, want > 0", w)
		}
		if err := objective.CheckTau(c.InfoNCE.Tau); err != nil {
			return err
		}
	}
	return nil
}

// Progress is what the trainer reports after each epoch (epoch 0 is the
// initial geometry).
type Progress struct {
	Epoch, MaxEpochs int
	Loss             float64 // mean batch loss of the epoch (NaN at epoch 0)
	Threshold        float64 // mean batch threshold t of the epoch
	ValExclusion     float64 // fraction of validation negatives outside
	BestExclusion    float64
	BestEpoch        int
	Elapsed          time.Duration
	Head             bool       // the epoch updated the projection head
	Done             bool       // the last report
	StopReason       StopReason // set when Done
	// Streamed, at epoch 0, says that the splits' difference rows did
	// not fit in memory and are computed a batch at a time, each epoch
	// again, and what that costs; "" where they are kept.
	Streamed string
}

// StopReason is why training stopped.
type StopReason int

// The reasons.
const (
	MaxEpochs StopReason = iota + 1 // MaxEpochs epochs ran
	EarlyStop                       // Patience epochs passed without a better validation exclusion
	// AllExcluded: the initial geometry excluded every validation
	// negative, which no epoch can beat, so none ran.
	AllExcluded
)

var stopReasons = enum.Names[StopReason]{What: "stop reason", Names: []string{"max epochs", "early stop", "all excluded at epoch 0"}}

// String returns "max epochs", "early stop" or "all excluded at epoch 0".
func (r StopReason) String() string { return stopReasons.String(r) }

// MarshalText implements encoding.TextMarshaler.
func (r StopReason) MarshalText() ([]byte, error) { return stopReasons.Marshal(r) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *StopReason) UnmarshalText(b []byte) error { return stopReasons.Unmarshal(r, b) }

// Observer receives progress. The trainer calls it from one goroutine.
type Observer interface{ Observe(Progress) }

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Progress)

// Observe calls f(p).
func (f ObserverFunc) Observe(p Progress) { f(p) }

// Result summarises a training run; the geometry holds the best checkpoint.
type Result struct {
	Epochs        int        `json:"epochs"`        // epochs run
	BestEpoch     int        `json:"best_epoch"`    // 0: the initial geometry was never beaten
	ValExclusion  float64    `json:"val_exclusion"` // at the best epoch
	StopReason    StopReason `json:"stop_reason"`
	ValHistory    []float64  `json:"val_history"`            // validation exclusion per epoch, from epoch 0
	LossHistory   []float64  `json:"loss_history"`           // mean batch loss per epoch, from epoch 1
	ThresholdHist []float64  `json:"threshold_hist"`         // mean batch threshold per epoch, from epoch 1
	HeadEpochs    []int      `json:"head_epochs,omitempty"`  // the epochs that updated the head
	InfoNCEHist   []float64  `json:"infonce_hist,omitempty"` // mean InfoNCE loss of each head epoch
}

// KeptInitial is a warning when the training kept its initial geometry
// (BestEpoch 0: no epoch's validation exclusion beat the initial one), so
// that the fitted set is an untrained one; "" otherwise.
func (r *Result) KeptInitial() string {
	if r.StopReason == AllExcluded {
		return "the fit kept the initial geometry: it already excludes every validation negative (100.00%), which no epoch can beat, so none ran and the set is untrained (nearer negatives, docs/your-data.md, give training something to choose by)"
	}
	if r.BestEpoch != 0 || r.Epochs == 0 {
		return ""
	}
	why := "a larger learning rate, another recipe or objective, or more patience may train it"
	if r.ValExclusion >= 1 {
		why = "the initial geometry already excludes every validation negative"
	}
	return fmt.Sprintf("the fit kept the initial geometry: no epoch's validation exclusion beat epoch 0's (%s), so the set is untrained (%s)", percent.Format(r.ValExclusion, 2), why)
}

// AlphaWarning is what a fit with α above one half must say, legal but
// seldom meant: the training aims the set's threshold at the 1 − α
// quantile of the positives' scores, and α = 0.95 trains a set for 5%
// coverage (read as a confidence level, it is 0.05). "" otherwise.
func AlphaWarning(alpha float64) string {
	if alpha <= 0.5 {
		return ""
	}
	return fmt.Sprintf("α = %v: the fit trains the set to hold 1 − α = %.3g%% of the positives; α is the share a set may miss (0.05 for 95%% coverage), not the coverage", alpha, 100*(1-alpha))
}

// WideHeadWarning warns of an InfoNCE head of headDim outputs over d-dimensional
// embeddings when headDim > d: the embeddings fill only a d-dimensional
// slice of the head's output, whose log-volumes (LogVol/d) are measured in
// all of it. "" otherwise.
func WideHeadWarning(headDim, d int) string {
	if headDim <= d {
		return ""
	}
	return fmt.Sprintf("a head of %d outputs widens the %d-dimensional embeddings: it maps them into a %d-dimensional slice of its %d-dimensional output, and the sets' log-volumes (LogVol/d) are measured in all %d dimensions, which the embeddings never fill; a head of %d or fewer outputs keeps them comparable in kind",
		headDim, d, d, headDim, headDim, d)
}

// HeadVolumeWarning is what a fit asked for the backbone's volume
// (-head-volume backbone, head_volume="backbone") is told of a head of
// out outputs over d-dimensional embeddings that is not square: its sets
// have no finite volume in the backbone's space, and the volume term is
// the projected space's. "" for a square head.
func HeadVolumeWarning(out, d int) string {
	if out <= 0 || out == d {
		return ""
	}
	return fmt.Sprintf("a %d→%d head is not square, so its sets have no finite volume in the backbone's space; the volume term, and LogVol/d, are the projected space's, as with the projected volume", d, out)
}

// Train fits g on fit, selecting the checkpoint with the highest exclusion on
// val. g is updated in place and holds the best parameters on return. A
// cancelled ctx stops it before the next batch with ctx's error.
func Train(ctx context.Context, g geometry.Learnable, fit, val *bundle.Bundle, cfg Config, obs Observer) (*Result, error) {
	return TrainHead(ctx, g, nil, fit, val, cfg, obs)
}

// TrainHead fits g jointly with the projection head h (docs/design.md §4): odd
// epochs update the set's parameters on the projected embeddings with the
// head frozen, even epochs update the head under the set objective plus
// cfg.InfoNCE's weighted InfoNCE loss with the set frozen. The checkpoint
// with the highest validation exclusion (set and head together) is
// restored into g and h. A nil h is Train; cfg.InfoNCE must be set exactly
// when h is not nil. g lives in h's output space. A cancelled ctx stops it
// before the next batch with ctx's error.
func TrainHead(ctx context.Context, g geometry.Learnable, h *head.Linear, fit, val *bundle.Bundle, cfg Config, obs Observer) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if (h == nil) != (cfg.InfoNCE == nil) {
		return nil, fmt.Errorf("train: a projection head and an InfoNCE configuration go together (head given: %v, InfoNCE configured: %v)", h != nil, cfg.InfoNCE != nil)
	}
	ev, err := objective.New(cfg.Objective)
	if err != nil {
		return nil, err
	}
	if err := checkSplits(g, h, fit, val, cfg); err != nil {
		return nil, err
	}
	start := time.Now()
	stream, need, avail, err := checkMemory(g, h, fit, val)
	if err != nil {
		return nil, err
	}
	streamed := ""
	if stream {
		streamed = fmt.Sprintf("the fit and validation splits' difference rows (n·k·d float32 per side) take %.1f GiB and %.1f GiB of memory is available: they are computed a batch at a time instead, each epoch again (memory bounded by the bundles; the same numbers, %s); a fit split of fewer anchors keeps them (docs/your-data.md, \"Large data\")",
			need/(1<<30), avail/(1<<30), streamCost(g))
	}
	t := &trainer{ctx: ctx, g: g, h: h, fit: fit, val: val, cfg: cfg, ev: ev, stream: stream || cfg.stream,
		validator: &validator{alpha: cfg.Objective.Alpha, workers: cfg.Workers}}
	// The validation split's rows first: where the initial geometry
	// excludes every validation negative no epoch runs, and the fit
	// split's rows (8.6 of 10.3 GB, two minutes, at 150 000 CLIP
	// embeddings) are never made.
	if err := t.prepareVal(); err != nil {
		return nil, trainErr(err)
	}
	theta := g.Params(nil)
	g.Clamp(theta, cfg.Bounds)
	g.SetParams(theta)
	t.set = newParams(theta, cfg.SGD.Momentum > 0)
	if h != nil {
		t.head = newParams(h.Params(nil), cfg.SGD.Momentum > 0)
	}
	res := &Result{StopReason: MaxEpochs}
	bestExc, err := t.validator.exclusion(g)
	if err != nil {
		return nil, fmt.Errorf("train: initial geometry: %w", err)
	}
	res.ValHistory = append(res.ValHistory, bestExc)
	report := func(p Progress) {
		if p.Epoch == 0 {
			p.Streamed = streamed
		}
		if obs != nil {
			p.MaxEpochs, p.BestExclusion, p.BestEpoch, p.Elapsed = cfg.MaxEpochs, bestExc, res.BestEpoch, time.Since(start)
			obs.Observe(p)
		}
	}
	if bestExc >= 1 {
		// The checkpoint is the epoch with the highest validation
		// exclusion, and only a higher one replaces it: nothing can
		// replace the initial geometry, so training it is time lost
		// (47–83 s of single-norm epochs at d = 3072).
		res.StopReason, res.ValExclusion = AllExcluded, bestExc
		report(Progress{Epoch: 0, Loss: math.NaN(), Threshold: math.NaN(), ValExclusion: bestExc, Done: true, StopReason: AllExcluded})
		return res, nil
	}
	if err := t.prepareFit(); err != nil {
		return nil, trainErr(err)
	}
	report(Progress{Epoch: 0, Loss: math.NaN(), Threshold: math.NaN(), ValExclusion: bestExc})

	t.order = make([]int, fit.N)
	for i := range t.order {
		t.order[i] = i
	}
	t.rng = rand.New(rand.NewPCG(cfg.Seed, 0x7472616e))
	stale := 0
	for epoch := 1; epoch <= cfg.MaxEpochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lr := cfg.SGD.LR
		if cfg.SGD.Cosine {
			lr *= (1 + math.Cos(math.Pi*float64(epoch-1)/float64(cfg.MaxEpochs))) / 2
		}
		headEpoch := h != nil && epoch%2 == 0
		var st epochStats
		if headEpoch {
			st, err = t.headEpoch(lr)
			if err == nil {
				err = t.refresh() // the embeddings moved: project and prepare again
			}
			res.HeadEpochs = append(res.HeadEpochs, epoch)
			res.InfoNCEHist = append(res.InfoNCEHist, st.infoNCE)
		} else {
			st, err = t.setEpoch(lr)
		}
		if err != nil {
			return nil, fmt.Errorf("train: epoch %d: %w", epoch, err)
		}
		exc, err := t.validator.exclusion(g)
		if err != nil {
			return nil, fmt.Errorf("train: epoch %d: %w", epoch, err)
		}
		res.Epochs = epoch
		res.ValHistory = append(res.ValHistory, exc)
		res.LossHistory = append(res.LossHistory, st.loss)
		res.ThresholdHist = append(res.ThresholdHist, st.t)
		if exc > bestExc {
			bestExc, res.BestEpoch, stale = exc, epoch, 0
			t.set.keep()
			if h != nil {
				t.head.keep()
			}
		} else {
			stale++
		}
		p := Progress{Epoch: epoch, Loss: st.loss, Threshold: st.t, ValExclusion: exc, Head: headEpoch}
		if stale >= cfg.Patience {
			res.StopReason = EarlyStop
			break
		}
		if epoch < cfg.MaxEpochs {
			report(p)
		}
	}
	g.SetParams(t.set.best)
	if h != nil {
		h.SetParams(t.head.best)
	}
	res.ValExclusion = bestExc
	report(Progress{Epoch: res.Epochs, Loss: res.LossHistory[len(res.LossHistory)-1],
		Threshold: res.ThresholdHist[len(res.ThresholdHist)-1], ValExclusion: res.ValHistory[len(res.ValHistory)-1],
		Done: true, StopReason: res.StopReason})
	return res, nil
}

// params is one optimised parameter vector with its gradient, momentum
// buffer and best checkpoint.
type params struct {
	theta, grad, velocity, best []float64
	steps                       int
}

func newParams(theta []float64, momentum bool) *params {
	p := &params{theta: theta, grad: make([]float64, len(theta)), best: slices.Clone(theta)}
	if momentum {
		p.velocity = make([]float64, len(theta))
	}
	return p
}

func (p *params) keep() { copy(p.best, p.theta) }

// trainer is one training run's state.
type trainer struct {
	ctx        context.Context // checked before every batch
	g          geometry.Learnable
	h          *head.Linear
	fit, val   *bundle.Bundle
	cfg        Config
	ev         *objective.Evaluator
	validator  *validator
	rows       splitRows // the fit split's rows in the geometry's space
	stream     bool      // compute each batch's rows when read (checkMemory)
	bpos, bneg []float32 // a streamed batch's rows
	set, head  *params
	order      []int
	rng        *rand.Rand

	hb headBatch
}

type epochStats struct{ loss, t, infoNCE float64 }

// trainErr wraps an error of preparing the splits' rows, a cancellation
// (errors.Is context.Canceled) as it is, for the command to say
// "interrupted".
func trainErr(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("train: %w", err)
}

// refresh computes the fit and validation splits' rows in the geometry's
// space: once without a head (prepareVal, then prepareFit), after every
// head epoch with one.
func (t *trainer) refresh() error {
	if err := t.prepareVal(); err != nil {
		return err
	}
	return t.prepareFit()
}

// shared is the Rows the splits' rows are kept in between runs: none with
// a head, whose projection moves them after every head epoch.
func (t *trainer) shared() *Rows {
	if t.h != nil {
		return nil
	}
	return t.cfg.Rows
}

// prepareVal computes the validation split's rows in the geometry's space.
func (t *trainer) prepareVal() error {
	val := t.val
	if t.h != nil {
		var err error
		if val, err = t.h.Project(t.val); err != nil {
			return fmt.Errorf("validation split: %w", err)
		}
	}
	rows, err := t.shared().split(t.ctx, t.g, val, t.cfg.Workers, t.stream)
	t.validator.rows = rows
	return err
}

// prepareFit computes the fit split's rows in the geometry's space.
func (t *trainer) prepareFit() error {
	fit := t.fit
	if t.h != nil {
		var err error
		if fit, err = t.h.Project(t.fit); err != nil {
			return fmt.Errorf("training split: %w", err)
		}
		// InfoNCE's cosine similarities need a direction for every row.
		for _, a := range []struct {
			name string
			x    []float32
		}{{"anchor", fit.Anchors}, {"positive", fit.Positives}, {"positive pool row", fit.PositivePool}, {"negative", fit.Negatives}, {"pool row", fit.Pool}} {
			if err := nonzeroRows(a.x, fit.D); err != nil {
				return fmt.Errorf("training split: projected %s %w", a.name, err)
			}
		}
	}
	rows, err := t.shared().split(t.ctx, t.g, fit, t.cfg.Workers, t.stream)
	t.rows = rows
	return err
}

// Rows shares the rows that trainings prepare from their splits (each
// anchor's differences, transformed by geometry.Prepared) between runs on
// the same bundles: the simulation trains three sets of each family on
// every seed's splits, and preparing them was 7% of its CPU. Rows are kept
// per bundle and geometry type until the Rows is dropped; they are read
// only, and the bundles must not change while the Rows is in use. Runs
// with a projection head prepare their own (the head moves the
// embeddings). The zero value is ready to use, by concurrent runs.
type Rows struct {
	mu sync.Mutex
	m  map[rowsKey]*rowsEntry
}

type rowsKey struct {
	b    *bundle.Bundle
	kind reflect.Type // the geometry's type: its Prepare depends on nothing else
}

type rowsEntry struct {
	// turn is held (a value sent) while the rows are made: the runs that
	// want them wait their turn, or their context's end.
	turn chan struct{}
	done bool
	rows splitRows
}

// split returns b's rows prepared for g: shared when r is not nil. A
// cancelled ctx stops the preparing, or the wait for another run making
// them (its error), and rows it left unfinished are kept by no one: the
// next run to want them makes them.
func (r *Rows) split(ctx context.Context, g geometry.Learnable, b *bundle.Bundle, workers int, stream bool) (splitRows, error) {
	if stream {
		return streamSplit(g, b), nil
	}
	if r == nil {
		return prepareSplit(ctx, g, b, workers)
	}
	k := rowsKey{b, reflect.TypeOf(g)}
	r.mu.Lock()
	e := r.m[k]
	if e == nil {
		if r.m == nil {
			r.m = make(map[rowsKey]*rowsEntry)
		}
		e = &rowsEntry{turn: make(chan struct{}, 1)}
		r.m[k] = e
	}
	r.mu.Unlock()
	select {
	case e.turn <- struct{}{}:
	case <-ctx.Done(): // cancelled while another run makes them
		return splitRows{}, ctx.Err()
	}
	defer func() { <-e.turn }()
	if !e.done {
		rows, err := prepareSplit(ctx, g, b, workers)
		if err != nil {
			return splitRows{}, err
		}
		e.rows, e.done = rows, true
	}
	return e.rows, nil
}

// nonzeroRows reports the first row of x (rows of d) with zero norm.
func nonzeroRows(x []float32, d int) error {
	for r := range len(x) / d {
		if !slices.ContainsFunc(x[r*d:(r+1)*d], func(v float32) bool { return v != 0 }) {
			return fmt.Errorf("%d is zero, so it has no cosine similarity for InfoNCE", r)
		}
	}
	return nil
}

// batches calls f with each batch of anchor ids of a new shuffled epoch.
func (t *trainer) batches(f func(ids []int) error) error {
	t.rng.Shuffle(len(t.order), func(i, j int) { t.order[i], t.order[j] = t.order[j], t.order[i] })
	for lo, b := 0, 1; lo < t.fit.N; lo, b = lo+t.cfg.BatchSize, b+1 {
		// A large split's epoch takes minutes: Ctrl-C stops it within a
		// batch, not at the epoch's end.
		if err := t.ctx.Err(); err != nil {
			return err
		}
		if err := f(t.order[lo:min(t.fit.N, lo+t.cfg.BatchSize)]); err != nil {
			return fmt.Errorf("batch %d: %w", b, err)
		}
	}
	return nil
}

// setEpoch updates the set's parameters for one epoch.
func (t *trainer) setEpoch(lr float64) (epochStats, error) {
	var st epochStats
	n := 0
	p := t.set
	err := t.batches(func(ids []int) error {
		// The batch's rows are read where they lie in the split's prepared
		// rows (no copy: a copy of each batch took 30% of the generalized
		// ball's epoch on one core).
		b := objective.Batch{Pos: t.rows.pos, Neg: t.rows.neg, Prepared: t.rows.prepared,
			Anchors: ids, PosPer: t.fit.K, NegPer: t.fit.KNeg}
		if t.rows.b != nil {
			// Streamed: the batch's rows, computed now, in the order
			// the ids give them (the same numbers as read in place).
			t.bpos, t.bneg = t.rows.batch(t.bpos, t.bneg, ids, t.cfg.Workers)
			b = objective.Batch{Pos: t.bpos, Neg: t.bneg, Prepared: t.rows.prepared}
		}
		v, err := t.ev.Eval(t.g, b, objective.Grads{Params: p.grad})
		if err != nil {
			return err
		}
		st.loss += v.Loss
		st.t += v.T
		n++
		step(p.theta, p.grad, p.velocity, t.cfg, lr, p.steps == 0)
		p.steps++
		t.g.Clamp(p.theta, t.cfg.Bounds)
		t.g.SetParams(p.theta)
		return nil
	})
	st.loss /= float64(n)
	st.t /= float64(n)
	return st, err
}

func checkSplits(g geometry.Learnable, h *head.Linear, fit, val *bundle.Bundle, cfg Config) error {
	if err := fit.Validate(); err != nil {
		return fmt.Errorf("train: training bundle: %w", err)
	}
	if err := val.Validate(); err != nil {
		return fmt.Errorf("train: validation bundle: %w", err)
	}
	if h != nil {
		if err := h.Validate(); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		if h.Out != g.Dim() {
			return fmt.Errorf("train: the head outputs %d dimensions, the geometry has %d", h.Out, g.Dim())
		}
		if fit.D != h.In {
			return fmt.Errorf("train: training embeddings have dimension %d, the head takes %d", fit.D, h.In)
		}
		if !fit.HasNegatives() {
			return fmt.Errorf("train: InfoNCE needs negatives, the training bundle has none")
		}
	} else if fit.D != g.Dim() {
		return fmt.Errorf("train: training embeddings have dimension %d, the geometry %d", fit.D, g.Dim())
	}
	if val.D != fit.D {
		return fmt.Errorf("train: validation embeddings have dimension %d, training embeddings %d", val.D, fit.D)
	}
	if cfg.Objective.Objective != objective.Vol && !fit.HasNegatives() {
		return fmt.Errorf("train: objective %v needs negatives, the training bundle has none", cfg.Objective.Objective)
	}
	if !val.HasNegatives() {
		return fmt.Errorf("train: the validation bundle has no negatives, so its exclusion cannot select a checkpoint")
	}
	if need := int(math.Ceil(1 / cfg.Objective.Alpha)); val.N < need {
		return fmt.Errorf("train: the validation split has %d anchors, fewer than 1/α = %d", val.N, need)
	}
	return nil
}

// step applies one SGD update to theta (PyTorch's order: clip, weight decay,
// momentum).
func step(theta, grad, velocity []float64, cfg Config, lr float64, first bool) {
	if cfg.ClipNorm > 0 {
		var ss float64
		for _, v := range grad {
			ss += v * v
		}
		if n := math.Sqrt(ss); n > cfg.ClipNorm {
			s := cfg.ClipNorm / (n + 1e-6) // torch.nn.utils.clip_grad_norm_'s formula
			for i := range grad {
				grad[i] *= s
			}
		}
	}
	for i := range theta {
		gi := grad[i] + cfg.SGD.WeightDecay*theta[i]
		if velocity != nil {
			if first {
				velocity[i] = gi
			} else {
				velocity[i] = cfg.SGD.Momentum*velocity[i] + gi
			}
			gi = velocity[i]
		}
		theta[i] -= lr * gi
	}
}

// splitRows are a split's difference vectors, all anchors' positives then
// negatives in anchor order, prepared for the geometry's fast kernel when it
// has one (geometry.Prepared: the generalized ball's log|x|). Streamed
// rows (b not nil) are computed from b when read, a batch or a chunk of
// anchors at a time: pos and neg are then nil.
type splitRows struct {
	pos, neg []float32
	prepared bool

	b *bundle.Bundle     // streamed: the split whose rows these are
	g geometry.Learnable // and the geometry that prepares them
}

// streamSplit are b's rows, computed when read (splitRows.batch): memory
// bounded by a batch instead of n·(k+kneg)·d float32.
func streamSplit(g geometry.Learnable, b *bundle.Bundle) splitRows {
	_, prep := g.(geometry.Prepared)
	return splitRows{prepared: prep, b: b, g: g}
}

// batch writes the rows of the anchors ids of streamed rows into pos and
// neg (grown as needed), positives then negatives each in ids' order,
// exactly as prepareSplit's rows of those anchors, and returns them.
func (r splitRows) batch(pos, neg []float32, ids []int, workers int) ([]float32, []float32) {
	b := r.b
	pw, nw := b.K*b.D, b.KNeg*b.D
	pos = slices.Grow(pos[:0], len(ids)*pw)[:len(ids)*pw]
	neg = slices.Grow(neg[:0], len(ids)*nw)[:len(ids)*nw]
	gp, _ := r.g.(geometry.Prepared)
	parallel.For(len(ids), 16, workers, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			b.PositiveDiffs(pos[k*pw:(k+1)*pw], ids[k])
			if nw > 0 {
				b.NegativeDiffs(neg[k*nw:(k+1)*nw], ids[k])
			}
		}
		if r.prepared {
			gp.Prepare(pos[lo*pw:hi*pw], pos[lo*pw:hi*pw])
			gp.Prepare(neg[lo*nw:hi*nw], neg[lo*nw:hi*nw])
		}
	})
	return pos, neg
}

// prepareSplit computes a split's rows once: with frozen embeddings they
// never change during training. A cancelled ctx stops it within a chunk
// of anchors (Ctrl-C during the two minutes 150 000 CLIP embeddings'
// rows take), its error returned.
func prepareSplit(ctx context.Context, g geometry.Learnable, b *bundle.Bundle, workers int) (splitRows, error) {
	r := splitRows{pos: make([]float32, b.N*b.K*b.D), neg: make([]float32, b.N*b.KNeg*b.D)}
	// Hundreds of megabytes, written once here: in huge pages, the first
	// writes fault once a 2 MiB page (ccs compare -seeds 1 on Fashion-MNIST's
	// embeddings, four alternating runs: 23.7–25.3 s against 24.6–26.2 s).
	hugepage.Advise(r.pos)
	hugepage.Advise(r.neg)
	gp, prep := g.(geometry.Prepared)
	r.prepared = prep
	pw, nw := b.K*b.D, b.KNeg*b.D
	parallel.For(b.N, 256, workers, func(_, lo, hi int) {
		if ctx.Err() != nil {
			return
		}
		for i := lo; i < hi; i++ {
			b.PositiveDiffs(r.pos[i*pw:(i+1)*pw], i)
			if nw > 0 {
				b.NegativeDiffs(r.neg[i*nw:(i+1)*nw], i)
			}
		}
		if prep {
			gp.Prepare(r.pos[lo*pw:hi*pw], r.pos[lo*pw:hi*pw])
			gp.Prepare(r.neg[lo*nw:hi*nw], r.neg[lo*nw:hi*nw])
		}
	})
	if err := ctx.Err(); err != nil {
		return splitRows{}, err
	}
	return r, nil
}

// RowBytes is the size of a training's difference rows in dimension d:
// n·k·d float32 per side, for the fit and validation splits.
func RowBytes(d int, fit, val *bundle.Bundle) float64 {
	return 4 * float64(d) * float64(fit.N*(fit.K+fit.KNeg)+val.N*(val.K+val.KNeg))
}

// checkMemory decides whether a training's prepared rows (n·k·d float32
// per side, for the fit and validation splits) are kept in memory or
// streamed: kept where they fit in 0.8 of the memory the system reports
// available — or, under a Go memory limit (GOMEMLIMIT, or the cgroup's
// that ccs sets), what the limit leaves beside the heap, where that is
// less —, computed a batch at a time otherwise (stream: the same
// numbers, memory bounded by the bundles, each epoch computing its rows
// again). A head's projected bundles are not streamed: where they alone
// would not fit, it refuses, rather than letting the training be killed.
func checkMemory(g geometry.Learnable, h *head.Linear, fit, val *bundle.Bundle) (stream bool, need, avail float64, err error) {
	rows := RowBytes(g.Dim(), fit, val)
	var projected float64
	if h != nil { // the projected bundles
		projected = 4 * float64(h.Out) * float64(fit.N*(1+fit.K)+len(fit.Negatives)/fit.D+len(fit.Pool)/fit.D+
			val.N*(1+val.K)+len(val.Negatives)/val.D+len(val.Pool)/val.D)
	}
	avail, ok := rowMemory()
	if !ok {
		return false, rows, 0, nil
	}
	if projected > 0.8*avail {
		return false, rows, avail, fmt.Errorf("train: the projection head's projected fit and validation splits need %.1f GiB, %.1f GiB of memory is available: a smaller head (head_dim), or fewer anchors or k",
			projected/(1<<30), avail/(1<<30))
	}
	return rows+projected > 0.8*avail, rows, avail, nil
}

// rowMemory is the memory a training's rows may take (checkMemory): what
// the system reports available or, under a Go memory limit, what the
// limit leaves beside the heap, where that is less; false where the
// system says nothing.
func rowMemory() (float64, bool) {
	a, ok := availableMemory()
	if !ok {
		return 0, false
	}
	avail := float64(a)
	// A fit held to GOMEMLIMIT=2GiB peaked at 5.0 GB before: the limit
	// only makes the collector work harder, it bounds no allocation.
	if limit := debug.SetMemoryLimit(-1); limit < math.MaxInt64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		avail = min(avail, max(0, float64(limit)-float64(ms.HeapAlloc)))
	}
	return avail, true
}

// RowsKept reports whether the difference rows of fit and val in
// dimension d (RowBytes) would be kept in memory, as Fit decides it for
// a geometry without a head: where they fit in 0.8 of the memory
// available (else they are computed a batch at a time each epoch, which
// Fit's first Progress says) — for a command that says, before epoch 0,
// that it makes them.
func RowsKept(d int, fit, val *bundle.Bundle) bool {
	avail, ok := rowMemory()
	return !ok || RowBytes(d, fit, val) <= 0.8*avail
}

// streamCost says what streamed rows cost an epoch of g: the generalized
// ball's prepared rows are logarithms, one a value (an epoch about 9 times
// as long: 400 000 items of d = 512, k = 20, on 2 cores); the others'
// are the differences alone.
func streamCost(g geometry.Learnable) string {
	if _, ok := g.(*geometry.GenBall); ok {
		return "but a generalized ball's epoch computes a logarithm a value again: several times slower"
	}
	return "at the cost of the differences' subtractions"
}

// streamBuf is a chunk's streamed rows, kept for the next chunk.
type streamBuf struct{ pos, neg []float32 }

var streamPool = sync.Pool{New: func() any { return new(streamBuf) }}

// gather copies the rows of anchors ids (w values each) into dst.
func gather(dst, src []float32, ids []int, w int) []float32 {
	dst = slices.Grow(dst[:0], len(ids)*w)[:len(ids)*w]
	// On all cores: a batch's rows are megabytes (256 anchors × 50 rows ×
	// 128 floats = 6.5 MB a side), and copying them on one core took half
	// of the generalized ball's steady epoch in the vector build (pprof).
	parallel.For(len(ids), 16, 0, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			i := ids[k]
			copy(dst[k*w:(k+1)*w], src[i*w:(i+1)*w])
		}
	})
	return dst
}

// validator measures exclusion on the validation split: the threshold is the
// conformal quantile of all validation positives (pooled: model selection,
// not calibration, so the lower-variance pooled quantile serves better), and
// exclusion is the fraction of validation negatives above it.
type validator struct {
	rows       splitRows
	posS, negS []float64
	alpha      float64
	workers    int
}

const chunk = 4096

func (v *validator) exclusion(g geometry.Learnable) (float64, error) {
	d := g.Dim()
	scores := g.Scores
	if v.rows.prepared {
		scores = g.(geometry.Prepared).ScoresPrepared
	}
	v.posS = slices.Grow(v.posS[:0], len(v.rows.pos)/d)[:len(v.rows.pos)/d]
	v.negS = slices.Grow(v.negS[:0], len(v.rows.neg)/d)[:len(v.rows.neg)/d]
	if b := v.rows.b; b != nil {
		v.posS = slices.Grow(v.posS[:0], b.N*b.K)[:b.N*b.K]
		v.negS = slices.Grow(v.negS[:0], b.N*b.KNeg)[:b.N*b.KNeg]
		// Streamed: a chunk of anchors' rows at a time, scored as the
		// rows in place are (a row's score depends on that row alone).
		per := max(1, chunk/max(1, b.K+b.KNeg))
		parallel.For(b.N, per, v.workers, func(_, lo, hi int) {
			ids := make([]int, hi-lo)
			for k := range ids {
				ids[k] = lo + k
			}
			buf := streamPool.Get().(*streamBuf)
			defer streamPool.Put(buf)
			buf.pos, buf.neg = v.rows.batch(buf.pos, buf.neg, ids, 1)
			scores(v.posS[lo*b.K:hi*b.K], buf.pos)
			scores(v.negS[lo*b.KNeg:hi*b.KNeg], buf.neg)
		})
	} else {
		parallel.For(len(v.posS), chunk, v.workers, func(_, lo, hi int) { scores(v.posS[lo:hi], v.rows.pos[lo*d:hi*d]) })
		parallel.For(len(v.negS), chunk, v.workers, func(_, lo, hi int) { scores(v.negS[lo:hi], v.rows.neg[lo*d:hi*d]) })
	}
	q, err := conformal.Threshold(v.posS, v.alpha) // reorders posS: rescored next time
	if err != nil {
		return 0, fmt.Errorf("validation threshold: %w", err)
	}
	out := 0
	for _, s := range v.negS {
		if s > q {
			out++
		}
	}
	return float64(out) / float64(len(v.negS)), nil
}
