package experiment

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

// SensitivityPoint is one configuration of the sensitivity analysis (the
// paper's appendix "Sensitivity Analysis"): the miscoverage level, the
// sigmoid steepness T, the InfoNCE weight and temperature, the volume weight
// λ and the number k of positives and of negatives per anchor.
type SensitivityPoint struct {
	Alpha         float64 `json:"alpha"`
	T             float64 `json:"T"`
	LambdaInfoNCE float64 `json:"lambda_infonce"`
	Tau           float64 `json:"tau"`
	Lambda        float64 `json:"lambda"`
	K             int     `json:"k"`
}

// PaperSensitivity is the paper's default point: α = 0.05, T = 7,
// λ_InfoNCE = 1, τ = 0.1, λ = 0.05, k = 20.
var PaperSensitivity = SensitivityPoint{Alpha: 0.05, T: 7, LambdaInfoNCE: 1, Tau: 0.1, Lambda: 0.05, K: 20}

// SensitivityParams are the swept parameters in the paper's panel order,
// with their axis labels.
var SensitivityParams = []struct{ Name, Label string }{
	{"alpha", "α"}, {"T", "T"}, {"lambda_infonce", "λ_InfoNCE"}, {"tau", "τ"}, {"lambda", "λ"}, {"k", "k"},
}

// PaperSweeps are the values the paper's figure shows for each parameter.
var PaperSweeps = map[string][]float64{
	"alpha":          {0.05, 0.1, 0.15, 0.2},
	"T":              {1, 4, 7, 10},
	"lambda_infonce": {0.1, 0.5, 1},
	"tau":            {0.001, 0.01, 0.1},
	"lambda":         {0.005, 0.05, 0.5},
	"k":              {1, 5, 10, 15, 20},
}

// paperSensitivityFigure holds the paper's figure's points (its data are
// CIFAR100 embeddings, d = 512: coverage and exclusion as fractions,
// LogVol the total log-volume), keyed by parameter and value.
var paperSensitivityFigure = map[string][][4]float64{ // value, coverage, exclusion, LogVol
	"alpha":          {{0.05, 0.9481, 0.6040, -1753.4524}, {0.1, 0.8992, 0.7428, -1692.6497}, {0.15, 0.8528, 0.8333, -2003.8190}, {0.2, 0.8014, 0.8777, -2605.3845}},
	"T":              {{1, 0.9478, 0.5745, -1760.1423}, {4, 0.9459, 0.5887, -907.2817}, {7, 0.9507, 0.5734, -1530.0227}, {10, 0.9508, 0.5788, -2372.3000}},
	"lambda_infonce": {{0.1, 0.9492, 0.5407, -910.4351}, {0.5, 0.9483, 0.5803, -2357.0312}, {1, 0.9480, 0.6089, -1754.3845}},
	"tau":            {{0.001, 0.9466, 0.5032, -3219.9902}, {0.01, 0.9519, 0.5535, -1771.9036}, {0.1, 0.9480, 0.6089, -1754.3845}},
	"lambda":         {{0.005, 0.9506, 0.6542, -1317.2434}, {0.05, 0.9480, 0.6089, -1754.3845}, {0.5, 0.9467, 0.5986, -871.5635}},
	"k":              {{1, 0.9434, 0.5864, -1449.9768}, {5, 0.9448, 0.6022, -2382.2222}, {10, 0.9521, 0.5854, -3154.5137}, {15, 0.9503, 0.5961, -1780.8020}, {20, 0.9480, 0.6089, -1754.3845}},
}

// with returns p with the parameter name set to v.
func (p SensitivityPoint) with(name string, v float64) (SensitivityPoint, error) {
	switch name {
	case "alpha":
		p.Alpha = v
	case "T":
		p.T = v
	case "lambda_infonce":
		p.LambdaInfoNCE = v
	case "tau":
		p.Tau = v
	case "lambda":
		p.Lambda = v
	case "k":
		if v != float64(int(v)) || v < 1 {
			return p, fmt.Errorf("experiment: k = %v, want a whole number ≥ 1", v)
		}
		p.K = int(v)
	default:
		return p, fmt.Errorf("experiment: unknown sensitivity parameter %q", name)
	}
	return p, nil
}

