package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/train"
)

// fitOptions are ccs fit's inputs.
type fitOptions struct {
	Geometry  string // single or genball
	Objective string // neg, vol or neg,vol, optionally with infonce
	HeadDim   int    // the InfoNCE head's outputs; 0: the embeddings' dimension
	Train     string // files
	Val       string
	ValShare  float64 // without Val, the share of Train held out to select the checkpoint
	Out       string
	Alpha     float64
	Seed      uint64 // the batch order
	Quiet     bool
	Shift     bool         // centre the sets at anchor + the fit split's mean offset
	Recipe    train.Config // the training recipe (addRecipeFlags)
	// valShareSet says -val-share was given; headVolumeSet, -head-volume;
	// recipeSet, -recipe.
	valShareSet, headVolumeSet, recipeSet bool
}

func fitCommand() *command {
	return newCommand("fit", "-geometry single|genball -objective neg|vol|neg,vol[,infonce] [-head-dim D] -train FILE [-val FILE | -val-share 0.1] -out SET.json [-alpha A] [-shift] [training flags] [-seed S] [-quiet]",
		"learn a set geometry on a training split, choosing the checkpoint on a validation split",
		func(fs *flag.FlagSet, o *fitOptions) func() error {
			fs.StringVar(&o.Geometry, "geometry", "", "learnable family: single (‖Mx‖_p) or genball (Σ (m_j|x_j|)^p_j)")
			fs.StringVar(&o.Objective, "objective", "", "objective: neg, vol or neg,vol; add ,infonce to train a linear projection head jointly (docs/design.md §4)")
			fs.IntVar(&o.HeadDim, "head-dim", 0, "output dimension of the InfoNCE head (default: the embeddings' dimension)")
			fs.StringVar(&o.Train, "train", "", "training bundle `file` (.npz)")
			fs.StringVar(&o.Val, "val", "", "validation bundle `file` (.npz): selects the checkpoint; without it, -val-share of the training anchors do")
			fs.Float64Var(&o.ValShare, "val-share", 0.1, "without -val, the `share` of the training anchors held out (seeded by -seed) to select the checkpoint")
			fs.StringVar(&o.Out, "out", "", "fitted set `file` to write (.json; calibrate it next)")
			fs.Float64Var(&o.Alpha, "alpha", defaultAlpha, "miscoverage level α of the training threshold, in (0,1)")
			fs.Uint64Var(&o.Seed, "seed", 0, "`seed` of the batch order")
			fs.BoolVar(&o.Quiet, "quiet", false, "no progress on stderr")
			fs.BoolVar(&o.Shift, "shift", false, "centre the sets at anchor + the training bundle's mean offset of positive − anchor, and train the geometry around that centre: for anchors and positives from two encoders (a dual encoder's queries and passages, captions and images)")
			recipe := recipeOption(fs, "sim", "fit", &o.Recipe)
			return func() error {
				fs.Visit(func(f *flag.Flag) {
					o.valShareSet = o.valShareSet || f.Name == "val-share"
					o.headVolumeSet = o.headVolumeSet || f.Name == "head-volume"
					o.recipeSet = o.recipeSet || f.Name == "recipe"
				})
				return recipe()
			}
		}, runFit)
}

