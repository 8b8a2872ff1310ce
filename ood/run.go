package ood

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/enum"
)

// DefaultAlpha is the conformal OOD tests' level α_ood when none is given:
// an in-distribution input is flagged with probability at most 0.05.
const DefaultAlpha = 0.05

// A Score gives the anomaly score (higher: more likely OOD) of each anchor
// of a bundle: a fitted detector's, or a set's CCS score in one of its
// modes. It stops with ctx's error when ctx is done, and tells progress,
// when not nil, how many of b's anchors it has scored, from one goroutine
// at a time (done only grows): a set's CCS scores look and tell after
// each chunk of anchors; a detector's looks before it scores (a
// ContextScorer's also while it scores), and tells nothing (its k-NN
// searches report through its own Steps).
type Score func(ctx context.Context, b *bundle.Bundle, progress func(done, total int)) ([]float64, error)

// A ContextFitter is a detector whose fit is long enough to be stopped
// (CIDER trains a head for minutes): FitContext is Fit under a context.
type ContextFitter interface {
	Detector
	FitContext(ctx context.Context, train Sample) error
}

// A ContextScorer is a detector whose scoring is long enough to be
// stopped (the k-NN detectors search every training feature for each
// input): ScoreContext is Score under a context.
type ContextScorer interface {
	Detector
	ScoreContext(ctx context.Context, x Sample) ([]float64, error)
}

// Fit fits d on train, under ctx when d is a ContextFitter.
func Fit(ctx context.Context, d Detector, train Sample) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f, ok := d.(ContextFitter); ok {
		return f.FitContext(ctx, train)
	}
	return d.Fit(train)
}

// DetectorScore is a fitted detector's Score, on the anchors' features,
// logits, activations and labels, under ctx when d is a ContextScorer.
func DetectorScore(d Detector) Score {
	return func(ctx context.Context, b *bundle.Bundle, _ func(done, total int)) ([]float64, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s, ok := d.(ContextScorer); ok {
			return s.ScoreContext(ctx, SampleOf(b))
		}
		return d.Score(SampleOf(b))
	}
}

// Mode is where a set's CCS score finds the in-distribution embeddings it
// compares an input with.
type Mode int

const (
	// Batch is the paper's protocol: each anchor's own negatives, drawn
	// within the evaluated sample (CCSBatch).
	Batch Mode = iota + 1
	// Reference is the paper's formula against the set's reference pool
	// (CCSReference).
	Reference
	// PerInput is the certified per-input score: the k-th nearest pool
	// anchor under the set's score over q̂ (Nearest), which a conformal
	// test turns into p-values.
	PerInput
)

var modes = enum.Names[Mode]{What: "mode", Names: []string{"batch", "reference", "conformal"}}

// String names the mode as ccs ood's -mode spells it: batch, reference or
// conformal.
func (m Mode) String() string { return modes.String(m) }

// ParseMode reads batch, reference or conformal.
func ParseMode(s string) (Mode, error) { return modes.Parse(s) }

// CCS is the set's OOD score in mode m; PerInput scores with near (the
// k-th nearest of a pool, NewNearest).
func CCS(s *conformal.Set, m Mode, near *Nearest) (Score, error) {
	switch m {
	case Batch:
		return func(ctx context.Context, b *bundle.Bundle, progress func(done, total int)) ([]float64, error) {
			return ccsBatch(ctx, s, b, progress)
		}, nil
	case Reference:
		if s.Reference == nil {
			return nil, fmt.Errorf("ood: no reference pool for the %v mode (calibrate with -reference N)", m)
		}
		return func(ctx context.Context, b *bundle.Bundle, progress func(done, total int)) ([]float64, error) {
			return ccsReference(ctx, s, b.Anchors, progress)
		}, nil
	case PerInput:
		if near == nil {
			return nil, fmt.Errorf("ood: the per-input score needs its pool (NewNearest)")
		}
		return func(ctx context.Context, b *bundle.Bundle, progress func(done, total int)) ([]float64, error) {
			return near.scoresContext(ctx, b.Anchors, scoreChunk, progress)
		}, nil
	}
	return nil, fmt.Errorf("ood: unknown mode %v", m)
}

