package main

import (
	"flag"
	"fmt"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/train"
)

func init() {
	register(&command{
		name:  "fit",
		args:  "-geometry single|genball -objective neg|vol|neg,vol[,infonce] [-head-dim D] -train FILE -val FILE -out SET.json [-alpha A] [recipe flags] [-seed S] [-quiet]",
		short: "learn a set geometry on a training split, choosing the checkpoint on a validation split",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			geom := fs.String("geometry", "", "learnable family: single (‖Mx‖_p) or genball (Σ (m_j|x_j|)^p_j)")
			obj := fs.String("objective", "", "objective: neg, vol or neg,vol; add ,infonce to train a linear projection head jointly (DESIGN §2.4)")
			headDim := fs.Int("head-dim", 0, "output dimension of the InfoNCE head (default: the embeddings' dimension)")
			trainPath := fs.String("train", "", "training bundle `file` (.npz)")
			valPath := fs.String("val", "", "validation bundle `file` (.npz): selects the checkpoint")
			setPath := fs.String("out", "", "fitted set `file` to write (.json; calibrate it next)")
			alpha := fs.Float64("alpha", 0.05, "miscoverage level α of the training threshold, in (0,1)")
			seed := fs.Uint64("seed", 0, "`seed` of the batch order")
			quiet := fs.Bool("quiet", false, "no progress on stderr")
			rec := recipeFlags(fs, "sim")
			return func([]string) error {
				if err := required("fit", "geometry", *geom, "objective", *obj, "train", *trainPath, "val", *valPath, "out", *setPath); err != nil {
					return err
				}
				if err := checkAlpha("fit", *alpha); err != nil {
					return err
				}
				kind, err := geometry.ParseKind(*geom)
				if err != nil || (kind != geometry.KindNorm && kind != geometry.KindGenBall) {
					return usagef("fit: -geometry %q: want single or genball", *geom)
				}
				o, withHead, err := objective.ParseObjectives(*obj)
				if err != nil {
					return usagef("fit: -objective: %v", err)
				}
				if *headDim < 0 || (*headDim > 0 && !withHead) {
					return usagef("fit: -head-dim %d: want a positive dimension, with an objective that includes infonce", *headDim)
				}
				cfg, err := rec.config()
				if err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				fit, err := bundle.Read(*trainPath)
				if err != nil {
					return err
				}
				val, err := bundle.Read(*valPath)
				if err != nil {
					return err
				}
				var h *head.Linear
				dim := fit.D
				if withHead {
					if *headDim > 0 {
						dim = *headDim
					}
					h = head.Identity(fit.D, dim)
				} else {
					cfg.InfoNCE = nil
				}
				g, init := experiment.InitialGeometry(kind, dim)
				cfg.Objective.Objective, cfg.Objective.Alpha, cfg.Seed, cfg.Init = o, *alpha, *seed, init
				res, err := train.TrainHead(g, h, fit, val, cfg, trainProgress{newProgress(out, *quiet, "epoch")})
				if err != nil {
					return fmt.Errorf("fit on %s (validation %s): %w", *trainPath, *valPath, err)
				}
				var scorer geometry.Geometry = g
				if h != nil {
					if scorer, err = head.NewProjected(h, g); err != nil {
						return err
					}
				}
				set := conformal.Uncalibrated(scorer, train.FitInfo(cfg, res, fit.N, val.N))
				if err := set.Save(*setPath); err != nil {
					return err
				}
				fmt.Fprintf(out.stdout, "wrote %s: %v geometry, %v objective, %d epochs (%s), best validation exclusion %.2f%% at epoch %d; calibrate it with: ccs calibrate -set %s -cal FILE -out SET.json\n",
					*setPath, kind, *obj, res.Epochs, res.StopReason, 100*res.ValExclusion, res.BestEpoch, *setPath)
				return nil
			}
		},
	})
}
