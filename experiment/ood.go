package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/ood"
)

// OODConfig configures an OOD table.
type OODConfig struct {
	RealConfig
	Reference  int            // reference pool rows of the paper's reference mode (calibration anchors); 0 means 256
	Convention ood.Convention // FPR95's positive class
	// Baselines are the detectors to compare with (nil: none); CIDER's
	// seed is set per seed.
	Baselines []ood.Detector
	// BaselineTrain, if not nil, holds the training features the baselines
	// are fitted on (the paper: the whole training split); nil means the
	// training anchors of the embeddings.
	BaselineTrain *bundle.Bundle
	// Test is the conformal OOD test of the per-input rows and of the
	// baselines, calibrated on the calibration half's anchors; a zero
	// Alpha means 0.05.
	Test ood.Test
	// Neighbour is the per-input CCS score's k-th nearest pool anchor; 0
	// means 1.
	Neighbour int
}

// OODSet is an out-of-distribution sample: its anchors (features, logits,
// activations).
type OODSet struct {
	Name string
	B    *bundle.Bundle
}

// OODRow is one detector's AUROC and FPR95 (percent, mean ± std over
// seeds) against each OOD set, or why it is not available; for a detector
// with a conformal test, also its false-alarm rate on the ID test inputs
// and its true-alarm rate on each OOD set at the table's α_ood (percent).
type OODRow struct {
	Method string         `json:"method"`
	AUROC  []eval.Summary `json:"auroc,omitempty"`
	FPR95  []eval.Summary `json:"fpr95,omitempty"`
	FAR    *eval.Summary  `json:"false_alarm_rate,omitempty"`
	TAR    []eval.Summary `json:"true_alarm_rate,omitempty"`
	// FDP and Power are Benjamini–Hochberg's over each OOD set mixed with
	// the ID test inputs (percent): the share of ID inputs among the
	// flagged, and the share of the OOD set flagged.
	FDP         []eval.Summary `json:"false_discovery_proportion,omitempty"`
	Power       []eval.Summary `json:"power,omitempty"`
	Unavailable string         `json:"unavailable,omitempty"`
	// Seconds is the time the row took, its fit and every score (ccs
	// ood's rows; 0, left out, where not timed).
	Seconds float64 `json:"seconds,omitempty"`
	// Curves are the detector's score curves on seed 0, one per OOD set.
	Curves []ScoreCurve `json:"curves,omitempty"`
}

// Times says each timed row's seconds, "MSP 0.02 s, …, CIDER 188 s", or
// "" where none was timed.
func (t *OODTable) Times() string {
	var parts []string
	for _, r := range t.Rows {
		if r.Seconds > 0 {
			parts = append(parts, fmt.Sprintf("%s %.3g s", r.Method, r.Seconds))
		}
	}
	return strings.Join(parts, ", ")
}

// OODTable is the paper's OOD table layout.
type OODTable struct {
	Title  string   `json:"title"`
	Config string   `json:"config"`
	Sets   []string `json:"ood_sets"`
	Rows   []OODRow `json:"rows"`
	// Runs is the number of seeds behind each figure; with one, the text
	// shows no ± std.
	Runs int `json:"runs"`
	// AlphaOOD is the conformal test's level when rows have one (the bound
	// on their false-alarm rate), and Guarantee says it in words.
	AlphaOOD  float64 `json:"alpha_ood,omitempty"`
	Guarantee string  `json:"guarantee,omitempty"`
	// FDRLevel is Benjamini–Hochberg's q when rows have FDP and Power.
	FDRLevel float64 `json:"fdr_level,omitempty"`
	// Warnings are what the detection warned of (a class flagged beyond
	// chance, a test at a level its calibration cannot give), kept with
	// the figures they qualify.
	Warnings []string `json:"warnings,omitempty"`
}

