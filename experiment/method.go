package experiment

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/ccsets/ccs/baseline"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/suggest"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/train"
)

// Method builds a calibrated set from a seed's splits.
type Method struct {
	Name  string
	File  string // file name stem for OutDir
	Paper *PaperRow
	// Trains reports whether Fit needs the fit and validation splits.
	Trains bool
	// NeedsFit reports whether Fit reads the fit split without training
	// (EllipsoidFromFit's Σ).
	NeedsFit bool
	// Head reports whether Fit trains the InfoNCE projection head
	// (Config.HeadDim sets its outputs).
	Head bool
	// Calibration, if not nil, returns the bundle Fit calibrates the
	// threshold on, when it is not the whole calibration split (the
	// ellipsoid's second half): the recalibrated curves use it, so that no
	// anchor that chose the geometry calibrates it.
	Calibration func(sp *Splits, seed uint64) (*bundle.Bundle, error)
	Fit         func(ctx context.Context, sp *Splits, cfg Config, seed uint64) (*conformal.Set, error)
}

// Splits are one seed's bundles. Fit and Val are built only when a method
// trains; the baselines use Cal alone.
type Splits struct {
	Fit, Val, Cal, Test *bundle.Bundle
	// ClassTest, if set, is a second test bundle whose positives share the
	// anchor's class (the real-image tables' coverage transfer).
	ClassTest *bundle.Bundle
	Workers   int // goroutines a training run may use
	// Rows, when set, shares the prepared training rows between the
	// methods trained on these splits.
	Rows *train.Rows
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

// Ball is the vanilla conformal ℓ2 ball, calibrated on the calibration
// split.
func Ball() Method {
	const name = "Conformal Ball (ℓ2)"
	return Method{Name: name, File: "ball", Paper: paperTable1[name],
		Fit: func(ctx context.Context, sp *Splits, cfg Config, seed uint64) (*conformal.Set, error) {
			if cfg.Shift {
				return baseline.BallFrom(sp.Fit, sp.Cal, cfg.Alpha, baseline.Options{Calibration: calOpts(cfg, seed), Shift: true})
			}
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
		Fit: func(ctx context.Context, sp *Splits, cfg Config, seed uint64) (*conformal.Set, error) {
			return baseline.Ellipsoid(ctx, sp.Cal, cfg.Alpha, baseline.Options{Calibration: calOpts(cfg, seed), SplitSeed: seed})
		}}
}

// EllipsoidFromFit is the Mahalanobis ellipsoid with Σ from the fit split
// and the threshold from the whole calibration split (baseline.EllipsoidFrom):
// Compare's row, on bundles whose positives are other items of the split,
// where the halves of the calibration split that Ellipsoid uses share rows.
// Σ does not depend on the seed: the method estimates it once per fit
// bundle (a covariance of every difference of a large fit split takes
// minutes at d = 768) and calibrates it on each seed.
func EllipsoidFromFit() Method {
	m := Ellipsoid()
	m.Calibration, m.NeedsFit = nil, true
	type fitted struct {
		once sync.Once
		f    *baseline.FittedEllipsoid
		err  error
	}
	var mu sync.Mutex
	cache := map[*bundle.Bundle]*fitted{}
	m.Fit = func(ctx context.Context, sp *Splits, cfg Config, seed uint64) (*conformal.Set, error) {
		mu.Lock()
		e := cache[sp.Fit]
		if e == nil {
			e = new(fitted)
			cache[sp.Fit] = e
		}
		mu.Unlock()
		e.once.Do(func() { e.f, e.err = baseline.FitEllipsoid(ctx, sp.Fit, baseline.Options{Shift: cfg.Shift}) })
		if e.err != nil {
			return nil, e.err
		}
		return e.f.Calibrate(sp.Cal, cfg.Alpha, baseline.Options{Calibration: calOpts(cfg, seed)})
	}
	return m
}

// ForCompare is methods as Compare runs them on a user's bundles: the
// ellipsoid's Σ from the fit split (EllipsoidFromFit), and no paper row —
// the paper's figures are for its simulation, not the user's data, and a
// comparison's JSON carried them beside the user's own.
func ForCompare(methods []Method) []Method {
	out := slices.Clone(methods)
	for i, m := range out {
		if m.File == "ellipsoid" {
			out[i] = EllipsoidFromFit()
		}
		out[i].Paper = nil
	}
	return out
}

// Baselines are the two vanilla rows.
func Baselines() []Method { return []Method{Ball(), Ellipsoid()} }

// Learned is the row of a learnable family trained with an objective
// (train.Fit: initialised at the ℓ2 ball, trained on the fit split with the
// checkpoint chosen on the validation split), calibrated on the calibration
// split.
func Learned(kind geometry.Kind, obj objective.Objective) Method { return learned(kind, obj, false) }

// LearnedInfoNCE is Learned with the InfoNCE projection head (docs/design.md §4):
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
	return Method{Name: name, File: file, Paper: paperTable1[name], Trains: true, Head: infoNCE,
		Fit: func(ctx context.Context, sp *Splits, cfg Config, seed uint64) (*conformal.Set, error) {
			tc := cfg.Train
			tc.Objective.Objective, tc.Objective.Alpha = obj, cfg.Alpha
			tc.Seed, tc.Workers, tc.Rows = seed, sp.Workers, sp.Rows
			var obs train.Observer
			if cfg.Epochs != nil {
				obs = train.ObserverFunc(func(p train.Progress) { cfg.Epochs(name, seed, p) })
			}
			f, err := train.Fit(ctx, train.Spec{Kind: kind, Head: infoNCE, HeadDim: headDim(infoNCE, cfg.HeadDim), Shift: cfg.Shift, Config: tc}, sp.Fit, sp.Val, obs)
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

// headDim is the head's outputs of a row (0 without a head: Config.HeadDim
// is the InfoNCE rows' alone).
func headDim(head bool, dim int) int {
	if !head {
		return 0
	}
	return dim
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

// bothFamilies is row(kind, obj) for each objective and each learnable
// family, in the families' order (Single, then Generalized): a family
// added to geometry's table appears in every table and comparison.
func bothFamilies(row func(geometry.Kind, objective.Objective) Method, objs ...objective.Objective) []Method {
	var m []Method
	for _, obj := range objs {
		for _, k := range geometry.LearnableKinds() {
			m = append(m, row(k, obj))
		}
	}
	return m
}

// SimMethods are the paper's eight rows of Table 1: the baselines and the
// learned rows.
func SimMethods() []Method { return append(Baselines(), LearnedRows()...) }

// Needs says which splits methods need besides calibration and test: the
// fit split (the learned rows, and the ellipsoid's Σ) and the validation
// split (the learned rows' checkpoints).
func Needs(methods []Method) (fit, val bool) {
	for _, m := range methods {
		fit = fit || m.Trains || m.NeedsFit
		val = val || m.Trains
	}
	return fit, val
}

// Rows are the rows spec names: a set of RowSets ("all", "learned", …),
// or a comma-separated list of sets and rows by their set files' names
// ("ball,genball-neg": a scale user's one learned row beside a baseline,
// where -rows learned trained all six), in the order of the list, each
// row once.
func Rows(spec string) ([]Method, error) {
	if f, ok := RowSets[spec]; ok {
		return f(), nil
	}
	all := RowSets["all+infonce"]()
	var names []string
	for _, m := range all {
		names = append(names, m.File)
	}
	var out []Method
	seen := map[string]bool{}
	add := func(m Method) {
		if !seen[m.File] {
			seen[m.File] = true
			out = append(out, m)
		}
	}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if f, ok := RowSets[part]; ok {
			for _, m := range f() {
				add(m)
			}
			continue
		}
		i := slices.IndexFunc(all, func(m Method) bool { return m.File == part })
		if i < 0 {
			sets := slices.Sorted(maps.Keys(RowSets))
			return nil, fmt.Errorf("rows %q: %q is no set of rows (%s) nor a row (%s)%s", spec, part, strings.Join(sets, ", "), strings.Join(names, ", "),
				suggest.DidYouMean(part, append(sets, names...)))
		}
		add(all[i])
	}
	return out, nil
}

// RowSets are the sets of rows that ccs reproduce sim and ccs compare
// (and Python's ccs.compare) name by -rows: all (SimMethods), baselines,
// learned, infonce and all+infonce.
var RowSets = map[string]func() []Method{
	"all":       SimMethods,
	"baselines": Baselines,
	"learned":   LearnedRows,
	"infonce":   InfoNCERows,
	"all+infonce": func() []Method {
		return append(SimMethods(), InfoNCERows()...)
	},
}

// HighDimD is the dimension from which HighDimWarning speaks: a d = 3 072
// user's single-norm epochs took about 4 minutes on 2 cores (15 000 fit
// anchors), where d = 768's take seconds.
const HighDimD = 2048

// HighDimWarning is what a comparison of methods on embeddings of
// dimension d says before it starts, where d ≥ HighDimD and some rows'
// cost grows with d² or d³ — the single-norm's matrix M, the ellipsoid's Σ,
// an InfoNCE row's d × d head —, which ran for hours before anything
// said so; "" otherwise. It names those rows and the rows whose cost grows
// with d alone.
func HighDimWarning(d int, methods []Method) string {
	if d < HighDimD {
		return ""
	}
	var heavy, light []string
	for _, m := range methods {
		if strings.HasPrefix(m.File, "single") || strings.HasPrefix(m.File, "ellipsoid") || m.Head {
			heavy = append(heavy, m.Name)
		} else {
			light = append(light, m.File)
		}
	}
	if heavy == nil {
		return ""
	}
	keep := ""
	if light != nil {
		keep = fmt.Sprintf(" -rows %s (rows=%q in Python) keeps those whose cost grows with d alone;", strings.Join(light, ","), strings.Join(light, ","))
	}
	return fmt.Sprintf("d = %d: %s, at a cost d² to d³ a step — at d = 3 072 on 2 cores a single-norm epoch took about 4 minutes (15 000 fit anchors), up to 150 epochs a fit, and the ellipsoid's Σ minutes a cell —, may take hours to days;%s or project the embeddings to fewer dimensions first (docs/your-data.md, \"High dimensions\")",
		d, strings.Join(heavy, ", "), keep)
}
