// Package report renders results of ccs (experiment.Document, of any
// registered kind: the tables of ccs reproduce, ccs evaluate's, a user's
// own) as one self-contained HTML page: each table with its protocol line
// (and, for a reproduced table, the paper's numbers beside ours), each
// figure inlined as SVG with its caption, and the build that computed
// them. The page loads nothing: it opens offline.
package report

import (
	"bytes"
	"cmp"
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

// The page's titles when Write is given none: for results of ccs reproduce
// only, and for any others (ccs evaluate's, say).
const (
	ReproducedTitle = "ccs: the paper's tables reproduced"
	ResultsTitle    = "ccs results"
)

// section is one document's part of the page.
type section struct {
	ID            string // the kind, or KIND-N for its Nth document
	Heading       string // what the section is, for its heading and the contents
	Kind, Command string
	Build         []field
	Blocks        []block
	Figures       []fig
}

// block is one table's text rendering: its heading and protocol line, and
// its grids (most tables have one; the p-norm table two, the sensitivity
// analysis one per parameter).
type block struct {
	Title, Protocol string
	Notes           []string // prose before the first grid that is no caption
	Tables          []table
	// Body is the text after the title's paragraph as the result prints
	// it: the grids with their captions and notes (WriteMarkdown's).
	Body string
}

type field struct{ Name, Value string }

// table is a grid: its caption, head and rows, and the notes under it.
type table struct {
	Caption string
	Head    []string
	Rows    [][]string
	Notes   []string
}

type fig struct {
	ID, Name, Caption string // Name: the figure's file name (ccs plot's)
	SVG               template.HTML
}

// sections are docs' sections of a report titled title (its default
// where empty, returned), each document's tables parsed from its text and,
// with figures, its figures drawn; reproduced reports whether every
// document is ccs reproduce's.
func sections(title string, docs []*experiment.Document, figures bool) (secs []section, _ string, reproduced bool, err error) {
	reproduced = len(docs) > 0 // every document's command a ccs reproduce
	seen, count := map[string]int{}, map[string]int{}
	for _, d := range docs {
		count[d.Kind]++
		reproduced = reproduced && strings.HasPrefix(d.Command, "ccs reproduce ")
	}
	for _, d := range docs {
		k, _ := experiment.KindOf(d.Kind)
		s := section{ID: d.Kind, Heading: cmp.Or(k.Heading, d.Kind), Kind: d.Kind, Command: d.Command, Build: build(d.Build)}
		if seen[d.Kind]++; seen[d.Kind] > 1 {
			s.ID = fmt.Sprintf("%s-%d", d.Kind, seen[d.Kind])
		}
		if err := d.Check(); err != nil {
			return nil, "", false, err
		}
		for _, t := range d.Result.Texts() {
			var b bytes.Buffer
			if err := t.WriteText(&b); err != nil {
				return nil, "", false, fmt.Errorf("%s: %w", d.Kind, err)
			}
			s.Blocks = append(s.Blocks, parseText(b.String()))
		}
		var figs []*figure.Figure
		if figures {
			if figs, err = d.Figures(); err != nil {
				return nil, "", false, err
			}
		}
		for _, f := range figs {
			svg, err := f.SVGString()
			if err != nil {
				return nil, "", false, fmt.Errorf("figure %s: %w", f.Name, err)
			}
			id := "fig-" + f.Name // apart from the sections' ids (the p-norm figure is named pnorm)
			if s.ID != d.Kind {
				id = "fig-" + s.ID + "-" + f.Name
			}
			s.Figures = append(s.Figures, fig{ID: id, Name: f.Name, Caption: f.Caption, SVG: template.HTML(svg)}) // our own SVG
		}
		if count[d.Kind] > 1 && len(s.Blocks) > 0 {
			switch t := s.Blocks[0].Title; {
			case strings.HasPrefix(s.Heading, t): // the title says no more than the heading
			case strings.HasPrefix(t, s.Heading):
				s.Heading = t
			default:
				s.Heading += " — " + t
			}
		}
		secs = append(secs, s)
	}
	// Headings alike (four evaluations are all "a fitted set on a test
	// bundle") are told apart by their commands where those differ, and
	// by their number where they do not.
	commands := map[string]map[string]bool{} // each heading's commands
	for _, s := range secs {
		if commands[s.Heading] == nil {
			commands[s.Heading] = map[string]bool{}
		}
		commands[s.Heading][s.Command] = true
	}
	for i, s := range secs {
		if len(commands[s.Heading]) > 1 && s.Command != "" {
			secs[i].Heading += " — " + strings.TrimPrefix(s.Command, "ccs ")
		}
	}
	headings := map[string]int{} // sections under each heading so far
	for i := range secs {
		h := secs[i].Heading
		if headings[h]++; headings[h] > 1 {
			secs[i].Heading += fmt.Sprintf(" (%d)", headings[h])
		}
	}
	if title == "" {
		title = ResultsTitle
		if reproduced {
			title = ReproducedTitle
		}
	}
	return secs, title, reproduced, nil
}

// Write renders docs (in the order given) as one HTML page titled title
// (ReproducedTitle or ResultsTitle when it is empty), with a list of its sections at the top, each headed by its kind's
// heading (experiment.Kind). Several documents of one kind
// (the sensitivity analysis on the simulation and on Fashion-MNIST, say)
// get sections KIND, KIND-2, …, headed by their first table's title too
// (by their commands where the titles are alike, and by their number if
// that is not enough to tell them apart), and their figures' ids that
// prefix; figure ids start with "fig-".
func Write(w io.Writer, title string, docs []*experiment.Document) error {
	secs, title, reproduced, err := sections(title, docs, true)
	if err != nil {
		return err
	}
	return page.Execute(w, struct {
		Title, Paper string
		Reproduced   bool
		Sections     []section
	}{title, Paper, reproduced, secs})
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
	for _, k := range []string{"module", "version", "revision", "modified", "code", "go", "platform", "kernels", "blas"} {
		if v, ok := m[k]; ok {
			out = append(out, field{k, fmt.Sprint(v)})
		}
	}
	return out
}

// parseText turns a table's text rendering into a block: its first prose
// paragraph is "Title: protocol"; each Markdown grid is a table; a prose
// paragraph right before a grid is that grid's caption, any other prose
// after a grid a note under it.
func parseText(s string) block {
	var paras [][]string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, " ")
		if line == "" {
			if cur != nil {
				paras, cur = append(paras, cur), nil
			}
			continue
		}
		// A grid starts a paragraph of its own, and prose after a grid
		// another.
		if cur != nil && isGrid(cur[len(cur)-1]) != isGrid(line) {
			paras, cur = append(paras, cur), nil
		}
		cur = append(cur, line)
	}
	if cur != nil {
		paras = append(paras, cur)
	}
	var b block
	b.Body = strings.TrimSpace(s)
	if len(paras) > 0 && !isGrid(paras[0][0]) {
		if _, rest, ok := strings.Cut(b.Body, "\n\n"); ok {
			b.Body = strings.TrimSpace(rest)
		} else {
			b.Body = ""
		}
	}
	for i, p := range paras {
		text := strings.Join(p, " ")
		switch {
		case isGrid(p[0]):
			g := table{}
			if i > 0 && !isGrid(paras[i-1][0]) && i-1 > 0 {
				g.Caption = strings.Join(paras[i-1], " ")
			}
			for _, line := range p {
				cells := strings.Split(strings.Trim(line, "|"), "|")
				for k := range cells {
					cells[k] = strings.TrimSpace(cells[k])
				}
				if strings.Trim(strings.Join(cells, ""), "-: ") == "" {
					continue // the separator
				}
				if g.Head == nil {
					g.Head = cells
				} else {
					g.Rows = append(g.Rows, cells)
				}
			}
			b.Tables = append(b.Tables, g)
		case i == 0:
			b.Title, b.Protocol, _ = strings.Cut(text, ": ")
		case i+1 < len(paras) && isGrid(paras[i+1][0]):
			// the next grid's caption
		case len(b.Tables) > 0:
			last := &b.Tables[len(b.Tables)-1]
			last.Notes = append(last.Notes, text)
		default:
			b.Notes = append(b.Notes, text)
		}
	}
	return b
}