// AddMeasured appends a row measured once (ood.Evaluation.Measure), or
// why it is unavailable (err wrapping ood.ErrUnavailable). Other errors
// are returned.
func (t *OODTable) AddMeasured(method string, m *ood.Measured, err error) error {
	row := OODRow{Method: method}
	if errors.Is(err, ood.ErrUnavailable) {
		row.Unavailable = reason(method, err)
		t.Rows = append(t.Rows, row)
		return nil
	}
	if err != nil {
		return err
	}
	for j, r := range m.Metrics {
		row.AUROC = append(row.AUROC, eval.Summarize([]float64{100 * r.AUROC}))
		row.FPR95 = append(row.FPR95, eval.Summarize([]float64{100 * r.FPR95}))
		c, err := NewScoreCurve(t.Sets[j], m.ID, m.OOD[j]) // the figures' ROC curve and histograms
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		row.Curves = append(row.Curves, c)
	}
	if a := m.Alarms; a != nil {
		f := eval.Summarize([]float64{100 * a.FAR})
		row.FAR = &f
		for _, v := range a.TAR {
			row.TAR = append(row.TAR, eval.Summarize([]float64{100 * v}))
		}
		for j := range a.FDP {
			row.FDP = append(row.FDP, eval.Summarize([]float64{100 * a.FDP[j]}))
			row.Power = append(row.Power, eval.Summarize([]float64{100 * a.Power[j]}))
		}
	}
	t.Rows = append(t.Rows, row)
	return nil
}

// OODMethods are the CCS rows of the paper's OOD tables, Single (Neg) and
// Generalized (Neg), and the untrained ℓ2 ball as a control.
func OODMethods() []Method {
	return []Method{Ball(), Learned(geometry.KindNorm, objective.Neg), Learned(geometry.KindGenBall, objective.Neg)}
}

