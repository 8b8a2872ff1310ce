package figure_test

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/figure"
	"github.com/ccsets/ccs/internal/fixture"
)

// TestFigures draws every kind of figure from small real results and
// checks each file: a PNG of the figure's size in pixels with ink on it
// (not a blank page), and an SVG that parses as XML with an <svg> root of
// the figure's size holding text (labels) and paths (data).
func TestFigures(t *testing.T) {
	docs := fixture.Documents(t)
	dir := t.TempDir()
	var names []string
	for _, d := range docs {
		figs, err := figure.Of(d)
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
			checkPNG(t, filepath.Join(dir, f.Name+".png"), f)
			checkSVG(t, filepath.Join(dir, f.Name+".svg"), f)
		}
	}
	// One of each kind the issue asks for.
	for _, want := range []string{"-coverage", "-tradeoff", "-shapes", "pnorm", "sensitivity-sim", "-roc", "-histograms"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, want) || n == want }) {
			t.Errorf("no %s figure among %v", want, names)
		}
	}
}

func checkPNG(t *testing.T, path string, f *figure.Figure) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	w, h := f.PixelSize()
	if got := img.Bounds(); got != image.Rect(0, 0, w, h) {
		t.Errorf("%s: %v, want %d×%d", path, got, w, h)
	}
	// Ink: the share of pixels that are not white.
	ink, n := 0, 0
	for y := 0; y < h; y += 3 {
		for x := 0; x < w; x += 3 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || b < 0xf000 {
				ink++
			}
			n++
		}
	}
	if share := float64(ink) / float64(n); share < 0.01 {
		t.Errorf("%s: %.3f%% of the pixels inked: a blank figure", path, 100*share)
	}
}

func checkSVG(t *testing.T, path string, f *figure.Figure) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	var root string
	var width string
	count := map[string]int{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
				for _, a := range se.Attr {
					if a.Name.Local == "width" {
						width = a.Value
					}
				}
			}
			count[se.Name.Local]++
		}
	}
	w, err := strconv.ParseFloat(strings.TrimSuffix(width, "pt"), 64)
	if root != "svg" || err != nil || math.Abs(w-float64(f.W)) > 0.5 {
		t.Errorf("%s: root <%s width=%q>, want <svg width=\"%gpt\">", path, root, width, float64(f.W))
	}
	if count["text"] < 5 || count["path"] < 20 {
		t.Errorf("%s: %d texts and %d paths, want labels and data", path, count["text"], count["path"])
	}
}

// TestOfEmpty: a document with no curves (an older ccs) or no sweeps has
// no figures, and no error; malformed curves are an error, not a panic.
func TestOfEmpty(t *testing.T) {
	for _, d := range []*experiment.Document{
		{Kind: "sim", Tables: []*experiment.Table{{Title: "old", Rows: []experiment.Row{{Method: "x"}}}}},
		{Kind: "sensitivity", Sensitivity: &experiment.SensitivityTable{}},
		{Kind: "sensitivity", Sensitivity: &experiment.SensitivityTable{Sweeps: []experiment.SensitivitySweep{{Param: "alpha"}}}},
	} {
		figs, err := figure.Of(d)
		if err != nil || len(figs) != 0 {
			t.Errorf("%s: figures %v, error %v", d.Kind, figs, err)
		}
	}
	bad := fixture.OOD()
	bad.Rows[1].Curves[0].Edges = bad.Rows[1].Curves[0].Edges[1:]
	if _, err := figure.Of(&experiment.Document{Kind: "ood", OOD: []*experiment.OODTable{bad}}); err == nil || !strings.Contains(err.Error(), "malformed curve") {
		t.Errorf("malformed curve: error %v", err)
	}
}
