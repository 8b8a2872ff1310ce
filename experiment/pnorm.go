package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/parallel"
	"github.com/ccsets/ccs/sim"
)

// PNormPs are the exponents of the paper's "Effect of the p-norm" table.
var PNormPs = []float64{2, 1, 0.9, 0.8, 0.7, 0.6, 0.5}

// PNormPaper is the paper's row of the p-norm table, where it gives one:
// at fixed coverage exclusion % and log-volume, at fixed volume coverage %
// and exclusion %.
type PNormPaper struct {
	Exclusion, LogVol         float64
	VolCoverage, VolExclusion float64
	// VolThreshold is the threshold of the p-ball of the fixed volume.
	VolThreshold float64 `json:",omitempty"`
}

// paperPNorm holds the rows of the paper's p-norm table (tab:pnorm-
// comparison; its fixed volume is 7.30, its ℓ2 ball's), every exponent.
var paperPNorm = map[float64]*PNormPaper{
	2:   {Exclusion: 14.5, LogVol: 7.30, VolCoverage: 95.0, VolExclusion: 14.5, VolThreshold: 7.0673},
	1:   {Exclusion: 17.6, LogVol: 7.04, VolCoverage: 96.2, VolExclusion: 11.9, VolThreshold: 10.3508},
	0.9: {Exclusion: 18.1, LogVol: 7.02, VolCoverage: 96.2, VolExclusion: 11.9, VolThreshold: 11.3687},
	0.8: {Exclusion: 18.6, LogVol: 7.02, VolCoverage: 96.3, VolExclusion: 12.1, VolThreshold: 12.8215},
	0.7: {Exclusion: 19.2, LogVol: 7.02, VolCoverage: 96.3, VolExclusion: 12.6, VolThreshold: 15.0267},
	0.6: {Exclusion: 19.7, LogVol: 7.04, VolCoverage: 96.2, VolExclusion: 13.5, VolThreshold: 18.6739},
	0.5: {Exclusion: 20.3, LogVol: 7.09, VolCoverage: 96.0, VolExclusion: 15.1, VolThreshold: 25.5272},
}

// PNormRow is the isotropic p-ball {‖x‖_p ≤ t} at one exponent, over seeds:
// calibrated (fixed coverage: the conformal threshold, with its guarantee)
// and at a fixed volume (the threshold whose set has the ℓ2 ball's
// calibrated log-volume on the same seed: no guarantee, the coverage is
// whatever that volume gives).
type PNormRow struct {
	P float64 `json:"p"`
	// At fixed coverage: coverage and exclusion %, log-volume (total).
	Coverage  eval.Summary `json:"coverage"`
	Exclusion eval.Summary `json:"exclusion"`
	LogVol    eval.Summary `json:"logvol"`
	// At fixed volume: coverage and exclusion %, the threshold.
	VolCoverage  eval.Summary `json:"fixed_volume_coverage"`
	VolExclusion eval.Summary `json:"fixed_volume_exclusion"`
	VolThreshold eval.Summary `json:"fixed_volume_threshold"`
	Paper        *PNormPaper  `json:"paper,omitempty"`
}

// PNormTable is the p-norm table.
type PNormTable struct {
	Title  string     `json:"title"`
	Config string     `json:"config"`
	Rows   []PNormRow `json:"rows"`
}

