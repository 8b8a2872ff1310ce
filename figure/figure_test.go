package figure_test

import (
	"bytes"
	stdpng "image/png"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ccsets/ccs/figure"
	"github.com/ccsets/ccs/internal/fixture"
)

// TestWrite draws a figure of two panels from the primitives (lines,
// markers, a band, a histogram's outline, a legend strip) and checks its
// files: a PNG of the figure's size with ink on it, an SVG of its width
// with labels and data. (Each kind of result's figures are checked in
// package experiment.)
func TestWrite(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4}
	y := []float64{1, 3, 2, 5, 4}
	left := figure.Panel("Lines and markers", "x", "y")
	l := figure.Line(left, x, y, figure.Style(0))
	pts := figure.Points(left, x, y, figure.Color(6), draw.CircleGlyph{}, vg.Points(3))
	band := figure.Band(left, x, []float64{0, 1, 1, 2, 2}, y, figure.Translucent(figure.Color(3), 70))
	figure.TicksAt(left, x)
	right := figure.Panel("A histogram", "score", "share")
	hx, hy := figure.Steps([]float64{0, 1, 2, 3}, []float64{0.2, 0.5, 0.3})
	h := figure.Line(right, hx, hy, figure.Style(5))
	right.Y.Tick.Marker = figure.FixedTicks{Decimals: 2}
	entries := []figure.Entry{{Name: "a line", Thumbs: []plot.Thumbnailer{l}}, {Name: "markers", Thumbs: []plot.Thumbnailer{pts}},
		{Name: "a band", Thumbs: []plot.Thumbnailer{band}}, {Name: "a histogram", Thumbs: []plot.Thumbnailer{h}}}
	cols := figure.LegendCols(len(entries))
	f := &figure.Figure{Name: "test-primitives", Caption: "the primitives", W: 9 * vg.Inch, H: 4*vg.Inch + figure.LegendHeight(len(entries), cols),
		Draw: figure.Grid([][]*plot.Plot{{left, right}}, entries, cols)}
	dir := t.TempDir()
	files, err := figure.Write(dir, []*figure.Figure{f})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || !strings.HasSuffix(files[0], "test-primitives.png") || !strings.HasSuffix(files[1], "test-primitives.svg") {
		t.Errorf("files %v", files)
	}
	fixture.CheckFigure(t, dir, f)
	svg, err := f.SVGString()
	if err != nil || !strings.HasPrefix(svg, "<svg") {
		t.Errorf("SVGString: %.40q, %v", svg, err)
	}
}

