package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/figure"
	"github.com/ccsets/ccs/internal/atomicfile"
	"github.com/ccsets/ccs/internal/buildinfo"
	"github.com/ccsets/ccs/internal/jsonindent"
	"github.com/ccsets/ccs/report"
	"github.com/ccsets/ccs/train"
)

// compareOptions are ccs.compare's keywords: ccs compare's flags, its
// training flags included. A nil field was not given and takes the
// command's default.
type compareOptions struct {
	Seeds       *int     `json:"seeds"`
	Rows        string   `json:"rows"`
	Alpha       *float64 `json:"alpha"`
	Calibration string   `json:"calibration"`
	Delta       float64  `json:"delta"`
	Resplits    *int     `json:"resplits"`
	Reference   *int     `json:"reference"`
	Shift       bool     `json:"shift"` // ccs compare -shift
	// HeadDim is ccs compare -head-dim: the InfoNCE rows' head outputs;
	// 0: the embeddings' dimension.
	HeadDim int `json:"head_dim"`
	// AllowInfinite is ccs compare -allow-infinite: with class
	// calibration, whole-space sets for classes too small for α.
	AllowInfinite bool `json:"allow_infinite"`
	sizeOptions        // the table's Size column: ccs compare -db, -size-anchors
	// Name names the bundles in the table's title (ccs compare's -data);
	// Command is the call, as the document records it.
	Name    string `json:"name"`
	Command string `json:"command"`
	// LabelNames are string labels' names (ccs.bundle's label_names):
	// label i is LabelNames[i]. Without them, the manifest in Directory
	// (the bundles' directory, when they were read from one) names them
	// when it describes the test bundle, as ccs compare reads it.
	LabelNames []string `json:"label_names"`
	Directory  string   `json:"directory"`
	// Sets, when given, keeps every fitted, calibrated set as
	// Sets/seed-S/SET.json, SET each row's "set" (ccs compare -out keeps
	// them in OUT/sets/compare).
	Sets string `json:"sets"`
	// Out, when given, is a results directory as ccs compare -out keeps
	// one: every finished (row, seed) cell in Out/cells, so a comparison
	// stopped (Ctrl-C) resumes where it was; the sets in Out/sets/compare;
	// the document in Out/compare.json. Not with Sets.
	Out string `json:"out"`
	recipeOptions
}

// compareInputs are the bundles: ccs bundle's splits, OOD and OODCal
// optional (nil).
type compareInputs struct {
	Fit, Val, Cal, Test, OOD, OODCal *bundle.Bundle
	// CalOneLabel is the label whose rows alone Cal holds (bundleObj's
	// oneLabel), "" otherwise.
	CalOneLabel string
	// Provenance is the test bundle's (bundleObj's, from the manifest
	// beside its file or its making in memory): what the protocol says
	// the data are.
	Provenance string
	// TestBlocks is the blocks the test bundle's rows are (its manifest's
	// BlocksOf), 0 where none.
	TestBlocks int
}

// compareReport is one step of a comparison, as the caller reads it: done
// of total (row, seed) cells, and what the last one was.
type compareReport struct {
	Done  int    `json:"done"`
	Total int    `json:"total"`
	What  string `json:"what"`
	// Within a learned row's cell, each epoch (a cell trains for minutes
	// on a large split: an InfoNCE row's 2–3 minutes on 20 000 × 256,
	// between two reports of cells done): the row, the seed, the epoch of
	// max_epochs and its validation exclusion, as ccs compare's progress
	// line says them; What says them too.
	Row          string   `json:"row,omitempty"`
	Seed         *uint64  `json:"seed,omitempty"`
	Epoch        *int     `json:"epoch,omitempty"`
	MaxEpochs    int      `json:"max_epochs,omitempty"`
	ValExclusion *float64 `json:"val_exclusion,omitempty"`
}

// warningReport is a job's report that is a warning to give at once (a
// CCSWarning in Python), not progress.
type warningReport struct {
	Warning string `json:"warning"`
}

