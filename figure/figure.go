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
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"hash/crc32"
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
	// Source says where the figure's numbers come from (the command and
	// the build that computed them). Neither it nor the caption is
	// drawn: both are kept in the files — the SVG's <title> and <desc>,
	// the PNG's iTXt chunks Title, Description and Source —, so that a
	// figure copied on its own still names its run.
	Source string
	W, H   vg.Length
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
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return err
	}
	png := b.Bytes()
	const iend = 12 // the last chunk: length, "IEND", CRC
	if len(png) < 8+iend || string(png[len(png)-iend+4:len(png)-iend+8]) != "IEND" {
		return fmt.Errorf("figure %s: the PNG encoder's output does not end with IEND", f.Name)
	}
	var meta []byte
	for _, kv := range [][2]string{{"Title", f.Name}, {"Description", f.Caption}, {"Source", f.Source}} {
		if kv[1] != "" {
			meta = appendITXt(meta, kv[0], kv[1])
		}
	}
	for _, part := range [][]byte{png[:len(png)-iend], meta, png[len(png)-iend:]} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// appendITXt appends a PNG iTXt chunk (UTF-8 text, uncompressed, no
// language) of keyword and text.
func appendITXt(b []byte, keyword, text string) []byte {
	data := append([]byte(keyword), 0, 0, 0, 0, 0) // keyword, NUL, not compressed, method 0, no language, no translated keyword
	data = append(data, text...)
	chunk := append([]byte("iTXt"), data...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, chunk...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
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
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return err
	}
	svg := b.String()
	// The caption and source as the <svg> element's first children: a
	// title and a description, which readers and tools show, not drawn.
	at := strings.Index(svg, "<svg")
	end := strings.Index(svg[max(at, 0):], ">")
	if at < 0 || end < 0 {
		return fmt.Errorf("figure %s: the SVG encoder's output has no <svg> element", f.Name)
	}
	end += at + 1
	var meta strings.Builder
	meta.WriteString("\n<title>")
	xml.EscapeText(&meta, []byte(f.Name))
	meta.WriteString("</title>")
	if desc := strings.TrimSpace(f.Caption + "\n" + f.Source); desc != "" {
		meta.WriteString("\n<desc>")
		xml.EscapeText(&meta, []byte(desc))
		meta.WriteString("</desc>")
	}
	_, err := io.WriteString(w, svg[:end]+meta.String()+svg[end:])
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