// OOD runs the OOD comparison on one encoder's embeddings: for each seed,
// the real-image splits of Real; each CCS method is fitted and calibrated as
// in Real and scored on the test half (ID) and each OOD set in three modes —
// batch (negatives drawn within the evaluated sample, the paper's
// protocol), reference (a pool of calibration anchors as negatives, per
// sample, the paper's formula) and per input (ood.Nearest: the k-th
// nearest fit anchor under the set's score over q̂, with the conformal test
// calibrated on the calibration half's anchors). The baselines are fitted
// on the training anchors (features, logits, activations, labels), score
// the same samples, and are calibrated on the calibration half too.
//
// The conformal tests' calibration inputs (the calibration half) are
// disjoint from the ID test inputs, from the pool (the fit anchors) and
// from everything the detectors were trained on; the sets' thresholds come
// from them too, but a p-value does not change when every score is divided
// by the same q̂.
func OOD(ctx context.Context, e *Embedded, sets []OODSet, cfg OODConfig, methods []Method, progress func(done, total int, what string)) (*OODTable, error) {
	cfg.realDefaults(e.Test.K)
	cfg.Reference = cmp.Or(cfg.Reference, 256)
	cfg.Neighbour = cmp.Or(cfg.Neighbour, 1)
	cfg.Test.Alpha = cmp.Or(cfg.Test.Alpha, ood.DefaultAlpha)
	const modes = 3 // batch, reference, per input
	nrows := modes*len(methods) + len(cfg.Baselines)
	auroc := make([][][]float64, nrows) // row, set, seed
	fpr := make([][][]float64, nrows)
	tar := make([][][]float64, nrows)
	far := make([][]float64, nrows) // row, seed
	for r := range nrows {
		auroc[r], fpr[r], tar[r] = make([][]float64, len(sets)), make([][]float64, len(sets)), make([][]float64, len(sets))
	}
	why := make([]string, nrows)
	total := cfg.Seeds * (len(methods) + len(cfg.Baselines))
	done := 0
	step := func(what string) {
		done++
		if progress != nil {
			progress(done, total, what)
		}
	}
	curves := make([][]ScoreCurve, nrows) // row, set (seed 0)
	baseTrain := e.Train
	if cfg.BaselineTrain != nil {
		baseTrain = cfg.BaselineTrain
	}
	trainSample := ood.SampleOf(baseTrain)
	table := "ood-" + e.Encoder
	// Each seed's splits are built when one of its cells is not kept.
	var (
		sp       *Splits
		spSeed   uint64
		oodB     []*bundle.Bundle
		poolRows int
	)
	splits := func(seed uint64) (*Splits, error) {
		if sp != nil && spSeed == seed {
			return sp, nil
		}
		var err error
		if sp, err = realSplits(e, cfg.RealConfig, seed, true, true, 0); err != nil {
			return nil, err
		}
		spSeed = seed
		oodB = make([]*bundle.Bundle, len(sets))
		for j, o := range sets {
			// The paper's batch protocol: negatives drawn within the sample.
			if oodB[j], err = o.B.WithNegatives(cfg.KNeg, seed*16+uint64(j)); err != nil {
				return nil, fmt.Errorf("%s: %w", o.Name, err)
			}
		}
		return sp, nil
	}
	names := make([]string, len(sets))
	for j, o := range sets {
		names[j] = o.Name
	}
	// measure scores the ID test inputs and each OOD set (and, for a
	// conformal test, the calibration inputs) with score.
	measure := func(seed uint64, test bool, score ood.Score) (oodMeasure, []float64, error) {
		var m oodMeasure
		var cal []float64
		if test {
			var err error
			if cal, err = score(ctx, sp.Cal, nil); err != nil {
				return m, nil, err
			}
		}
		ev := ood.Evaluation{ID: sp.Test, OOD: oodB, Names: names, Convention: cfg.Convention, Test: cfg.Test}
		r, err := ev.Measure(ctx, score, cal)
		if err != nil {
			return m, nil, err
		}
		m.record(r)
		if seed == 0 {
			if err := m.curves(r.ID, r.OOD, sets); err != nil {
				return m, nil, err
			}
		}
		return m, cal, nil
	}
	fitted := make([]bool, len(cfg.Baselines))
	for s := range cfg.Seeds {
		seed := uint64(s)
		for m, meth := range methods {
			c, err := cell(cfg.Cells, table, meth.File, seed, true, func() (oodCell, error) {
				var c oodCell
				if err := ctx.Err(); err != nil {
					return c, err
				}
				sp, err := splits(seed)
				if err != nil {
					return c, err
				}
				set, err := meth.Fit(ctx, sp, cfg.Config, seed)
				if err != nil {
					return c, err
				}
				if set.Reference, err = conformal.NewReference(sp.Cal, min(cfg.Reference, sp.Cal.N), seed, conformal.CalibrationAnchors); err != nil {
					return c, err
				}
				near, err := ood.NewNearest(set, sp.Fit.Anchors, cfg.Neighbour)
				if err != nil {
					return c, err
				}
				for mode, m := range []ood.Mode{ood.Batch, ood.Reference, ood.PerInput} {
					perInput := m == ood.PerInput
					score, err := ood.CCS(set, m, near)
					if err != nil {
						return c, err
					}
					r, cal, err := measure(seed, perInput, score)
					if err == nil && perInput {
						err = keepPerInput(cfg.Config, set, sp, near.K(), cal, seed, meth.File)
					}
					if err != nil {
						return c, fmt.Errorf("%s: %w", [modes]string{"batch", "reference", "per input"}[mode], err)
					}
					c.Rows = append(c.Rows, r)
				}
				c.PoolRows = sp.Fit.N
				return c, nil
			})
			if err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", meth.Name, seed, err)
			}
			for mode, r := range c.Rows {
				r.add(modes*m+mode, auroc, fpr, tar, far, curves)
			}
			poolRows = c.PoolRows
			step(meth.Name)
		}
		for bi, det := range cfg.Baselines {
			r := modes*len(methods) + bi
			if why[r] != "" {
				step(det.Name())
				continue
			}
			c, err := cell(cfg.Cells, table, det.Name(), seed, true, func() (oodCell, error) {
				var c oodCell
				if err := ctx.Err(); err != nil {
					return c, err
				}
				// The deterministic baselines are fitted once; a seeded one
				// (CIDER) per seed.
				sd, seeded := det.(ood.Seeded)
				if seeded {
					sd.SetSeed(seed)
				}
				if !fitted[bi] || seeded {
					if err := ood.Fit(ctx, det, trainSample); err != nil {
						if errors.Is(err, ood.ErrUnavailable) {
							c.Unavailable = reason(det.Name(), err)
							return c, nil
						}
						return c, err
					}
					fitted[bi] = true
				}
				if _, err := splits(seed); err != nil {
					return c, err
				}
				m, _, err := measure(seed, true, ood.DetectorScore(det))
				if errors.Is(err, ood.ErrUnavailable) {
					c.Unavailable = reason(det.Name(), err)
					return c, nil
				}
				c.Rows = []oodMeasure{m}
				return c, err
			})
			if err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", det.Name(), seed, err)
			}
			if c.Unavailable != "" {
				why[r] = c.Unavailable
			} else {
				c.Rows[0].add(r, auroc, fpr, tar, far, curves)
			}
			step(det.Name())
		}
	}
	t := &OODTable{
		Title: "OOD detection, Fashion-MNIST (ID), " + e.Encoder,
		Config: fmt.Sprintf("ID: the test half of %d test anchors; CCS sets fitted as in the Fashion-MNIST table (k=%d, %d negatives, α=%v), batch negatives: %d drawn within each evaluated sample; reference: %d calibration anchors; per input: the %s nearest of the %d fit anchors; conformal tests calibrated on the calibration half; baselines fitted on %d training images; FPR95 %v; %s",
			e.Test.N, cfg.K, cfg.KNeg, cfg.Alpha, cfg.KNeg, cfg.Reference, Ordinal(cfg.Neighbour), poolRows, baseTrain.N, cfg.Convention, seedRange(cfg.Seeds)),
		Runs:      cfg.Seeds,
		AlphaOOD:  cfg.Test.Alpha,
		Guarantee: cfg.Test.String(),
	}
	for _, o := range sets {
		t.Sets = append(t.Sets, o.Name)
	}
	for r := range nrows {
		var row OODRow
		switch {
		case r < modes*len(methods):
			row.Method = methods[r/modes].Name + [modes]string{", batch", ", reference", ", per input"}[r%modes]
		default:
			row.Method = cfg.Baselines[r-modes*len(methods)].Name()
		}
		if why[r] != "" {
			row.Unavailable = why[r]
		} else {
			for j := range sets {
				row.AUROC = append(row.AUROC, eval.Summarize(auroc[r][j]))
				row.FPR95 = append(row.FPR95, eval.Summarize(fpr[r][j]))
			}
			if far[r] != nil {
				f := eval.Summarize(far[r])
				row.FAR = &f
				for j := range sets {
					row.TAR = append(row.TAR, eval.Summarize(tar[r][j]))
				}
			}
			row.Curves = curves[r]
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// oodCell is a cell of the OOD table: a CCS method's three rows (batch,
// reference, per input) or a baseline's one, on one seed, or why the
// baseline is unavailable.
type oodCell struct {
	Rows        []oodMeasure `json:"rows,omitempty"`
	Unavailable string       `json:"unavailable,omitempty"`
	PoolRows    int          `json:"pool_rows,omitempty"` // the per-input score's reference pool
}

// oodMeasure is one detector on one seed: AUROC and FPR95 against each OOD
// set (percent), its conformal test's false- and true-alarm rates
// (percent), and on seed 0 its score curves.
type oodMeasure struct {
	AUROC  []float64    `json:"auroc"`
	FPR95  []float64    `json:"fpr95"`
	FAR    *float64     `json:"far,omitempty"`
	TAR    []float64    `json:"tar,omitempty"`
	Curves []ScoreCurve `json:"curves,omitempty"`
}

// record keeps a measurement's AUROC and FPR95 against each OOD set and
// its conformal test's rates, in percent.
func (m *oodMeasure) record(r *ood.Measured) {
	for _, x := range r.Metrics {
		m.AUROC = append(m.AUROC, 100*x.AUROC)
		m.FPR95 = append(m.FPR95, 100*x.FPR95)
	}
	if a := r.Alarms; a != nil {
		f := 100 * a.FAR
		m.FAR = &f
		for _, v := range a.TAR {
			m.TAR = append(m.TAR, 100*v)
		}
	}
}

// curveBins and curvePoints size the kept score curves.
const curveBins, curvePoints = 40, 200

// curves keeps the ROC curve and the histograms of the ID scores against
// each OOD set's.
func (m *oodMeasure) curves(id []float64, oods [][]float64, sets []OODSet) error {
	for j, o := range oods {
		c, err := NewScoreCurve(sets[j].Name, id, o)
		if err != nil {
			return err
		}
		m.Curves = append(m.Curves, c)
	}
	return nil
}

// add appends m's figures as row r's figures for one more seed.
func (m oodMeasure) add(r int, auroc, fpr, tar [][][]float64, far [][]float64, curves [][]ScoreCurve) {
	for j := range m.AUROC {
		auroc[r][j] = append(auroc[r][j], m.AUROC[j])
		fpr[r][j] = append(fpr[r][j], m.FPR95[j])
	}
	if m.FAR != nil {
		far[r] = append(far[r], *m.FAR)
		for j := range m.TAR {
			tar[r][j] = append(tar[r][j], m.TAR[j])
		}
	}
	if m.Curves != nil {
		curves[r] = m.Curves
	}
}

// ScoreCurve is a detector's scores on seed 0, ID test inputs against one
// OOD set: the ROC curve (OOD the positive class, at most 200 points) and
// both samples' histograms over shared bins (the share of each sample in
// each bin; values outside the 0.5–99.5th percentiles of the pooled
// scores are counted in the end bins).
type ScoreCurve struct {
	Set   string    `json:"set"`
	FPR   []float64 `json:"fpr"`
	TPR   []float64 `json:"tpr"`
	Edges []float64 `json:"edges"`
	ID    []float64 `json:"id"`
	OOD   []float64 `json:"ood"`
}

// NewScoreCurve returns the ROC curve and the histograms of a detector's
// scores of ID inputs (id) and of an OOD set's (o); empty samples and
// non-finite scores are errors.
func NewScoreCurve(set string, id, o []float64) (ScoreCurve, error) {
	c := ScoreCurve{Set: set}
	var err error
	if c.FPR, c.TPR, err = ood.ROC(id, o, curvePoints); err != nil {
		return c, fmt.Errorf("%s: %w", set, err)
	}
	c.Edges, c.ID, c.OOD = histograms(id, o, curveBins)
	return c, nil
}

// histograms bins a and b over bins equal bins spanning the pooled scores'
// 0.5–99.5th percentiles (a few extreme scores would otherwise squeeze the
// rest into one bin); each histogram holds shares summing to 1.
func histograms(a, b []float64, bins int) (edges, ha, hb []float64) {
	pooled := append(slices.Clone(a), b...)
	slices.Sort(pooled)
	lo := pooled[int(0.005*float64(len(pooled)-1))]
	hi := pooled[int(math.Ceil(0.995*float64(len(pooled)-1)))]
	if !(hi > lo) {
		hi = lo + 1
	}
	edges = make([]float64, bins+1)
	for i := range edges {
		edges[i] = lo + (hi-lo)*float64(i)/float64(bins)
	}
	hist := func(x []float64) []float64 {
		h := make([]float64, bins)
		for _, v := range x {
			i := int((v - lo) / (hi - lo) * float64(bins))
			h[min(max(i, 0), bins-1)] += 1 / float64(len(x))
		}
		return h
	}
	return edges, hist(a), hist(b)
}

// keepPerInput saves (with OutDir) the set as a service would load it:
// the fit anchors as its reference pool and the calibration half's
// per-input scores as its OOD calibration.
func keepPerInput(cfg Config, set *conformal.Set, sp *Splits, k int, cal []float64, seed uint64, file string) error {
	if cfg.OutDir == "" {
		return nil
	}
	kept := *set
	var err error
	if kept.Reference, err = conformal.NewReferenceRows(sp.Fit.Anchors, sp.Fit.D, "fit anchors"); err != nil {
		return err
	}
	if kept.OOD, err = conformal.NewOODCalibration(k, cal, "calibration anchors"); err != nil {
		return err
	}
	return cfg.keep(&kept, seed, file)
}

// WriteText renders the table in the paper's layout: per OOD set, AUROC↑
// and FPR95↓ in percent, mean ± std over seeds (the mean alone for one
// run); with conformal tests, the false-alarm rate on the ID test inputs
// and the true-alarm rate on each OOD set at α_ood, and the guarantee.
func (t *OODTable) WriteText(w io.Writer) error {
	tests := slices.ContainsFunc(t.Rows, func(r OODRow) bool { return r.FAR != nil })
	head := []string{"Method"}
	for _, s := range t.Sets {
		head = append(head, s+" AUROC↑", s+" FPR95↓")
	}
	if tests {
		head = append(head, fmt.Sprintf("FAR@%v (≤ %.4g%%)", t.AlphaOOD, 100*t.AlphaOOD))
		for _, s := range t.Sets {
			head = append(head, fmt.Sprintf("%s TAR@%v↑", s, t.AlphaOOD))
		}
	}
	cell := func(s eval.Summary) string {
		if t.Runs == 1 {
			return fmt.Sprintf("%.1f", s.Mean)
		}
		return fmt.Sprintf("%.1f ± %.1f", s.Mean, s.Std)
	}
	rows := [][]string{head}
	for _, r := range t.Rows {
		cells := []string{r.Method}
		for j := range t.Sets {
			if r.Unavailable != "" {
				cells = append(cells, "not available", "")
				continue
			}
			cells = append(cells, cell(r.AUROC[j]), cell(r.FPR95[j]))
		}
		if tests {
			if r.FAR == nil {
				cells = append(cells, "—")
				for range t.Sets {
					cells = append(cells, "—")
				}
			} else {
				cells = append(cells, cell(*r.FAR))
				for j := range t.Sets {
					cells = append(cells, cell(r.TAR[j]))
				}
			}
		}
		rows = append(rows, cells)
	}
	// What ± is, where a cell shows one (as the results table's protocol
	// line says it).
	spread := ""
	if t.Runs > 1 {
		spread = spreadNote
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s%s\n\n", t.Title, t.Config, spread)
	writeGrid(&b, rows)
	switch {
	case tests && len(t.Sets) == 0:
		fmt.Fprintf(&b, "\nFAR: the share of these in-distribution inputs the conformal test flags (p ≤ α_ood = %v); the guarantee: %s.\n", t.AlphaOOD, t.Guarantee)
	case tests:
		fmt.Fprintf(&b, "\nFAR, TAR: the share of ID test inputs and of OOD inputs the conformal test flags (p ≤ α_ood = %v); the guarantee: %s.\n", t.AlphaOOD, t.Guarantee)
	}
	if slices.ContainsFunc(t.Rows, func(r OODRow) bool { return r.FDP != nil }) {
		bh := [][]string{{"Method"}}
		for _, s := range t.Sets {
			bh[0] = append(bh[0], s+" FDP", s+" power")
		}
		for _, r := range t.Rows {
			if r.FDP == nil {
				continue
			}
			cells := []string{r.Method}
			for j := range t.Sets {
				cells = append(cells, cell(r.FDP[j]), cell(r.Power[j]))
			}
			bh = append(bh, cells)
		}
		fmt.Fprintf(&b, "\nBenjamini–Hochberg at q = %v over each OOD set mixed with the ID test inputs: the share of ID inputs among the flagged (FDP; its expectation, the FDR, is ≤ q) and of the OOD set flagged (power), percent.\n\n", t.FDRLevel)
		writeGrid(&b, bh)
	}
	for _, r := range t.Rows {
		if r.Unavailable != "" {
			fmt.Fprintf(&b, "\n%s: %s\n", r.Method, r.Unavailable)
		}
	}
	for _, r := range t.Rows {
		if strings.HasSuffix(r.Method, "(reference)") && r.Unavailable == "" && slices.ContainsFunc(r.AUROC, func(s eval.Summary) bool { return s.Mean < 50 }) {
			fmt.Fprintf(&b, "\n%s: AUROC below 50 is the paper's score with the paper's sign: an input far from every ID embedding has a large mean score against the pool, and so a low anomaly score (docs/ood.md, \"The paper's score, two modes\").\n", r.Method)
		}
	}
	for _, warn := range t.Warnings {
		fmt.Fprintf(&b, "\nWARNING: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// reason is why a detector is unavailable, without its name (the table
// names it).
func reason(name string, err error) string {
	r := strings.TrimPrefix(err.Error(), name+": ")
	// A sample's failure (ood.Evaluation.Measure's "on NAME: …") names
	// the method once: "on camera2: not available: needs logits".
	if on, rest, ok := strings.Cut(r, ": "+name+": "); ok && strings.HasPrefix(on, "on ") {
		r = on + ": " + rest
	}
	return r
}

// Grid returns rows (the first is the header) as a Markdown table whose
// columns are padded to one width, so that it reads as a table in a
// terminal too: what every table ccs prints is written with.
func Grid(rows [][]string) string {
	var b strings.Builder
	writeGrid(&b, rows)
	return b.String()
}

// writeGrid writes rows (the first is the header) as a padded Markdown table.
func writeGrid(b *strings.Builder, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for c, cell := range r {
			width[c] = max(width[c], utf8.RuneCountInString(cell))
		}
	}
	line := func(cells []string) {
		for c, cell := range cells {
			fmt.Fprintf(b, "| %s%s ", cell, strings.Repeat(" ", width[c]-utf8.RuneCountInString(cell)))
		}
		b.WriteString("|\n")
	}
	line(rows[0])
	for c := range width {
		fmt.Fprintf(b, "|%s", strings.Repeat("-", width[c]+2))
	}
	b.WriteString("|\n")
	for _, r := range rows[1:] {
		line(r)
	}
}
