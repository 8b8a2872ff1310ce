package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/augment"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/embed"
	"github.com/ccsets/ccs/encoder"
	"github.com/ccsets/ccs/images"
)

// encoderFlags are the flags that say how to run an ONNX encoder.
type encoderFlags struct {
	input, features, logits, acts *string
	scale, mean, std              *float64
	batch, threads                *int
}

func newEncoderFlags(fs *flag.FlagSet) *encoderFlags {
	return &encoderFlags{
		input:    fs.String("input", "", "the model's input `name` (default: its only input)"),
		features: fs.String("features", "features", "output `name` of the features (the embedding)"),
		logits:   fs.String("logits", "", "output `name` of the class logits (default: logits, when present; - for none)"),
		acts:     fs.String("activations", "", "output `name` of per-layer activation summaries for COMBOOD (default: activations, when present; - for none)"),
		scale:    fs.Float64("scale", 1.0/255, "model input = (pixel·scale − mean)/std, pixel in 0–255"),
		mean:     fs.Float64("mean", 0, "see -scale"),
		std:      fs.Float64("std", 1, "see -scale"),
		batch:    fs.Int("batch", 256, "images per inference call"),
		threads:  fs.Int("threads", 0, "ONNX Runtime threads (default: all cores)"),
	}
}

func (e *encoderFlags) options() (encoder.Options, error) {
	if !(*e.scale > 0) || !(*e.std > 0) || *e.batch < 1 || *e.threads < 0 {
		return encoder.Options{}, usagef("-scale, -std and -batch must be positive, -threads not negative")
	}
	return encoder.Options{Input: *e.input, Features: *e.features, Logits: *e.logits, Activations: *e.acts, Scale: *e.scale, Mean: *e.mean,
		Std: *e.std, Batch: *e.batch, Threads: *e.threads}, nil
}

// augmentFlags are the views' augmentation ranges (augment.Default).
type augmentFlags struct {
	cropScale, cropRatio          *string
	flip, rotate, translate, nois *float64
}

func newAugmentFlags(fs *flag.FlagSet) *augmentFlags {
	d := augment.Default
	return &augmentFlags{
		cropScale: fs.String("crop-scale", fmt.Sprintf("%g,%g", d.ScaleMin, d.ScaleMax), "random resized crop: `min,max` fraction of the area (0,0: no crop)"),
		cropRatio: fs.String("crop-ratio", fmt.Sprintf("%.4g,%.4g", d.RatioMin, d.RatioMax), "random resized crop: `min,max` aspect ratio"),
		flip:      fs.Float64("flip", d.Flip, "probability of a horizontal flip"),
		rotate:    fs.Float64("rotate", d.Rotate, "largest rotation, degrees"),
		translate: fs.Float64("translate", d.Translate, "largest shift, fraction of the side"),
		nois:      fs.Float64("noise", d.Noise, "standard deviation of the Gaussian pixel noise"),
	}
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
	p := augment.Params{Flip: *a.flip, Rotate: *a.rotate, Translate: *a.translate, Noise: *a.nois}
	var err error
	if p.ScaleMin, p.ScaleMax, err = pair("crop-scale", *a.cropScale); err != nil {
		return p, err
	}
	if p.RatioMin, p.RatioMax, err = pair("crop-ratio", *a.cropRatio); err != nil {
		return p, err
	}
	if err := p.Validate(); err != nil {
		return p, usagef("%v", err)
	}
	return p, nil
}

func init() {
	register(&command{
		name:  "embed",
		args:  "-model FILE.onnx -images fashion-mnist:train|fashion-mnist:test|mnist|noise[:N] -out FILE.npz [-anchors N] [-k 20] [-kneg K] [-seed S] [encoder flags] [augmentation flags] [-quiet]",
		short: "embed images with an ONNX encoder into a bundle: anchors, k augmented views as positives, other anchors as negatives",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			model := fs.String("model", "", "encoder `file` (.onnx)")
			imgs := fs.String("images", "", "image `set`: fashion-mnist:train, fashion-mnist:test, mnist or noise[:N]")
			outPath := fs.String("out", "", "bundle `file` to write (.npz)")
			anchors := fs.Int("anchors", 0, "embed a seeded random subset of this many images (default: all)")
			k := fs.Int("k", 20, "augmented views (positives) per anchor")
			kneg := fs.Int("kneg", 0, "negatives per anchor, other anchors without replacement (default: k)")
			seed := fs.Uint64("seed", 0, "`seed` of the subset, the views, the negatives and noise images")
			quiet := fs.Bool("quiet", false, "no progress on stderr")
			ef := newEncoderFlags(fs)
			af := newAugmentFlags(fs)
			return func([]string) error {
				if err := required("embed", "model", *model, "images", *imgs, "out", *outPath); err != nil {
					return err
				}
				if *k < 1 || *kneg < 0 || *anchors < 0 {
					return usagef("embed: -k must be positive, -kneg and -anchors not negative")
				}
				opt, err := ef.options()
				if err != nil {
					return err
				}
				aug, err := af.params()
				if err != nil {
					return err
				}
				set, err := images.Load(*imgs, *seed)
				if err != nil {
					if strings.HasPrefix(err.Error(), "unknown image set") || strings.Contains(err.Error(), "want noise:N") {
						return usagef("embed: -images: %v", err)
					}
					return err
				}
				idx := Subset(set.N, *anchors, *seed)
				if idx == nil {
					return fmt.Errorf("embed: -anchors %d, but %s has %d images", *anchors, set.Name, set.N)
				}
				m, err := encoder.Open(*model, opt)
				if err != nil {
					return err
				}
				defer m.Close()
				bar := newProgress(out, *quiet, "anchors")
				b, err := embed.Build(m, set, idx, embed.Config{K: *k, KNeg: *kneg, Seed: *seed, Augment: aug},
					func(stage string, done, total int) { bar.step(done, total, stage) })
				if err != nil {
					return err
				}
				if err := bundle.Write(*outPath, b); err != nil {
					return err
				}
				fmt.Fprintf(out.stdout, "wrote %s: %d anchors of %s, %d views each, %d negatives each, d=%d, %d logits\n",
					*outPath, b.N, set.Name, b.K, b.KNeg, b.D, b.C)
				return nil
			}
		},
	})
}

// Subset returns n indices of 0..total−1 drawn without replacement with a
// generator seeded by seed, in drawn order; all of them, in order, when n is
// 0; nil when n > total.
func Subset(total, n int, seed uint64) []int {
	if n > total {
		return nil
	}
	if n == 0 {
		idx := make([]int, total)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	return rand.New(rand.NewPCG(seed, 0x737562736574)).Perm(total)[:n] // "subset"
}