// Evaluation is what detectors are measured on: in-distribution test
// inputs against OOD samples, with the metrics' convention and the
// conformal test's level.
type Evaluation struct {
	ID  *bundle.Bundle
	OOD []*bundle.Bundle
	// Names name the OOD samples in errors (the same length as OOD).
	Names      []string
	Convention Convention
	// Test is the conformal test of a detector that has a calibration;
	// a zero Alpha means DefaultAlpha.
	Test Test
	// FDR, when positive, also runs Benjamini–Hochberg at that level over
	// each OOD sample mixed with the ID inputs.
	FDR float64
	// Progress, if not nil, hears Measure's inputs scored, the ID inputs'
	// and then each OOD sample's, done of all of them (0 before the
	// first), from one goroutine at a time.
	Progress func(done, total int)
}

// Measured is one detector on an Evaluation: its scores, AUROC and FPR95
// against each OOD sample, and, with a calibration, its conformal test's
// alarm rates.
type Measured struct {
	ID      []float64   // the ID inputs' scores
	OOD     [][]float64 // each OOD sample's
	Metrics []Metrics   // against each OOD sample
	Alarms  *Alarms     // nil without a calibration
}

// Alarms are a conformal test's rates, measured once: the shares of ID
// test inputs and of each OOD sample's inputs it flags (fractions), and,
// when an FDR level was given, Benjamini–Hochberg's false discovery
// proportion and power over each OOD sample mixed with the ID inputs.
type Alarms struct {
	FAR        float64
	TAR        []float64
	FDP, Power []float64
}

// Measure scores the ID inputs and each OOD sample with score and
// measures AUROC and FPR95; given cal, the scores of held-out ID inputs
// (disjoint from everything the detector was fitted on and from the ID
// test inputs), it also measures the conformal test's alarm rates. It
// stops with ctx's error when ctx is done: it looks before each sample and
// after it, and score looks while it scores (a set's CCS scores, a chunk
// of inputs at a time: the reference mode's 7 451 ID inputs took 15 s
// and went on 7.7 s after Ctrl-C before they looked).
func (e Evaluation) Measure(ctx context.Context, score Score, cal []float64) (*Measured, error) {
	if e.ID == nil {
		return nil, errors.New("ood: no in-distribution inputs (nil)")
	}
	total := e.ID.N
	for j, b := range e.OOD {
		if b == nil {
			return nil, fmt.Errorf("ood: %s: no inputs (nil)", e.name(j))
		}
		total += b.N
	}
	done := 0 // the inputs of the samples scored
	run := func(b *bundle.Bundle) ([]float64, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var told func(done, total int)
		base, last := done, done
		if e.Progress != nil {
			told = func(n, _ int) {
				last = base + n
				e.Progress(last, total)
			}
		}
		s, err := score(ctx, b, told)
		if err == nil {
			err = ctx.Err() // a score that does not look
		}
		done += b.N
		if err == nil && e.Progress != nil && last < done { // a score that does not tell
			e.Progress(done, total)
		}
		return s, err
	}
	if e.Progress != nil {
		e.Progress(0, total)
	}
	m := &Measured{}
	var err error
	if m.ID, err = run(e.ID); err != nil {
		return nil, err
	}
	for j, b := range e.OOD {
		s, err := run(b)
		if err != nil {
			return nil, fmt.Errorf("on %s: %w", e.name(j), err)
		}
		r, err := Evaluate(m.ID, s, e.Convention)
		if err != nil {
			return nil, fmt.Errorf("on %s: %w", e.name(j), err)
		}
		m.OOD, m.Metrics = append(m.OOD, s), append(m.Metrics, r)
	}
	if cal == nil {
		return m, nil
	}
	c, err := NewCalibration(cal)
	if err != nil {
		return nil, err
	}
	if m.Alarms, err = e.Alarms(c, m.ID, m.OOD); err != nil {
		return nil, err
	}
	return m, nil
}

// name is OOD sample j's name.
func (e Evaluation) name(j int) string {
	if j < len(e.Names) {
		return e.Names[j]
	}
	return fmt.Sprintf("OOD sample %d", j)
}

// test is the evaluation's conformal test with its default level.
func (e Evaluation) test() Test {
	t := e.Test
	t.Alpha = cmp.Or(t.Alpha, DefaultAlpha)
	return t
}

// Alarms measures the conformal test calibrated by c on the ID scores and
// each OOD sample's: the share of each the test flags, and
// Benjamini–Hochberg's FDP and power when the evaluation has an FDR level.
func (e Evaluation) Alarms(c *Calibration, id []float64, oods [][]float64) (*Alarms, error) {
	test := e.test()
	if err := test.Check(c.N()); err != nil {
		return nil, err
	}
	a := &Alarms{FAR: test.Rate(c, id)}
	for _, s := range oods {
		a.TAR = append(a.TAR, test.Rate(c, s))
	}
	if e.FDR > 0 {
		// On the marginal p-values, whose positive dependence (PRDS)
		// Benjamini–Hochberg's guarantee rests on.
		idP := c.PValues(id)
		for _, s := range oods {
			fdp, power, err := FDPPower(idP, c.PValues(s), e.FDR)
			if err != nil {
				return nil, err
			}
			a.FDP, a.Power = append(a.FDP, fdp), append(a.Power, power)
		}
	}
	return a, nil
}

