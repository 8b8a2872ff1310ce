package report

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ccsets/ccs/experiment"
)

// The formats a report is written in (WriteFormat, FormatOf).
const (
	HTML     = "html"     // one self-contained page, figures inline (Write)
	Markdown = "markdown" // the tables and their notes as Markdown, for a README or a wiki
	LaTeX    = "latex"    // each table a LaTeX table float with booktabs' rules, for a paper
)

// FormatOf returns the format a report written to path takes from its
// name's extension: .html or .htm, .md or .markdown, .tex.
func FormatOf(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".html", ".htm":
		return HTML, nil
	case ".md", ".markdown":
		return Markdown, nil
	case ".tex":
		return LaTeX, nil
	case "":
		return "", fmt.Errorf("%s: no extension: name the report .html (one page, figures inline), .md (Markdown tables) or .tex (LaTeX tables)", path)
	default:
		return "", fmt.Errorf("%s: a report is .html (one page, figures inline), .md (Markdown tables) or .tex (LaTeX tables), not %s", path, ext)
	}
}

// WriteFormat writes the report of docs in format (HTML, Markdown or
// LaTeX), titled title (its default where empty). The Markdown and LaTeX
// reports hold the tables, their protocols and notes, and each result's
// command and build, but not the figures: ccs plot draws those as PNG and
// SVG files, for a page or \includegraphics.
func WriteFormat(w io.Writer, format, title string, docs []*experiment.Document) error {
	switch format {
	case HTML:
		return Write(w, title, docs)
	case Markdown:
		return WriteMarkdown(w, title, docs)
	case LaTeX:
		return WriteLaTeX(w, title, docs)
	}
	return fmt.Errorf("report: format %q, want %s, %s or %s", format, HTML, Markdown, LaTeX)
}

