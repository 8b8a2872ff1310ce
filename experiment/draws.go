package experiment

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/ccsets/ccs/eval"
)

// Draw is one point cloud's baseline figures (mean over the draw's seeds).
type Draw struct {
	DataSeed uint64 `json:"data_seed"`
	// Ball and Ellipsoid exclusion (percent) and LogVol/d.
	BallExclusion      float64 `json:"ball_exclusion"`
	BallLogVol         float64 `json:"ball_logvol_per_dim"`
	EllipsoidExclusion float64 `json:"ellipsoid_exclusion"`
	EllipsoidLogVol    float64 `json:"ellipsoid_logvol_per_dim"`
	// Distance to the paper's Table 1 baseline rows:
	// |Δexc_ball|/5 + |Δexc_ell|/5 + |ΔLogVol_ball|/0.1 + |ΔLogVol_ell|/0.1,
	// weighing 5 points of exclusion like 0.1 of LogVol/d.
	Distance float64 `json:"distance"`
}

// SimDraws runs the two baselines on data seeds 0..draws−1 (cfg.Seeds seeds
// each) and measures how close each draw's figures come to the paper's
// Table 1: the survey behind sim.PaperDataSeed.
func SimDraws(ctx context.Context, cfg SimConfig, draws int, progress func(done, total int)) ([]Draw, error) {
	ballRow, ellRow := Ball(), Ellipsoid()
	ball, ell := ballRow.Paper, ellRow.Paper
	out := make([]Draw, 0, draws)
	for ds := range draws {
		c := cfg
		c.DataSeed = uint64(ds)
		c.plain() // one table per data seed: no cells
		t, err := Sim(ctx, c, []Method{ballRow, ellRow}, nil)
		if err != nil {
			return nil, fmt.Errorf("data seed %d: %w", ds, err)
		}
		b, _ := t.Row(ballRow.Name)
		e, _ := t.Row(ellRow.Name)
		d := Draw{DataSeed: uint64(ds), BallExclusion: b.Exclusion.Mean, BallLogVol: b.LogVolPerDim.Mean,
			EllipsoidExclusion: e.Exclusion.Mean, EllipsoidLogVol: e.LogVolPerDim.Mean}
		d.Distance = math.Abs(d.BallExclusion-ball.Exclusion)/5 + math.Abs(d.EllipsoidExclusion-ell.Exclusion)/5 +
			math.Abs(d.BallLogVol-ball.LogVolPerDim)/0.1 + math.Abs(d.EllipsoidLogVol-ell.LogVolPerDim)/0.1
		out = append(out, d)
		if progress != nil {
			progress(ds+1, draws)
		}
	}
	return out, nil
}

// WriteDraws renders a survey: one line per draw, the spread, and the draws
// closest to the paper.
func WriteDraws(w io.Writer, draws []Draw) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "data seed\tball exc %\tball LogVol/d\tellipsoid exc %\tellipsoid LogVol/d\tdistance to paper\t")
	for _, d := range draws {
		fmt.Fprintf(tw, "%d\t%.1f\t%.2f\t%.1f\t%.2f\t%.2f\t\n", d.DataSeed, d.BallExclusion, d.BallLogVol,
			d.EllipsoidExclusion, d.EllipsoidLogVol, d.Distance)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	col := func(f func(Draw) float64) string {
		v := make([]float64, len(draws))
		for i, d := range draws {
			v[i] = f(d)
		}
		s := eval.Summarize(v)
		return fmt.Sprintf("mean %.2f, min %.2f, max %.2f", s.Mean, slices.Min(v), slices.Max(v))
	}
	fmt.Fprintf(w, "\nover %d draws: ball exclusion %s; ellipsoid exclusion %s\n", len(draws),
		col(func(d Draw) float64 { return d.BallExclusion }), col(func(d Draw) float64 { return d.EllipsoidExclusion }))
	fmt.Fprintf(w, "paper: ball 15.3%% / 2.74, ellipsoid 61.8%% / 2.28\n")
	best := slices.Clone(draws)
	slices.SortStableFunc(best, func(a, b Draw) int { return cmp.Compare(a.Distance, b.Distance) })
	fmt.Fprintf(w, "closest draws:")
	for _, d := range best[:min(5, len(best))] {
		fmt.Fprintf(w, " %d (%.2f)", d.DataSeed, d.Distance)
	}
	_, err := fmt.Fprintln(w)
	return err
}