// startCompare checks the keywords and the bundles, then compares the set
// families on a goroutine of its own: ccs compare.
func startCompare(in compareInputs, o compareOptions) (*job, error) {
	alpha, mode, err := calibration("compare", o.Alpha, o.Calibration, o.Delta)
	if err != nil {
		return nil, err
	}
	seeds, resplits, reference := 3, 200, 0 // reference 0: experiment.DefaultReference, capped at the fit split
	for _, v := range []struct {
		name string
		p    *int
		dst  *int
	}{{"seeds", o.Seeds, &seeds}, {"resplits", o.Resplits, &resplits}, {"reference", o.Reference, &reference}} {
		if v.p == nil {
			continue
		}
		if *v.p < 1 {
			return nil, fmt.Errorf("compare: %s=%d: want at least 1", v.name, *v.p)
		}
		*v.dst = *v.p
	}
	rows, err := experiment.Rows(cmp.Or(o.Rows, "all"))
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	recipe, err := o.recipe("compare", "embedding")
	if err != nil {
		return nil, err
	}
	methods := experiment.ForCompare(rows)
	switch {
	case o.HeadDim < 0:
		return nil, fmt.Errorf("compare: head_dim=%d: want a positive dimension (0 or None: the embeddings')", o.HeadDim)
	case o.HeadDim > 0 && !slices.ContainsFunc(methods, func(m experiment.Method) bool { return m.Head }):
		return nil, fmt.Errorf("compare: head_dim=%d sets the outputs of the InfoNCE rows' heads, and rows=%q has none: give rows=\"infonce\" or \"all+infonce\"", o.HeadDim, cmp.Or(o.Rows, "all"))
	}
	needFit, trains := experiment.Needs(methods)
	var first string
	var d int
	for _, b := range []struct {
		name string
		b    *bundle.Bundle
		need bool
	}{{"fit", in.Fit, needFit}, {"val", in.Val, trains}, {"cal", in.Cal, true}, {"test", in.Test, true}, {"ood", in.OOD, false}, {"ood-cal", in.OODCal, false}} {
		switch {
		case b.b == nil && b.need && o.Directory != "" && bundle.NotMadeReason(o.Directory, b.name) != "":
			// As ccs compare says it: the split a share of 0 left out.
			return nil, fmt.Errorf("compare: %s: %s.npz is missing: %s", o.Directory, b.name, bundle.NotMadeReason(o.Directory, b.name))
		case b.b == nil && b.need:
			return nil, fmt.Errorf("compare: no %s bundle: the rows %q need it", b.name, cmp.Or(o.Rows, "all"))
		case b.b == nil:
		case first == "":
			first, d = b.name, b.b.D
		case b.b.D != d:
			return nil, fmt.Errorf("compare: the %s bundle has dimension %d, the %s bundle %d", b.name, b.b.D, first, d)
		}
	}
	if in.OOD != nil && in.Fit != nil {
		if err := experiment.CheckReference(reference, in.Fit, "the fit bundle", "reference"); err != nil {
			return nil, fmt.Errorf("compare: reference=%d: %w", reference, err)
		}
	}
	var sizes *experiment.CompareSizes
	coll, collName, anchors, err := o.resolve("compare", "the bundles", d, in.Test.N)
	if err != nil {
		return nil, err
	}
	if coll != nil { // anchors ≥ 1: CompareSizes' zero is its default, not all
		sizes = &experiment.CompareSizes{Rows: coll.Rows, N: coll.N, D: coll.D, Name: collName, Anchors: anchors}
	}
	if o.Shift && in.Fit == nil {
		return nil, fmt.Errorf("compare: shift=True needs the fit bundle: the mean offset is estimated there")
	}
	if o.AllowInfinite && mode != conformal.Class {
		return nil, fmt.Errorf(`compare: allow_infinite=True keeps the sets of classes too small for a class-conditional threshold: it goes with calibration="class"`)
	}
	cfg := experiment.CompareConfig{Config: experiment.Config{Seeds: seeds, Alpha: alpha, Calibration: mode, Delta: o.Delta, Train: recipe, OutDir: o.Sets, Shift: o.Shift, HeadDim: o.HeadDim, AllowInfinite: o.AllowInfinite},
		Resplits: resplits, Reference: reference, Sizes: sizes}
	if o.Out != "" && o.Sets != "" {
		return nil, fmt.Errorf("compare: out and sets: give one (out keeps the sets in %s)", filepath.Join(o.Out, "sets", "compare"))
	}
	if mode == conformal.Class && in.Cal.SeveralLabels() {
		return nil, fmt.Errorf("compare: calibration=\"class\": %s", conformal.SeveralLabelsReason)
	}
	if err := bundle.OneLabelClassError(in.CalOneLabel, `calibration="one"`); err != nil && mode == conformal.Class { // a loaded cal.npz's from its manifest (ccs_bundle_load)
		return nil, fmt.Errorf("compare: calibration=\"class\": %w", err)
	}
	if mode == conformal.Class && in.Cal.Labels == nil {
		return nil, fmt.Errorf("compare: calibration=\"class\": the cal bundle has no labels, and a class-conditional threshold is one per label: bundle with labels, or calibrate over every anchor (calibration=\"one\")")
	}
	if o.LabelNames == nil && o.Directory != "" {
		// Several labels a row: the labels the positives share.
		o.LabelNames = manifestNames(bundle.ReadManifest(o.Directory), filepath.Join(o.Directory, "test.npz"), in.Test)
	}
	if o.LabelNames != nil {
		for _, l := range in.Test.Labels {
			if l < 0 || l >= int64(len(o.LabelNames)) {
				return nil, fmt.Errorf("compare: label_names: %d names, the test bundle has label %d", len(o.LabelNames), l)
			}
		}
	}
	data := experiment.CompareData{Name: cmp.Or(o.Name, "ccs.compare"), Fit: in.Fit, Val: in.Val, Cal: in.Cal, Test: in.Test, OOD: in.OOD, OODCal: in.OODCal,
		LabelNames: o.LabelNames, OneLabel: in.CalOneLabel, Provenance: in.Provenance, TestBlocks: in.TestBlocks}
	if o.Out != "" {
		// Keyed as ccs compare -out keys them, so each reads the other's.
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return nil, fmt.Errorf("compare: out: %w", err)
		}
		var err error
		if cfg.Cells, err = experiment.NewCompareCells(o.Out, cfg, data, libraryVersion()); err != nil {
			return nil, fmt.Errorf("compare: out: %w", err)
		}
		cfg.OutDir = filepath.Join(o.Out, "sets", "compare")
	}
	return startJob("compare", func(ctx context.Context, j *job) error {
		if w := experiment.HighDimWarning(data.Test.D, methods); w != "" {
			j.report(warningReport{Warning: w}) // warned at once, before the hours it speaks of
		}
		var mu sync.Mutex                    // guards done, which an epoch's report repeats
		done, total := 0, len(methods)*seeds // a cell a row and seed, known before the first ends
		cfg.Epochs = func(row string, seed uint64, p train.Progress) {
			if p.Done || p.Epoch == 0 {
				return
			}
			mu.Lock()
			r := compareReport{Done: done, Total: total, Row: row, Seed: &seed, Epoch: &p.Epoch, MaxEpochs: p.MaxEpochs, ValExclusion: &p.ValExclusion}
			mu.Unlock()
			r.What = fmt.Sprintf("seed %d, %s: epoch %d/%d, validation exclusion %.1f%%", seed, row, p.Epoch, p.MaxEpochs, 100*p.ValExclusion)
			j.report(r)
		}
		t, err := experiment.Compare(ctx, data, cfg, methods, func(n, of int, what string) {
			mu.Lock()
			done, total = n, of
			mu.Unlock()
			j.report(compareReport{Done: n, Total: of, What: what})
		})
		if err != nil {
			return err
		}
		b, err := compareDocument(t, o.Command)
		if err != nil {
			return err
		}
		var text bytes.Buffer
		if err := t.WriteText(&text); err != nil {
			return err
		}
		var counts *cellCounts
		if cfg.Cells != nil {
			reused, computed, stale := cfg.Cells.Counts()
			counts = &cellCounts{Dir: cfg.Cells.Dir(), ReadBack: reused, Computed: computed, Stale: stale, Kept: []string{}}
			// compare.json keeps the directory's comparison, as ccs
			// compare -out does: these rows and those earlier calls with
			// other rows left in its cells.
			kept := b
			dir, others, err := experiment.CompareKept(ctx, data, cfg, methods, o.Out, libraryVersion())
			if err != nil {
				return err
			}
			if dir != nil {
				if kept, err = compareDocument(dir, o.Command); err != nil {
					return err
				}
				counts.Kept = others
			}
			path := filepath.Join(o.Out, "compare.json") // as ccs compare -out keeps it
			if err := atomicfile.Write(path, func(w io.Writer) error {
				_, err := w.Write(append(kept, '\n'))
				return err
			}); err != nil {
				return err
			}
		}
		j.mu.Lock()
		j.doc, j.text, j.cells = b, text.String(), counts
		j.mu.Unlock()
		return nil
	}), nil
}

