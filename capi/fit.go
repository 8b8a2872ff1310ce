package main

import (
	"cmp"
	"context"
	"fmt"
	"github.com/ccsets/ccs/internal/textclip"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/jsonfloat"
	"github.com/ccsets/ccs/internal/suggest"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/train"
)

// fitOptions are ccs.fit's keywords: ccs fit's flags, the recipe's
// included. A nil field was not given and takes the recipe's value.
type fitOptions struct {
	Geometry  string   `json:"geometry"`
	Objective string   `json:"objective"`
	HeadDim   int      `json:"head_dim"`
	ValShare  *float64 `json:"val_share"`
	Alpha     *float64 `json:"alpha"`
	Seed      uint64   `json:"seed"`
	Shift     bool     `json:"shift"` // ccs fit -shift
	recipeOptions
}

// recipeOptions are the training recipe's keywords, ccs fit's and ccs
// compare's training flags: a nil field takes the recipe's value.
type recipeOptions struct {
	Recipe        string   `json:"recipe"`
	Threshold     string   `json:"threshold"`
	Batch         *int     `json:"batch"`
	Epochs        *int     `json:"epochs"`
	Patience      *int     `json:"patience"`
	Clip          *float64 `json:"clip"`
	LR            *float64 `json:"lr"`
	Momentum      *float64 `json:"momentum"`
	WeightDecay   *float64 `json:"weight_decay"`
	Cosine        *bool    `json:"cosine"`
	T             *float64 `json:"T"`
	Lambda        *float64 `json:"lambda"`
	PMin          *float64 `json:"p_min"`
	PMax          *float64 `json:"p_max"`
	MMin          *float64 `json:"m_min"`
	MMax          *float64 `json:"m_max"`
	Tau           *float64 `json:"tau"`
	InfoNCEWeight *float64 `json:"infonce_weight"`
	HeadVolume    string   `json:"head_volume"`
}

// fitSpec turns the keywords into what train.Fit takes, as ccs fit turns
// its flags (cmd/ccs recipe.go): the recipe's values, overridden by each
// keyword given, validated.
func (o fitOptions) spec() (train.Spec, float64, error) {
	kind, err := geometry.ParseKind(o.Geometry)
	if err != nil || !kind.Learnable() {
		return train.Spec{}, 0, fmt.Errorf("fit: geometry %q: want %s", o.Geometry, geometry.OrList(geometry.LearnableKinds()))
	}
	obj, withHead, err := objective.ParseObjectives(o.Objective)
	if err != nil {
		return train.Spec{}, 0, fmt.Errorf("fit: objective: %v", err)
	}
	if o.HeadDim < 0 || (o.HeadDim > 0 && !withHead) {
		return train.Spec{}, 0, fmt.Errorf("fit: head_dim=%d: want a positive dimension, with an objective that includes infonce", o.HeadDim)
	}
	alpha := objective.PaperConfig.Alpha
	if o.Alpha != nil {
		alpha = *o.Alpha
	}
	if err := conformal.CheckAlpha(alpha); err != nil {
		return train.Spec{}, 0, fmt.Errorf("fit: alpha=%v: want 0 < α < 1%s", alpha, percentHint(alpha))
	}
	valShare := 0.1
	if o.ValShare != nil {
		valShare = *o.ValShare
	}
	cfg, err := o.recipe("fit", "sim")
	if err != nil {
		return train.Spec{}, 0, err
	}
	cfg.Objective.Objective, cfg.Objective.Alpha, cfg.Seed = obj, alpha, o.Seed
	return train.Spec{Kind: kind, Head: withHead, HeadDim: o.HeadDim, Shift: o.Shift, Config: cfg}, valShare, nil
}

