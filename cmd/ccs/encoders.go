package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/embed"
	"github.com/ccsets/ccs/encoder"
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

// model is an encoder named for a table.
type model struct{ name, file string }

// parseModels reads NAME=FILE,NAME=FILE.
func parseModels(s string) ([]model, error) {
	var out []model
	for _, item := range strings.Split(s, ",") {
		name, file, ok := strings.Cut(item, "=")
		if !ok || name == "" || file == "" {
			return nil, usagef("-models %q: want NAME=FILE.onnx[,NAME=FILE.onnx…]", s)
		}
		out = append(out, model{name, findModel(file)})
	}
	return out, nil
}

// embeddings returns a function that embeds n anchors of an image set with
// k views each through the model file, or reads them from the cache in
// cacheDir (embed.Cache), reporting on out's stderr unless quiet.
func embeddings(ctx context.Context, out *output, quiet bool, file string, seed uint64, cacheDir string) func(set string, n, k int) (*bundle.Bundle, error) {
	bar := newProgress(out, quiet, "anchors")
	opt := encoder.Options{}
	c := &embed.Cache{Dir: cacheDir, Seed: seed, Options: opt, Open: func(file string) (embed.Encoder, error) {
		m, err := encoder.Open(file, opt)
		if err != nil {
			return nil, err
		}
		return m, nil
	}}
	return func(set string, n, k int) (*bundle.Bundle, error) {
		b, cached, err := c.Bundle(ctx, file, set, n, k, func(stage string, done, total int) {
			bar.step(done, total, filepath.Base(file)+" "+set+" "+stage)
		})
		if err == nil && cached && !quiet {
			path, _ := c.Path(file, set, n, k)
			fmt.Fprintf(out.stderr, "using cached embeddings %s\n", path)
		}
		return b, err
	}
}

// classifierFor returns the classifier file kept beside an encoder
// (NAME.onnx → NAME-classifier.npz), or nil when there is none.
func classifierFor(model string) (*ood.Classifier, error) {
	path := classifierPath(model)
	if path == "" {
		return nil, nil
	}
	return ood.ReadClassifier(path)
}

// classifierPath is the classifier file beside model, or "" if none.
func classifierPath(model string) string {
	path := strings.TrimSuffix(model, ".onnx") + "-classifier.npz"
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// modelInputs are the files behind the encoders: each model and, with
// classifiers (the OOD baselines read them), its classifier if it has one
// (a results directory's cells are keyed on their content).
func modelInputs(ms []model, classifiers bool) []string {
	var files []string
	for _, m := range ms {
		files = append(files, m.file)
		if c := classifierPath(m.file); c != "" && classifiers {
			files = append(files, c)
		}
	}
	return files
}