// compareDocument is t's document as ccs compare -json lays it out,
// without its last newline; command is the call (by default
// "ccs.compare").
func compareDocument(t *experiment.CompareTable, command string) ([]byte, error) {
	doc, err := newDocument("compare", cmp.Or(command, "ccs.compare"))
	if err != nil {
		return nil, err
	}
	if err := doc.Result.(interface{ Add(experiment.Text) error }).Add(t); err != nil {
		return nil, err
	}
	var laid bytes.Buffer
	if err := jsonindent.Encode(&laid, doc, "  "); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(laid.Bytes(), []byte("\n")), nil
}

// newDocument is an empty result of kind, as a command's -json holds it:
// the command line (here the call) and the build.
func newDocument(kind, command string) (*experiment.Document, error) {
	b, err := json.Marshal(buildinfo.Of(libraryFile()))
	if err != nil {
		return nil, err
	}
	res, err := experiment.NewResult(kind)
	if err != nil {
		return nil, err
	}
	return &experiment.Document{Kind: kind, Command: command, Build: b, Result: res}, nil
}

// compared says whether the job is a comparison that is done: nil, or
// its error, or that it is still running or not a comparison.
func (j *job) compared() error {
	if err := j.finished(); err != nil {
		return err
	}
	if j.doc == nil {
		return fmt.Errorf("the job is a %s, not a comparison", j.what)
	}
	return nil
}

