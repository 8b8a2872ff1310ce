// Package figure draws figures with gonum.org/v1/plot and writes each as PNG
// and SVG. It is the plotting library of ccs's results: a Figure (a name,
// a caption, a size and how it is drawn), and the pieces the results'
// figures are made of (package experiment draws each kind's): panels with
// the house fonts and grid lines, a legend strip under them that never
// covers data, lines, markers, filled bands, histogram outlines, tick
// helpers and a palette told apart by readers with colour vision
// deficiencies. It knows nothing of the results themselves.
package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

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
	// Draw draws the figure on a canvas of W×H (Grid makes one from
	// panels and a legend).
	Draw func(c draw.Canvas)
}

// PNG writes the figure as a PNG image of W×H at DPI.
func (f *Figure) PNG(w io.Writer) error {
	if f.Draw == nil {
		return fmt.Errorf("figure %s: no Draw", f.Name)
	}
	c := vgimg.NewWith(vgimg.UseWH(f.W, f.H), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
	f.Draw(draw.New(c))
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// SVG writes the figure as an SVG document of W×H.
func (f *Figure) SVG(w io.Writer) error {
	if f.Draw == nil {
		return fmt.Errorf("figure %s: no Draw", f.Name)
	}
	c := vgsvg.New(f.W, f.H)
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	f.Draw(dc)
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

// Slug is a lower-case file name of a title: its letters and digits, each
// run of anything else a dash.
func Slug(s string) string {
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
