// Package experiment reproduces the paper's tables: it runs methods over
// seeds on fixed splits and renders the results in the paper's layout.
package experiment

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ccsets/ccs/baseline"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/sim"
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
	// Train is the training recipe of the learned rows; its objective, α
	// and seed are set per row. Zero fields take the table's recipe.
	Train train.Config
	// OutDir, if set, keeps every fitted set as OutDir/seed-S/METHOD.json.
	OutDir string
	// Cells, if not nil, keeps every finished (row, seed) result, and a
	// rerun reads back those it has instead of computing them.
	Cells *Cells
	// shapes keeps seed 0's fitted sets in the cells (the simulation's
	// figure of set shapes; small sets only); bare leaves out the figures'
	// data (curves, shapes) for tables only read for their numbers.
	shapes, bare bool
}

// plain makes c a table read only for its numbers, run under a name other
// configurations share: no cells, no kept sets, no curves, no shapes.
func (c *Config) plain() { c.Cells, c.OutDir, c.bare = nil, "", true }

// defaults fills the fields every table defaults alike.
func (c *Config) defaults() {
	c.Alpha, c.Calibration = cmp.Or(c.Alpha, objective.PaperConfig.Alpha), cmp.Or(c.Calibration, conformal.OnePerAnchor)
	c.Workers = cmp.Or(c.Workers, runtime.GOMAXPROCS(0))
}

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

// Row is one method's results over seeds.
type Row struct {
	Method       string       `json:"method"`
	Coverage     eval.Summary `json:"coverage"`
	Exclusion    eval.Summary `json:"exclusion"`
	LogVolPerDim eval.Summary `json:"logvol_per_dim"`
	// PerSeed holds each seed's results, in seed order.
	PerSeed []eval.Result `json:"per_seed"`
	// Paper holds the paper's Table 1 figures for this row, if any.
	Paper *PaperRow `json:"paper,omitempty"`
	// ClassCoverage and ClassExclusion are measured on the class test
	// split (positives of the anchor's class), when the table has one.
	ClassCoverage  *eval.Summary `json:"class_coverage,omitempty"`
	ClassExclusion *eval.Summary `json:"class_exclusion,omitempty"`
	// Curve is the row's geometry recalibrated at each of CurveAlphas
	// (eval.Recalibrated) on the test split, over seeds: coverage against
	// α, and the inclusion–exclusion trade-off.
	Curve []CurvePoint `json:"alpha_curve,omitempty"`
}

// CurvePoint is a row at one recalibrated α, over seeds: coverage and
// exclusion in percent, LogVol/d; N is the calibration scores behind each
// threshold (the finite-sample band is [1−α, 1−α+1/(N+1)]).
type CurvePoint struct {
	Alpha        float64      `json:"alpha"`
	N            int          `json:"n"`
	Coverage     eval.Summary `json:"coverage"`
	Exclusion    eval.Summary `json:"exclusion"`
	LogVolPerDim eval.Summary `json:"logvol_per_dim"`
}

// CurveAlphas are the levels each row is recalibrated at.
var CurveAlphas = []float64{0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3}

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
	// Shapes, for the simulation, holds seed 0's sets and one anchor.
	Shapes *Shapes `json:"shapes,omitempty"`
}

// Row returns the row of the method named name.
func (t *Table) Row(name string) (Row, bool) {
	for _, r := range t.Rows {
		if r.Method == name {
			return r, true
		}
	}
	return Row{}, false
}

// Method builds a calibrated set from a seed's splits.
type Method struct {
	Name  string
	File  string // file name stem for OutDir
	Paper *PaperRow
	// Trains reports whether Fit needs the fit and validation splits.
	Trains bool
	// Calibration, if not nil, returns the bundle Fit calibrates the
	// threshold on, when it is not the whole calibration split (the
	// ellipsoid's second half): the recalibrated curves use it, so that no
	// anchor that chose the geometry calibrates it.
	Calibration func(sp *Splits, seed uint64) (*bundle.Bundle, error)
	Fit         func(sp *Splits, cfg Config, seed uint64) (*conformal.Set, error)
}

// Splits are one seed's bundles. Fit and Val are built only when a method
// trains; the baselines use Cal alone.
type Splits struct {
	Fit, Val, Cal, Test *bundle.Bundle
	// ClassTest, if set, is a second test bundle whose positives share the
	// anchor's class (the real-image tables' coverage transfer).
	ClassTest *bundle.Bundle
	Workers   int // goroutines a training run may use
}

