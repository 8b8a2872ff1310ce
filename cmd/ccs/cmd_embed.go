package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/augment"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/embed"
	"github.com/ccsets/ccs/encoder"
	"github.com/ccsets/ccs/images"
)

// embedOptions are ccs embed's inputs.
type embedOptions struct {
	Model, Images, Out string
	Anchors            int // a seeded subset of this many images; 0: all
	K, KNeg            int // views and negatives per anchor (KNeg 0: K)
	Seed               uint64
	Quiet              bool
	Encoder            encoder.Options
	Augment            augment.Params
}

// encoderFlags are the flags that say how to run an ONNX encoder.
type encoderFlags struct {
	input, features, logits, acts string
	scale, mean, std              float64
	batch, threads                int
}

func addEncoderFlags(fs *flag.FlagSet) *encoderFlags {
	e := &encoderFlags{}
	fs.StringVar(&e.input, "input", "", "the model's input `name` (default: its only input)")
	fs.StringVar(&e.features, "features", "features", "output `name` of the features (the embedding)")
	fs.StringVar(&e.logits, "logits", "", "output `name` of the class logits (default: logits, when present; - for none)")
	fs.StringVar(&e.acts, "activations", "", "output `name` of per-layer activation summaries for COMBOOD (default: activations, when present; - for none)")
	fs.Float64Var(&e.scale, "scale", 1.0/255, "model input = (pixel·scale − mean)/std, pixel in 0–255")
	fs.Float64Var(&e.mean, "mean", 0, "see -scale")
	fs.Float64Var(&e.std, "std", 1, "see -scale")
	fs.IntVar(&e.batch, "batch", 256, "images per inference call")
	fs.IntVar(&e.threads, "threads", 0, "ONNX Runtime threads (default: all cores)")
	return e
}

func (e *encoderFlags) options() (encoder.Options, error) {
	if !(e.scale > 0) || !(e.std > 0) || e.batch < 1 || e.threads < 0 {
		return encoder.Options{}, usagef("want positive -scale, -std and -batch, and -threads ≥ 0")
	}
	return encoder.Options{Input: e.input, Features: e.features, Logits: e.logits, Activations: e.acts, Scale: e.scale, Mean: e.mean,
		Std: e.std, Batch: e.batch, Threads: e.threads}, nil
}

// augmentFlags are the views' augmentation ranges (augment.Default).
type augmentFlags struct {
	cropScale, cropRatio           string
	flip, rotate, translate, noise float64
}

func addAugmentFlags(fs *flag.FlagSet) *augmentFlags {
	d := augment.Default
	a := &augmentFlags{}
	fs.StringVar(&a.cropScale, "crop-scale", fmt.Sprintf("%g,%g", d.ScaleMin, d.ScaleMax), "random resized crop: `min,max` fraction of the area (0,0: no crop)")
	fs.StringVar(&a.cropRatio, "crop-ratio", fmt.Sprintf("%.4g,%.4g", d.RatioMin, d.RatioMax), "random resized crop: `min,max` aspect ratio")
	fs.Float64Var(&a.flip, "flip", d.Flip, "probability of a horizontal flip")
	fs.Float64Var(&a.rotate, "rotate", d.Rotate, "largest rotation, degrees")
	fs.Float64Var(&a.translate, "translate", d.Translate, "largest shift, fraction of the side")
	fs.Float64Var(&a.noise, "noise", d.Noise, "standard deviation of the Gaussian pixel noise")
	return a
}

func pair(name, s string) (float64, float64, error) {
	a, b, ok := strings.Cut(s, ",")
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, usagef("-%s %q: want two numbers, min,max", name, s)
	}
	return x, y, nil
}

func (a *augmentFlags) params() (augment.Params, error) {
	p := augment.Params{Flip: a.flip, Rotate: a.rotate, Translate: a.translate, Noise: a.noise}
	var err error
	if p.ScaleMin, p.ScaleMax, err = pair("crop-scale", a.cropScale); err != nil {
		return p, err
	}
	if p.RatioMin, p.RatioMax, err = pair("crop-ratio", a.cropRatio); err != nil {
		return p, err
	}
	if err := p.Validate(); err != nil {
		return p, usagef("%v", err)
	}
	return p, nil
}

func embedCommand() *command {
	return newCommand("embed", "-model FILE.onnx -images fashion-mnist:train|fashion-mnist:test|mnist|noise[:N] -out FILE.npz [-anchors N] [-k 20] [-kneg K] [-seed S] [encoder flags] [augmentation flags] [-quiet]",
		"embed images with an ONNX encoder into a bundle: anchors, k augmented views as positives, other anchors as negatives",
		func(fs *flag.FlagSet, o *embedOptions) func() error {
			fs.StringVar(&o.Model, "model", "", "encoder `file` (.onnx)")
			fs.StringVar(&o.Images, "images", "", "image `set`: fashion-mnist:train, fashion-mnist:test, mnist or noise[:N]")
			fs.StringVar(&o.Out, "out", "", "bundle `file` to write (.npz)")
			fs.IntVar(&o.Anchors, "anchors", 0, "embed a seeded random subset of this many images (default: all)")
			fs.IntVar(&o.K, "k", 20, "augmented views (positives) per anchor")
			fs.IntVar(&o.KNeg, "kneg", 0, "negatives per anchor, other anchors without replacement (default: k)")
			fs.Uint64Var(&o.Seed, "seed", 0, "`seed` of the subset, the views, the negatives and noise images")
			fs.BoolVar(&o.Quiet, "quiet", false, "no progress on stderr")
			ef, af := addEncoderFlags(fs), addAugmentFlags(fs)
			return func() (err error) {
				if err := required("embed", "model", o.Model, "images", o.Images, "out", o.Out); err != nil {
					return err
				}
				if o.Encoder, err = ef.options(); err != nil {
					return err
				}
				o.Augment, err = af.params()
				return err
			}
		}, runEmbed)
}

func runEmbed(ctx context.Context, o embedOptions, out *output) error {
	if err := required("embed", "model", o.Model, "images", o.Images, "out", o.Out); err != nil {
		return err
	}
	if o.K < 1 || o.KNeg < 0 || o.Anchors < 0 {
		return usagef("embed: want -k at least 1, -kneg and -anchors ≥ 0")
	}
	set, err := images.Load(o.Images, o.Seed)
	if err != nil {
		if strings.HasPrefix(err.Error(), "unknown image set") || strings.Contains(err.Error(), "want noise:N") {
			return usagef("embed: -images: %v", err)
		}
		return err
	}
	idx := embed.Subset(set.N, o.Anchors, o.Seed)
	if idx == nil {
		return fmt.Errorf("embed: -anchors %d, but %s has %d images", o.Anchors, set.Name, set.N)
	}
	m, err := encoder.Open(o.Model, o.Encoder)
	if err != nil {
		return err
	}
	defer m.Close()
	bar := newProgress(out, o.Quiet, "anchors")
	b, err := embed.Build(ctx, m, set, idx, embed.Config{K: o.K, KNeg: o.KNeg, Seed: o.Seed, Augment: o.Augment},
		func(stage string, done, total int) { bar.step(done, total, stage) })
	if err != nil {
		return err
	}
	if err := bundle.Write(o.Out, b); err != nil {
		return err
	}
	fmt.Fprintf(out.stdout, "wrote %s: %d anchors of %s, %d views each, %d negatives each, d=%d, %d logits\n",
		o.Out, b.N, set.Name, b.K, b.KNeg, b.D, b.C)
	return nil
}
