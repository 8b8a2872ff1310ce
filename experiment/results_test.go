package experiment_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/figure"
	"github.com/ccsets/ccs/internal/fixture"
	"github.com/ccsets/ccs/internal/race"
)

// TestFigures draws every kind of result's figures, from small real
// results and from the commands' documents, and checks each file (a PNG of
// the figure's size with ink, an SVG of its width with labels and data,
// the same bytes when drawn again).
func TestFigures(t *testing.T) {
	if race.Enabled {
		// 44 s under the race detector, drawing figures: code with no
		// goroutines (gonum/plot, PNG and SVG encoding). It runs in the
		// suite's other phases.
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	docs := append(fixture.Documents(t), fixture.CommandDocuments(t)...)
	dir := t.TempDir()
	var names []string
	for _, d := range docs {
		figs, err := d.Figures()
		if err != nil {
			t.Fatal(err)
		}
		files, err := figure.Write(dir, figs)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 2*len(figs) {
			t.Errorf("%s: %d files for %d figures", d.Kind, len(files), len(figs))
		}
		for _, f := range figs {
			names = append(names, f.Name)
			if f.Caption == "" {
				t.Errorf("%s: no caption", f.Name)
			}
			if !strings.HasPrefix(f.Name, d.Kind) {
				t.Errorf("%s: not named after its kind %s", f.Name, d.Kind)
			}
			fixture.CheckFigure(t, dir, f)
			// Drawn again, the same bytes (gonum/plot's contours, joined
			// through a map, came out in another order).
			var again bytes.Buffer
			if err := f.SVG(&again); err != nil {
				t.Fatal(err)
			}
			if svg, err := os.ReadFile(filepath.Join(dir, f.Name+".svg")); err != nil || !bytes.Equal(svg, again.Bytes()) {
				t.Errorf("%s: drawn twice, two SVGs (%v)", f.Name, err)
			}
		}
	}
	// One of each kind.
	for _, want := range []string{"sim-simulated-3d-clusters-mixed-coverage", "-tradeoff", "-shapes", "pnorm", "sensitivity-sim",
		"ood-fixture-id-normal-scores-roc", "ood-fixture-id-normal-scores-histograms",
		"evaluate-coverage", "coverage-check-distribution", "ood-detection-roc", "ood-detection-histograms"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, want) || n == want }) {
			t.Errorf("no %s figure among %v", want, names)
		}
	}
}

// TestFiguresEmpty: a result with no curves (an older ccs), no sweeps or no
// resplits' coverages has no figures, and no error; malformed curves are
// an error, not a panic.
func TestFiguresEmpty(t *testing.T) {
	for _, d := range []*experiment.Document{
		{Kind: "sim", Result: &experiment.SimResult{Tables: []*experiment.Table{{Title: "old", Rows: []experiment.Row{{Method: "x"}}}}}},
		{Kind: "sensitivity", Result: &experiment.SensitivityResult{Sensitivity: &experiment.SensitivityTable{}}},
		{Kind: "sensitivity", Result: &experiment.SensitivityResult{Sensitivity: &experiment.SensitivityTable{Sweeps: []experiment.SensitivitySweep{{Param: "alpha"}}}}},
		{Kind: "pnorm", Result: &experiment.PNormResult{}},
		{Kind: "coverage-check", Result: &experiment.CoverageCheck{}},
		{Kind: "ood-detection", Result: &experiment.OODTable{Title: "OOD detection", Sets: []string{"a"}}},
	} {
		figs, err := d.Figures()
		if err != nil || len(figs) != 0 {
			t.Errorf("%s: figures %v, error %v", d.Kind, figs, err)
		}
	}
	bad := fixture.OOD()
	bad.Rows[1].Curves[0].Edges = bad.Rows[1].Curves[0].Edges[1:]
	for _, d := range []*experiment.Document{
		{Kind: "ood", Result: &experiment.OODResult{OOD: []*experiment.OODTable{bad}}},
		{Kind: "ood-detection", Result: bad},
	} {
		if _, err := d.Figures(); err == nil || !strings.Contains(err.Error(), "malformed curve") {
			t.Errorf("%s, malformed curve: error %v", d.Kind, err)
		}
	}
}

// oldDocument is the document's layout before results were registered
// (a closed union of the reproduced tables): the JSON of every kind it
// held must not change.
type oldDocument struct {
	Kind        string                       `json:"kind"`
	Command     string                       `json:"command"`
	Build       json.RawMessage              `json:"build,omitempty"`
	Tables      []*experiment.Table          `json:"tables,omitempty"`
	Hull        []*experiment.HullTable      `json:"hull,omitempty"`
	OOD         []*experiment.OODTable       `json:"ood,omitempty"`
	PNorm       *experiment.PNormTable       `json:"pnorm,omitempty"`
	Sensitivity *experiment.SensitivityTable `json:"sensitivity,omitempty"`
}