// paperTable1 holds the paper's Table 1 (α = 0.05, k = 500, 20 seeds):
// coverage %, exclusion %, LogVol/d.
var paperTable1 = map[string]*PaperRow{
	"Conformal Ball (ℓ2)":   {94.7, 15.3, 2.74},
	"Mahalanobis Ellipsoid": {94.6, 61.8, 2.28},
	"Single (Neg)":          {94.7, 66.9, 5.87},
	"Generalized (Neg)":     {94.9, 66.3, 4.93},
	"Single (Vol)":          {94.7, 73.4, 2.24},
	"Generalized (Vol)":     {94.7, 52.6, -4.13},
	"Single (Neg,Vol)":      {94.7, 70.3, 3.41},
	"Generalized (Neg,Vol)": {94.9, 66.7, 3.93},
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
	return conformal.Options{Mode: cfg.Calibration, Seed: seed, Delta: cfg.Delta}
}

// Ball is the vanilla conformal ℓ2 ball, calibrated on the calibration
// split.
func Ball() Method {
	const name = "Conformal Ball (ℓ2)"
	return Method{Name: name, File: "ball", Paper: paperTable1[name],
		Fit: func(sp *Splits, cfg Config, seed uint64) (*conformal.Set, error) {
			return baseline.Ball(sp.Cal, cfg.Alpha, baseline.Options{Calibration: calOpts(cfg, seed)})
		}}
}

// Ellipsoid is the Mahalanobis ellipsoid: Σ from one half of the
// calibration split, the threshold from the other.
func Ellipsoid() Method {
	const name = "Mahalanobis Ellipsoid"
	return Method{Name: name, File: "ellipsoid", Paper: paperTable1[name],
		Calibration: func(sp *Splits, seed uint64) (*bundle.Bundle, error) {
			_, cal, err := baseline.Halves(sp.Cal, seed)
			return cal, err
		},
		Fit: func(sp *Splits, cfg Config, seed uint64) (*conformal.Set, error) {
			return baseline.Ellipsoid(sp.Cal, cfg.Alpha, baseline.Options{Calibration: calOpts(cfg, seed), SplitSeed: seed})
		}}
}

// Baselines are the two vanilla rows.
func Baselines() []Method { return []Method{Ball(), Ellipsoid()} }

// Learned is the row of a learnable family trained with an objective
// (train.Fit: initialised at the ℓ2 ball, trained on the fit split with the
// checkpoint chosen on the validation split), calibrated on the calibration
// split.
func Learned(kind geometry.Kind, obj objective.Objective) Method { return learned(kind, obj, false) }

// LearnedInfoNCE is Learned with the InfoNCE projection head (DESIGN §2.4):
// a linear layer initialised at the identity, trained jointly with the set
// in alternate epochs; the set is scored through it.
func LearnedInfoNCE(kind geometry.Kind, obj objective.Objective) Method {
	return learned(kind, obj, true)
}

func learned(kind geometry.Kind, obj objective.Objective, infoNCE bool) Method {
	family := kind.Title()
	terms := map[objective.Objective]string{objective.Neg: "Neg", objective.Vol: "Vol", objective.NegVol: "Neg,Vol"}[obj]
	file := kind.String() + "-" + strings.ReplaceAll(obj.String(), ",", "-")
	if infoNCE {
		terms += ",InfoNCE"
		file += "-infonce"
	}
	name := family + " (" + terms + ")"
	return Method{Name: name, File: file, Paper: paperTable1[name], Trains: true,
		Fit: func(sp *Splits, cfg Config, seed uint64) (*conformal.Set, error) {
			tc := cfg.Train
			tc.Objective.Objective, tc.Objective.Alpha = obj, cfg.Alpha
			tc.Seed, tc.Workers = seed, sp.Workers
			f, err := train.Fit(train.Spec{Kind: kind, Head: infoNCE, Config: tc}, sp.Fit, sp.Val, nil)
			if err != nil {
				return nil, err
			}
			set, err := conformal.Calibrate(f.Geometry, sp.Cal, cfg.Alpha, calOpts(cfg, seed))
			if err != nil {
				return nil, err
			}
			set.Fit = f.Info
			return set, nil
		}}
}

// LearnedRows are the paper's six learned rows: Single and Generalized
// under Neg, Vol and Neg,Vol.
func LearnedRows() []Method {
	return bothFamilies(Learned, objective.Neg, objective.Vol, objective.NegVol)
}

