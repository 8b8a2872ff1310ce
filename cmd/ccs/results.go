package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/figure"
	"github.com/ccsets/ccs/internal/atomicfile"
	"github.com/ccsets/ccs/internal/buildinfo"
)

// codeVersion identifies the code that computes the numbers
// (buildinfo.CodeVersion): the revision, or the executable's SHA-256.
var codeVersion = sync.OnceValue(func() string { return buildinfo.CodeVersion(executable()) })

// executable is the running executable's path, "" if unknown.
func executable() string {
	exe, _ := os.Executable()
	return exe
}

// cellKey is the key of a command's cells: its configuration (every flag
// that may change a number), the SHA-256 of each input file named by the
// command (the encoders: a file re-exported under the same name is another
// input) and the code version.
func cellKey(out *output, inputs ...string) (string, error) {
	h := sha256.New()
	io.WriteString(h, out.config+"\n"+codeVersion()+"\n")
	for _, path := range inputs {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		io.WriteString(h, "\n")
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// results collects a reproduce command's tables into its document: each
// table printed as text when it is done, or the document as JSON at the
// end; with -out the document is kept as OUT/KIND.json and each finished
// cell in OUT/cells (a rerun reads them back) and every fitted set in
// OUT/sets/KIND, with -plots its figures are drawn.
type results struct {
	out   *output
	o     tableOptions
	doc   experiment.Document
	cells *experiment.Cells
	// printed reports whether a table was printed as text.
	printed bool
	// sets is where the tables keep their fitted sets (OUT/sets/KIND),
	// empty without -out.
	sets string
	// dir, when not nil, is the table OUT/KIND.json keeps instead of the
	// printed one: the rows this run asked for and those the directory
	// keeps from earlier runs (ccs compare -out).
	dir experiment.Text
}

// newResults starts kind's document; with -out and cells it opens the
// cells, keyed also on the content of the input files, which the caller
// puts in the tables' configuration.
func newResults(out *output, o tableOptions, kind string, cells bool, inputs ...string) (*results, error) {
	doc, err := newDocument(out, kind, nil)
	if err != nil {
		return nil, err
	}
	if doc.Result, err = experiment.NewResult(kind); err != nil {
		return nil, err
	}
	r := &results{out: out, o: o, doc: *doc}
	if o.Out != "" {
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return nil, err
		}
		r.sets = filepath.Join(o.Out, "sets", kind)
	}
	if o.Out != "" && cells {
		key, err := cellKey(out, inputs...)
		if err != nil {
			return nil, err
		}
		if r.cells, err = experiment.NewCells(o.Out, key); err != nil {
			return nil, err
		}
		r.cells.SetCode(codeVersion())
	}
	return r, nil
}

// add keeps a table in the result and, for text output, prints it.
func (r *results) add(t experiment.Text) error {
	a, ok := r.doc.Result.(interface{ Add(experiment.Text) error })
	if !ok {
		return fmt.Errorf("results: a %s result is not built a table at a time", r.doc.Kind)
	}
	if err := a.Add(t); err != nil {
		return err
	}
	if r.o.JSON {
		return nil
	}
	if r.printed {
		fmt.Fprintln(r.out.stdout) // a blank line between tables
	}
	r.printed = true
	return t.WriteText(r.out.stdout)
}

// done says how many cells were read back, keeps the document and draws its
// figures, and prints the JSON when asked for.
func (r *results) done() error {
	if r.cells != nil {
		reused, computed, stale := r.cells.Counts()
		msg := fmt.Sprintf("cells in %s: %d read back, %d computed", r.cells.Dir(), reused, computed)
		if stale > 0 {
			code, config, unknown := r.cells.StaleBy()
			var why []string
			if config > 0 {
				why = append(why, fmt.Sprintf("%d under another configuration (flags or input files)", config))
			}
			if code > 0 {
				w := fmt.Sprintf("%d under another code version", code)
				if b := buildinfo.Read(); b.Revision == "" || b.Modified {
					// The cells are keyed on the executable's hash: Python's
					// library, another file, keeps its own.
					w += " — this build carries no VCS revision of an unmodified tree (-buildvcs=false, or local changes), so cells are keyed on its file's hash, and the command's and Python's (libccs.so) are kept apart"
				}
				why = append(why, w)
			}
			if unknown > 0 {
				why = append(why, fmt.Sprintf("%d under another configuration or code version", unknown))
			}
			msg += fmt.Sprintf(" (of them kept before: %s)", strings.Join(why, "; "))
		}
		fmt.Fprintln(r.out.stderr, msg)
	}
	if r.o.Out != "" {
		kept := r.doc
		if r.dir != nil {
			res, err := experiment.NewResult(kept.Kind)
			if err != nil {
				return err
			}
			if err := res.(interface{ Add(experiment.Text) error }).Add(r.dir); err != nil {
				return err
			}
			kept.Result = res
		}
		path := filepath.Join(r.o.Out, r.doc.Kind+".json")
		_, had := os.Stat(path)
		if err := atomicfile.Write(path, func(w io.Writer) error { return writeJSON(w, kept) }); err != nil {
			return err
		}
		if had == nil && r.dir == nil && !r.o.Quiet {
			// A quick variant into a directory of a long run replaced its
			// table (a trial's 20-seed, 8-row sim.json by 2 baselines).
			fmt.Fprintf(r.out.stderr, "%s replaced by this run's table (the earlier cells stay in %s: the earlier command reads them back)\n", path, filepath.Join(r.o.Out, "cells"))
		}
	}
	if r.o.Plots != "" {
		files, err := writeFigures(&r.doc, r.o.Plots)
		if err != nil {
			return err
		}
		if !r.o.Quiet {
			fmt.Fprintf(r.out.stderr, "%d figures in %s (PNG and SVG)\n", len(files)/2, r.o.Plots)
		}
	}
	if r.o.JSON {
		return writeJSON(r.out.stdout, r.doc)
	}
	return nil
}

// writeFigures draws a document's figures in dir as PNG and SVG.
func writeFigures(doc *experiment.Document, dir string) ([]string, error) {
	figs, err := doc.Figures()
	if err != nil {
		return nil, err
	}
	return figure.Write(dir, figs)
}

// newDocument is a document of kind holding res, computed by the command
// running now on this build.
func newDocument(out *output, kind string, res experiment.Result) (*experiment.Document, error) {
	b, err := json.Marshal(buildinfo.Of(executable()))
	if err != nil {
		return nil, err
	}
	return &experiment.Document{Kind: kind, Command: out.command, Build: b, Result: res}, nil
}

// saveDocument is the -json and -out of command cmd, whose result is a
// document of kind: it writes the document to path (-out, when not "")
// whole or not at all, and prints it when asJSON. The caller prints its
// text otherwise, ending with wroteOut's line.
func saveDocument(out *output, cmd, kind string, res experiment.Result, asJSON bool, path string) error {
	doc, err := newDocument(out, kind, res)
	if err != nil {
		return err
	}
	return saveJSON(out, cmd, doc, asJSON, path)
}

// saveJSON writes v, command cmd's JSON, to path (-out, when not "")
// whole or not at all (atomicfile), and prints it when asJSON — encoded
// once, the same bytes in both: saveDocument's, and that of a result of
// no document kind (evaluate -trials').
func saveJSON(out *output, cmd string, v any, asJSON bool, path string) error {
	if path == "" && !asJSON {
		return nil
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		return err
	}
	if path != "" {
		if err := atomicfile.Write(path, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
			return fmt.Errorf("%s: -out: %w", cmd, err)
		}
	}
	if asJSON {
		_, err := out.stdout.Write(buf.Bytes())
		return err
	}
	return nil
}

// outUsage is the -out flag's usage of a command whose -json prints a
// document (saveDocument).
const outUsage = "also write the JSON document -json prints to `FILE` (replaced whole, never left half-written): what ccs report and ccs plot read"

// checkOut refuses, before any work, a directory as cmd's -out, naming
// the file to give (DIR/KIND.json, where ccs report -in DIR looks for a
// document of kind), and a file in a directory that is not there (found
// after minutes of scoring before).
func checkOut(cmd, kind, path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("%s: -out %s is a directory: give the JSON file to write (%s)", cmd, path, filepath.Join(path, kind+".json"))
	}
	if dir := filepath.Dir(path); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s: -out %s: its directory %s is not there (mkdir -p %s)", cmd, path, dir, dir)
		}
	}
	return nil
}

// wroteOut ends a command's text with the -out file it wrote, if any.
func wroteOut(out *output, path string) {
	if path != "" {
		fmt.Fprintf(out.stdout, "wrote %s\n", path)
	}
}