func runFit(ctx context.Context, o fitOptions, out *output) error {
	if err := required("fit", "geometry", o.Geometry, "objective", o.Objective, "train", o.Train, "out", o.Out); err != nil {
		return err
	}
	if o.Val != "" && o.valShareSet {
		return usagef("fit: give -val FILE or -val-share, not both")
	}
	if o.Val == "" && !(o.ValShare > 0 && o.ValShare < 1) {
		return usagef("fit: -val-share %v: want 0 < share < 1 (or give -val FILE)", o.ValShare)
	}
	if err := checkAlpha("fit", o.Alpha); err != nil {
		return err
	}
	if !o.recipeSet && bundle.ReadManifest(filepath.Dir(o.Train)) != nil {
		// ccs bundle's bundles, of one's own embeddings: a user fitting
		// the row a comparison chose trained another set without it (a
		// reproducer's threshold 1.43 against 1.46).
		fmt.Fprintln(out.stderr, "note: -recipe sim, ccs fit's default (the simulation's SGD: lr 0.3, no momentum); ccs compare's learned rows train with -recipe embedding: give it to fit the row a comparison chose (docs/your-data.md)")
	}
	kind, err := geometry.ParseKind(o.Geometry)
	if err != nil || !kind.Learnable() {
		return usagef("fit: -geometry %q: want %s", o.Geometry, geometry.OrList(geometry.LearnableKinds()))
	}
	obj, withHead, err := objective.ParseObjectives(o.Objective)
	if err != nil {
		return usagef("fit: -objective: %v", err)
	}
	if o.HeadDim < 0 || (o.HeadDim > 0 && !withHead) {
		return usagef("fit: -head-dim %d: want a positive dimension, with an objective that includes infonce", o.HeadDim)
	}
	fit, err := readBundle(out, o.Train)
	if err != nil {
		return err
	}
	var val *bundle.Bundle
	valName, trained := o.Val, "" // with -val-share, the Digest of -train, the file the set was fitted on
	if o.Val != "" {
		if val, err = readBundle(out, o.Val); err != nil {
			return err
		}
	} else {
		// A seeded share of the training anchors selects the checkpoint
		// (their positives and negatives may be rows of the others: the
		// selection sees data the fit saw, which the calibration never does).
		trained = fit.Digest()
		rest, held, err := bundle.HoldOut(fit, o.ValShare, o.Seed)
		if err != nil {
			return err
		}
		if held == nil {
			return fmt.Errorf("%s: -val-share %v of %d anchors leaves no validation or no training anchor: give -val FILE", o.Train, o.ValShare, fit.N)
		}
		nv := held.N
		fit, val = rest, held
		valName = fmt.Sprintf("%d of its anchors", nv)
		fmt.Fprintf(out.stderr, "fit: no -val: %d of the %d training anchors (%.0f%%, seed %d) select the checkpoint, the other %d train\n",
			nv, fit.N+nv, 100*o.ValShare, o.Seed, fit.N)
	}
	if w := train.WideHeadWarning(o.HeadDim, fit.D); w != "" {
		out.warn("-head-dim: " + w)
	}
	if o.headVolumeSet && o.Recipe.InfoNCE != nil && !o.Recipe.InfoNCE.ProjectedVolume {
		// Asked for, and not what a head that is not square can train.
		if w := train.HeadVolumeWarning(o.HeadDim, fit.D); w != "" {
			out.warn("-head-volume backbone: " + w)
		}
	}
	stop := func() {}
	if rows := train.RowBytes(fit.D, fit, val); rows > 256<<20 && !o.Quiet && train.RowsKept(fit.D, fit, val) {
		// Not where they will be streamed (which the trainer says): a
		// user on a 16 GiB laptop read "making 11.8 GB" of rows never
		// made, and would have stopped the run.
		// A scale trial's fit of 100 000 anchors was silent 31.6 s before
		// its epoch 0: the rows are made and prepared first.
		fmt.Fprintf(out.stderr, "fit: making the validation and fit splits' %.1f GB of difference rows (every core) before epoch 0 (the fit split's only where the initial geometry leaves a validation negative to exclude)\n", rows/1e9)
		// And every 10 seconds until epoch 0: 150 000 CLIP embeddings'
		// rows took two silent minutes.
		stop = heartbeat(out, "fit: before epoch 0 (the difference rows, then the initial geometry's validation)", 10*time.Second, 10*time.Second)
	}
	var first sync.Once // stops the heartbeat at epoch 0
	defer first.Do(stop)
	cfg := o.Recipe
	cfg.Objective.Objective, cfg.Objective.Alpha, cfg.Seed = obj, o.Alpha, o.Seed
	epochs := trainProgress{newProgress(out, o.Quiet, "epoch")}
	f, err := train.Fit(ctx, train.Spec{Kind: kind, Head: withHead, HeadDim: o.HeadDim, Shift: o.Shift, Config: cfg}, fit, val,
		train.ObserverFunc(func(p train.Progress) { first.Do(stop); epochs.Observe(p) }))
	if err != nil {
		return fmt.Errorf("fit on %s (validation %s): %w", o.Train, valName, err)
	}
	if trained != "" {
		f.Info.Splits = map[string]string{"fit": trained}
	}
	if err := conformal.Uncalibrated(f.Geometry, f.Info).Save(o.Out); err != nil {
		return err
	}
	res := f.Result
	for _, w := range []string{train.AlphaWarning(o.Alpha), res.KeptInitial()} {
		if w != "" {
			out.warn(w)
		}
	}
	fmt.Fprintf(out.stdout, "wrote %s: %v geometry, %v objective, %d epochs (%s), best validation exclusion %s at epoch %d; calibrate it with: ccs calibrate -set %s -cal FILE -out SET.json\n",
		o.Out, kind, o.Objective, res.Epochs, res.StopReason, experiment.Percent(res.ValExclusion), res.BestEpoch, o.Out)
	if o.Shift {
		fmt.Fprintf(out.stdout, "shift: %s (%s)\n", shiftNote(f.Geometry, fit), o.Train)
	}
	return nil
}
