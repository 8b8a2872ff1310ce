package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/images"
	"github.com/ccsets/ccs/train"
)

// realOptions are what the real-image tables share: the encoders and the
// anchors they embed.
type realOptions struct {
	Models       string // NAME=FILE.onnx,…
	TrainAnchors int    // anchors drawn from the training split
	TestAnchors  int    // anchors of the test split, halved into calibration and test
	K            int    // augmented views per anchor
	EmbedSeed    uint64 // the anchors' subsets and their views
	Cache        string // directory keeping the embeddings
}

func addRealFlags(fs *flag.FlagSet, o *realOptions, models string) {
	fs.StringVar(&o.Models, "models", models, "encoders, `NAME=FILE.onnx,…`")
	fs.IntVar(&o.TrainAnchors, "train-anchors", 12000, "anchors drawn from the training split (the paper: 20%)")
	fs.IntVar(&o.TestAnchors, "test-anchors", 10000, "anchors of the test split, halved into calibration and test")
	fs.IntVar(&o.K, "k", 20, "augmented views per anchor (positives), and negatives per anchor")
	fs.Uint64Var(&o.EmbedSeed, "embed-seed", 0, "`seed` of the anchors' subsets and their augmented views (fixed over seeds)")
	fs.StringVar(&o.Cache, "cache", filepath.Join(images.CacheDir(), "embeddings"), "`directory` keeping the embeddings between runs")
}

// reproduceFMNISTOptions are ccs reproduce fmnist's inputs.
type reproduceFMNISTOptions struct {
	tableOptions
	realOptions
	Rows        string // all, baselines, learned or infonce
	Hull        bool   // also the convex-hull comparison
	HullAnchors int
	Recipe      train.Config
}

// realRows are the row sets -rows names, for Fashion-MNIST.
var realRows = map[string]func() []experiment.Method{
	"all":         experiment.RealMethods,
	"all+infonce": experiment.RealMethods,
	"baselines":   experiment.Baselines,
	"learned":     experiment.LearnedRows,
	"infonce":     experiment.InfoNCERows,
}

func reproduceFMNISTCommand() *command {
	return newCommand("fmnist", "[-models NAME=FILE.onnx,…] [-rows all|baselines|learned|infonce] [-seeds 6] [-train-anchors 12000] [-test-anchors 10000] [-k 20] [-embed-seed S] [-hull] [-hull-anchors 1000] [-alpha 0.05] [-calibration one|pac|pooled [-delta δ]] [-cache DIR] [training flags] [-out DIR] [-plots DIR] [-json] [-quiet]",
		"Fashion-MNIST with the project's encoders, the paper's Table 2 layout, and the convex-hull comparison",
		func(fs *flag.FlagSet, o *reproduceFMNISTOptions) func() error {
			addTableFlags(fs, &o.tableOptions, 6, keepsCells)
			addRealFlags(fs, &o.realOptions, defaultModels)
			fs.StringVar(&o.Rows, "rows", "all", "rows: all (the two baselines, the six learned rows and the six with the InfoNCE head), baselines, learned or infonce")
			fs.BoolVar(&o.Hull, "hull", true, "also the convex-hull comparison (75 views of each test anchor: 25 build the hull, 50 are held out)")
			fs.IntVar(&o.HullAnchors, "hull-anchors", 1000, "test anchors whose convex hull is measured")
			return recipeOption(fs, "embedding", "reproduce", &o.Recipe)
		}, runReproduceFMNIST)
}

// check validates the options shared by the real-image tables.
func (o realOptions) check() ([]model, error) {
	if o.K < 1 {
		return nil, usagef("reproduce: -k %d: want at least 1", o.K)
	}
	ms, err := parseModels(o.Models)
	if err != nil {
		return nil, err
	}
	if o.TrainAnchors < 2 || o.TestAnchors < 4 {
		return nil, usagef("reproduce: want -train-anchors at least 2 and -test-anchors at least 4")
	}
	return ms, nil
}

// embed returns the model's embeddings of the Fashion-MNIST anchors the
// options ask for (from the cache when it has them), and the function that
// embeds more image sets the same way.
func (o realOptions) embed(ctx context.Context, out *output, quiet bool, m model) (*experiment.Embedded, func(set string, n, k int) (*bundle.Bundle, error), error) {
	emb := embeddings(ctx, out, quiet, m.file, o.EmbedSeed, o.Cache)
	tr, err := emb("fashion-mnist:train", o.TrainAnchors, o.K)
	if err != nil {
		return nil, nil, err
	}
	te, err := emb("fashion-mnist:test", o.TestAnchors, o.K)
	if err != nil {
		return nil, nil, err
	}
	return &experiment.Embedded{Encoder: m.name, Train: tr, Test: te}, emb, nil
}

// runReproduceFMNIST embeds (or reads from the cache) each encoder's splits
// and prints one table per encoder, and its convex-hull table.
func runReproduceFMNIST(ctx context.Context, o reproduceFMNISTOptions, out *output) error {
	c, err := o.tableOptions.config(o.Recipe)
	if err != nil {
		return err
	}
	rows, ok := realRows[o.Rows]
	if !ok {
		return usagef("reproduce: -rows %q: want all, baselines, learned or infonce%s", o.Rows, didYouMean(o.Rows, slices.Collect(maps.Keys(realRows)), ""))
	}
	ms, err := o.realOptions.check()
	if err != nil {
		return err
	}
	if o.HullAnchors < 1 {
		return usagef("reproduce: -hull-anchors %d: want at least 1", o.HullAnchors)
	}
	tables, err := newResults(out, o.tableOptions, "fmnist", true, modelInputs(ms, false)...)
	if err != nil {
		return err
	}
	c.Cells, c.OutDir = tables.cells, tables.sets
	cfg := experiment.RealConfig{Config: c}
	for _, m := range ms {
		e, emb, err := o.realOptions.embed(ctx, out, o.Quiet, m)
		if err != nil {
			return err
		}
		runs := newProgress(out, o.Quiet, "run")
		mc := cfg
		if mc.OutDir != "" {
			mc.OutDir = filepath.Join(cfg.OutDir, m.name)
		}
		t, err := experiment.Real(ctx, e, mc, rows(), runs.step)
		if err != nil {
			return fmt.Errorf("fmnist, %s: %w", m.name, err)
		}
		if err := tables.add(t); err != nil {
			return err
		}
		if !o.Hull {
			continue
		}
		views, err := emb("fashion-mnist:test", o.TestAnchors, 75)
		if err != nil {
			return err
		}
		hc := experiment.HullConfig{RealConfig: cfg, Anchors: o.HullAnchors}
		hc.OutDir = "" // its sets are the table's, kept above
		ht, err := experiment.Hull(ctx, e, views, hc, runs.step)
		if err != nil {
			return fmt.Errorf("fmnist, %s, convex hull: %w", m.name, err)
		}
		if err := tables.add(ht); err != nil {
			return err
		}
	}
	return tables.done()
}
