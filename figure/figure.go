// Package figure draws the reproduced tables (package experiment's
// Document) with gonum.org/v1/plot: the sensitivity curves, coverage
// against α with the conformal guarantee's band, the inclusion–exclusion
// trade-off, the simulation's learned set shapes, the p-norm table, and
// the OOD tables' ROC curves and score histograms. Each figure is written
// as PNG and SVG.
package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/atomicfile"
)

// DPI is the PNG files' resolution.
const DPI = 150

// Figure is one picture: a file name stem, a caption, its size, and how it
// is drawn.
type Figure struct {
	Name    string // file name stem: NAME.png, NAME.svg
	Caption string
	W, H    vg.Length
	draw    func(c draw.Canvas)
}

// PNG writes the figure as a PNG image of W×H at DPI.
func (f *Figure) PNG(w io.Writer) error {
	c := vgimg.NewWith(vgimg.UseWH(f.W, f.H), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(c))
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// SVG writes the figure as an SVG document of W×H.
func (f *Figure) SVG(w io.Writer) error {
	c := vgsvg.New(f.W, f.H)
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	f.draw(dc)
	_, err := c.WriteTo(w)
	return err
}

// SVGString is the figure's SVG document without its XML declaration, to
// be inlined in HTML.
func (f *Figure) SVGString() (string, error) {
	var b bytes.Buffer
	if err := f.SVG(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return s, nil
}

// PixelSize is the PNG's width and height in pixels.
func (f *Figure) PixelSize() (w, h int) {
	px := func(l vg.Length) int { return int(float64(l/vg.Inch)*DPI + 0.5) } // as vgimg rounds
	return px(f.W), px(f.H)
}

// Write writes each figure as dir/NAME.png and dir/NAME.svg (each file
// whole or not at all) and returns the files' paths.
func Write(dir string, figs []*Figure) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range figs {
		for _, ext := range []string{"png", "svg"} {
			path := filepath.Join(dir, f.Name+"."+ext)
			err := atomicfile.Write(path, func(w io.Writer) error {
				if ext == "png" {
					return f.PNG(w)
				}
				return f.SVG(w)
			})
			if err != nil {
				return files, fmt.Errorf("figure %s: %w", f.Name, err)
			}
			files = append(files, path)
		}
	}
	return files, nil
}

// Of returns the figures of a document: for each table those its data
// allow.
func Of(doc *experiment.Document) ([]*Figure, error) {
	// The figures index the OOD rows' curves by set: a hand-edited
	// document is checked as ReadDocument checks a file.
	if err := doc.Check(); err != nil {
		return nil, fmt.Errorf("figure: %w", err)
	}
	var figs []*Figure
	for _, t := range doc.Tables {
		stem := doc.Kind + "-" + slug(t.Title)
		if f := Coverage(t, stem); f != nil {
			figs = append(figs, f)
		}
		if f := Tradeoff(t, stem); f != nil {
			figs = append(figs, f)
		}
		if t.Shapes != nil {
			f, err := Shapes(t, stem)
			if err != nil {
				return nil, err
			}
			figs = append(figs, f)
		}
	}
	if doc.PNorm != nil {
		figs = append(figs, PNorm(doc.PNorm))
	}
	if doc.Sensitivity != nil {
		if f := Sensitivity(doc.Sensitivity); f != nil {
			figs = append(figs, f)
		}
	}
	for _, t := range doc.OOD {
		stem := "ood-" + slug(strings.TrimPrefix(t.Title, "OOD detection, "))
		if f := ROC(t, stem); f != nil {
			figs = append(figs, f)
		}
		if f := Histograms(t, stem); f != nil {
			figs = append(figs, f)
		}
	}
	return figs, nil
}

// slug is a lower-case file name of a title.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// The palette: Okabe and Ito's colours, told apart by readers with colour
// vision deficiencies, then the same with dashes.
var palette = []color.Color{
	color.RGBA{0, 0, 0, 255}, color.RGBA{230, 159, 0, 255}, color.RGBA{86, 180, 233, 255}, color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255}, color.RGBA{0, 114, 178, 255}, color.RGBA{213, 94, 0, 255}, color.RGBA{153, 153, 153, 255},
}

