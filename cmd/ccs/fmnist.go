package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ccsets/ccs/augment"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/embed"
	"github.com/ccsets/ccs/encoder"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/images"
	"github.com/ccsets/ccs/ood"
)

// defaultModels are the project's two Fashion-MNIST encoders.
const defaultModels = "supervised=encoders/fmnist-supervised.onnx,simclr=encoders/fmnist-simclr.onnx"

// findModel resolves a model path given relative to the checkout: as given
// (relative to the working directory), else relative to the checkout that
// holds this executable (scripts/ccs builds it into .cache/).
func findModel(path string) string {
	if _, err := os.Stat(path); err == nil || filepath.IsAbs(path) {
		return path
	}
	if exe, err := os.Executable(); err == nil {
		alt := filepath.Join(filepath.Dir(exe), "..", path)
		if _, err := os.Stat(alt); err == nil {
			return alt
		}
	}
	return path
}

// parseModels reads NAME=FILE,NAME=FILE.
func parseModels(s string) ([][2]string, error) {
	var out [][2]string
	for _, item := range strings.Split(s, ",") {
		name, file, ok := strings.Cut(item, "=")
		if !ok || name == "" || file == "" {
			return nil, usagef("-models %q: want NAME=FILE.onnx[,NAME=FILE.onnx…]", s)
		}
		out = append(out, [2]string{name, findModel(file)})
	}
	return out, nil
}

// embedSplit embeds n anchors of an image set (all when n is 0 or the whole
// set) with k views each, or reads them from the cache, where they are kept
// under a name that fixes the model file's content, the set, n, k, the seed
// and the augmentations.
func embedSplit(model string, opt encoder.Options, set string, n, k int, seed uint64, cacheDir string,
	bar *progress, log io.Writer) (*bundle.Bundle, error) {
	data, err := os.ReadFile(model)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append(data, fmt.Sprintf("|%s|%d|%d|%d|%+v|%+v", set, n, k, seed, augment.Default, opt)...))
	path := filepath.Join(cacheDir, fmt.Sprintf("%s-%s-%d-k%d-%s.npz", strings.TrimSuffix(filepath.Base(model), ".onnx"),
		strings.ReplaceAll(set, ":", "-"), n, k, hex.EncodeToString(sum[:6])))
	if b, err := bundle.Read(path); err == nil {
		fmt.Fprintf(log, "using cached embeddings %s\n", path)
		return b, nil
	}
	imgs, err := images.Load(set, seed)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > imgs.N {
		n = imgs.N
	}
	idx := Subset(imgs.N, n, seed)
	m, err := encoder.Open(model, opt)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	// Negatives are drawn per seed and split by the experiment; the cached
	// bundle carries a placeholder set, one other anchor each.
	b, err := embed.Build(m, imgs, idx, embed.Config{K: k, KNeg: 1, Seed: seed, Augment: augment.Default},
		func(stage string, done, total int) { bar.step(done, total, filepath.Base(model)+" "+set+" "+stage) })
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, err
	}
	if err := bundle.Write(path, b); err != nil {
		return nil, err
	}
	return b, nil
}

// embedder returns a function that embeds n anchors of an image set with k
// views each through model (or reads them from the cache), reporting on
// out's stderr unless quiet.
func embedder(out *output, quiet bool, model string, seed uint64, cacheDir string) func(set string, n, k int) (*bundle.Bundle, error) {
	bar := newProgress(out, quiet, "anchors")
	log := out.stderr
	if quiet {
		log = io.Discard
	}
	return func(set string, n, k int) (*bundle.Bundle, error) {
		return embedSplit(model, encoder.Options{}, set, n, k, seed, cacheDir, bar, log)
	}
}

// tableSink collects tables: printed as text one by one, or as one JSON
// list at the end.
type tableSink struct {
	out    *output
	asJSON bool
	all    []any
}

// add keeps t and, for text output, prints it.
func (ts *tableSink) add(t interface{ WriteText(io.Writer) error }) error {
	ts.all = append(ts.all, t)
	if ts.asJSON {
		return nil
	}
	if err := t.WriteText(ts.out.stdout); err != nil {
		return err
	}
	_, err := fmt.Fprintln(ts.out.stdout)
	return err
}

