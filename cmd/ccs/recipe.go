package main

import (
	"flag"

	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/train"
)

// recipe holds the training flags shared by fit and reproduce: every number
// of the paper's recipe can be changed, and is recorded in the fitted set.
type recipe struct {
	fs                                *flag.FlagSet
	name, threshold                   *string
	batch, epochs, patience           *int
	clip, lr, momentum, wd, T, lambda *float64
	tau, infoNCEWeight                *float64
	headVolume                        *string
	pMin, pMax, mMin, mMax            *float64
	cosine                            *bool
}

func recipeFlags(fs *flag.FlagSet, def string) *recipe {
	return &recipe{
		fs:            fs,
		name:          fs.String("recipe", def, "optimiser `recipe`: sim (plain SGD, lr 0.3) or embedding (SGD lr 0.1, momentum 0.9, weight decay 5e-4, cosine); the flags below override it"),
		threshold:     fs.String("threshold", "soft", "batch-threshold gradient `mode`: soft, order-statistic or detached"),
		batch:         fs.Int("batch", 256, "anchors per batch"),
		epochs:        fs.Int("epochs", 150, "maximum epochs"),
		patience:      fs.Int("patience", 8, "early stop after this many epochs without a better validation exclusion"),
		clip:          fs.Float64("clip", 1, "gradient-norm clip (negative: none)"),
		lr:            fs.Float64("lr", 0, "learning rate (default: the recipe's)"),
		momentum:      fs.Float64("momentum", 0, "SGD momentum (default: the recipe's)"),
		wd:            fs.Float64("weight-decay", 0, "SGD weight decay (default: the recipe's)"),
		cosine:        fs.Bool("cosine", false, "cosine-annealed learning rate (default: the recipe's)"),
		T:             fs.Float64("T", 7, "sigmoid steepness of the Neg term"),
		lambda:        fs.Float64("lambda", 0.001, "volume weight λ of Neg+Vol, in (0, 1] (λ = 0 is -objective neg)"),
		pMin:          fs.Float64("p-min", 0.1, "lower bound of the exponents p"),
		pMax:          fs.Float64("p-max", 10, "upper bound of the exponents p"),
		mMin:          fs.Float64("m-min", 1e-3, "lower bound of the generalized ball's scales m"),
		mMax:          fs.Float64("m-max", 0, "upper bound of the scales m (0: none; the paper's Remark 1)"),
		tau:           fs.Float64("tau", objective.DefaultTau, "InfoNCE temperature τ (objectives with infonce)"),
		infoNCEWeight: fs.Float64("infonce-weight", 1, "InfoNCE weight λ_InfoNCE (objectives with infonce)"),
		headVolume:    fs.String("head-volume", "backbone", "`space` of the volume term when training a square head: backbone (log Vol − log|det W|) or projected"),
	}
}

// config returns the training configuration; bad values are usage errors.
func (r *recipe) config() (train.Config, error) {
	var sgd train.SGD
	switch *r.name {
	case "sim":
		sgd = train.SimSGD
	case "embedding":
		sgd = train.EmbeddingSGD
	default:
		return train.Config{}, usagef("-recipe %q: want sim or embedding", *r.name)
	}
	if isSet(r.fs, "lr") {
		sgd.LR = *r.lr
	}
	if isSet(r.fs, "momentum") {
		sgd.Momentum = *r.momentum
	}
	if isSet(r.fs, "weight-decay") {
		sgd.WeightDecay = *r.wd
	}
	if isSet(r.fs, "cosine") {
		sgd.Cosine = *r.cosine
	}
	mode, err := objective.ParseThresholdMode(*r.threshold)
	if err != nil {
		return train.Config{}, usagef("-threshold: %v", err)
	}
	cfg := train.Config{
		Objective: objective.Config{T: *r.T, Lambda: *r.lambda, Threshold: mode, Objective: objective.Neg, Alpha: 0.05},
		BatchSize: *r.batch, MaxEpochs: *r.epochs, Patience: *r.patience, ClipNorm: *r.clip, SGD: sgd,
		Bounds: train.Bounds{PMin: *r.pMin, PMax: *r.pMax, MMin: *r.mMin, MMax: *r.mMax},
	}
	if *r.lambda <= 0 || *r.T <= 0 || *r.batch <= 0 || *r.epochs <= 0 || *r.patience <= 0 || *r.tau <= 0 || *r.infoNCEWeight <= 0 {
		return train.Config{}, usagef("-lambda, -T, -batch, -epochs, -patience, -tau and -infonce-weight must be positive")
	}
	// Used by the rows and fits that train a head; cleared by the others.
	cfg.InfoNCE = &train.InfoNCE{Weight: *r.infoNCEWeight, Tau: *r.tau}
	switch *r.headVolume {
	case "backbone":
	case "projected":
		cfg.InfoNCE.ProjectedVolume = true
	default:
		return train.Config{}, usagef("-head-volume %q: want backbone or projected", *r.headVolume)
	}
	if err := cfg.WithDefaults().Validate(); err != nil {
		return train.Config{}, usagef("%v", err)
	}
	// The objective and α are set by the caller.
	cfg.Objective.Objective, cfg.Objective.Alpha = 0, 0
	return cfg, nil
}
