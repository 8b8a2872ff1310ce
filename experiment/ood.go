package experiment

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/embed"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/ood"
)

// OODConfig configures an OOD table.
type OODConfig struct {
	RealConfig
	Reference  int            // reference pool rows (calibration anchors); 0 means 256
	Convention ood.Convention // FPR95's positive class
	// Baselines are the detectors to compare with (nil: none); CIDER's
	// seed is set per seed.
	Baselines []ood.Detector
	// BaselineTrain, if not nil, holds the training features the baselines
	// are fitted on (the paper: the whole training split); nil means the
	// training anchors of the embeddings.
	BaselineTrain *bundle.Bundle
}

// OODSet is an out-of-distribution sample: its anchors (features, logits,
// activations).
type OODSet struct {
	Name string
	B    *bundle.Bundle
}

// OODRow is one detector's AUROC and FPR95 (percent, mean ± std over
// seeds) against each OOD set, or why it is not available.
type OODRow struct {
	Method      string         `json:"method"`
	AUROC       []eval.Summary `json:"auroc,omitempty"`
	FPR95       []eval.Summary `json:"fpr95,omitempty"`
	Unavailable string         `json:"unavailable,omitempty"`
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
}

// AddRun appends a row measured once from anchors' anomaly scores: id
// against each of the table's OOD sets, or why it is unavailable (err
// wrapping ood.ErrUnavailable). Other errors are returned.
func (t *OODTable) AddRun(method string, id []float64, oods [][]float64, conv ood.Convention, err error) error {
	row := OODRow{Method: method}
	if errors.Is(err, ood.ErrUnavailable) {
		row.Unavailable = err.Error()
		t.Rows = append(t.Rows, row)
		return nil
	}
	if err != nil {
		return err
	}
	for j, o := range oods {
		m, err := ood.Evaluate(id, o, conv)
		if err != nil {
			return fmt.Errorf("%s against %s: %w", method, t.Sets[j], err)
		}
		row.AUROC = append(row.AUROC, eval.Summarize([]float64{100 * m.AUROC}))
		row.FPR95 = append(row.FPR95, eval.Summarize([]float64{100 * m.FPR95}))
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
// in Real, given a reference pool of calibration anchors, and scored on the
// test half (ID) and each OOD set in both modes — batch (negatives drawn
// within the evaluated sample, the paper's protocol) and reference (the
// pool's rows as negatives, per sample). The baselines are fitted on the
// training anchors (features, logits, activations, labels) and score the
// same samples.
func OOD(e *Embedded, sets []OODSet, cfg OODConfig, methods []Method, progress func(done, total int, what string)) (*OODTable, error) {
	cfg.realDefaults(e.Test.K)
	if cfg.Reference == 0 {
		cfg.Reference = 256
	}
	nrows := 2*len(methods) + len(cfg.Baselines)
	auroc := make([][][]float64, nrows) // row, set, seed
	fpr := make([][][]float64, nrows)
	for r := range nrows {
		auroc[r], fpr[r] = make([][]float64, len(sets)), make([][]float64, len(sets))
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
	record := func(r int, id []float64, oods [][]float64) error {
		for j, o := range oods {
			m, err := ood.Evaluate(id, o, cfg.Convention)
			if err != nil {
				return err
			}
			auroc[r][j] = append(auroc[r][j], 100*m.AUROC)
			fpr[r][j] = append(fpr[r][j], 100*m.FPR95)
		}
		return nil
	}
	baseTrain := e.Train
	if cfg.BaselineTrain != nil {
		baseTrain = cfg.BaselineTrain
	}
	trainSample := ood.SampleOf(baseTrain)
	for s := range cfg.Seeds {
		seed := uint64(s)
		sp, err := realSplits(e, cfg.RealConfig, seed, true, true, 0)
		if err != nil {
			return nil, err
		}
		oodB := make([]*bundle.Bundle, len(sets))
		for j, o := range sets {
			oodB[j] = withBatchNegatives(o.B, cfg.KNeg, seed*16+uint64(j))
		}
		for m, meth := range methods {
			set, err := meth.Fit(sp, cfg.Config, seed)
			if err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", meth.Name, seed, err)
			}
			if set.Reference, err = conformal.NewReference(sp.Cal, min(cfg.Reference, sp.Cal.N), seed, "calibration anchors"); err != nil {
				return nil, err
			}
			for mode, score := range []func(b *bundle.Bundle) ([]float64, error){
				func(b *bundle.Bundle) ([]float64, error) { return ood.CCSBatch(set, b) },
				func(b *bundle.Bundle) ([]float64, error) { return ood.CCSReference(set, b.Anchors) },
			} {
				id, err := score(sp.Test)
				if err != nil {
					return nil, fmt.Errorf("%s, seed %d: %w", meth.Name, seed, err)
				}
				var oods [][]float64
				for j, b := range oodB {
					o, err := score(b)
					if err != nil {
						return nil, fmt.Errorf("%s on %s, seed %d: %w", meth.Name, sets[j].Name, seed, err)
					}
					oods = append(oods, o)
				}
				if err := record(2*m+mode, id, oods); err != nil {
					return nil, fmt.Errorf("%s, seed %d: %w", meth.Name, seed, err)
				}
			}
			step(meth.Name)
		}
		for bi, det := range cfg.Baselines {
			r := 2*len(methods) + bi
			if c, ok := det.(*ood.CIDER); ok {
				c.Seed = seed
			}
			if why[r] != "" {
				step(det.Name())
				continue
			}
			// The deterministic baselines are fitted once; CIDER per seed.
			_, seeded := det.(*ood.CIDER)
			if s == 0 || seeded {
				if err := det.Fit(trainSample); err != nil {
					if errors.Is(err, ood.ErrUnavailable) {
						why[r] = err.Error()
						step(det.Name())
						continue
					}
					return nil, err
				}
			}
			id, err := det.Score(ood.SampleOf(sp.Test))
			var oods [][]float64
			for _, b := range oodB {
				if err != nil {
					break
				}
				var o []float64
				o, err = det.Score(ood.SampleOf(b))
				oods = append(oods, o)
			}
			if errors.Is(err, ood.ErrUnavailable) {
				why[r] = err.Error()
				step(det.Name())
				continue
			}
			if err != nil {
				return nil, err
			}
			if err := record(r, id, oods); err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", det.Name(), seed, err)
			}
			step(det.Name())
		}
	}
	t := &OODTable{
		Title: "OOD detection, Fashion-MNIST (ID), " + e.Encoder,
		Config: fmt.Sprintf("ID: the test half of %d test anchors; CCS sets fitted as in the Fashion-MNIST table (k=%d, %d negatives, α=%v), batch negatives: %d drawn within each evaluated sample; reference: %d calibration anchors; baselines fitted on %d training images; FPR95 %v; seeds 0–%d",
			e.Test.N, cfg.K, cfg.KNeg, cfg.Alpha, cfg.KNeg, cfg.Reference, baseTrain.N, cfg.Convention, cfg.Seeds-1),
		Runs: cfg.Seeds,
	}
	for _, o := range sets {
		t.Sets = append(t.Sets, o.Name)
	}
	for r := range nrows {
		var row OODRow
		switch {
		case r < 2*len(methods):
			row.Method = methods[r/2].Name + [2]string{", batch", ", reference"}[r%2]
		default:
			row.Method = cfg.Baselines[r-2*len(methods)].Name()
		}
		if why[r] != "" {
			row.Unavailable = why[r]
		} else {
			for j := range sets {
				row.AUROC = append(row.AUROC, eval.Summarize(auroc[r][j]))
				row.FPR95 = append(row.FPR95, eval.Summarize(fpr[r][j]))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// withBatchNegatives returns b's anchors (with their logits, activations
// and labels) with kneg negatives each drawn among themselves.
func withBatchNegatives(b *bundle.Bundle, kneg int, seed uint64) *bundle.Bundle {
	return &bundle.Bundle{N: b.N, D: b.D, Anchors: b.Anchors, KNeg: kneg, NegativeIndex: embed.Negatives(b.N, kneg, seed),
		Labels: b.Labels, C: b.C, Logits: b.Logits, A: b.A, Activations: b.Activations}
}

// WriteText renders the table in the paper's layout: per OOD set, AUROC↑
// and FPR95↓ in percent, mean ± std over seeds (the mean alone for one run).
func (t *OODTable) WriteText(w io.Writer) error {
	head := []string{"Method"}
	for _, s := range t.Sets {
		head = append(head, s+" AUROC↑", s+" FPR95↓")
	}
	rows := [][]string{head}
	for _, r := range t.Rows {
		cells := []string{r.Method}
		for j := range t.Sets {
			if r.Unavailable != "" {
				cells = append(cells, "not available", "")
				continue
			}
			cell := func(s eval.Summary) string {
				if t.Runs == 1 {
					return fmt.Sprintf("%.1f", s.Mean)
				}
				return fmt.Sprintf("%.1f ± %.1f", s.Mean, s.Std)
			}
			cells = append(cells, cell(r.AUROC[j]), cell(r.FPR95[j]))
		}
		rows = append(rows, cells)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", t.Title, t.Config)
	writeGrid(&b, rows)
	for _, r := range t.Rows {
		if r.Unavailable != "" {
			fmt.Fprintf(&b, "\n%s: %s\n", r.Method, r.Unavailable)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
