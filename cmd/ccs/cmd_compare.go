package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/train"
)

// compareOptions are ccs compare's inputs.
type compareOptions struct {
	tableOptions
	Data      string // the bundles' directory (ccs bundle's)
	Rows      string
	Resplits  int
	Reference int
	Shift     bool // every set centred at anchor + the fit split's mean offset
	HeadDim   int  // the InfoNCE rows' head outputs; 0: the embeddings' dimension
	// AllowInfinite keeps a class too small for a class-conditional
	// threshold as the whole space (ccs calibrate -allow-infinite).
	AllowInfinite bool
	Recipe        train.Config
	// sizeFlags' DB, when given, is a collection file: the table's Size
	// column.
	sizeFlags
	// referenceSet reports whether -reference was given: its default is
	// capped at the fit split, a given value is not.
	referenceSet bool
}

func compareCommand() *command {
	return newCommand("compare", "-data DIR [-seeds 3] [-rows all|baselines|learned|infonce|all+infonce|ROW,… [-head-dim D]] [-alpha 0.05] [-calibration one|pac|class|pooled] [-delta δ] [-allow-infinite] [-resplits 200] [-reference 2000] [-shift] [-db FILE [-size-anchors 1000]] [-out RESDIR] [-plots DIR] [training flags] [-json] [-quiet]",
		"compare the set families on your own bundles (ccs bundle's directory): the paper's Table 1 for your data, over seeds, with the worst class, resplits and the OOD test",
		func(fs *flag.FlagSet, o *compareOptions) func() error {
			addTableFlags(fs, &o.tableOptions, 3, keepsCells)
			fs.Lookup("calibration").Usage = "calibration `mode`: one, pac (with -delta), class (one threshold per label; -delta makes each PAC) or pooled"
			fs.Lookup("delta").Usage = "δ of -calibration pac (or class), in (0, 0.5): the chance over the calibration draw that the guarantee fails (0.05 or 0.1)"
			fs.StringVar(&o.Data, "data", "", "the bundles' `directory`: fit.npz, val.npz, cal.npz, test.npz (ccs bundle's), and ood.npz and ood-cal.npz when there")
			fs.StringVar(&o.Rows, "rows", "all", "rows: all (the ℓ2 ball, the ellipsoid, and single-norm and generalized balls under Neg, Vol and Neg+Vol), baselines, learned, infonce (with the InfoNCE head) or all+infonce; or rows by their set files' names, comma-separated (ball,genball-neg-vol)")
			fs.IntVar(&o.HeadDim, "head-dim", 0, "output dimension of the InfoNCE rows' heads, with -rows infonce or all+infonce (default: the embeddings' dimension; ccs fit -head-dim)")
			fs.IntVar(&o.Resplits, "resplits", 200, "random halvings of the test split behind the share of resplits covering less than 1−α")
			fs.IntVar(&o.Reference, "reference", experiment.DefaultReference, "fit anchors (drawn once, seeded) in the per-input OOD score's pool, with ood.npz (by default every fit anchor of a smaller fit split)")
			fs.BoolVar(&o.AllowInfinite, "allow-infinite", false, "with -calibration class, keep a class with too few calibration anchors for α as a whole-space set (threshold +Inf, warned of) instead of refusing: ccs calibrate -allow-infinite")
			fs.BoolVar(&o.Shift, "shift", false, "centre every row's sets at anchor + the fit split's mean offset of positive − anchor (ccs calibrate -shift, ccs fit -shift): for anchors and positives from two encoders")
			o.sizeFlags.add(fs, "a collection `file` (as ccs retrieve's -db: .npy, .npz, .safetensors, .parquet, a text table or JSON lines …): a Size column, the mean number of its items each row's sets hold around the test anchors — what a retrieval returns, and what coverage costs on your corpus",
				"the Size column searches around the test split's first `N` anchors (0: all)")
			recipe := recipeOption(fs, "embedding", "compare", &o.Recipe)
			return func() error {
				fs.Visit(func(f *flag.Flag) {
					o.referenceSet = o.referenceSet || f.Name == "reference"
					o.sizeFlags.visit(f)
				})
				return recipe()
			}
		}, runCompare)
}