// done writes the JSON list, when asked for.
func (ts *tableSink) done() error {
	if ts.asJSON {
		return writeJSON(ts.out.stdout, ts.all)
	}
	return nil
}

// reproduceFMNIST embeds (or reads from the cache) each encoder's splits
// and prints one table per encoder.
func reproduceFMNIST(out *output, models [][2]string, cfg experiment.RealConfig, hc *experiment.HullConfig, methods []experiment.Method,
	trainAnchors, testAnchors, k int, embedSeed uint64, cacheDir string, quiet, asJSON bool) error {
	tables := &tableSink{out: out, asJSON: asJSON}
	for _, m := range models {
		emb := embedder(out, quiet, m[1], embedSeed, cacheDir)
		tr, err := emb("fashion-mnist:train", trainAnchors, k)
		if err != nil {
			return err
		}
		te, err := emb("fashion-mnist:test", testAnchors, k)
		if err != nil {
			return err
		}
		runs := newProgress(out, quiet, "run")
		c := cfg
		if c.OutDir != "" {
			c.OutDir = filepath.Join(cfg.OutDir, m[0])
		}
		t, err := experiment.Real(&experiment.Embedded{Encoder: m[0], Train: tr, Test: te}, c, methods, runs.step)
		if err != nil {
			return fmt.Errorf("fmnist, %s: %w", m[0], err)
		}
		if err := tables.add(t); err != nil {
			return err
		}
		if hc == nil {
			continue
		}
		h := *hc
		h.OutDir = ""
		views, err := emb("fashion-mnist:test", testAnchors, 75)
		if err != nil {
			return err
		}
		ht, err := experiment.Hull(&experiment.Embedded{Encoder: m[0], Train: tr, Test: te}, views, h, runs.step)
		if err != nil {
			return fmt.Errorf("fmnist, %s, convex hull: %w", m[0], err)
		}
		if err := tables.add(ht); err != nil {
			return err
		}
	}
	return tables.done()
}

// classifierFor returns the classifier file kept beside an encoder
// (NAME.onnx → NAME-classifier.npz), or nil when there is none.
func classifierFor(model string) (*ood.Classifier, error) {
	path := strings.TrimSuffix(model, ".onnx") + "-classifier.npz"
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	return ood.ReadClassifier(path)
}

// reproduceOOD embeds (or reads from the cache) each encoder's Fashion-MNIST
// splits and the OOD image sets, and prints one OOD table per encoder.
func reproduceOOD(out *output, models [][2]string, cfg experiment.OODConfig, methods []experiment.Method, oodSets []string, ciderEpochs, baselineTrain int,
	trainAnchors, testAnchors, k int, embedSeed uint64, cacheDir string, quiet, asJSON bool) error {
	tables := &tableSink{out: out, asJSON: asJSON}
	for _, m := range models {
		emb := embedder(out, quiet, m[1], embedSeed, cacheDir)
		tr, err := emb("fashion-mnist:train", trainAnchors, k)
		if err != nil {
			return err
		}
		te, err := emb("fashion-mnist:test", testAnchors, k)
		if err != nil {
			return err
		}
		// The baselines are fitted on the whole training split (one view each:
		// they need only the anchors).
		c := cfg
		if c.BaselineTrain, err = emb("fashion-mnist:train", baselineTrain, 1); err != nil {
			return err
		}
		var sets []experiment.OODSet
		for _, name := range oodSets {
			// One view each: the OOD samples need only their anchors.
			b, err := emb(name, 0, 1)
			if err != nil {
				return err
			}
			sets = append(sets, experiment.OODSet{Name: name, B: b})
		}
		if c.OutDir != "" {
			c.OutDir = filepath.Join(cfg.OutDir, m[0])
		}
		cl, err := classifierFor(m[1])
		if err != nil {
			return err
		}
		c.Baselines = ood.Baselines(cl)
		for _, d := range c.Baselines {
			if ci, ok := d.(*ood.CIDER); ok {
				ci.Epochs = ciderEpochs
			}
		}
		runs := newProgress(out, quiet, "run")
		t, err := experiment.OOD(&experiment.Embedded{Encoder: m[0], Train: tr, Test: te}, sets, c, methods, runs.step)
		if err != nil {
			return fmt.Errorf("ood, %s: %w", m[0], err)
		}
		if err := tables.add(t); err != nil {
			return err
		}
	}
	return tables.done()
}