// recipe is the training recipe the keywords give (the named recipe, def
// when none is, each keyword given overriding its value), validated; cmd
// names the call in errors. The objective, α and seed are each run's.
func (o recipeOptions) recipe(cmd, def string) (train.Config, error) {
	cfg := train.SimRecipe
	switch cmp.Or(o.Recipe, def) {
	case "sim":
	case "embedding":
		cfg.SGD = train.EmbeddingRecipe.SGD
	default:
		return train.Config{}, fmt.Errorf("%s: recipe %q: want sim or embedding", cmd, o.Recipe)
	}
	set := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setInt := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setInt(&cfg.BatchSize, o.Batch)
	setInt(&cfg.MaxEpochs, o.Epochs)
	setInt(&cfg.Patience, o.Patience)
	set(&cfg.ClipNorm, o.Clip)
	set(&cfg.SGD.LR, o.LR)
	set(&cfg.SGD.Momentum, o.Momentum)
	set(&cfg.SGD.WeightDecay, o.WeightDecay)
	if o.Cosine != nil {
		cfg.SGD.Cosine = *o.Cosine
	}
	set(&cfg.Objective.T, o.T)
	set(&cfg.Objective.Lambda, o.Lambda)
	set(&cfg.Bounds.PMin, o.PMin)
	set(&cfg.Bounds.PMax, o.PMax)
	set(&cfg.Bounds.MMin, o.MMin)
	set(&cfg.Bounds.MMax, o.MMax)
	if o.Threshold != "" {
		var err error
		if cfg.Objective.Threshold, err = objective.ParseThresholdMode(o.Threshold); err != nil {
			return train.Config{}, fmt.Errorf("%s: threshold: %v", cmd, err)
		}
	}
	n := train.PaperInfoNCE
	set(&n.Tau, o.Tau)
	set(&n.Weight, o.InfoNCEWeight)
	switch o.HeadVolume {
	case "", "backbone":
	case "projected":
		n.ProjectedVolume = true
	default:
		return train.Config{}, fmt.Errorf("%s: head_volume %q: want backbone or projected%s", cmd, o.HeadVolume, suggest.DidYouMean(o.HeadVolume, []string{"backbone", "projected"}))
	}
	cfg.InfoNCE = &n
	if err := cfg.Validate(); err != nil {
		return train.Config{}, fmt.Errorf("%s: %v", cmd, err)
	}
	return cfg, nil
}

// progressReport is one train.Progress, as the caller reads it.
type progressReport struct {
	Epoch         int             `json:"epoch"`
	MaxEpochs     int             `json:"max_epochs"`
	Loss          jsonfloat.Float `json:"loss"` // null at epoch 0
	Threshold     jsonfloat.Float `json:"threshold"`
	ValExclusion  float64         `json:"val_exclusion"`
	BestExclusion float64         `json:"best_exclusion"`
	BestEpoch     int             `json:"best_epoch"`
	Elapsed       float64         `json:"elapsed"` // seconds
	Head          bool            `json:"head"`
	Done          bool            `json:"done"`
	StopReason    string          `json:"stop_reason,omitempty"`
	// Streamed, at epoch 0, says that the splits' difference rows did not
	// fit in memory and are computed a batch at a time (train.Progress).
	Streamed string `json:"streamed,omitempty"`
}

// fitObserver turns a training's progress into the job's reports and
// keeps what the fit's warnings must repeat: that its rows were
// streamed, which the command prints as a note and Python warns of.
type fitObserver struct {
	j        *job
	streamed string
}

// Observe reports p.
func (o *fitObserver) Observe(p train.Progress) {
	r := progressReport{Epoch: p.Epoch, MaxEpochs: p.MaxEpochs, Loss: jsonfloat.Float(p.Loss), Threshold: jsonfloat.Float(p.Threshold),
		ValExclusion: p.ValExclusion, BestExclusion: p.BestExclusion, BestEpoch: p.BestEpoch,
		Elapsed: p.Elapsed.Seconds(), Head: p.Head, Done: p.Done, Streamed: p.Streamed}
	if p.Done {
		r.StopReason = p.StopReason.String()
	}
	if p.Streamed != "" {
		o.streamed = p.Streamed
	}
	o.j.report(r)
}

