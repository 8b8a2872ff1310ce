// Package embed turns images into embedding bundles, the paper's real-data
// protocol (§5): each anchor image's embedding, the embeddings of K augmented
// views of it as positives, and KNeg other anchors as negatives.
//
// It is pure Go: the encoder is an interface, which package encoder
// implements with ONNX Runtime.
package embed

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/ccsets/ccs/augment"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/images"
	"github.com/ccsets/ccs/internal/parallel"
)

// Encoder maps images to features, logits and activation summaries.
type Encoder interface {
	// Embed runs the encoder on every image of s; a cancelled ctx stops it
	// between batches with ctx's error.
	Embed(ctx context.Context, s *images.Set, progress func(done, total int)) (Outputs, error)
	Dim() int
	Classes() int     // logits per image; 0 when the encoder gives none
	Activations() int // activation summaries per image; 0 when none
}

// Outputs are an encoder's outputs for N images, row-major; Logits and
// Activations are nil when the encoder gives none.
type Outputs struct {
	Features    []float32 // N×Dim
	Logits      []float32 // N×Classes
	Activations []float32 // N×Activations
}

// Config says how to build a bundle.
type Config struct {
	K       int            // augmented views (positives) per anchor
	KNeg    int            // negatives per anchor; 0 means K
	Seed    uint64         // views and negatives
	Augment augment.Params // the views' augmentations
}

// Progress reports a stage ("anchors" or "views") and how far it is.
type Progress func(stage string, done, total int)

// chunk is the number of anchors whose views are made and encoded at a time
// (K·chunk images in memory).
const chunk = 512

// Build embeds the images idx of s as anchors. Anchor j's positives are
// the encoder's features of K views of its image, each made with a
// generator seeded by (Seed, idx[j]) — so an image's views do not depend on
// which other images are in the bundle; its negatives are KNeg other
// anchors drawn without replacement (never itself), stored as
// negative_index into the bundle's anchors. Labels (when s has them), the
// anchor images' logits and activations (when the encoder gives them) and
// index = idx are kept with the bundle.
func Build(ctx context.Context, enc Encoder, s *images.Set, idx []int, cfg Config, progress Progress) (*bundle.Bundle, error) {
	if cfg.KNeg == 0 {
		cfg.KNeg = cfg.K
	}
	n := len(idx)
	switch {
	case cfg.K < 1:
		return nil, fmt.Errorf("embed: k = %d, want at least 1 view per anchor", cfg.K)
	case cfg.KNeg < 1 || cfg.KNeg > n-1:
		return nil, fmt.Errorf("embed: %d negatives per anchor from %d anchors: want 1 to %d (other anchors, without replacement)", cfg.KNeg, n, n-1)
	}
	if err := cfg.Augment.Validate(); err != nil {
		return nil, err
	}
	for _, i := range idx {
		if i < 0 || i >= s.N {
			return nil, fmt.Errorf("embed: image %d is outside %s's %d images", i, s.Name, s.N)
		}
	}
	report := func(stage string) func(int, int) {
		if progress == nil {
			return nil
		}
		return func(done, total int) { progress(stage, done, total) }
	}
	px := s.H * s.W
	anchors := &images.Set{Name: s.Name, N: n, H: s.H, W: s.W, Pixels: make([]float32, n*px)}
	for j, i := range idx {
		copy(anchors.Pixels[j*px:(j+1)*px], s.Image(i))
	}
	out, err := enc.Embed(ctx, anchors, report("anchors"))
	if err != nil {
		return nil, err
	}
	d := enc.Dim()
	b := &bundle.Bundle{N: n, K: cfg.K, D: d, KNeg: cfg.KNeg, Anchors: out.Features, Positives: make([]float32, n*cfg.K*d),
		C: enc.Classes(), Logits: out.Logits, A: enc.Activations(), Activations: out.Activations, Index: make([]int64, n)}
	for j, i := range idx {
		b.Index[j] = int64(i)
	}
	if s.Labels != nil {
		b.Labels = make([]int64, n)
		for j, i := range idx {
			b.Labels[j] = s.Labels[i]
		}
	}
	// Views, a chunk of anchors at a time: made in parallel (each from its
	// own generator), encoded in one call.
	views := &images.Set{Name: s.Name + " (augmented views)", H: s.H, W: s.W}
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		views.N = (hi - lo) * cfg.K
		views.Pixels = views.Pixels[:0]
		views.Pixels = append(views.Pixels, make([]float32, views.N*px)...)
		parallel.For(hi-lo, 16, 0, func(_, a, z int) {
			for j := a; j < z; j++ {
				rng := rand.New(rand.NewPCG(cfg.Seed, uint64(idx[lo+j])))
				src := s.Image(idx[lo+j])
				for v := range cfg.K {
					off := (j*cfg.K + v) * px
					augment.View(views.Pixels[off:off+px], src, s.H, s.W, cfg.Augment, rng)
				}
			}
		})
		f, err := enc.Embed(ctx, views, nil)
		if err != nil {
			return nil, err
		}
		copy(b.Positives[lo*cfg.K*d:hi*cfg.K*d], f.Features)
		if progress != nil {
			progress("views", hi, n)
		}
	}
	b.NegativeIndex = bundle.Negatives(n, cfg.KNeg, cfg.Seed)
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return b, nil
}