// check reports a point the objective or the calibration cannot take.
func (p SensitivityPoint) check() error {
	if err := conformal.CheckAlpha(p.Alpha); err != nil {
		return err
	}
	switch {
	case !(p.T > 0):
		return fmt.Errorf("experiment: T = %v, want T > 0", p.T)
	case !(p.LambdaInfoNCE > 0):
		return fmt.Errorf("experiment: λ_InfoNCE = %v, want > 0", p.LambdaInfoNCE)
	case !(p.Tau > 0):
		return fmt.Errorf("experiment: τ = %v, want τ > 0", p.Tau)
	case !(p.Lambda > 0 && p.Lambda <= 1):
		return fmt.Errorf("experiment: λ = %v, want 0 < λ ≤ 1", p.Lambda)
	case p.K < 1:
		return fmt.Errorf("experiment: k = %d, want k ≥ 1", p.K)
	}
	return nil
}

// file names the point's cells.
func (p SensitivityPoint) file() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return "a" + f(p.Alpha) + "-T" + f(p.T) + "-w" + f(p.LambdaInfoNCE) + "-tau" + f(p.Tau) + "-l" + f(p.Lambda) + "-k" + strconv.Itoa(p.K)
}

// SensitivityConfig configures the sensitivity analysis: seeds, workers,
// cells and the training recipe (Config; its Alpha is unused: each point
// has its own), the point the sweeps go through, and the sweeps.
type SensitivityConfig struct {
	Config
	Base   SensitivityPoint     // zero means PaperSensitivity
	Sweeps map[string][]float64 // parameter → values; nil means PaperSweeps
}

// SensitivityData gives the splits of one seed with k positives and k
// negatives per anchor, and names the data.
type SensitivityData struct {
	Name   string
	Splits func(seed uint64, k int, trains bool, workers int) (*Splits, error)
	// Describe says what the data and the protocol are, for the table.
	Describe string
}

// SimSensitivityData is the simulation (the paper's point cloud, split
// per seed) with k pairs per anchor.
func SimSensitivityData(cfg SimConfig) SensitivityData {
	cfg.defaults()
	data := sim.Mixed(cfg.DataSeed, cfg.PerClass)
	return SensitivityData{Name: "sim",
		Describe: fmt.Sprintf("simulated 3D clusters (mixed), %d × %d points, data seed %d", sim.Classes, cfg.PerClass, cfg.DataSeed),
		Splits: func(seed uint64, k int, trains bool, workers int) (*Splits, error) {
			c := cfg
			c.K = k
			return simSplits(data, c, seed, trains, workers)
		}}
}

// RealSensitivityData is one encoder's embeddings in the real-image
// protocol (Real), with the first k views of each anchor as its positives
// and k negatives; e must have at least the largest k views.
func RealSensitivityData(e *Embedded, fitFraction float64) SensitivityData {
	cfg := RealConfig{FitFraction: cmp.Or(fitFraction, 0.8)}
	return SensitivityData{Name: "fmnist-" + e.Encoder,
		Describe: fmt.Sprintf("Fashion-MNIST, %s encoder: %d training anchors (fit %.0f%%), %d test anchors halved into calibration and test",
			e.Encoder, e.Train.N, 100*cfg.FitFraction, e.Test.N),
		Splits: func(seed uint64, k int, trains bool, workers int) (*Splits, error) {
			if k > e.Test.K || k > e.Train.K {
				return nil, fmt.Errorf("experiment: k = %d, but the embeddings have %d views per anchor", k, min(e.Test.K, e.Train.K))
			}
			ek := &Embedded{Encoder: e.Encoder, Train: firstViews(e.Train, k), Test: firstViews(e.Test, k)}
			c := cfg
			c.K, c.KNeg = k, k
			sp, err := realSplits(ek, c, seed, trains, true, workers)
			if sp != nil {
				sp.ClassTest = nil // the sweeps measure augmentation coverage
			}
			return sp, err
		}}
}