// PNorm runs the p-norm table on the simulation: for each seed and each p
// of ps, the isotropic p-ball calibrated on the calibration split, and the
// same ball at the threshold that gives the ℓ2 ball's calibrated
// log-volume, both evaluated on the test split. Seeds go to cfg.Workers
// goroutines, each into its own slot. progress, if not nil, is called
// after each seed (one call at a time).
func PNorm(ctx context.Context, cfg SimConfig, ps []float64, progress func(done, total int)) (*PNormTable, error) {
	cfg.defaults()
	if err := conformal.CheckAlpha(cfg.Alpha); err != nil {
		return nil, err
	}
	for _, p := range ps {
		if !(p > 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("experiment: p = %v, want a finite p > 0", p)
		}
	}
	data := sim.Mixed(cfg.DataSeed, cfg.PerClass)
	type cell struct{ fixed, vol eval.Result }
	type seedResult struct {
		cells []cell
		thr   []float64
		err   error
	}
	res := make([]seedResult, cfg.Seeds)
	var mu sync.Mutex
	done := 0
	parallel.For(cfg.Seeds, 1, cfg.Workers, func(s, _, _ int) {
		r := &res[s]
		r.cells, r.thr = make([]cell, len(ps)), make([]float64, len(ps))
		r.err = func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			seed := uint64(s)
			sp, err := simSplits(data, cfg, seed, false, 1)
			if err != nil {
				return err
			}
			ball, err := conformal.Calibrate(geometry.IdentityNorm(sim.Dim, 2), sp.Cal, cfg.Alpha, calOpts(cfg.Config, seed))
			if err != nil {
				return err
			}
			target := ball.LogVolume()
			for i, p := range ps {
				g := geometry.IdentityNorm(sim.Dim, p)
				set, err := conformal.Calibrate(g, sp.Cal, cfg.Alpha, calOpts(cfg.Config, seed))
				if err != nil {
					return fmt.Errorf("p = %v: %w", p, err)
				}
				if r.cells[i].fixed, err = eval.EvaluateContext(ctx, set, sp.Test); err != nil {
					return err
				}
				// LogVolume(t) = d·log t + LogVolume(1): the threshold of the
				// target volume. Not a conformal quantile: evaluation only.
				vol := *set
				vol.Threshold = math.Exp((target - g.LogVolume(1)) / float64(sim.Dim))
				r.thr[i] = vol.Threshold
				if r.cells[i].vol, err = eval.EvaluateContext(ctx, &vol, sp.Test); err != nil {
					return err
				}
			}
			return nil
		}()
		if progress != nil {
			mu.Lock()
			done++
			progress(done, cfg.Seeds)
			mu.Unlock()
		}
	})
	t := &PNormTable{
		Title: "The isotropic p-ball on the simulated 3D clusters (mixed)",
		Config: fmt.Sprintf("%d clusters × %d points, k=%d, α=%v, %s, data seed %d, calibration %v; fixed volume: the ℓ2 ball's calibrated log-volume on each seed",
			sim.Classes, cfg.PerClass, cfg.K, cfg.Alpha, seedRange(cfg.Seeds), cfg.DataSeed, cfg.calibrationName()),
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, p := range ps {
		var cov, exc, vol, vcov, vexc, thr []float64
		for s := range res {
			if err := res[s].err; err != nil {
				return nil, fmt.Errorf("seed %d: %w", s, err)
			}
			c := res[s].cells[i]
			cov, exc = append(cov, 100*c.fixed.Coverage), append(exc, 100*c.fixed.Exclusion)
			vol = append(vol, c.fixed.LogVolPerDim*sim.Dim)
			vcov, vexc = append(vcov, 100*c.vol.Coverage), append(vexc, 100*c.vol.Exclusion)
			thr = append(thr, res[s].thr[i])
		}
		t.Rows = append(t.Rows, PNormRow{P: p, Coverage: eval.Summarize(cov), Exclusion: eval.Summarize(exc),
			LogVol: eval.Summarize(vol), VolCoverage: eval.Summarize(vcov), VolExclusion: eval.Summarize(vexc),
			VolThreshold: eval.Summarize(thr), Paper: paperPNorm[p]})
	}
	return t, nil
}

// WriteText writes the table: fixed coverage, then fixed volume, each
// beside the paper's figures where it has them.
func (t *PNormTable) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", t.Title, t.Config)
	b.WriteString("At fixed coverage (calibrated, 1−α guaranteed):\n\n")
	b.WriteString("| p   | Coverage    | Exclusion↑  | LogVol↓      | Paper: exc / LogVol |\n")
	b.WriteString("|-----|-------------|-------------|--------------|---------------------|\n")
	for _, r := range t.Rows {
		paper := "—"
		if r.Paper != nil {
			paper = fmt.Sprintf("%.1f%% / %.2f", r.Paper.Exclusion, r.Paper.LogVol)
		}
		fmt.Fprintf(&b, "| %-3v | %s | %s | %s | %-19s |\n", r.P, pct(r.Coverage), pct(r.Exclusion), num(r.LogVol), paper)
	}
	b.WriteString("\nAt fixed volume (the ℓ2 ball's; the threshold is not a conformal quantile, so coverage is not guaranteed):\n\n")
	b.WriteString("| p   | Coverage    | Exclusion↑  | Threshold    | Paper: cov / exc / threshold |\n")
	b.WriteString("|-----|-------------|-------------|--------------|------------------------------|\n")
	for _, r := range t.Rows {
		paper := "—"
		if r.Paper != nil {
			paper = fmt.Sprintf("%.1f%% / %.1f%% / %.4f", r.Paper.VolCoverage, r.Paper.VolExclusion, r.Paper.VolThreshold)
		}
		fmt.Fprintf(&b, "| %-3v | %s | %s | %s | %-28s |\n", r.P, pct(r.VolCoverage), pct(r.VolExclusion), num(r.VolThreshold), paper)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pct(s eval.Summary) string { return meanPM("%4.1f", "%.1f", s) + "%" }

func num(s eval.Summary) string { return meanPM("%5.2f", "%.2f", s) }

// meanPM is s's mean in format mf, then " ± " and its spread in format
// sf — the mean alone for one value (a single seed: "± 0.0" would read as
// a certainty nothing measured).
func meanPM(mf, sf string, s eval.Summary) string {
	if s.N == 1 {
		return fmt.Sprintf(mf, s.Mean)
	}
	return fmt.Sprintf(mf+" ± "+sf, s.Mean, s.Std)
}
