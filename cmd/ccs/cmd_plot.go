package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/figure"
)

// plotOptions are ccs plot's inputs.
type plotOptions struct {
	Out   string
	Files []string
}

func plotCommand() *command {
	return &command{name: "plot", args: "-out DIR RESULT.json…",
		short: "draw the figures of result documents (the -json or -out of ccs reproduce, compare, evaluate, coverage-check and ood; a results directory's TABLE.json) as PNG and SVG",
		flags: func(fs *flag.FlagSet) runner {
			var o plotOptions
			fs.StringVar(&o.Out, "out", "", "write the figures in `DIR` (required)")
			return func(ctx context.Context, out *output) error {
				o.Files = fs.Args()
				return runPlot(ctx, o, out)
			}
		}, positional: true}
}

func runPlot(_ context.Context, o plotOptions, out *output) error {
	if err := required("plot", "out", o.Out); err != nil {
		return err
	}
	if len(o.Files) == 0 {
		return usagef("plot: no result file given")
	}
	var docs []*experiment.Document
	for _, f := range o.Files {
		if fi, err := os.Stat(f); err == nil && fi.IsDir() {
			found, _ := filepath.Glob(filepath.Join(f, "*.json"))
			if found == nil {
				return usagef("plot: %s is a directory, and holds no .json document: give result documents (-json's or -out's files)", f)
			}
			return usagef("plot: %s is a directory: give the result documents in it (%s)", f, strings.Join(found, " "))
		}
		doc, err := experiment.LoadDocument(f)
		if err != nil {
			return err
		}
		docs = append(docs, doc)
	}
	all, err := experiment.DrawFigures(docs, o.Files)
	if err != nil {
		return err
	}
	for i, figs := range all {
		files, err := figure.Write(o.Out, figs)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Files[i], err)
		}
		for _, p := range files {
			fmt.Fprintln(out.stdout, p)
		}
	}
	return nil
}