func runCompare(ctx context.Context, o compareOptions, out *output) error {
	if err := required("compare", "data", o.Data); err != nil {
		return err
	}
	cfg, err := o.tableOptions.configFor("compare", o.Recipe, true)
	if err != nil {
		return err
	}
	rows, err := experiment.Rows(o.Rows)
	if err != nil {
		return usagef("compare: -%v", err)
	}
	if o.Resplits < 1 {
		return usagef("compare: -resplits %d: want at least 1", o.Resplits)
	}
	if o.Reference < 1 {
		return usagef("compare: -reference %d: want at least 1", o.Reference)
	}
	if err := o.sizeFlags.check("compare"); err != nil {
		return err
	}
	if retrieve.IsURL(o.DB) {
		return usagef("compare: -db %s: a collection file; a database table's sizes are ccs evaluate -db's, a set at a time", o.DB)
	}
	cfg.Shift = o.Shift
	switch {
	case o.HeadDim < 0:
		return usagef("compare: -head-dim %d: want a positive dimension (0: the embeddings')", o.HeadDim)
	case o.HeadDim > 0 && !slices.ContainsFunc(rows, func(m experiment.Method) bool { return m.Head }):
		return usagef("compare: -head-dim %d sets the outputs of the InfoNCE rows' heads, and -rows %s has none: give -rows infonce or all+infonce", o.HeadDim, o.Rows)
	}
	cfg.HeadDim = o.HeadDim
	if o.AllowInfinite && cfg.Calibration != conformal.Class {
		return usagef("compare: -allow-infinite keeps the sets of classes too small for a class-conditional threshold: it goes with -calibration class")
	}
	cfg.AllowInfinite = o.AllowInfinite
	methods := experiment.ForCompare(rows)
	needFit, trains := experiment.Needs(methods)
	needFit = needFit || o.Shift // the offset comes from the fit split
	if st, err := os.Stat(o.Data); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("compare: -data %s: no such directory (ccs bundle -out %s makes it)", o.Data, o.Data)
	} else if err != nil {
		return fmt.Errorf("compare: -data: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("compare: -data %s is a file, want the directory ccs bundle -out wrote", o.Data)
	}
	data := experiment.CompareData{Name: o.Data}
	var inputs []string // read so far; the first's dimension is the others'
	var first *bundle.Bundle
	for _, f := range []struct {
		name     string
		dst      **bundle.Bundle
		need     bool
		features bool
	}{{"fit", &data.Fit, needFit, false}, {"val", &data.Val, trains, false}, {"cal", &data.Cal, true, false}, {"test", &data.Test, true, false},
		{"ood", &data.OOD, false, true}, {"ood-cal", &data.OODCal, false, true}} {
		path := filepath.Join(o.Data, f.name+".npz")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if f.need {
				if why := bundle.NotMadeReason(o.Data, f.name); why != "" {
					return fmt.Errorf("%s: %s.npz is missing: %s", o.Data, f.name, why)
				}
				return fmt.Errorf("%s: %s.npz is missing: make the bundles with ccs bundle -out %s", o.Data, f.name, o.Data)
			}
			continue
		}
		read := readBundle
		if f.features {
			read = readFeatures
		}
		b, err := read(out, path)
		if err != nil {
			return err
		}
		if len(inputs) > 0 && b.D != first.D {
			return fmt.Errorf("%s: embeddings of dimension %d, %s's is %d", path, b.D, inputs[0], first.D)
		}
		if len(inputs) == 0 {
			first = b
		}
		*f.dst = b
		inputs = append(inputs, path)
	}
	reference := 0 // the default: capped at the fit split
	if o.referenceSet {
		switch {
		case data.OOD == nil:
			out.warn(fmt.Sprintf("compare: -reference %d: %s has no ood.npz, so there is no per-input OOD score to pool for", o.Reference, o.Data))
		case data.Fit == nil:
			out.warn(fmt.Sprintf("compare: -reference %d: %s has no fit.npz to draw the pool from, so there is no per-input OOD score", o.Reference, o.Data))
		default:
			if err := experiment.CheckReference(o.Reference, data.Fit, filepath.Join(o.Data, "fit.npz"), "-reference"); err != nil {
				return fmt.Errorf("compare: -reference %d: %w", o.Reference, err)
			}
		}
		reference = o.Reference
	}
	if cfg.Calibration == conformal.Class && data.Cal.SeveralLabels() {
		return fmt.Errorf("compare: -calibration class: %s: %s", filepath.Join(o.Data, "cal.npz"), conformal.SeveralLabelsReason)
	}
	if cal := filepath.Join(o.Data, "cal.npz"); cfg.Calibration == conformal.Class {
		if err := bundle.OneLabelClassError(bundle.ManifestOneLabelName(cal, data.Cal), "-calibration one"); err != nil {
			return fmt.Errorf("compare: -calibration class: %s: %w", cal, err)
		}
	}
	if cfg.Calibration == conformal.Class && data.Cal.Labels == nil {
		return fmt.Errorf("compare: -calibration class: %s has no labels, and a class-conditional threshold is one per label: bundle with -labels (ccs bundle -labels FILE), or calibrate over every anchor (-calibration one)", filepath.Join(o.Data, "cal.npz"))
	}
	// String labels: the manifest beside the test bundle names the
	// classes, when it describes that bundle (as ccs evaluate does).
	data.LabelNames = bundle.ManifestLabelNames(filepath.Join(o.Data, "test.npz"), data.Test)
	if data.LabelNames == nil { // several labels a row: the labels the positives share
		data.LabelNames = bundle.ManifestLabelSetNames(filepath.Join(o.Data, "test.npz"), data.Test)
	}
	// One label's bundles (-one-label): the guarantee is for its anchors.
	data.OneLabel = bundle.ManifestOneLabelName(filepath.Join(o.Data, "test.npz"), data.Test)
	data.Provenance = bundle.ReadManifest(o.Data).Provenance()
	data.TestBlocks = bundle.ManifestBlocks(filepath.Join(o.Data, "test.npz"), data.Test)
	res, err := newResults(out, o.tableOptions, "compare", false, inputs...)
	if err != nil {
		return err
	}
	ccfg := experiment.CompareConfig{Config: cfg, Resplits: o.Resplits, Reference: reference}
	if o.DB != "" {
		c, err := retrieve.ReadCollection(o.DB)
		if err != nil {
			return err
		}
		noteStore(out, o.DB, c)
		if c.D != data.Test.D {
			return fmt.Errorf("compare: -db %s: embeddings of dimension %d, the bundles' is %d", o.DB, c.D, data.Test.D)
		}
		anchors := o.SizeAnchors
		if anchors == 0 { // all, where CompareSizes' zero is its default
			anchors = data.Test.N
		}
		ccfg.Sizes = &experiment.CompareSizes{Rows: c.Rows, N: c.N, D: c.D, Name: o.DB, Anchors: anchors}
	}
	if o.Out != "" {
		// Keyed as ccs.compare(out=) keys them, so each reads the other's.
		if res.cells, err = experiment.NewCompareCells(o.Out, ccfg, data, codeVersion()); err != nil {
			return err
		}
	}
	ccfg.Cells, ccfg.OutDir = res.cells, res.sets
	if w := experiment.HighDimWarning(data.Test.D, methods); w != "" {
		out.warn(w) // before the hours it speaks of
	}
	runs := newProgress(out, o.Quiet, "run")
	runs.settle = len(methods) // the baselines' runs take a moment, the learned rows' minutes
	ccfg.Epochs = runs.epoch
	ccfg.SizeProgress = runs.sizes
	stop := runs.alive(30 * time.Second)
	t, err := experiment.Compare(ctx, data, ccfg, methods, runs.step)
	stop()
	if errors.Is(err, context.Canceled) && ccfg.Cells != nil {
		reused, computed, _ := ccfg.Cells.Counts()
		fmt.Fprintf(out.stderr, "ccs compare: %d (row, seed) cells finished and kept in %s (%d read back, %d computed now): the same command resumes from them\n",
			reused+computed, ccfg.Cells.Dir(), reused, computed)
	}
	if err != nil {
		return err
	}
	if err := res.add(t); err != nil {
		return err
	}
	if ccfg.Cells != nil {
		// OUT/compare.json keeps the directory's comparison: these rows
		// and those earlier runs with other -rows left in its cells.
		dir, kept, err := experiment.CompareKept(ctx, data, ccfg, methods, o.Out, codeVersion())
		if err != nil {
			return err
		}
		if dir != nil {
			res.dir = dir
			fmt.Fprintf(out.stderr, "ccs compare: %s keeps %s too, from earlier runs in %s (their cells)\n",
				filepath.Join(o.Out, "compare.json"), plural(len(kept), "row", "rows")+" ("+strings.Join(kept, ", ")+")", o.Out)
		}
	}
	return res.done()
}
