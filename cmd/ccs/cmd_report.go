package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/atomicfile"
	"github.com/ccsets/ccs/report"
)

// reportOptions are ccs report's inputs.
type reportOptions struct {
	In, Out, Title string
}

func reportCommand() *command {
	return newCommand("report", "-in RESULTS_DIR -out report.html [-title TITLE]",
		"write one self-contained HTML page (tables, figures as inline SVG, the paper's numbers beside ours, the build) from a results directory of ccs reproduce -out",
		func(fs *flag.FlagSet, o *reportOptions) func() error {
			fs.StringVar(&o.In, "in", "", "results `DIR` (ccs reproduce … -out DIR): its sim.json, pnorm.json, fmnist.json, ood.json, sensitivity.json")
			fs.StringVar(&o.Out, "out", "", "the HTML `file` to write")
			fs.StringVar(&o.Title, "title", "ccs: the paper's tables reproduced", "the page's title")
			return nil
		}, runReport)
}

func runReport(_ context.Context, o reportOptions, out *output) error {
	if err := required("report", "in", o.In, "out", o.Out); err != nil {
		return err
	}
	var docs []*experiment.Document
	for _, kind := range experiment.Kinds {
		path := filepath.Join(o.In, kind+".json")
		d, err := experiment.LoadDocument(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return fmt.Errorf("report: %s holds no results (want one of %v as KIND.json, written by ccs reproduce -out %s)", o.In, experiment.Kinds, o.In)
	}
	err := atomicfile.Write(o.Out, func(w io.Writer) error { return report.Write(w, o.Title, docs) })
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(out.stdout, "%s: %d results\n", o.Out, len(docs))
	return nil
}