// TestNoDraw: a figure without Draw is an error, not a panic.
func TestNoDraw(t *testing.T) {
	f := &figure.Figure{Name: "empty", W: vg.Inch, H: vg.Inch}
	var b bytes.Buffer
	if err := f.PNG(&b); err == nil || !strings.Contains(err.Error(), "figure empty") {
		t.Errorf("PNG: %v", err)
	}
	if err := f.SVG(&b); err == nil || !strings.Contains(err.Error(), "figure empty") {
		t.Errorf("SVG: %v", err)
	}
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Simulated 3D clusters (mixed)", "simulated-3d-clusters-mixed"},
		{"OOD detection", "ood-detection"},
		{"  Fashion-MNIST, ID: supervised  ", "fashion-mnist-id-supervised"},
		{"ℓ2 ball", "2-ball"},
		{"", ""},
	} {
		if got := figure.Slug(c.in); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSteps(t *testing.T) {
	x, y := figure.Steps([]float64{0, 1, 3}, []float64{0.25, 0.75})
	if !slices.Equal(x, []float64{0, 1, 1, 3}) || !slices.Equal(y, []float64{0.25, 0.25, 0.75, 0.75}) {
		t.Errorf("Steps: %v, %v", x, y)
	}
}

func TestLegend(t *testing.T) {
	for _, c := range []struct{ n, cols int }{{0, 1}, {1, 1}, {4, 1}, {5, 2}, {12, 3}, {16, 4}, {40, 4}} {
		if got := figure.LegendCols(c.n); got != c.cols {
			t.Errorf("LegendCols(%d) = %d, want %d", c.n, got, c.cols)
		}
	}
	if a, b := figure.LegendHeight(4, 2), figure.LegendHeight(5, 2); !(b > a) {
		t.Errorf("a third legend row adds no height: %v, %v", a, b)
	}
}

// TestTicks: ticks at the values drawn, those crowding the last labelled
// one unlabelled; fixed decimals.
func TestTicks(t *testing.T) {
	p := figure.Panel("", "", "")
	figure.TicksAt(p, []float64{0.01, 0.02, 0.05, 0.1, 0.3})
	var labels []string
	for _, tk := range p.X.Tick.Marker.Ticks(0, 0.3) {
		labels = append(labels, tk.Label)
	}
	if want := []string{"0.01", "", "0.05", "0.1", "0.3"}; !slices.Equal(labels, want) {
		t.Errorf("TicksAt labels %q, want %q", labels, want)
	}
	for _, tk := range (figure.FixedTicks{Decimals: 2}).Ticks(1, 1.1) {
		if _, frac, ok := strings.Cut(tk.Label, "."); tk.Label != "" && (!ok || len(frac) != 2) {
			t.Errorf("FixedTicks label %q", tk.Label)
		}
	}
}

// TestStyle: the palette's eight colours, then the same dashed.
func TestStyle(t *testing.T) {
	if figure.Style(0).Dashes != nil || figure.Style(8).Dashes == nil || figure.Style(16).Dashes != nil {
		t.Error("dashes: want solid, dashed after eight, solid after sixteen")
	}
	if figure.Style(3).Color != figure.Color(3) || figure.Color(11) != figure.Color(3) {
		t.Error("colours do not cycle through the palette")
	}
	r, g, b, a := figure.Translucent(figure.Color(1), 128).RGBA()
	if a>>8 != 128 || math.Abs(float64(r>>8)-230*128/255.0) > 1 || g == 0 || b != 0 {
		t.Errorf("Translucent: %d %d %d %d", r>>8, g>>8, b>>8, a>>8)
	}
}

// TestMetadata: the caption and source are in the files, not drawn: the
// SVG's title and desc (escaped), the PNG's iTXt chunks, and the PNG
// still decodes.
func TestMetadata(t *testing.T) {
	f := &figure.Figure{Name: "sim-curves", Caption: "Coverage against α < 1 & more", Source: "computed by ccs reproduce sim -seeds 2; build x code sha256:ab",
		W: 2 * vg.Inch, H: vg.Inch, Draw: func(c draw.Canvas) {}}
	var svg bytes.Buffer
	if err := f.SVG(&svg); err != nil {
		t.Fatal(err)
	}
	if s := svg.String(); !strings.Contains(s, "<title>sim-curves</title>") ||
		!strings.Contains(s, "<desc>Coverage against α &lt; 1 &amp; more&#xA;computed by ccs reproduce sim -seeds 2; build x code sha256:ab</desc>") {
		t.Errorf("the SVG's metadata:\n%s", s[:min(len(s), 600)])
	}
	var png bytes.Buffer
	if err := f.PNG(&png); err != nil {
		t.Fatal(err)
	}
	if _, err := stdpng.Decode(bytes.NewReader(png.Bytes())); err != nil {
		t.Fatalf("the PNG with its chunks: %v", err)
	}
	for _, kv := range [][2]string{{"Title", f.Name}, {"Description", f.Caption}, {"Source", f.Source}} {
		if !bytes.Contains(png.Bytes(), []byte("iTXt"+kv[0]+"\x00\x00\x00\x00\x00"+kv[1])) {
			t.Errorf("the PNG lacks the iTXt chunk %s", kv[0])
		}
	}
}