// WriteMarkdown writes docs' tables as Markdown: a heading a result (as
// Write heads its sections) with its command and build, then each table's
// title and protocol, and its grids with their captions and notes as the
// result prints them (ccs compare's table, say). The figures are ccs
// plot's.
func WriteMarkdown(w io.Writer, title string, docs []*experiment.Document) error {
	secs, title, _, err := sections(title, docs, false)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "Written by `ccs report` from %s; each section names the command that computed it. The figures are `ccs plot`'s (PNG and SVG).\n", plural(len(docs), "result"))
	for _, s := range secs {
		fmt.Fprintf(&b, "\n## %s\n\n`%s`\n", s.Heading, s.Command)
		if s.Build != nil {
			fmt.Fprintf(&b, "\n%s\n", buildLine(s.Build))
		}
		for _, bl := range s.Blocks {
			fmt.Fprintf(&b, "\n### %s\n", bl.Title)
			if bl.Protocol != "" {
				fmt.Fprintf(&b, "\n%s\n", bl.Protocol)
			}
			if bl.Body != "" {
				fmt.Fprintf(&b, "\n%s\n", bl.Body)
			}
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteLaTeX writes docs' tables as LaTeX: each grid a table float
// (\begin{table}) with its title (and the grid's caption) as \caption, a
// label tab:SECTION (tab:SECTION:N for a section's N-th grid), a tabular
// with booktabs' rules (the first column left, the others right), and the
// protocol and notes below it in \footnotesize; each result's heading,
// command and build as comments. Text is escaped for pdfLaTeX
// (experiment.LaTeXEscape); it needs \usepackage{booktabs}. A wide table
// (a comparison's ten columns) may want \resizebox or a landscape page.
func WriteLaTeX(w io.Writer, title string, docs []*experiment.Document) error {
	secs, title, _, err := sections(title, docs, false)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%% %s\n%% Written by ccs report from %s: each table a float, for \\input in a document\n%% with \\usepackage{booktabs} (and graphicx, which shrinks a table wider than the text to\n%% fit). The figures are ccs plot's (PNG and SVG), for \\includegraphics.\n", oneLine(title), plural(len(docs), "result"))
	// \ccsfit shrinks its table to the text's width where wider, with
	// graphicx loaded; without it the table is as wide as it is.
	b.WriteString("\\providecommand{\\ccsfit}[1]{\\ifdefined\\resizebox\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{#1}\\else#1\\fi}\n")
	for _, s := range secs {
		fmt.Fprintf(&b, "\n%% %s\n%% %s\n", oneLine(s.Heading), oneLine(s.Command))
		if s.Build != nil {
			fmt.Fprintf(&b, "%% %s\n", oneLine(buildLine(s.Build)))
		}
		n := 0
		for _, bl := range s.Blocks {
			for i, t := range bl.Tables {
				n++
				// tab:KIND, tab:KIND:2 …: a section's further grids apart
				// from the sections KIND-2 … of further results of a kind.
				label := "tab:" + s.ID
				if n > 1 {
					label = fmt.Sprintf("tab:%s:%d", s.ID, n)
				}
				caption := bl.Title
				if t.Caption != "" {
					caption += ": " + strings.TrimSuffix(t.Caption, ":")
				}
				var notes []string
				if i == 0 {
					if bl.Protocol != "" {
						notes = append(notes, bl.Protocol)
					}
					notes = append(notes, bl.Notes...)
				}
				notes = append(notes, t.Notes...)
				if n == 1 && s.Command != "" {
					// In the document, not only in a comment: what computed
					// the numbers.
					src := "Computed by `" + s.Command + "`"
					if s.Build != nil {
						src += "; " + buildLine(s.Build)
					}
					notes = append(notes, src+".")
				}
				fmt.Fprintf(&b, "\\begin{table}[htbp]\n\\centering\n\\caption{%s}\n\\label{%s}\n", latexProse(caption), label)
				latexGrid(&b, append([][]string{t.Head}, t.Rows...))
				if len(notes) > 0 {
					b.WriteString("\\par\\smallskip\n{\\footnotesize\n")
					for _, note := range notes {
						fmt.Fprintf(&b, "%s\\par\n", latexProse(note))
					}
					b.WriteString("}\n")
				}
				b.WriteString("\\end{table}\n")
			}
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// buildLine is a section's build as one line: "name value · name value".
func buildLine(fs []field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name + " " + f.Value
	}
	return strings.Join(parts, " · ")
}

// latexGrid writes rows (the first the header) as a tabular with
// booktabs' rules, in \ccsfit: the first column left, the others right,
// but a column of prose (a cell of more than 32 characters: a guarantee's
// wording) a paragraph column that wraps, its share of 60% of the line.
func latexGrid(b *strings.Builder, rows [][]string) {
	cols := len(rows[0])
	prose := make([]bool, cols)
	nprose := 0
	for c := range cols {
		for _, r := range rows[1:] {
			if c < len(r) && utf8.RuneCountInString(r[c]) > 32 {
				prose[c] = true
			}
		}
		if prose[c] {
			nprose++
		}
	}
	spec := ""
	for c := range cols {
		switch {
		case prose[c]:
			spec += fmt.Sprintf("p{%.2f\\linewidth}", 0.6/float64(nprose))
		case c == 0:
			spec += "l"
		default:
			spec += "r"
		}
	}
	b.WriteString("\\ccsfit{\\begin{tabular}{" + spec + "}\n\\toprule\n")
	for i, r := range rows {
		cells := make([]string, cols)
		for c := range cells {
			if c < len(r) {
				cells[c] = minus.ReplaceAllString(experiment.LaTeXEscape(r[c]), "$1$$-$$$2")
			}
			if prose[c] && i > 0 {
				cells[c] = "\\raggedright " + cells[c]
			}
		}
		// \tabularnewline: \\ after \raggedright would end its paragraph.
		b.WriteString(strings.Join(cells, " & ") + " \\tabularnewline\n")
		if i == 0 {
			b.WriteString("\\midrule\n")
		}
	}
	b.WriteString("\\bottomrule\n\\end{tabular}}\n")
}

// minus finds a number's minus sign (LogVol/d's -4.13), set as one
// ($-$), not as a hyphen.
var minus = regexp.MustCompile(`(^|[\s/(])-([0-9])`)

// latexProse escapes a line of prose, its `code` spans as \texttt.
func latexProse(s string) string {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unpaired backtick: kept as one
		parts[len(parts)-2] += "`" + parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("\\texttt{" + experiment.LaTeXEscape(p) + "}")
		} else {
			b.WriteString(experiment.LaTeXEscape(p))
		}
	}
	return b.String()
}

// oneLine is s for a LaTeX comment: its line breaks as spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