// style is series i's line style: a colour of the palette, dashed after the
// palette's first round.
func style(i int) draw.LineStyle {
	s := draw.LineStyle{Color: palette[i%len(palette)], Width: vg.Points(1.5)}
	if i/len(palette)%2 == 1 {
		s.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return s
}

// translucent is c at alpha a (0–255).
func translucent(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	f := float64(a) / 255
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(f * 255)}
}

// newPlot is a panel with a title and axis labels, grid lines, and fonts
// sized for a figure shown about 9 inches wide.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 10
		a.Tick.Label.Font.Size = 9
	}
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{220}, color.Gray{220}
	p.Add(g)
	return p
}

// entry is a legend entry.
type entry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// legendRows is the height of a legend strip of n entries in cols columns.
func legendHeight(n, cols int) vg.Length {
	rows := (n + cols - 1) / cols
	return vg.Points(14)*vg.Length(rows) + vg.Points(8)
}

// grid draws plots (rows × cols, nil cells left empty) above a legend
// strip of the entries in legendCols columns: the legend never covers
// data.
func grid(plots [][]*plot.Plot, entries []entry, legendCols int) func(c draw.Canvas) {
	return func(c draw.Canvas) {
		lh := vg.Length(0)
		if len(entries) > 0 {
			lh = legendHeight(len(entries), legendCols)
		}
		top := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: c.Min.Y + lh}, Max: c.Max}}
		rows, cols := len(plots), len(plots[0])
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12), PadY: vg.Points(10),
			PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
		cs := plot.Align(plots, tiles, top)
		for i := range plots {
			for j, p := range plots[i] {
				if p != nil {
					p.Draw(cs[i][j])
				}
			}
		}
		if len(entries) == 0 {
			return
		}
		per := (len(entries) + legendCols - 1) / legendCols
		w := (c.Max.X - c.Min.X - vg.Points(16)) / vg.Length(legendCols)
		for k := 0; k < legendCols; k++ {
			l := plot.NewLegend()
			l.Top, l.Left = true, true
			l.TextStyle.Font.Size = 9
			for _, e := range entries[min(k*per, len(entries)):min((k+1)*per, len(entries))] {
				l.Add(e.name, e.thumbs...)
			}
			x0 := c.Min.X + vg.Points(16) + w*vg.Length(k)
			l.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x0, Y: c.Min.Y}, Max: vg.Point{X: x0 + w, Y: c.Min.Y + lh - vg.Points(4)}}})
		}
	}
}

// line adds a line through (x, y) in style s.
func line(p *plot.Plot, x, y []float64, s draw.LineStyle) *plotter.Line {
	xy := make(plotter.XYs, len(x))
	for i := range x {
		xy[i] = plotter.XY{X: x[i], Y: y[i]}
	}
	l, err := plotter.NewLine(xy)
	if err != nil { // non-finite values: nothing drawn
		return &plotter.Line{LineStyle: s}
	}
	l.LineStyle = s
	p.Add(l)
	return l
}

// points adds markers at (x, y) in colour c with glyph shape g.
func points(p *plot.Plot, x, y []float64, c color.Color, g draw.GlyphDrawer, r vg.Length) *plotter.Scatter {
	xy := make(plotter.XYs, len(x))
	for i := range x {
		xy[i] = plotter.XY{X: x[i], Y: y[i]}
	}
	s, err := plotter.NewScatter(xy)
	if err != nil {
		return &plotter.Scatter{}
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: r, Shape: g}
	p.Add(s)
	return s
}

// band adds the region between lo and hi over x, filled with c.
func band(p *plot.Plot, x, lo, hi []float64, c color.Color) *plotter.Polygon {
	xy := make(plotter.XYs, 0, 2*len(x))
	for i := range x {
		xy = append(xy, plotter.XY{X: x[i], Y: lo[i]})
	}
	for i := len(x) - 1; i >= 0; i-- {
		xy = append(xy, plotter.XY{X: x[i], Y: hi[i]})
	}
	poly, err := plotter.NewPolygon(xy)
	if err != nil {
		return &plotter.Polygon{}
	}
	poly.Color = c
	poly.LineStyle.Width = 0
	p.Add(poly)
	return poly
}