// cellsOf is how a comparison job kept in a results directory had its
// cells, once it is done; nil without one.
func (j *job) cellsOf() (*cellCounts, error) {
	if err := j.compared(); err != nil {
		return nil, err
	}
	return j.cells, nil
}

// document is a comparison job's result once it is done: its document
// (ccs compare -json) and the table as ccs compare prints it.
func (j *job) document() ([]byte, string, error) {
	if err := j.compared(); err != nil {
		return nil, "", err
	}
	return j.doc, j.text, nil
}

// documentText is a comparison's table as ccs compare prints it, from its
// document (ccs compare -json, or OUT/compare.json): what
// ccs.Comparison.load shows.
func documentText(doc []byte) (string, error) {
	d, err := comparisonDocument(doc)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, t := range d.Result.Texts() {
		if i > 0 {
			b.WriteString("\n") // a blank line between tables, as the command prints them
		}
		if err := t.WriteText(&b); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// comparisonDocument reads a comparison's document, refusing one of
// another kind.
func comparisonDocument(doc []byte) (*experiment.Document, error) {
	d, err := experiment.ReadDocument(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("comparison: %w", err)
	}
	if d.Kind != "compare" {
		return nil, fmt.Errorf("comparison: a document of kind %q, not a comparison (ccs compare -json, or compare.json in a results directory)", d.Kind)
	}
	return d, nil
}

// documentTable is a comparison's table alone (no title, notes or
// warnings), from its document, as Markdown or a LaTeX tabular
// (format "markdown" or "latex"): Comparison.markdown and .latex.
func documentTable(doc []byte, format string) (string, error) {
	d, err := comparisonDocument(doc)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, t := range d.Result.Texts() {
		ct, ok := t.(*experiment.CompareTable)
		if !ok {
			continue
		}
		if i > 0 {
			b.WriteString("\n")
		}
		switch format {
		case "markdown":
			err = ct.WriteMarkdown(&b)
		case "latex":
			err = ct.WriteLaTeX(&b)
		default:
			return "", fmt.Errorf("comparison: table format %q: want markdown or latex", format)
		}
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// writePlots is ccs.plot: the figures of docs (JSON result documents),
// as PNG and SVG files in dir, as ccs plot writes them; the files'
// paths. Every figure is drawn before any is written.
func writePlots(dir string, docs [][]byte) ([]string, error) {
	ds, err := readDocuments("plot", docs)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ds))
	for i := range names {
		names[i] = fmt.Sprintf("result %d", i)
	}
	all, err := experiment.DrawFigures(ds, names)
	if err != nil {
		return nil, err
	}
	var files []string
	for i, figs := range all {
		f, err := figure.Write(dir, figs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", names[i], err)
		}
		files = append(files, f...)
	}
	return files, nil
}

// writeReport is ccs report on documents given as JSON (each what a
// command's -json or ccs.compare wrote): one self-contained HTML page, or
// the tables as Markdown or LaTeX (format, report.FormatOf's).
func writeReport(w io.Writer, format, title string, docs [][]byte) error {
	ds, err := readDocuments("report", docs)
	if err != nil {
		return err
	}
	return report.WriteFormat(w, format, title, ds) // "": the report's own default title
}

// readDocuments reads result documents given as JSON for what (report,
// plot), naming a bad one by its place, and refuses none at all.
func readDocuments(what string, docs [][]byte) ([]*experiment.Document, error) {
	var ds []*experiment.Document
	for i, b := range docs {
		d, err := experiment.ReadDocument(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: result %d: %w", what, i, err)
		}
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		return nil, fmt.Errorf("%s: no results", what)
	}
	return ds, nil
}