// firstViews returns b with only the first k views of each anchor.
func firstViews(b *bundle.Bundle, k int) *bundle.Bundle {
	if k == b.K {
		return b
	}
	s := *b
	s.K, s.Positives = k, make([]float32, 0, b.N*k*b.D)
	for i := range b.N {
		s.Positives = append(s.Positives, b.Positives[i*b.K*b.D:(i*b.K+k)*b.D]...)
	}
	return &s
}

// SensitivitySweep is one parameter's curve: each value's coverage and
// exclusion (percent) and LogVol/d over seeds, and the paper's figure's
// points where it has them.
type SensitivitySweep struct {
	Param  string             `json:"param"`
	Label  string             `json:"label"`
	Points []SensitivityValue `json:"points"`
}

// SensitivityValue is one point of a sweep.
type SensitivityValue struct {
	Value        float64      `json:"value"`
	Coverage     eval.Summary `json:"coverage"`
	Exclusion    eval.Summary `json:"exclusion"`
	LogVolPerDim eval.Summary `json:"logvol_per_dim"`
	// Paper holds the paper's figure's coverage and exclusion (percent)
	// and LogVol (total, for its d = 512 CIFAR100 embeddings).
	Paper *[3]float64 `json:"paper,omitempty"`
}

// SensitivityTable is the sensitivity analysis.
type SensitivityTable struct {
	Title  string             `json:"title"`
	Config string             `json:"config"`
	Data   string             `json:"data"`
	Base   SensitivityPoint   `json:"base"`
	Sweeps []SensitivitySweep `json:"sweeps"`
}

