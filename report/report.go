// Package report renders ccs reproduce results (experiment.Document) as one
// self-contained HTML page: each table with its protocol line and the
// paper's numbers beside ours, each figure inlined as SVG with its caption,
// and the build that computed them. The page loads nothing: it opens
// offline.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/figure"
)

// Paper is the paper the tables reproduce, as the report cites it.
const Paper = "Contrastive Conformal Sets"

// section is one document's part of the page.
type section struct {
	Kind, Command string
	Build         []field
	Tables        []table
	Figures       []fig
}

type field struct{ Name, Value string }

// table is a rendered table: its heading and protocol line, the grid and
// the notes under it.
type table struct {
	Title, Protocol string
	Head            []string
	Rows            [][]string
	Notes           []string
}

type fig struct {
	ID, Caption string
	SVG         template.HTML
}

// Write renders docs (in the order given) as one HTML page titled title.
func Write(w io.Writer, title string, docs []*experiment.Document) error {
	var secs []section
	for _, d := range docs {
		s := section{Kind: d.Kind, Command: d.Command, Build: build(d.Build)}
		var texts []interface{ WriteText(io.Writer) error }
		for _, t := range d.Tables {
			texts = append(texts, t)
		}
		for _, t := range d.Hull {
			texts = append(texts, t)
		}
		for _, t := range d.OOD {
			texts = append(texts, t)
		}
		if d.PNorm != nil {
			texts = append(texts, d.PNorm)
		}
		if d.Sensitivity != nil {
			texts = append(texts, d.Sensitivity)
		}
		for _, t := range texts {
			var b bytes.Buffer
			if err := t.WriteText(&b); err != nil {
				return err
			}
			s.Tables = append(s.Tables, parseText(b.String())...)
		}
		figs, err := figure.Of(d)
		if err != nil {
			return fmt.Errorf("%s: %w", d.Kind, err)
		}
		for _, f := range figs {
			svg, err := f.SVGString()
			if err != nil {
				return fmt.Errorf("figure %s: %w", f.Name, err)
			}
			s.Figures = append(s.Figures, fig{ID: f.Name, Caption: f.Caption, SVG: template.HTML(svg)}) // our own SVG
		}
		secs = append(secs, s)
	}
	return page.Execute(w, struct {
		Title, Paper string
		Sections     []section
	}{title, Paper, secs})
}

// build lists a document's build fields (ccs version -json) in order.
func build(raw json.RawMessage) []field {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []field
	for _, k := range []string{"module", "version", "revision", "modified", "go", "platform", "kernels", "blas"} {
		if v, ok := m[k]; ok {
			out = append(out, field{k, fmt.Sprint(v)})
		}
	}
	return out
}

// parseText turns a table's text rendering (a "Title: protocol" line, a
// Markdown grid, notes; possibly several grids, each with its own heading
// line) into tables.
func parseText(s string) []table {
	var out []table
	var cur *table
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, " ")
		switch {
		case strings.HasPrefix(line, "|"):
			if cur == nil {
				out = append(out, table{})
				cur = &out[len(out)-1]
			}
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			if strings.Trim(strings.Join(cells, ""), "-: ") == "" {
				continue // the separator
			}
			if cur.Head == nil {
				cur.Head = cells
			} else {
				cur.Rows = append(cur.Rows, cells)
			}
		case line == "":
			if cur != nil && cur.Head != nil {
				cur = nil // a grid ended: what follows is a note or a new table
			}
		default:
			if cur == nil || cur.Head != nil {
				if len(out) > 0 && out[len(out)-1].Head != nil && cur == nil && !strings.Contains(line, ": ") {
					out[len(out)-1].Notes = append(out[len(out)-1].Notes, line)
					continue
				}
				title, protocol, _ := strings.Cut(line, ": ")
				out = append(out, table{Title: title, Protocol: protocol})
				cur = &out[len(out)-1]
				continue
			}
			cur.Notes = append(cur.Notes, line)
		}
	}
	// A heading with no grid of its own (a sensitivity table's title line)
	// is the protocol of the grids after it.
	var kept []table
	for i, t := range out {
		if t.Head == nil {
			if i+1 < len(out) && out[i+1].Title == "" {
				out[i+1].Title, out[i+1].Protocol = t.Title, t.Protocol
			} else if len(kept) > 0 && t.Title != "" {
				kept[len(kept)-1].Notes = append(kept[len(kept)-1].Notes, strings.TrimSpace(t.Title+": "+t.Protocol))
			}
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Serif", Georgia, serif; max-width: 1000px; margin: 2em auto; padding: 0 1em; color: #111; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; border-bottom: 1px solid #ccc; margin-top: 2em; } h3 { font-size: 1.05em; margin-bottom: 0.2em; }
code, .build { font-family: "Liberation Mono", monospace; font-size: 0.85em; }
.protocol { font-size: 0.85em; color: #444; margin: 0.2em 0 0.6em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f2f2f2; }
figure { margin: 1.5em 0; } figure svg { width: 100%; height: auto; display: block; }
figcaption { font-size: 0.85em; color: #333; margin-top: 0.4em; }
.note { font-size: 0.85em; color: #633; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>Results of <code>ccs reproduce</code>, reproducing the tables of <em>{{.Paper}}</em>. Our numbers are computed by the command under each heading; the paper's, where the tables give them, stand beside ours.</p>
{{range .Sections}}
<section id="{{.Kind}}">
<h2>{{.Kind}}</h2>
<p><code>{{.Command}}</code></p>
{{if .Build}}<p class="build">{{range $i, $f := .Build}}{{if $i}} · {{end}}{{$f.Name}} {{$f.Value}}{{end}}</p>{{end}}
{{range .Tables}}
<h3>{{.Title}}</h3>
{{if .Protocol}}<p class="protocol">{{.Protocol}}</p>{{end}}
<table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{end}}
{{range .Figures}}
<figure id="{{.ID}}" data-figure="{{.ID}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}
</section>
{{end}}
</body>
</html>
`))
