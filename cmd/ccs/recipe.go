package main

import (
	"flag"
	"fmt"

	"github.com/ccsets/ccs/internal/suggest"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/train"
)

// recipeFlags are the training flags fit and the tables share: every number
// of the paper's recipe can be changed, and is recorded in the fitted set.
// The flags' defaults are the recipe's values (train.SimRecipe; the two
// recipes differ only in the optimiser, whose flags default to the chosen
// recipe's).
type recipeFlags struct {
	fs        *flag.FlagSet
	name      string
	cfg       train.Config // every field but the optimiser and the threshold mode
	threshold string
	lr, wd    float64
	momentum  float64
	cosine    bool
	infoNCE   train.InfoNCE
	headSpace string
}

func addRecipeFlags(fs *flag.FlagSet, recipe string) *recipeFlags {
	r := &recipeFlags{fs: fs, cfg: train.SimRecipe, infoNCE: train.PaperInfoNCE}
	c, o := &r.cfg, &r.cfg.Objective
	sim, emb := train.SimRecipe.SGD, train.EmbeddingRecipe.SGD
	fs.StringVar(&r.name, "recipe", recipe, fmt.Sprintf("optimiser `recipe`: sim (plain SGD, lr %v) or embedding (SGD lr %v, momentum %v, weight decay %v, cosine); the flags below override it",
		sim.LR, emb.LR, emb.Momentum, emb.WeightDecay))
	fs.StringVar(&r.threshold, "threshold", o.Threshold.String(), "batch-threshold gradient `mode`: soft, order-statistic or detached")
	fs.IntVar(&c.BatchSize, "batch", c.BatchSize, "anchors per batch")
	fs.IntVar(&c.MaxEpochs, "epochs", c.MaxEpochs, "maximum epochs")
	fs.IntVar(&c.Patience, "patience", c.Patience, "early stop after this many epochs without a better validation exclusion")
	fs.Float64Var(&c.ClipNorm, "clip", c.ClipNorm, "gradient-norm clip (negative: none)")
	fs.Float64Var(&r.lr, "lr", 0, "learning rate (default: the recipe's)")
	fs.Float64Var(&r.momentum, "momentum", 0, "SGD momentum (default: the recipe's)")
	fs.Float64Var(&r.wd, "weight-decay", 0, "SGD weight decay (default: the recipe's)")
	fs.BoolVar(&r.cosine, "cosine", false, "cosine-annealed learning rate (default: the recipe's)")
	fs.Float64Var(&o.T, "T", o.T, "sigmoid steepness of the Neg term")
	fs.Float64Var(&o.Lambda, "lambda", o.Lambda, "volume weight λ of Neg+Vol, in (0, 1] (λ = 0 is -objective neg)")
	fs.Float64Var(&c.Bounds.PMin, "p-min", c.Bounds.PMin, "lower bound of the exponents p")
	fs.Float64Var(&c.Bounds.PMax, "p-max", c.Bounds.PMax, "upper bound of the exponents p")
	fs.Float64Var(&c.Bounds.MMin, "m-min", c.Bounds.MMin, "lower bound of the generalized ball's scales m")
	fs.Float64Var(&c.Bounds.MMax, "m-max", c.Bounds.MMax, "upper bound of the scales m (0: none; the paper's Remark 1)")
	fs.Float64Var(&r.infoNCE.Tau, "tau", r.infoNCE.Tau, "InfoNCE temperature τ (objectives with infonce)")
	fs.Float64Var(&r.infoNCE.Weight, "infonce-weight", r.infoNCE.Weight, "InfoNCE weight λ_InfoNCE (objectives with infonce)")
	fs.StringVar(&r.headSpace, "head-volume", "backbone", "`space` of the volume term when training a square head: backbone (log Vol − log|det W|) or projected")
	return r
}

// recipeOption declares the recipe flags on fs, the recipe named recipe by
// default, and returns the function that puts the recipe they give into
// dst once they are parsed (a bad value a usage error of the command cmd).
func recipeOption(fs *flag.FlagSet, recipe, cmd string, dst *train.Config) func() error {
	r := addRecipeFlags(fs, recipe)
	return func() (err error) {
		*dst, err = r.recipe(cmd)
		return err
	}
}

// recipe returns the training recipe the flags give, validated (every field
// in train.Config.Validate): a bad value is a usage error of the command
// cmd. The objective, α and seed are each run's.
func (r *recipeFlags) recipe(cmd string) (train.Config, error) {
	cfg := r.cfg
	switch r.name {
	case "sim":
		cfg.SGD = train.SimRecipe.SGD
	case "embedding":
		cfg.SGD = train.EmbeddingRecipe.SGD
	default:
		return train.Config{}, usagef("%s: -recipe %q: want sim or embedding", cmd, r.name)
	}
	set := map[string]bool{}
	r.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["lr"] {
		cfg.SGD.LR = r.lr
	}
	if set["momentum"] {
		cfg.SGD.Momentum = r.momentum
	}
	if set["weight-decay"] {
		cfg.SGD.WeightDecay = r.wd
	}
	if set["cosine"] {
		cfg.SGD.Cosine = r.cosine
	}
	var err error
	if cfg.Objective.Threshold, err = objective.ParseThresholdMode(r.threshold); err != nil {
		return train.Config{}, usagef("%s: -threshold: %v", cmd, err)
	}
	// Used by the fits and rows that train a head (train.Fit leaves it out
	// of the others).
	n := r.infoNCE
	switch r.headSpace {
	case "backbone":
	case "projected":
		n.ProjectedVolume = true
	default:
		return train.Config{}, usagef("%s: -head-volume %q: want backbone or projected%s", cmd, r.headSpace, suggest.DidYouMean(r.headSpace, []string{"backbone", "projected"}))
	}
	cfg.InfoNCE = &n
	if err := cfg.Validate(); err != nil {
		return train.Config{}, usagef("%s: %v", cmd, err)
	}
	return cfg, nil
}
