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
	// Every document read and its figures made before any is written: a
	// bad second file left the first's figures behind, and a rerun into
	// the directory mixed old and new.
	type drawn struct {
		file string
		figs []*figure.Figure
	}
	var all []drawn
	seen := map[string]int{} // figure names drawn, and how often
	for _, f := range o.Files {
		if fi, err := os.Stat(f); err == nil && fi.IsDir() {
			docs, _ := filepath.Glob(filepath.Join(f, "*.json"))
			if docs == nil {
				return usagef("plot: %s is a directory, and holds no .json document: give result documents (-json's or -out's files)", f)
			}
			return usagef("plot: %s is a directory: give the result documents in it (%s)", f, strings.Join(docs, " "))
		}
		doc, err := experiment.LoadDocument(f)
		if err != nil {
			return err
		}
		figs, err := doc.Figures()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		// Two results of one kind (two evaluations, say) draw figures of
		// the same names: the second's are NAME-2, as the report's
		// sections.
		for _, fig := range figs {
			if seen[fig.Name]++; seen[fig.Name] > 1 {
				fig.Name = fmt.Sprintf("%s-%d", fig.Name, seen[fig.Name])
			}
		}
		all = append(all, drawn{f, figs})
	}
	n := 0
	for _, d := range all {
		files, err := figure.Write(o.Out, d.figs)
		if err != nil {
			return fmt.Errorf("%s: %w", d.file, err)
		}
		for _, p := range files {
			fmt.Fprintln(out.stdout, p)
		}
		n += len(files)
	}
	if n == 0 {
		return fmt.Errorf("plot: the results have nothing to draw (no curves: results of an older ccs?)")
	}
	return nil
}
