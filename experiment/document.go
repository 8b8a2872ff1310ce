package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ccsets/ccs/figure"
	"github.com/ccsets/ccs/internal/buildinfo"
	"github.com/ccsets/ccs/internal/jsonerr"
)

// Document is a result as -json prints it and as a results directory keeps
// it (KIND.json): its kind, the command line that computed it, the build
// (ccs version -json) and the result itself, whose keys follow the
// envelope's in the same JSON object:
//
//	{"kind": "sim", "command": "ccs reproduce sim …", "build": {…}, "tables": […]}
//
// Its kind is a registered one (Register); ccs plot draws its figures and
// package report renders it.
type Document struct {
	Kind    string
	Command string
	// Build is the binary's version information (ccs version -json).
	Build  json.RawMessage
	Result Result
}

// envelope is a document's own keys, first in its JSON object.
type envelope struct {
	Kind    string          `json:"kind"`
	Command string          `json:"command"`
	Build   json.RawMessage `json:"build,omitempty"`
}

// MarshalJSON writes the envelope's keys, then the result's.
func (d Document) MarshalJSON() ([]byte, error) {
	if d.Result == nil {
		return nil, fmt.Errorf("experiment: document of kind %q holds no result", d.Kind)
	}
	env, err := json.Marshal(envelope{d.Kind, d.Command, d.Build})
	if err != nil {
		return nil, err
	}
	res, err := json.Marshal(d.Result)
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(res, &keys); err != nil || keys == nil {
		return nil, fmt.Errorf("experiment: a %s result must be a JSON object, not %.20s", d.Kind, res)
	}
	for _, k := range []string{"kind", "command", "build"} {
		if _, ok := keys[k]; ok {
			return nil, fmt.Errorf("experiment: a %s result has a key %q, the document's own", d.Kind, k)
		}
	}
	res = bytes.TrimSpace(res)
	if len(keys) == 0 {
		return env, nil
	}
	out := append(env[:len(env)-1], ',')
	return append(out, res[1:]...), nil
}

// UnmarshalJSON reads a document of a registered kind.
func (d *Document) UnmarshalJSON(b []byte) error {
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return err
	}
	if env.Kind == "" {
		// Another of ccs's files, named by its format (a set, a bundles'
		// manifest), rather than as a document of kind "".
		var other struct {
			Format string `json:"format"`
		}
		if json.Unmarshal(b, &other) == nil && other.Format != "" {
			return fmt.Errorf("experiment: a file of format %q, not a result document (ccs compare -json, ccs evaluate -json, a results directory's KIND.json)", other.Format)
		}
	}
	r, err := NewResult(env.Kind)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, r); err != nil {
		return fmt.Errorf("experiment: %s result: %w", env.Kind, err)
	}
	*d = Document{Kind: env.Kind, Command: env.Command, Build: env.Build, Result: r}
	return nil
}

// ReadDocument reads a document, checking its kind and its result.
func ReadDocument(r io.Reader) (*Document, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var d Document
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&d); err != nil {
		// A syntax error's offset counts from the stream's start; a
		// value's type error, from UnmarshalJSON's, the document without
		// the space before it.
		var syntax *json.SyntaxError
		if !errors.As(err, &syntax) {
			data = bytes.TrimLeft(data, " \t\r\n")
		}
		return nil, jsonerr.Explain(err, data)
	}
	if err := d.Check(); err != nil {
		return nil, err
	}
	return &d, nil
}

// Check refuses a document without a result, and one whose result's own
// Check (when it has one) fails: what the text, the figures and the
// report would index out of range (a file edited by hand, or not ccs's).
// ReadDocument checks what it reads; a document built in memory is
// checked here.
func (d *Document) Check() error {
	if d.Result == nil {
		return fmt.Errorf("experiment: document of kind %q holds no result", d.Kind)
	}
	if c, ok := d.Result.(interface{ Check() error }); ok {
		if err := c.Check(); err != nil {
			return fmt.Errorf("experiment: %s: %w", d.Kind, err)
		}
	}
	return nil
}

// LoadDocument reads the document in a file.
func LoadDocument(path string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := ReadDocument(f)
	var syn *json.SyntaxError
	if errors.As(err, &syn) || errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: not a result document (JSON from ccs compare -json, or a results directory's KIND.json): %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// Figures checks the document and draws its result's figures, their
// names starting with its kind.
func (d *Document) Figures() ([]*figure.Figure, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	figs, err := d.Result.Figures(d.Kind)
	if err != nil {
		return nil, fmt.Errorf("experiment: %s figures: %w", d.Kind, err)
	}
	source := d.source()
	for _, f := range figs {
		f.Source = source
	}
	return figs, nil
}

// source says what computed the document's numbers, for its figures'
// files: the command and the build (its version and the revision or the
// executable's SHA-256 that names the code).
func (d *Document) source() string {
	var parts []string
	if d.Command != "" {
		parts = append(parts, "computed by "+d.Command)
	}
	var b buildinfo.Info
	if json.Unmarshal(d.Build, &b) == nil && b.Module != "" {
		build := b.Module + " " + b.Version
		switch {
		case b.Revision != "" && b.Modified:
			build += " revision " + b.Revision + " (modified)"
		case b.Revision != "":
			build += " revision " + b.Revision
		}
		if b.Code != "" {
			build += " code " + b.Code
		}
		if b.Kernels != "" {
			build += ", kernels " + b.Kernels
		}
		parts = append(parts, "build "+build)
	}
	return strings.Join(parts, "; ")
}

// DrawFigures draws every figure of docs (named names in messages) before
// any is written — a bad second document must not leave the first's
// figures behind — and names them as ccs plot and the report do: two
// documents of one kind draw figures of the same names, the second's
// NAME-2. It returns each document's figures, in order, and an error
// where none has any (results of an older ccs, without curves).
func DrawFigures(docs []*Document, names []string) ([][]*figure.Figure, error) {
	seen := map[string]int{}
	out := make([][]*figure.Figure, len(docs))
	n := 0
	for i, doc := range docs {
		figs, err := doc.Figures()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", names[i], err)
		}
		for _, fig := range figs {
			if seen[fig.Name]++; seen[fig.Name] > 1 {
				fig.Name = fmt.Sprintf("%s-%d", fig.Name, seen[fig.Name])
			}
		}
		out[i], n = figs, n+len(figs)
	}
	if n == 0 {
		return nil, errors.New("plot: the results have nothing to draw (no curves: an OOD detection without an OOD sample, which has no ROC, or results of an older ccs)")
	}
	return out, nil
}