// Sensitivity sweeps each parameter of cfg.Sweeps around cfg.Base, one at
// a time, for the generalized ball trained with the joint
// Neg+Vol+InfoNCE objective (the paper's choice): each point over
// cfg.Seeds seeds, calibrated at its own α and evaluated on the test split.
// Points shared by sweeps (the base point is on every one) run once.
func Sensitivity(ctx context.Context, data SensitivityData, cfg SensitivityConfig, progress func(done, total int, what string)) (*SensitivityTable, error) {
	cfg.Base = cmp.Or(cfg.Base, PaperSensitivity)
	if cfg.Sweeps == nil {
		cfg.Sweeps = PaperSweeps
	}
	cfg.Config.defaults()
	if err := cfg.Base.check(); err != nil {
		return nil, fmt.Errorf("sensitivity, base point: %w", err)
	}
	// The distinct points, grouped by k (one set of splits per k and seed).
	type sweepPoint struct {
		param string
		value float64
		point SensitivityPoint
	}
	var sweeps []sweepPoint
	byK := map[int][]SensitivityPoint{}
	seen := map[SensitivityPoint]bool{}
	for _, p := range SensitivityParams {
		for _, v := range cfg.Sweeps[p.Name] {
			pt, err := cfg.Base.with(p.Name, v)
			if err == nil {
				err = pt.check()
			}
			if err != nil {
				return nil, fmt.Errorf("sensitivity, %s: %w", p.Name, err)
			}
			sweeps = append(sweeps, sweepPoint{p.Name, v, pt})
			if !seen[pt] {
				seen[pt] = true
				byK[pt.K] = append(byK[pt.K], pt)
			}
		}
	}
	for name := range cfg.Sweeps {
		if !slices.ContainsFunc(SensitivityParams, func(p struct{ Name, Label string }) bool { return p.Name == name }) {
			return nil, fmt.Errorf("experiment: sensitivity: unknown parameter %q", name)
		}
	}
	recipe := cfg.Train
	results := map[SensitivityPoint][]eval.Result{}
	total, done := len(seen)*cfg.Seeds, 0
	for _, k := range slices.Sorted(maps.Keys(byK)) {
		var methods []Method
		for _, pt := range byK[k] {
			methods = append(methods, sensitivityMethod(pt, recipe))
		}
		c := cfg.Config
		c.OutDir = ""
		rs, err := runTable(ctx, c, "sensitivity-"+data.Name, methods, func(seed uint64, trains bool, workers int) (*Splits, error) {
			return data.Splits(seed, k, trains, workers)
		}, func(_, _ int, what string) {
			done++
			if progress != nil {
				progress(done, total, what)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("sensitivity, k = %d: %w", k, err)
		}
		for m, pt := range byK[k] {
			for s := range rs {
				results[pt] = append(results[pt], rs[s][m].Test)
			}
		}
	}
	tc := recipe.WithDefaults()
	t := &SensitivityTable{
		Title: "Sensitivity of the generalized ball (Neg+Vol+InfoNCE), " + data.Name,
		Config: fmt.Sprintf("%s; each parameter swept around α=%v, T=%v, λ_InfoNCE=%v, τ=%v, λ=%v, k=%d (k positives and k negatives per anchor); %s; %s",
			data.Describe, cfg.Base.Alpha, cfg.Base.T, cfg.Base.LambdaInfoNCE, cfg.Base.Tau, cfg.Base.Lambda, cfg.Base.K, seedRange(cfg.Seeds),
			recipeLine(tc, recipeShown{})),
		Data: data.Name,
		Base: cfg.Base,
	}
	for _, p := range SensitivityParams {
		sw := SensitivitySweep{Param: p.Name, Label: p.Label}
		for _, sp := range sweeps {
			if sp.param != p.Name {
				continue
			}
			var cov, exc, vol []float64
			for _, r := range results[sp.point] {
				cov, exc, vol = append(cov, 100*r.Coverage), append(exc, 100*r.Exclusion), append(vol, r.LogVolPerDim)
			}
			v := SensitivityValue{Value: sp.value, Coverage: eval.Summarize(cov), Exclusion: eval.Summarize(exc), LogVolPerDim: eval.Summarize(vol)}
			for _, q := range paperSensitivityFigure[p.Name] {
				if q[0] == sp.value {
					v.Paper = &[3]float64{100 * q[1], 100 * q[2], q[3]}
				}
			}
			sw.Points = append(sw.Points, v)
		}
		if len(sw.Points) > 0 {
			t.Sweeps = append(t.Sweeps, sw)
		}
	}
	return t, nil
}

// sensitivityMethod is the generalized ball with the InfoNCE head and the
// Neg,Vol objective at point pt: trained and calibrated at pt's α, with
// pt's T, λ and InfoNCE weight and temperature.
func sensitivityMethod(pt SensitivityPoint, recipe train.Config) Method {
	m := LearnedInfoNCE(geometry.KindGenBall, objective.NegVol)
	fit := m.Fit
	m.Name, m.File, m.Paper = pt.file(), pt.file(), nil
	m.Fit = func(ctx context.Context, sp *Splits, cfg Config, seed uint64) (*conformal.Set, error) {
		cfg.Alpha = pt.Alpha
		cfg.Train = recipe
		cfg.Train.Objective.T, cfg.Train.Objective.Lambda = pt.T, pt.Lambda
		cfg.Train.InfoNCE = &train.InfoNCE{Weight: pt.LambdaInfoNCE, Tau: pt.Tau}
		return fit(ctx, sp, cfg, seed)
	}
	return m
}

// WriteText renders each sweep as a table: the value, coverage and
// exclusion (percent) and LogVol/d, mean ± std over seeds, and the paper's
// figure's coverage, exclusion and LogVol where it has the value.
func (t *SensitivityTable) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", t.Title, t.Config)
	for _, sw := range t.Sweeps {
		rows := [][]string{{sw.Label, "Coverage", "Exclusion↑", "LogVol/d↓", "Paper (CIFAR100, d=512): cov / exc / LogVol"}}
		for _, p := range sw.Points {
			paper := "—"
			if p.Paper != nil {
				paper = fmt.Sprintf("%.1f%% / %.1f%% / %.0f", p.Paper[0], p.Paper[1], p.Paper[2])
			}
			rows = append(rows, []string{strconv.FormatFloat(p.Value, 'g', -1, 64),
				meanPM("%.1f", "%.1f", p.Coverage) + "%", meanPM("%.1f", "%.1f", p.Exclusion) + "%",
				meanPM("%.2f", "%.2f", p.LogVolPerDim), paper})
		}
		b.WriteString("\n")
		writeGrid(&b, rows)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
