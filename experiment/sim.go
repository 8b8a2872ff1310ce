// Package experiment reproduces the paper's tables: it runs methods over
// seeds on fixed splits and renders the results in the paper's layout.
package experiment

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ccsets/ccs/baseline"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/sim"
)

// SimConfig configures the simulation table. Zero fields take the paper's
// values, noted per field.
type SimConfig struct {
	Seeds    int     // seeds 0..Seeds−1; 0 means 20 (the paper)
	K        int     // positives and negatives per anchor; 0 means 500
	Alpha    float64 // 0 means 0.05
	PerClass int     // points per class; 0 means 5000
	// DataSeed generates the point cloud, which the paper holds fixed over
	// seeds ("generated in the first seed"); the seeds vary the split, the
	// pairs, the calibration draw and the ellipsoid's halving.
	DataSeed    uint64
	Calibration conformal.Mode // 0 means one-per-anchor
	Workers     int            // seeds run in parallel; 0 means GOMAXPROCS
}

func (c *SimConfig) defaults() {
	if c.Seeds == 0 {
		c.Seeds = 20
	}
	if c.K == 0 {
		c.K = 500
	}
	if c.Alpha == 0 {
		c.Alpha = 0.05
	}
	if c.PerClass == 0 {
		c.PerClass = sim.PerClass
	}
	if c.Calibration == 0 {
		c.Calibration = conformal.OnePerAnchor
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
}

// Row is one method's results over seeds.
type Row struct {
	Method       string       `json:"method"`
	Coverage     eval.Summary `json:"coverage"`
	Exclusion    eval.Summary `json:"exclusion"`
	LogVolPerDim eval.Summary `json:"logvol_per_dim"`
	// Paper holds the paper's Table 1 figures for this row, if any.
	Paper *PaperRow `json:"paper,omitempty"`
}

// PaperRow is a row of the paper's table, in percent and LogVol/d.
type PaperRow struct {
	Coverage, Exclusion, LogVolPerDim float64
}

// Table is a reproduced table.
type Table struct {
	Title    string   `json:"title"`
	Config   string   `json:"config"`
	Rows     []Row    `json:"rows"`
	Warnings []string `json:"warnings,omitempty"`
}

// Method builds a calibrated set from a seed's splits.
type Method struct {
	Name  string
	Paper *PaperRow
	Fit   func(sp *SimSplits, alpha float64, seed uint64, mode conformal.Mode) (*conformal.Set, error)
}

// SimSplits are one seed's bundles. Fit and Val are built only for methods
// that train (later issues); the baselines use Cal alone.
type SimSplits struct {
	Cal, Test *bundle.Bundle
}

// paperTable1 holds the paper's Table 1 (α = 0.05, k = 500, 20 seeds).
var paperTable1 = map[string]*PaperRow{
	"Conformal Ball (ℓ2)":   {94.7, 15.3, 2.74},
	"Mahalanobis Ellipsoid": {94.6, 61.8, 2.28},
}

// SimBaselines are the two rows this issue provides.
func SimBaselines() []Method {
	return []Method{
		{Name: "Conformal Ball (ℓ2)", Paper: paperTable1["Conformal Ball (ℓ2)"],
			Fit: func(sp *SimSplits, alpha float64, seed uint64, mode conformal.Mode) (*conformal.Set, error) {
				return baseline.Ball(sp.Cal, alpha, baseline.Options{Calibration: conformal.Options{Mode: mode, Seed: seed}})
			}},
		{Name: "Mahalanobis Ellipsoid", Paper: paperTable1["Mahalanobis Ellipsoid"],
			Fit: func(sp *SimSplits, alpha float64, seed uint64, mode conformal.Mode) (*conformal.Set, error) {
				return baseline.Ellipsoid(sp.Cal, alpha, baseline.Options{Calibration: conformal.Options{Mode: mode, Seed: seed}, SplitSeed: seed})
			}},
	}
}

// Sim runs methods on the simulation over cfg.Seeds seeds. Seeds run in
// parallel, each into its own slot, so the table does not depend on
// cfg.Workers. progress, if not nil, is called after each seed with the
// number done (from several goroutines, one call at a time).
func Sim(cfg SimConfig, methods []Method, progress func(done, total int)) (*Table, error) {
	cfg.defaults()
	if err := conformal.CheckAlpha(cfg.Alpha); err != nil {
		return nil, err
	}
	data := sim.Mixed(cfg.DataSeed, cfg.PerClass)
	type seedResult struct {
		res []eval.Result
		err error
	}
	results := make([]seedResult, cfg.Seeds)
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(cfg.Workers, cfg.Seeds) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				r, err := simSeed(data, cfg, methods, uint64(s))
				results[s] = seedResult{r, err}
				if progress != nil {
					mu.Lock()
					done++
					progress(done, cfg.Seeds)
					mu.Unlock()
				}
			}
		}()
	}
	for s := range cfg.Seeds {
		jobs <- s
	}
	close(jobs)
	wg.Wait()

	t := &Table{
		Title: "Simulated 3D clusters (mixed)",
		Config: fmt.Sprintf("%d clusters × %d points, k=%d, α=%v, seeds 0–%d, data seed %d, calibration %v",
			sim.Classes, cfg.PerClass, cfg.K, cfg.Alpha, cfg.Seeds-1, cfg.DataSeed, cfg.Calibration),
	}
	if cfg.Calibration == conformal.Pooled {
		t.Warnings = append(t.Warnings, "pooled calibration: coverage is approximate, not guaranteed")
	}
	for m, method := range methods {
		var cov, exc, vol []float64
		for s, r := range results {
			if r.err != nil {
				return nil, fmt.Errorf("seed %d, %s: %w", s, method.Name, r.err)
			}
			cov = append(cov, 100*r.res[m].Coverage)
			exc = append(exc, 100*r.res[m].Exclusion)
			vol = append(vol, r.res[m].LogVolPerDim)
		}
		t.Rows = append(t.Rows, Row{Method: method.Name, Coverage: eval.Summarize(cov),
			Exclusion: eval.Summarize(exc), LogVolPerDim: eval.Summarize(vol), Paper: method.Paper})
	}
	return t, nil
}

func simSeed(data *sim.Data, cfg SimConfig, methods []Method, seed uint64) ([]eval.Result, error) {
	split := data.Split(seed)
	cal, err := data.Pairs(split.Cal, cfg.K, seed, "cal")
	if err != nil {
		return nil, err
	}
	test, err := data.Pairs(split.Test, cfg.K, seed, "test")
	if err != nil {
		return nil, err
	}
	sp := &SimSplits{Cal: cal, Test: test}
	out := make([]eval.Result, len(methods))
	for i, m := range methods {
		set, err := m.Fit(sp, cfg.Alpha, seed, cfg.Calibration)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if out[i], err = eval.Evaluate(set, test); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return out, nil
}