// Rate is the share of scores the test calibrated by c flags.
func (t Test) Rate(c *Calibration, scores []float64) float64 {
	n := 0
	for _, f := range t.Flags(t.PValues(c, scores)) {
		if f {
			n++
		}
	}
	return float64(n) / float64(len(scores))
}

// FDPPower runs Benjamini–Hochberg at level q over the p-values of ID and
// OOD inputs as one batch and returns the share of ID inputs among the
// flagged (the false discovery proportion; 0 when nothing is flagged) and
// the share of OOD inputs flagged (the power).
func FDPPower(id, ood []float64, q float64) (fdp, power float64, err error) {
	flagged, err := BenjaminiHochberg(append(slices.Clone(id), ood...), q)
	if err != nil {
		return 0, 0, err
	}
	falses := 0
	for _, i := range flagged {
		if i < len(id) {
			falses++
		}
	}
	if len(flagged) > 0 {
		fdp = float64(falses) / float64(len(flagged))
	}
	return fdp, float64(len(flagged)-falses) / float64(len(ood)), nil
}

// ErrNoLevel is Answer's error for a test without a level (α_ood = 0: a
// zero Test, which NewConformal takes to leave the level to With), which
// would flag no input.
var ErrNoLevel = errors.New("ood: the test has no level (α_ood = 0 flags no input): give NewConformal a Test{Alpha: ood.DefaultAlpha} (or another α_ood), or answer with c.With(test)")

// With is the test c at another level: the same score and calibration,
// refusing a level the calibration cannot reach.
func (c *Conformal) With(test Test) (*Conformal, error) {
	if err := test.Check(c.Cal.N()); err != nil {
		return nil, err
	}
	t := *c
	t.Test = test
	return &t, nil
}

// Answer is the test's answer for a batch of inputs: each input's score,
// p-value and flag, and, with an FDR level, the inputs
// Benjamini–Hochberg flags as one batch (in increasing order; empty, not
// nil, when none).
type Answer struct {
	Results []Result
	Flagged []int
	// Marginal, with fdr and a calibration-conditional test (δ > 0, whose
	// p-values are adjusted), are the marginal p-values Benjamini–Hochberg
	// ran on; nil otherwise (Results' p-values are those).
	Marginal []float64
}

// chunk is the number of inputs scored between checks of the context.
const chunk = 1024

// Answer scores and tests the query rows (rows of the set's dimension), a
// chunk at a time between checks of ctx; fdr, when positive, also flags
// the batch by Benjamini–Hochberg on the marginal p-values. It refuses
// what Nearest.Scores refuses (a query not of unit norm for a set of
// unit-norm embeddings: a *conformal.NormError), naming the query by its
// row in queries, and a Test that With refuses (Test.Check against the
// calibration's n; ErrNoLevel for a zero one).
func (c *Conformal) Answer(ctx context.Context, queries []float32, fdr float64) (*Answer, error) {
	if c.Test.Alpha == 0 {
		// A zero Test, which NewConformal takes to leave the level to
		// With: at α_ood = 0 no input would ever be flagged.
		return nil, ErrNoLevel
	}
	// The level as With checks it: Test is a field a caller may set.
	if err := c.Test.Check(c.Cal.N()); err != nil {
		return nil, err
	}
	scores, err := c.Score.scoresContext(ctx, queries, chunk, nil)
	if err != nil {
		return nil, err
	}
	m := len(scores)
	p := c.Test.PValues(c.Cal, scores)
	a := &Answer{Results: make([]Result, m)}
	for i := range m {
		a.Results[i] = Result{Score: scores[i], PValue: p[i], OOD: p[i] <= c.Test.Alpha}
	}
	if fdr > 0 {
		marginal := c.Cal.PValues(scores)
		flagged, err := BenjaminiHochberg(marginal, fdr)
		if err != nil {
			return nil, err
		}
		a.Flagged = append([]int{}, flagged...)
		if c.Test.Delta > 0 {
			a.Marginal = marginal
		}
	}
	return a, nil
}