// indented is v as the commands print it (indented, a newline after).
func indented(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDocumentLayout: a reproduced table's document is byte for byte the
// old layout's (kind, command, build, then its tables), and reads back
// into what wrote it.
func TestDocumentLayout(t *testing.T) {
	build := json.RawMessage(`{"module": "github.com/ccsets/ccs", "version": "(devel)"}`)
	hull := &experiment.HullTable{Title: "Convex hull", Config: "c"}
	docs := fixture.Documents(t)
	docs = append(docs, &experiment.Document{Kind: "fmnist", Command: "ccs reproduce fmnist (fixture)",
		Result: &experiment.FMNISTResult{Tables: docs[0].Result.(*experiment.SimResult).Tables, Hull: []*experiment.HullTable{hull}}})
	for _, d := range docs {
		d.Build = build
		old := oldDocument{Kind: d.Kind, Command: d.Command, Build: d.Build}
		switch r := d.Result.(type) {
		case *experiment.SimResult:
			old.Tables = r.Tables
		case *experiment.FMNISTResult:
			old.Tables, old.Hull = r.Tables, r.Hull
		case *experiment.OODResult:
			old.OOD = r.OOD
		case *experiment.PNormResult:
			old.PNorm = r.PNorm
		case *experiment.SensitivityResult:
			old.Sensitivity = r.Sensitivity
		default:
			t.Fatalf("%s: %T", d.Kind, d.Result)
		}
		got, want := indented(t, d), indented(t, old)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the document's JSON differs from the old layout's:\n%.600s\nwant\n%.600s", d.Kind, got, want)
		}
		back, err := experiment.ReadDocument(bytes.NewReader(got))
		if err != nil {
			t.Fatalf("%s: %v", d.Kind, err)
		}
		if again := indented(t, back); !bytes.Equal(again, got) {
			t.Errorf("%s: read back and written again, the document differs", d.Kind)
		}
	}
}

// TestCommandDocuments: the commands' documents read back into their kinds'
// results and write again byte for byte as the command printed them.
func TestCommandDocuments(t *testing.T) {
	for i, d := range fixture.CommandDocuments(t) {
		want := []string{"evaluate", "evaluate", "coverage-check", "ood-detection", "compare"}[i]
		if d.Kind != want || !strings.HasPrefix(d.Command, "ccs "+strings.TrimSuffix(want, "-detection")+" ") || len(d.Build) == 0 {
			t.Errorf("document %d: kind %q, command %q, build %s", i, d.Kind, d.Command, d.Build)
		}
		b := indented(t, d)
		back, err := experiment.ReadDocument(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if again := indented(t, back); !bytes.Equal(again, b) {
			t.Errorf("%s: read back and written again, the document differs:\n%s\n%s", d.Kind, again, b)
		}
		if !bytes.HasPrefix(b, []byte("{\n  \"kind\": \""+d.Kind+"\",\n  \"command\": ")) {
			t.Errorf("%s: the envelope's keys are not first:\n%.200s", d.Kind, b)
		}
	}
}

// TestDocumentTexts: every kind's tables write as text that starts with its
// title and protocol line and holds a Markdown grid (the form the report
// parses).
func TestDocumentTexts(t *testing.T) {
	for _, d := range append(fixture.Documents(t), fixture.CommandDocuments(t)...) {
		texts := d.Result.Texts()
		if len(texts) == 0 {
			t.Errorf("%s: no tables", d.Kind)
		}
		for _, x := range texts {
			var b strings.Builder
			if err := x.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(b.String(), "\n")
			if !strings.Contains(first, ": ") || !strings.Contains(b.String(), "\n\n| ") {
				t.Errorf("%s: text not in the table form:\n%s", d.Kind, b.String())
			}
		}
	}
}

// clash is a result whose JSON takes a key of the document's own.
type clash struct {
	Kind string `json:"kind"`
}

func (clash) Texts() []experiment.Text                 { return nil }
func (clash) Figures(string) ([]*figure.Figure, error) { return nil, nil }

// TestDocumentErrors: what a document refuses, each with its reason.
func TestDocumentErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		doc  experiment.Document
		want string
	}{
		{"no result", experiment.Document{Kind: "sim"}, "holds no result"},
		{"a key of the envelope's", experiment.Document{Kind: "clash", Result: &clash{Kind: "x"}}, `has a key "kind"`},
		{"not an object", experiment.Document{Kind: "null", Result: (*experiment.OODTable)(nil)}, "must be a JSON object"},
	} {
		if _, err := json.Marshal(c.doc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if err := (&experiment.Document{Kind: "sim"}).Check(); err == nil {
		t.Error("Check: a document without a result passes")
	}
	if _, err := experiment.NewResult("cifar"); err == nil || !strings.Contains(err.Error(), "want one of [sim pnorm fmnist ood sensitivity evaluate coverage-check ood-detection") {
		t.Errorf("NewResult of an unknown kind: %v", err)
	}
}

// TestRegister: the kinds in the order of a results directory's report
// (the paper's tables in its order, then the commands'; a kind added later
// comes after them by its Order), each with a heading and read into its
// own result; registering a kind twice, or without a name, panics.
func TestRegister(t *testing.T) {
	want := []string{"sim", "pnorm", "fmnist", "ood", "sensitivity", "evaluate", "coverage-check", "ood-detection"}
	if got := experiment.KindNames(); len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("kinds %v, want %v first", got, want)
	}
	for _, k := range experiment.Kinds() {
		if k.Heading == "" {
			t.Errorf("%s: no heading", k.Name)
		}
		var d experiment.Document
		if err := json.Unmarshal([]byte(`{"kind": "`+k.Name+`"}`), &d); err != nil || fmt.Sprintf("%T", d.Result) != fmt.Sprintf("%T", k.New()) {
			t.Errorf("%s: read into a %T: %v", k.Name, d.Result, err)
		}
	}
	for _, k := range []experiment.Kind{
		{Name: "sim", Heading: "again", New: func() experiment.Result { return new(experiment.SimResult) }},
		{Heading: "no name", New: func() experiment.Result { return new(experiment.SimResult) }},
		{Name: "no-new"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q): no panic", k.Name)
				}
			}()
			experiment.Register(k)
		}()
	}
	if _, ok := experiment.KindOf("no-new"); ok {
		t.Error("a kind refused by Register is registered")
	}
}
