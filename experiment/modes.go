package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/train"
)

// ModeRun is the learned rows trained with one optimiser and one
// batch-threshold gradient mode.
type ModeRun struct {
	Optimiser string                  `json:"optimiser"` // "sim" or "embedding"
	Mode      objective.ThresholdMode `json:"mode"`
	Table     *Table                  `json:"table"`
}

// ThresholdModes trains the six learned rows under each threshold mode
// (soft, order-statistic, detached) with both of the paper's optimisers
// (plain SGD lr 0.3; SGD with momentum, weight decay and cosine annealing,
// lr 0.1): the comparison behind the soft default (docs/threshold.md).
func ThresholdModes(ctx context.Context, cfg SimConfig, progress func(done, total int, what string)) ([]ModeRun, error) {
	var runs []ModeRun
	opts := []struct {
		name string
		sgd  train.SGD
	}{{"sim", train.SimRecipe.SGD}, {"embedding", train.EmbeddingRecipe.SGD}}
	modes := []objective.ThresholdMode{objective.Soft, objective.OrderStatistic, objective.Detached}
	step := 0
	for _, o := range opts {
		for _, m := range modes {
			c := cfg
			c.Train.SGD, c.Train.Objective.Threshold = o.sgd, m
			c.plain() // six configurations under one table name: no cells
			t, err := Sim(ctx, c, LearnedRows(), func(done, total int, what string) {
				if progress != nil {
					progress(step*total+done, len(opts)*len(modes)*total, fmt.Sprintf("%s, %v: %s", o.name, m, what))
				}
			})
			if err != nil {
				return nil, fmt.Errorf("%s optimiser, %v threshold: %w", o.name, m, err)
			}
			runs = append(runs, ModeRun{Optimiser: o.name, Mode: m, Table: t})
			step++
		}
	}
	return runs, nil
}

// WriteModes renders the comparison: per optimiser, each method's exclusion
// under the three modes, then paired counts (same method, same seed) of how
// often soft beats the other modes, and the mean difference.
func WriteModes(w io.Writer, runs []ModeRun) error {
	var b strings.Builder
	byKey := map[string]*Table{}
	for _, r := range runs {
		byKey[r.Optimiser+"/"+r.Mode.String()] = r.Table
	}
	for _, opt := range []string{"sim", "embedding"} {
		soft, os, det := byKey[opt+"/soft"], byKey[opt+"/order-statistic"], byKey[opt+"/detached"]
		if soft == nil || os == nil || det == nil {
			continue
		}
		fmt.Fprintf(&b, "Optimiser %s: exclusion %% (coverage %%), mean ± std over seeds\n\n", opt)
		cell := func(r Row) string {
			return fmt.Sprintf("%s (%.1f)", meanPM("%.1f", "%.1f", r.Exclusion), r.Coverage.Mean)
		}
		grid := [][]string{{"Method", "soft", "order-statistic", "detached"}}
		for _, r := range soft.Rows {
			ro, _ := os.Row(r.Method)
			rd, _ := det.Row(r.Method)
			grid = append(grid, []string{r.Method, cell(r), cell(ro), cell(rd)})
		}
		writeGrid(&b, grid)
		for _, other := range []struct {
			name string
			t    *Table
		}{{"order-statistic", os}, {"detached", det}} {
			wins, pairs, sum, worst := 0, 0, 0.0, math.Inf(1)
			for _, r := range soft.Rows {
				ro, _ := other.t.Row(r.Method)
				for s := range r.PerSeed {
					diff := 100 * (r.PerSeed[s].Exclusion - ro.PerSeed[s].Exclusion)
					if diff > 0 {
						wins++
					}
					pairs++
					sum += diff
					worst = math.Min(worst, diff)
				}
			}
			fmt.Fprintf(&b, "\nsoft vs %s: soft excludes more in %d of %d (method, seed) pairs; mean difference %+.1f points, smallest %+.1f\n",
				other.name, wins, pairs, sum/float64(pairs), worst)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
