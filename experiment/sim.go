package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

// SimConfig configures the simulation table. Zero fields take the paper's
// values: 20 seeds, k = 500, 5000 points per class, the simulation recipe
// (train.SimRecipe).
type SimConfig struct {
	Config
	PerClass int // points per class
	// DataSeed generates the point cloud, which the paper holds fixed over
	// seeds ("generated in the first seed"); the seeds vary the split, the
	// pairs, the calibration draw and the ellipsoid's halving.
	DataSeed uint64
}

func (c *SimConfig) defaults() {
	c.Seeds, c.K, c.PerClass = cmp.Or(c.Seeds, 20), cmp.Or(c.K, sim.K), cmp.Or(c.PerClass, sim.PerClass)
	c.Config.defaults()
}

// Sim runs methods on the simulation over cfg.Seeds seeds. Runs (a seed and
// a method) go to cfg.Workers goroutines, each into its own slot, so the
// table does not depend on the number of goroutines. progress, if not nil,
// is called after each run (one call at a time).
func Sim(ctx context.Context, cfg SimConfig, methods []Method, progress func(done, total int, what string)) (*Table, error) {
	cfg.defaults()
	if err := conformal.CheckAlpha(cfg.Alpha); err != nil {
		return nil, err
	}
	trains := slices.ContainsFunc(methods, func(m Method) bool { return m.Trains })
	data := sim.Mixed(cfg.DataSeed, cfg.PerClass)
	cfg.shapes = !cfg.bare
	results, err := runTable(ctx, cfg.Config, "sim", methods, func(seed uint64, trains bool, workers int) (*Splits, error) {
		return simSplits(data, cfg, seed, trains, workers)
	}, progress)
	if err != nil {
		return nil, err
	}
	t := &Table{
		Title: "Simulated 3D clusters (mixed)",
		Config: fmt.Sprintf("%d clusters × %d points, k=%d, α=%v, %s, data seed %d, calibration %v",
			sim.Classes, cfg.PerClass, cfg.K, cfg.Alpha, seedRange(cfg.Seeds), cfg.DataSeed, cfg.calibrationName()),
	}
	if trains {
		tc := cfg.Train.WithDefaults()
		t.Config += "; " + recipeLine(tc, recipeShown{objective: true, threshold: true})
	}
	if cfg.Calibration == conformal.Pooled {
		t.Warnings = append(t.Warnings, "pooled calibration: coverage is approximate, not guaranteed")
	}
	t.Rows = rows(methods, results)
	if cfg.bare {
		return t, nil
	}
	// Seed 0's first test anchor, with its positives and negatives, for
	// the figure of set shapes.
	sp, err := simSplits(data, cfg, 0, false, 1)
	if err != nil {
		return nil, err
	}
	t.Shapes = &Shapes{D: sp.Test.D, Anchor: slices.Clone(sp.Test.Anchor(0)),
		Positives: slices.Clone(sp.Test.Positives[:sp.Test.K*sp.Test.D]), Negatives: sp.Test.NegativeRows(nil, 0)}
	for m, meth := range methods {
		t.Shapes.Sets = append(t.Shapes.Sets, ShapeSet{Method: meth.Name, Set: results[0][m].Set})
	}
	return t, nil
}

// Shapes holds what the figure of set shapes draws: seed 0's fitted sets
// (as set files) and one test anchor of seed 0 with its positives and
// negatives (rows of D coordinates).
type Shapes struct {
	D         int        `json:"d"`
	Anchor    []float32  `json:"anchor"`
	Positives []float32  `json:"positives"`
	Negatives []float32  `json:"negatives"`
	Sets      []ShapeSet `json:"sets"`
}

// ShapeSet is one row's fitted set.
type ShapeSet struct {
	Method string          `json:"method"`
	Set    json.RawMessage `json:"set"`
}

func simSplits(data *sim.Data, cfg SimConfig, seed uint64, trains bool, workers int) (*Splits, error) {
	split := data.Split(seed)
	sp := &Splits{Workers: workers, Rows: new(train.Rows)}
	var err error
	if sp.Cal, err = data.Pairs(split.Cal, cfg.K, seed, "cal"); err != nil {
		return nil, err
	}
	if sp.Test, err = data.Pairs(split.Test, cfg.K, seed, "test"); err != nil {
		return nil, err
	}
	if trains {
		if sp.Fit, err = data.Pairs(split.Fit, cfg.K, seed, "fit"); err != nil {
			return nil, err
		}
		if sp.Val, err = data.Pairs(split.Val, cfg.K, seed, "val"); err != nil {
			return nil, err
		}
	}
	return sp, nil
}