func isGrid(line string) bool { return strings.HasPrefix(line, "|") }

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
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; display: block; max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f2f2f2; }
figure { margin: 1.5em 0; } figure svg { width: 100%; height: auto; display: block; }
figcaption { font-size: 0.85em; color: #333; margin-top: 0.4em; }
.note { font-size: 0.85em; color: #633; }
.caption { font-size: 0.9em; font-style: italic; margin: 0.8em 0 0.2em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Reproduced}}<p>Results of <code>ccs reproduce</code>, reproducing the tables of <em>{{.Paper}}</em>. Our numbers are computed by the command under each heading; the paper's, where the tables give them, stand beside ours.</p>{{else}}<p>Results of <code>ccs</code>. The numbers are computed by the command under each heading; where a table reproduces one of the paper's (<em>{{.Paper}}</em>), its numbers stand beside ours.</p>{{end}}
<nav><ul>{{range .Sections}}<li><a href="#{{.ID}}">{{.Heading}}</a></li>{{end}}</ul></nav>
{{range .Sections}}
<section id="{{.ID}}">
<h2>{{.Heading}}</h2>
<p><code>{{.Command}}</code></p>
{{if .Build}}<p class="build">{{range $i, $f := .Build}}{{if $i}} · {{end}}{{$f.Name}} {{$f.Value}}{{end}}</p>{{end}}
{{range .Blocks}}
<h3>{{.Title}}</h3>
{{if .Protocol}}<p class="protocol">{{.Protocol}}</p>{{end}}
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{range .Tables}}
{{if .Caption}}<p class="caption">{{.Caption}}</p>{{end}}
<table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{end}}
{{end}}
{{range .Figures}}
<figure id="{{.ID}}" data-figure="{{.Name}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}
</section>
{{end}}
</body>
</html>
`))