// startFit checks the keywords and the bundles, then trains on a
// goroutine of its own: ccs fit.
func startFit(fit, val *bundle.Bundle, o fitOptions) (*job, error) {
	spec, valShare, err := o.spec()
	if err != nil {
		return nil, err
	}
	if val != nil && o.ValShare != nil {
		return nil, fmt.Errorf("fit: give val or val_share, not both")
	}
	trained := "" // with a held-out share, the Digest of the bundle the set was fitted on
	if val == nil {
		if !(valShare > 0 && valShare < 1) {
			return nil, fmt.Errorf("fit: val_share=%v: want 0 < share < 1 (or give val)", valShare)
		}
		// As ccs fit without -val: a seeded share of the training anchors
		// selects the checkpoint.
		rest, held, err := bundle.HoldOut(fit, valShare, o.Seed)
		if err != nil {
			return nil, err
		}
		if held == nil {
			return nil, fmt.Errorf("fit: val_share=%v of %d anchors leaves no validation or no training anchor: give val", valShare, fit.N)
		}
		trained = fit.Digest()
		fit, val = rest, held
	}
	headVolume := "" // asked for the backbone's volume, which a head not square cannot train
	if o.HeadVolume == "backbone" && spec.Head {
		if w := train.HeadVolumeWarning(spec.HeadDim, fit.D); w != "" {
			headVolume = `head_volume="backbone": ` + w
		}
	}
	return startJob("fit", func(ctx context.Context, j *job) error {
		return runFit(ctx, j, spec, fit, val, trained, headVolume)
	}), nil
}

// runFit trains: the job's work. trained, when not "", is the Digest of
// the bundle fit and val were held out of; headVolume, a warning to add.
func runFit(ctx context.Context, j *job, spec train.Spec, fit, val *bundle.Bundle, trained, headVolume string) error {
	obs := &fitObserver{j: j}
	f, err := train.Fit(ctx, spec, fit, val, obs)
	if err != nil {
		return err
	}
	if trained != "" {
		f.Info.Splits = map[string]string{"fit": trained}
	}
	j.mu.Lock()
	j.set, j.result = conformal.Uncalibrated(f.Geometry, f.Info), f.Result
	j.warnings = warningsOf(train.AlphaWarning(spec.Config.Objective.Alpha), train.WideHeadWarning(spec.HeadDim, fit.D), headVolume, f.Result.KeptInitial(), obs.streamed)
	j.mu.Unlock()
	return nil
}

// outcome is a fit job's result once it is done: the fitted
// (uncalibrated) set, the training's account and its warnings, or its
// error.
func (j *job) outcome() (*conformal.Set, *train.Result, []string, error) {
	if err := j.finished(); err != nil {
		return nil, nil, nil, err
	}
	if j.set == nil {
		return nil, nil, nil, fmt.Errorf("the job is a %s, not a fit", j.what)
	}
	return j.set, j.result, j.warnings, nil
}

// trainingJSON is the training's account as the caller reads it: the
// numbers of train.Result, NaN as null, and the fit's warnings.
func trainingJSON(r *train.Result, warnings []string) map[string]any {
	return map[string]any{
		"epochs": r.Epochs, "best_epoch": r.BestEpoch, "val_exclusion": jsonfloat.Float(r.ValExclusion),
		"stop_reason": r.StopReason.String(), "val_history": jsonfloat.Floats(r.ValHistory),
		"loss_history": jsonfloat.Floats(r.LossHistory), "threshold_history": jsonfloat.Floats(r.ThresholdHist),
		"head_epochs": r.HeadEpochs, "infonce_history": jsonfloat.Floats(r.InfoNCEHist),
		"warnings": warningsOf(warnings...),
	}
}

// warningsOf is the non-empty ones of ws, never nil (a JSON list).
func warningsOf(ws ...string) []string {
	out := []string{}
	for _, w := range ws {
		if w != "" {
			out = append(out, textclip.Message(w))
		}
	}
	return out
}
