package figure

import (
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The palette: Okabe and Ito's colours, told apart by readers with colour
// vision deficiencies.
var palette = []color.Color{
	color.RGBA{0, 0, 0, 255}, color.RGBA{230, 159, 0, 255}, color.RGBA{86, 180, 233, 255}, color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255}, color.RGBA{0, 114, 178, 255}, color.RGBA{213, 94, 0, 255}, color.RGBA{153, 153, 153, 255},
}

// Color is the palette's colour i (modulo its eight): black, orange, sky
// blue, bluish green, reddish purple, blue, vermillion, grey.
func Color(i int) color.Color { return palette[i%len(palette)] }

// Style is series i's line style: a colour of the palette, 1.5 points
// wide, dashed after the palette's first round.
func Style(i int) draw.LineStyle {
	s := draw.LineStyle{Color: palette[i%len(palette)], Width: vg.Points(1.5)}
	if i/len(palette)%2 == 1 {
		s.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return s
}

// Translucent is c at opacity a (0–255).
func Translucent(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	f := float64(a) / 255
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(f * 255)}
}

// Panel is a plot with a title and axis labels, grid lines, and fonts
// sized for a figure shown about 9 inches wide.
func Panel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 10
		a.Tick.Label.Font.Size = 9
		a.Tick.Marker = DistinctTicks{}
	}
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{220}, color.Gray{220}
	p.Add(g)
	return p
}

// Entry is a legend entry: a name and the thumbnails drawn beside it.
type Entry struct {
	Name   string
	Thumbs []plot.Thumbnailer
}

// LegendCols is the number of legend columns for n entries: one per four
// entries, at most four.
func LegendCols(n int) int { return min(max(1, (n+3)/4), 4) }

// LegendHeight is the height of a legend strip of n entries in cols
// columns: a figure adds it to its panels' height.
func LegendHeight(n, cols int) vg.Length {
	rows := (n + cols - 1) / cols
	return vg.Points(14)*vg.Length(rows) + vg.Points(8)
}

// Grid draws plots (rows × cols, nil cells left empty) above a legend
// strip of the entries in legendCols columns: the legend never covers
// data. It is a Figure's Draw.
func Grid(plots [][]*plot.Plot, entries []Entry, legendCols int) func(c draw.Canvas) {
	return func(c draw.Canvas) {
		lh := vg.Length(0)
		if len(entries) > 0 {
			lh = LegendHeight(len(entries), legendCols)
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
				l.Add(e.Name, e.Thumbs...)
			}
			x0 := c.Min.X + vg.Points(16) + w*vg.Length(k)
			l.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x0, Y: c.Min.Y}, Max: vg.Point{X: x0 + w, Y: c.Min.Y + lh - vg.Points(4)}}})
		}
	}
}

// Line adds a line through (x, y) in style s to p; with non-finite values
// nothing is drawn. The line is returned for the legend.
func Line(p *plot.Plot, x, y []float64, s draw.LineStyle) *plotter.Line {
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

// Points adds markers at (x, y) to p in colour c with glyph shape g of
// radius r. The markers are returned for the legend.
func Points(p *plot.Plot, x, y []float64, c color.Color, g draw.GlyphDrawer, r vg.Length) *plotter.Scatter {
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

// Band adds the region between lo and hi over x to p, filled with c. The
// region is returned for the legend.
func Band(p *plot.Plot, x, lo, hi []float64, c color.Color) *plotter.Polygon {
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

// Steps returns a histogram's outline, for Line and Band: x at each bin
// edge twice, y the bin's height on both of its edges (len(edges) is
// len(h)+1).
func Steps(edges, h []float64) (x, y []float64) {
	for i, v := range h {
		x, y = append(x, edges[i], edges[i+1]), append(y, v, v)
	}
	return x, y
}

// TicksAt puts p's x ticks at the values the curves were drawn at,
// labelling a tick only when it is at least 5% of the axis from the last
// labelled one (0.01 and 0.02 would print over each other).
func TicksAt(p *plot.Plot, values []float64) {
	if len(values) == 0 {
		return
	}
	pos := func(v float64) float64 { return v }
	if _, ok := p.X.Scale.(plot.LogScale); ok {
		pos = math.Log
	}
	lo, hi := pos(slices.Min(values)), pos(slices.Max(values))
	var ticks []plot.Tick
	last := math.Inf(-1)
	for _, v := range values {
		t := plot.Tick{Value: v}
		if pos(v)-last >= 0.05*(hi-lo) {
			t.Label, last = strconv.FormatFloat(v, 'g', -1, 64), pos(v)
		}
		ticks = append(ticks, t)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
}

// DistinctTicks are gonum's default ticks, labelled with as few decimals
// as tell every labelled tick apart (none for whole numbers): the default
// labels of a narrow range near 100 repeat one value ("1e+02" three
// times on a user's exclusion axis of 99.8–100%).
type DistinctTicks struct{}

// Ticks returns the ticks between min and max (plot.Ticker).
func (DistinctTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	// The labelled ticks' smallest step: a label must say its value to
	// well within it (ticks at 0.4, −0.4 and −1.2 were labelled "0",
	// "-0" and "-1": distinct, and wrong).
	step := math.Inf(1)
	prev := math.NaN()
	for _, t := range ts {
		if t.Label == "" {
			continue
		}
		if !math.IsNaN(prev) {
			step = math.Min(step, math.Abs(t.Value-prev))
		}
		prev = t.Value
	}
	for d := 0; d <= 8; d++ {
		seen := map[string]bool{}
		ok := true
		for _, t := range ts {
			if t.Label == "" {
				continue
			}
			l := tickLabel(t.Value, d)
			v, _ := strconv.ParseFloat(l, 64)
			if seen[l] || !math.IsInf(step, 1) && math.Abs(v-t.Value) > 1e-6*step {
				ok = false
				break
			}
			seen[l] = true
		}
		if ok || d == 8 {
			for i := range ts {
				if ts[i].Label != "" {
					ts[i].Label = tickLabel(ts[i].Value, d)
				}
			}
			break
		}
	}
	return ts
}

// tickLabel is v with d decimals, without the sign of a negative zero
// ("-0" from −0.4 at no decimals, or from −0 itself).
func tickLabel(v float64, d int) string {
	l := strconv.FormatFloat(v, 'f', d, 64)
	if strings.Trim(l, "-0.") == "" {
		return strings.TrimPrefix(l, "-")
	}
	return l
}

// FixedTicks are gonum's default ticks labelled with a fixed number of
// decimals (the default labels can repeat a value on a narrow range).
type FixedTicks struct{ Decimals int }

// Ticks returns the ticks between min and max (plot.Ticker).
func (f FixedTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', f.Decimals, 64)
		}
	}
	return ts
}
