package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/internal/parallel"
)

// The table runner every table uses: (seed, method) cells on a pool of
// goroutines, each into its own slot, kept in Cells when given.

// cellResult is one run (a method on a seed): its evaluation on the test
// split and, when the splits have one, on the class test split; its
// recalibrated points; and, when the table keeps shapes and the seed is 0,
// the fitted set.
type cellResult struct {
	Test    eval.Result     `json:"test"`
	Class   *eval.Result    `json:"class,omitempty"`
	Curve   []eval.Point    `json:"alpha_curve,omitempty"`
	Set     json.RawMessage `json:"set,omitempty"`
	Compare *compareCell    `json:"compare,omitempty"`
}

// runTable runs every (seed, method) pair on up to cfg.Workers goroutines, each
// into its own slot, building each seed's splits once (splits), when a
// run of the seed is not in cfg.Cells, and dropping them after the seed's
// last run.
func runTable(ctx context.Context, cfg Config, table string, methods []Method, splits func(seed uint64, trains bool, workers int) (*Splits, error),
	progress func(done, total int, what string)) ([][]cellResult, error) {
	trains := slices.ContainsFunc(methods, func(m Method) bool { return m.Trains })
	type job struct{ seed, method int }
	var jobs []job
	for s := range cfg.Seeds {
		for m := range methods {
			jobs = append(jobs, job{s, m})
		}
	}
	// The runs are tasks of the package parallel's pool, and each training
	// run may use every core: its loops are offered only to the pool's idle
	// workers, so while every worker holds a run each run goes alone, and a
	// run still going when the others are done (a seed that trains for all
	// its epochs can take five times a typical run) gets the workers they
	// free. (Not the goroutine that called runTable, a task runner too:
	// once the tasks are handed out it waits.)
	workers := min(cfg.Workers, len(jobs))
	inner := runtime.GOMAXPROCS(0) // goroutines a training run may use

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
	var mu sync.Mutex
	done := 0
	parallel.Tasks(len(jobs), workers, func(i int) {
		j := jobs[i]
		sd, seed := seeds[j.seed], uint64(j.seed)
		results[j.seed][j.method], errs[j.seed][j.method] = cell(cfg.Cells, table, methods[j.method].File, seed, methods[j.method].Trains, func() (cellResult, error) {
			if err := ctx.Err(); err != nil {
				return cellResult{}, err // interrupted: the finished cells are kept
			}
			sd.once.Do(func() { sd.sp, sd.err = splits(seed, trains, inner) })
			if sd.err != nil {
				return cellResult{}, sd.err
			}
			return runCell(ctx, sd.sp, cfg, methods[j.method], seed)
		})
		if sd.left.Add(-1) == 0 {
			sd.sp = nil
		}
		if errs[j.seed][j.method] != nil && ctx.Err() != nil {
			return // not run, interrupted: not counted as done
		}
		if progress != nil {
			mu.Lock()
			done++
			progress(done, len(jobs), fmt.Sprintf("seed %d, %s", j.seed, methods[j.method].Name))
			mu.Unlock()
		}
	})

	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for s := range errs {
		for m, err := range errs[s] {
			if err != nil {
				return nil, fmt.Errorf("seed %d, %s: %w", s, methods[m].Name, err)
			}
		}
	}
	return results, nil
}

// runCell fits, keeps and evaluates one method on one seed's splits.
func runCell(ctx context.Context, sp *Splits, cfg Config, m Method, seed uint64) (cellResult, error) {
	var out cellResult
	start := time.Now()
	set, err := m.Fit(ctx, sp, cfg, seed)
	if err != nil {
		return out, err
	}
	fit := time.Since(start)
	if cfg.OutDir != "" && sp.Cal != nil && set.Calibrated() && set.Calibration.Anchors == sp.Cal.Digest() {
		set.KeepRows(sp.Cal) // as ccs calibrate keeps them, for evaluate's warnings
	}
	if err := cfg.keep(set, seed, m.File); err != nil {
		return out, err
	}
	// The recalibrated curve (none per class) is scored in the same pass
	// over the test split as the set itself (a second pass was 6% of the
	// simulation's CPU). A comparison, which measures the test split three
	// ways, scores it once (eval.Scored).
	var scored *eval.Scored
	if cfg.compare != nil {
		if scored, err = eval.Score(set, sp.Test); err != nil {
			return out, err
		}
	}
	curve := !cfg.bare && !set.ClassConditional()
	switch {
	case !curve && scored != nil:
		out.Test, err = scored.Evaluate()
	case !curve:
		out.Test, err = eval.EvaluateContext(ctx, set, sp.Test)
	default:
		cal := sp.Cal
		if m.Calibration != nil {
			if cal, err = m.Calibration(sp, seed); err != nil {
				return out, err
			}
		}
		if scored != nil {
			out.Test, out.Curve, err = scored.WithCurve(cal, CurveAlphas)
		} else {
			out.Test, out.Curve, err = eval.WithCurve(set, cal, sp.Test, CurveAlphas)
		}
	}
	if err != nil {
		return out, err
	}
	if sp.ClassTest != nil {
		c, err := eval.EvaluateContext(ctx, set, sp.ClassTest)
		if err != nil {
			return out, err
		}
		out.Class = &c
	}
	if cfg.compare != nil {
		var served *conformal.Set
		if out.Compare, served, err = measureCompare(ctx, cfg.compare, cfg.compareData, set, sp, scored, m.Name, seed, fit); err != nil {
			return out, err
		}
		if served != nil {
			if err := cfg.keep(served, seed, m.File); err != nil { // ready for /ood, as measured
				return out, err
			}
		}
	}
	if !curve {
		return out, nil
	}
	if cfg.shapes && seed == 0 {
		var b bytes.Buffer
		if err := set.EmbedJSON(&b); err != nil {
			return out, err
		}
		out.Set = b.Bytes()
	}
	return out, nil
}
