// Package experiment reproduces the paper's tables: it runs methods over
// seeds on fixed splits and renders the results in the paper's layout.
package experiment

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/train"
)

// Config is what every table shares. Zero fields take the paper's values;
// Seeds and K, whose values differ between tables, are filled by each
// table (SimConfig, RealConfig).
type Config struct {
	Seeds       int            // seeds 0..Seeds−1
	K           int            // positives and negatives per anchor
	Alpha       float64        // 0 means the paper's 0.05
	Calibration conformal.Mode // 0 means one-per-anchor
	Delta       float64        // PAC's δ, with Calibration PAC
	Workers     int            // runs in parallel; 0 means GOMAXPROCS
	// AllowInfinite accepts a whole-space set (threshold +Inf) where the
	// calibration has too few anchors for α (conformal.Options): for
	// class-conditional calibration, the sets of classes too small for
	// one (Compare warns of them) instead of a refusal.
	AllowInfinite bool
	// Shift centres every row's sets at anchor + the fit split's mean
	// offset of positive − anchor (geometry.Shifted; Compare's -shift):
	// for anchors and positives from two encoders.
	Shift bool
	// HeadDim is the outputs of the InfoNCE rows' projection head
	// (train.Spec.HeadDim; ccs fit and compare -head-dim); 0: the
	// embeddings' dimension. The rows without a head ignore it.
	HeadDim int
	// Train is the training recipe of the learned rows; its objective, α
	// and seed are set per row. Zero fields take the table's recipe.
	Train train.Config
	// OutDir, if set, keeps every fitted set as OutDir/seed-S/METHOD.json.
	OutDir string
	// Epochs, if not nil, is told each learned row's training progress,
	// epoch by epoch (row is the row's name): a row's cell on a large
	// split trains for minutes between the table's progress reports. It
	// may be called from several runs at once.
	Epochs func(row string, seed uint64, p train.Progress)
	// SizeProgress, if not nil, is told how many of a cell's Size-column
	// anchors are counted (done of total), as they are: a head's sets
	// (InfoNCE rows) take a good part of a second an anchor, minutes a
	// cell. It may be called from several runs at once.
	SizeProgress func(row string, seed uint64, done, total int)
	// Cells, if not nil, keeps every finished (row, seed) result, and a
	// rerun reads back those it has instead of computing them.
	Cells *Cells
	// shapes keeps seed 0's fitted sets in the cells (the simulation's
	// figure of set shapes; small sets only); bare leaves out the figures'
	// data (curves, shapes) for tables only read for their numbers.
	shapes, bare bool
	// compare, for Compare, measures each run's extra columns on
	// compareData.
	compare     *CompareConfig
	compareData *CompareData
}

// plain makes c a table read only for its numbers, run under a name other
// configurations share: no cells, no kept sets, no curves, no shapes.
func (c *Config) plain() { c.Cells, c.OutDir, c.bare = nil, "", true }

// defaults fills the fields every table defaults alike.
func (c *Config) defaults() {
	c.Alpha, c.Calibration = cmp.Or(c.Alpha, objective.PaperConfig.Alpha), cmp.Or(c.Calibration, conformal.OnePerAnchor)
	c.Workers = cmp.Or(c.Workers, runtime.GOMAXPROCS(0))
}

// calibrationName is the calibration mode as the tables print it, with
// PAC's δ.
func (c Config) calibrationName() string {
	if c.Calibration == conformal.PAC {
		return fmt.Sprintf("pac (δ=%v)", c.Delta)
	}
	return c.Calibration.String()
}

func calOpts(cfg Config, seed uint64) conformal.Options {
	opt := conformal.Options{Mode: cfg.Calibration, Seed: seed, Delta: cfg.Delta, AllowInfinite: cfg.AllowInfinite}
	if cfg.compareData != nil {
		opt.LabelNames = cfg.compareData.LabelNames
	}
	return opt
}

// Ordinal writes n as English does: 1st, 2nd, 3rd, 4th, 11th, 21st.
func Ordinal(n int) string {
	suffix := "th"
	switch n % 10 {
	case 1:
		suffix = "st"
	case 2:
		suffix = "nd"
	case 3:
		suffix = "rd"
	}
	if n%100 >= 11 && n%100 <= 13 {
		suffix = "th"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// recipeShown are the parts of a training recipe a table's protocol line
// shows beyond the batch, SGD's rate and momentum, and the epochs.
type recipeShown struct{ optimiser, objective, threshold bool }

// recipeLine is a table's account of its training recipe: "training:
// batch B, SGD lr … momentum …[ weight decay …[, the learning rate
// cosine-annealed]][, clip …, T=…,
// λ=…][, threshold …], ≤E epochs, patience P". Every table writes it
// here.
func recipeLine(tc train.Config, show recipeShown) string {
	s := fmt.Sprintf("training: batch %d, SGD lr %v momentum %v", tc.BatchSize, tc.SGD.LR, tc.SGD.Momentum)
	if show.optimiser {
		s += fmt.Sprintf(" weight decay %v", tc.SGD.WeightDecay)
		if tc.SGD.Cosine {
			s += ", the learning rate cosine-annealed"
		}
	}
	if show.objective {
		s += fmt.Sprintf(", clip %v, T=%v, λ=%v", tc.ClipNorm, tc.Objective.T, tc.Objective.Lambda)
	}
	if show.threshold {
		s += fmt.Sprintf(", threshold %v", tc.Objective.Threshold)
	}
	return s + fmt.Sprintf(", ≤%d epochs, patience %d", tc.MaxEpochs, tc.Patience)
}

// keep saves set as OutDir/seed-S/FILE.json when OutDir is set.
func (cfg Config) keep(set *conformal.Set, seed uint64, file string) error {
	if cfg.OutDir == "" {
		return nil
	}
	dir := filepath.Join(cfg.OutDir, fmt.Sprintf("seed-%d", seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return set.Save(filepath.Join(dir, file+".json"))
}

// seedRange names the seeds 0 … n−1 of a table's configuration line:
// "seed 0" for one, "seeds 0–4" for five.
func seedRange(n int) string {
	if n == 1 {
		return "seed 0"
	}
	return fmt.Sprintf("seeds 0–%d", n-1)
}
