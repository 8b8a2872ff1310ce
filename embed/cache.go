package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/ccsets/ccs/augment"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/images"
)

// Cache keeps bundles embedded from image sets on disk, so that a table run
// twice embeds its images once (reproduce fmnist embeds 462 000 images per
// encoder). A bundle is kept under a name fixed by the model file's content,
// the image set, the number of anchors and of views, the seed, the
// augmentations (augment.Default) and the encoder's options; each anchor has
// one other anchor as its negative (the tables draw their own per seed).
type Cache struct {
	Dir string
	// Open opens a model file as an encoder (package encoder's Open with
	// Options); an encoder that is an io.Closer is closed after use.
	Open func(model string) (Encoder, error)
	// Options are the encoder's options, as they enter the bundle's name.
	Options any
	// Seed draws the anchors' subset and their views.
	Seed uint64
}

// Bundle returns n anchors of the image set (all of them when n is 0 or
// more than the set has), each with k augmented views, embedded by model:
// from the cache when it holds them (cached is then true), else embedded
// and stored. progress, if not nil, hears the embedding's stages.
func (c *Cache) Bundle(ctx context.Context, model, set string, n, k int, progress Progress) (b *bundle.Bundle, cached bool, err error) {
	path, err := c.Path(model, set, n, k)
	if err != nil {
		return nil, false, err
	}
	if b, err := bundle.Read(path); err == nil {
		return b, true, nil
	}
	imgs, err := images.Load(set, c.Seed)
	if err != nil {
		return nil, false, err
	}
	if n == 0 || n > imgs.N {
		n = imgs.N
	}
	enc, err := c.Open(model)
	if err != nil {
		return nil, false, err
	}
	if cl, ok := enc.(io.Closer); ok {
		defer cl.Close()
	}
	b, err = Build(ctx, enc, imgs, Subset(imgs.N, n, c.Seed), Config{K: k, KNeg: 1, Seed: c.Seed, Augment: augment.Default}, progress)
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, false, err
	}
	if err := bundle.Write(path, b); err != nil {
		return nil, false, err
	}
	return b, false, nil
}

// Path is where Bundle keeps the bundle of (model, set, n, k).
func (c *Cache) Path(model, set string, n, k int) (string, error) {
	data, err := os.ReadFile(model)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(data, fmt.Sprintf("|%s|%d|%d|%d|%+v|%+v", set, n, k, c.Seed, augment.Default, c.Options)...))
	return filepath.Join(c.Dir, fmt.Sprintf("%s-%s-%d-k%d-%s.npz", strings.TrimSuffix(filepath.Base(model), ".onnx"),
		strings.ReplaceAll(set, ":", "-"), n, k, hex.EncodeToString(sum[:6]))), nil
}

// Subset returns n indices of 0..total−1 drawn without replacement with a
// generator seeded by seed, in drawn order; all of them, in order, when n
// is 0; nil when n > total.
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
