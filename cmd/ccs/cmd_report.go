package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/atomicfile"
	"github.com/ccsets/ccs/report"
)

// reportOptions are ccs report's inputs.
type reportOptions struct {
	In, Out, Title string
	Files          []string // result documents besides -in's
}

func reportCommand() *command {
	return &command{name: "report", args: "(-in RESULTS_DIR | RESULT.json…) -out report.html|report.md|tables.tex [-title TITLE]",
		short: "write one self-contained HTML page (tables, figures as inline SVG, the paper's numbers beside ours, the build) from a results directory of ccs reproduce -out, or result files; or their tables as Markdown (.md) or LaTeX (.tex)",
		flags: func(fs *flag.FlagSet) runner {
			var o reportOptions
			fs.StringVar(&o.In, "in", "", "results `DIR` (ccs reproduce … -out DIR, ccs compare -out DIR): its KIND.json for each kind of result ("+strings.Join(experiment.KindNames(), ", ")+"), and any other result document in it")
			fs.StringVar(&o.Out, "out", "", "the `file` to write: .html (one page, figures inline), .md (the tables and notes as Markdown) or .tex (each table a LaTeX table float with booktabs' rules, for \\input; figures are ccs plot's)")
			fs.StringVar(&o.Title, "title", "", "the page's title (default \""+report.ReproducedTitle+"\" for results of ccs reproduce only, else \""+report.ResultsTitle+"\")")
			return func(ctx context.Context, out *output) error {
				o.Files = fs.Args() // after -in's documents, in the order given: two of one kind (the sensitivity analysis on sim and on fmnist) both appear
				return runReport(ctx, o, out)
			}
		}, positional: true}
}

func runReport(_ context.Context, o reportOptions, out *output) error {
	if err := required("report", "out", o.Out); err != nil {
		return err
	}
	if fi, err := os.Stat(o.Out); err == nil && fi.IsDir() {
		return usagef("report: -out %s is a directory: give the file to write (%s)", o.Out, filepath.Join(o.Out, "report.html"))
	}
	format, err := report.FormatOf(o.Out)
	if err != nil {
		// A file named for another format (.txt, .json, .pdf) would hold
		// HTML unsaid.
		return usagef("report: -out %v (the JSON is the results' own: ccs compare -json, -out DIR)", err)
	}
	if o.In == "" && len(o.Files) == 0 {
		return usagef("report: give -in RESULTS_DIR or result files")
	}
	if st, err := os.Stat(o.In); o.In != "" && err == nil && !st.IsDir() {
		// A result file (ccs ood -out ood.json) given as -in: read as
		// the files after the flags are.
		fmt.Fprintf(out.stderr, "note: -in %s: a file, read as a result file (-in takes a results directory; files go after the flags: ccs report -out %s %s)\n", o.In, o.Out, o.In)
		o.Files, o.In = append([]string{o.In}, o.Files...), ""
	}
	var paths []string
	if o.In != "" {
		for _, kind := range experiment.KindNames() {
			paths = append(paths, filepath.Join(o.In, kind+".json"))
		}
		// Results written under names of the user's own (ccs evaluate
		// -out DIR/eval_class.json) are read too, and said; set files and
		// other JSON are not results and are left alone.
		var extra, other []string
		files, _ := filepath.Glob(filepath.Join(o.In, "*.json"))
		for _, f := range files {
			switch {
			case slices.Contains(paths, f):
			case resultKind(f) != "":
				extra = append(extra, f)
			default:
				other = append(other, filepath.Base(f))
			}
		}
		if extra != nil {
			fmt.Fprintf(out.stderr, "note: -in %s: also read %s (results not named KIND.json)\n", o.In, strings.Join(extra, ", "))
			paths = append(paths, extra...)
		}
		if other != nil {
			fmt.Fprintf(out.stderr, "note: -in %s: left %s alone: no result document (a set file, other JSON)\n", o.In, strings.Join(other, ", "))
		}
	}
	var docs []*experiment.Document
	for _, path := range paths {
		d, err := experiment.LoadDocument(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a results directory holds the kinds it was given
		}
		if err != nil {
			return err
		}
		docs = append(docs, d)
	}
	for _, f := range o.Files {
		d, err := experiment.LoadDocument(f)
		if err != nil {
			return err
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		if _, err := os.Stat(o.In); o.In != "" && errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("report: -in %s: no such directory (ccs compare -out %s or ccs reproduce -out %s makes one)", o.In, o.In, o.In)
		}
		return fmt.Errorf("report: %s holds no results (want one of %v as KIND.json, written by ccs compare -out %s or ccs reproduce -out %s)", o.In, experiment.KindNames(), o.In, o.In)
	}
	err = atomicfile.Write(o.Out, func(w io.Writer) error { return report.WriteFormat(w, format, o.Title, docs) })
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(out.stdout, "%s: %s\n", o.Out, plural(len(docs), "result", "results"))
	return nil
}

// resultKind is the kind of the result document in file, read from its
// first field as ccs writes it ({"kind": "evaluate", …}), or "" for a file
// that does not start so with a known kind (a set file, other JSON).
func resultKind(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, 1<<12))
	var kind string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	if t, err := dec.Token(); err != nil || t != "kind" {
		return ""
	}
	if err := dec.Decode(&kind); err != nil || !slices.Contains(experiment.KindNames(), kind) {
		return ""
	}
	return kind
}