// InfoNCERows are the six rows with the InfoNCE head, in the paper's Table
// 2 order (Vol, Neg, Neg,Vol; the paper has no simulation rows for them).
func InfoNCERows() []Method {
	return bothFamilies(LearnedInfoNCE, objective.Vol, objective.Neg, objective.NegVol)
}

// bothFamilies is row(kind, obj) for each objective, Single then
// Generalized.
func bothFamilies(row func(geometry.Kind, objective.Objective) Method, objs ...objective.Objective) []Method {
	var m []Method
	for _, obj := range objs {
		m = append(m, row(geometry.KindNorm, obj), row(geometry.KindGenBall, obj))
	}
	return m
}

// SimMethods are the paper's eight rows of Table 1: the baselines and the
// learned rows.
func SimMethods() []Method { return append(Baselines(), LearnedRows()...) }

// Sim runs methods on the simulation over cfg.Seeds seeds. Runs (a seed and
// a method) go to cfg.Workers goroutines, each into its own slot, so the
// table does not depend on the number of goroutines. progress, if not nil,
// is called after each run (one call at a time).
func Sim(cfg SimConfig, methods []Method, progress func(done, total int, what string)) (*Table, error) {
	cfg.defaults()
	if err := conformal.CheckAlpha(cfg.Alpha); err != nil {
		return nil, err
	}
	trains := slices.ContainsFunc(methods, func(m Method) bool { return m.Trains })
	data := sim.Mixed(cfg.DataSeed, cfg.PerClass)
	cfg.shapes = !cfg.bare
	results, err := runTable(cfg.Config, "sim", methods, func(seed uint64, trains bool, workers int) (*Splits, error) {
		return simSplits(data, cfg, seed, trains, workers)
	}, progress)
	if err != nil {
		return nil, err
	}
	t := &Table{
		Title: "Simulated 3D clusters (mixed)",
		Config: fmt.Sprintf("%d clusters × %d points, k=%d, α=%v, seeds 0–%d, data seed %d, calibration %v",
			sim.Classes, cfg.PerClass, cfg.K, cfg.Alpha, cfg.Seeds-1, cfg.DataSeed, cfg.calibrationName()),
	}
	if trains {
		tc := cfg.Train.WithDefaults()
		t.Config += fmt.Sprintf("; training: batch %d, SGD lr %v momentum %v, clip %v, T=%v, λ=%v, threshold %v, ≤%d epochs, patience %d",
			tc.BatchSize, tc.SGD.LR, tc.SGD.Momentum, tc.ClipNorm, tc.Objective.T, tc.Objective.Lambda, tc.Objective.Threshold, tc.MaxEpochs, tc.Patience)
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

// rows summarises each method's results over seeds.
func rows(methods []Method, results [][]cellResult) []Row {
	var out []Row
	for m, method := range methods {
		var cov, exc, vol, ccov, cexc []float64
		var per []eval.Result
		for s := range results {
			r := results[s][m].Test
			per = append(per, r)
			cov = append(cov, 100*r.Coverage)
			exc = append(exc, 100*r.Exclusion)
			vol = append(vol, r.LogVolPerDim)
			if c := results[s][m].Class; c != nil {
				ccov = append(ccov, 100*c.Coverage)
				cexc = append(cexc, 100*c.Exclusion)
			}
		}
		row := Row{Method: method.Name, Coverage: eval.Summarize(cov),
			Exclusion: eval.Summarize(exc), LogVolPerDim: eval.Summarize(vol), PerSeed: per, Paper: method.Paper,
			Curve: curve(results, m)}
		if ccov != nil {
			c, e := eval.Summarize(ccov), eval.Summarize(cexc)
			row.ClassCoverage, row.ClassExclusion = &c, &e
		}
		out = append(out, row)
	}
	return out
}

// curve summarises method m's recalibrated points over seeds, at the α
// every seed reached.
func curve(results [][]cellResult, m int) []CurvePoint {
	var pts []CurvePoint
	for i, p := range results[0][m].Curve {
		var cov, exc, vol []float64
		for s := range results {
			c := results[s][m].Curve
			if i >= len(c) || c[i].Alpha != p.Alpha {
				return pts
			}
			cov, exc, vol = append(cov, 100*c[i].Coverage), append(exc, 100*c[i].Exclusion), append(vol, c[i].LogVolPerDim)
		}
		pts = append(pts, CurvePoint{Alpha: p.Alpha, N: p.N, Coverage: eval.Summarize(cov),
			Exclusion: eval.Summarize(exc), LogVolPerDim: eval.Summarize(vol)})
	}
	return pts
}

// cellResult is one run (a method on a seed): its evaluation on the test
// split and, when the splits have one, on the class test split; its
// recalibrated points; and, when the table keeps shapes and the seed is 0,
// the fitted set.
type cellResult struct {
	Test  eval.Result     `json:"test"`
	Class *eval.Result    `json:"class,omitempty"`
	Curve []eval.Point    `json:"alpha_curve,omitempty"`
	Set   json.RawMessage `json:"set,omitempty"`
}

// runTable runs every (seed, method) pair on cfg.Workers goroutines, each
// into its own slot, building each seed's splits once (splits), when a
// run of the seed is not in cfg.Cells, and dropping them after the seed's
// last run.
func runTable(cfg Config, table string, methods []Method, splits func(seed uint64, trains bool, workers int) (*Splits, error),
	progress func(done, total int, what string)) ([][]cellResult, error) {
	trains := slices.ContainsFunc(methods, func(m Method) bool { return m.Trains })
	type job struct{ seed, method int }
	var jobs []job
	for s := range cfg.Seeds {
		for m := range methods {
			jobs = append(jobs, job{s, m})
		}
	}
	workers := min(cfg.Workers, len(jobs))
	inner := max(1, runtime.GOMAXPROCS(0)/workers) // goroutines per training run

	// Each seed's bundles are built once, on first use, and dropped when its
	// last run is done.
	type seedData struct {
		once sync.Once
		sp   *Splits
		err  error
		left atomic.Int32
	}
	seeds := make([]*seedData, cfg.Seeds)
	for s := range seeds {
		seeds[s] = &seedData{}
		seeds[s].left.Store(int32(len(methods)))
	}
	results := make([][]cellResult, cfg.Seeds)
	errs := make([][]error, cfg.Seeds)
	for s := range results {
		results[s] = make([]cellResult, len(methods))
		errs[s] = make([]error, len(methods))
	}
	next := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				sd, seed := seeds[j.seed], uint64(j.seed)
				results[j.seed][j.method], errs[j.seed][j.method] = cell(cfg.Cells, table, methods[j.method].File, seed, func() (cellResult, error) {
					sd.once.Do(func() { sd.sp, sd.err = splits(seed, trains, inner) })
					if sd.err != nil {
						return cellResult{}, sd.err
					}
					return simRun(sd.sp, cfg, methods[j.method], seed)
				})
				if sd.left.Add(-1) == 0 {
					sd.sp = nil
				}
				if progress != nil {
					mu.Lock()
					done++
					progress(done, len(jobs), fmt.Sprintf("seed %d, %s", j.seed, methods[j.method].Name))
					mu.Unlock()
				}
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()

	for s := range errs {
		for m, err := range errs[s] {
			if err != nil {
				return nil, fmt.Errorf("seed %d, %s: %w", s, methods[m].Name, err)
			}
		}
	}
	return results, nil
}

func simSplits(data *sim.Data, cfg SimConfig, seed uint64, trains bool, workers int) (*Splits, error) {
	split := data.Split(seed)
	sp := &Splits{Workers: workers}
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

func simRun(sp *Splits, cfg Config, m Method, seed uint64) (cellResult, error) {
	var out cellResult
	set, err := m.Fit(sp, cfg, seed)
	if err != nil {
		return out, err
	}
	if err := cfg.keep(set, seed, m.File); err != nil {
		return out, err
	}
	if out.Test, err = eval.Evaluate(set, sp.Test); err != nil {
		return out, err
	}
	if sp.ClassTest != nil {
		c, err := eval.Evaluate(set, sp.ClassTest)
		if err != nil {
			return out, err
		}
		out.Class = &c
	}
	if cfg.bare {
		return out, nil
	}
	cal := sp.Cal
	if m.Calibration != nil {
		if cal, err = m.Calibration(sp, seed); err != nil {
			return out, err
		}
	}
	if out.Curve, err = eval.Recalibrated(set, cal, sp.Test, CurveAlphas); err != nil {
		return out, err
	}
	if cfg.shapes && seed == 0 {
		var b bytes.Buffer
		if err := set.WriteJSON(&b); err != nil {
			return out, err
		}
		out.Set = b.Bytes()
	}
	return out, nil
}
