package report_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/fixture"
	"github.com/ccsets/ccs/report"
)

// gridLines are the Markdown grid lines of docs' tables as the results
// print them (WriteText), and how many grids they make.
func gridLines(t *testing.T, docs []*experiment.Document) (lines []string, grids int) {
	t.Helper()
	for _, d := range docs {
		for _, x := range d.Result.Texts() {
			var b bytes.Buffer
			if err := x.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			in := false
			for _, l := range strings.Split(b.String(), "\n") {
				grid := strings.HasPrefix(l, "|")
				if grid && !in {
					grids++
				}
				in = grid
				if grid {
					lines = append(lines, strings.TrimRight(l, " "))
				}
			}
		}
	}
	return lines, grids
}

// TestWriteMarkdown: the Markdown report of every kind's real results
// holds each of their grids line for line as the results print them, a
// section a document with its command, and its titles; its format is the
// file name's.
func TestWriteMarkdown(t *testing.T) {
	for name, docs := range map[string][]*experiment.Document{"reproduced": fixture.Documents(t), "commands": fixture.CommandDocuments(t)} {
		var b bytes.Buffer
		if err := report.WriteFormat(&b, report.Markdown, "", docs); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		lines, grids := gridLines(t, docs)
		for _, l := range lines {
			if !strings.Contains(md, l+"\n") {
				t.Errorf("%s: the Markdown lacks the grid line %q", name, l)
			}
		}
		if n := strings.Count(md, "\n|--"); n != grids {
			t.Errorf("%s: %d grids in the Markdown, want %d", name, n, grids)
		}
		for _, d := range docs {
			if !strings.Contains(md, "`"+d.Command+"`") {
				t.Errorf("%s: the Markdown lacks the command %q", name, d.Command)
			}
		}
		if n := strings.Count(md, "\n## "); n != len(docs) {
			t.Errorf("%s: %d sections, want %d", name, n, len(docs))
		}
		if name == "reproduced" && !strings.HasPrefix(md, "# "+report.ReproducedTitle+"\n") {
			t.Errorf("reproduced: the Markdown's title is %q", md[:min(len(md), 80)])
		}
	}
	for _, c := range []struct{ path, format string }{{"r.html", report.HTML}, {"R.HTM", report.HTML}, {"t.md", report.Markdown},
		{"t.markdown", report.Markdown}, {"paper/tables.tex", report.LaTeX}} {
		if f, err := report.FormatOf(c.path); err != nil || f != c.format {
			t.Errorf("FormatOf(%q) = %q, %v; want %q", c.path, f, err, c.format)
		}
	}
	for _, p := range []string{"r.pdf", "r.json", "r.txt", "report"} {
		if f, err := report.FormatOf(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("FormatOf(%q) = %q, %v; want an error naming it", p, f, err)
		}
	}
	if err := report.WriteFormat(&bytes.Buffer{}, "pdf", "", fixture.Documents(t)); err == nil {
		t.Error("WriteFormat(pdf): no error")
	}
}

// TestWriteLaTeXCompiles: the LaTeX tables of every kind's real results,
// \input in a document with booktabs, compile with Debian's pdflatex
// without an error or a character missing from the font (an unescaped %
// or _, a symbol left in Unicode, stop it), a float per grid, and the
// figures and protocols are in the text (pdftotext is not needed: the
// escaped source is read).
func TestWriteLaTeXCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("pdflatex: not in -short (the full suite runs it)")
	}
	dir := t.TempDir()
	for name, docs := range map[string][]*experiment.Document{"reproduced": fixture.Documents(t), "commands": fixture.CommandDocuments(t)} {
		var b bytes.Buffer
		if err := report.WriteFormat(&b, report.LaTeX, "Tables of "+name+" results: 100% & more_ of κ and Ω", docs); err != nil {
			t.Fatal(err)
		}
		tex := b.String()
		_, grids := gridLines(t, docs)
		if n := strings.Count(tex, `\begin{table}`); n != grids {
			t.Errorf("%s: %d table floats, want one a grid (%d)", name, n, grids)
		}
		if n := strings.Count(tex, `\begin{tabular}`); n != grids {
			t.Errorf("%s: %d tabulars, want %d", name, n, grids)
		}
		labels := regexp.MustCompile(`\\label\{([^}]*)\}`).FindAllStringSubmatch(tex, -1)
		seen := map[string]bool{}
		for _, l := range labels {
			if seen[l[1]] {
				t.Errorf("%s: label %s twice", name, l[1])
			}
			seen[l[1]] = true
		}
		if err := os.WriteFile(filepath.Join(dir, name+".tex"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		main := filepath.Join(dir, "main-"+name+".tex")
		// An ordinary page with graphicx, which \ccsfit shrinks a wide table
		// with: nothing may run off it.
		doc := "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n\\input{" + name + "}\n\\end{document}\n"
		if err := os.WriteFile(main, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/usr/bin/pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", filepath.Base(main))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: pdflatex (installed by scripts/setup): %v\n%s", name, err, tail(string(out), 3000))
		}
		log, err := os.ReadFile(strings.TrimSuffix(main, ".tex") + ".log")
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`Missing character: [^\n]*`).FindAllString(string(log), 5); m != nil {
			t.Errorf("%s: characters missing from the font: %q", name, m)
		}
		for _, m := range regexp.MustCompile(`Overfull \\hbox \(([0-9.]+)pt too wide\)[^\n]*\n[^\n]*`).FindAllStringSubmatch(string(log), -1) {
			if w, _ := strconv.ParseFloat(m[1], 64); w > 20 {
				t.Errorf("%s: a line runs %.0fpt off the page: %q", name, w, m[0])
			}
		}
		if st, err := os.Stat(strings.TrimSuffix(main, ".tex") + ".pdf"); err != nil || st.Size() < 10000 {
			t.Errorf("%s: no PDF: %v", name, err)
		}
	}
	var b bytes.Buffer
	if err := report.WriteFormat(&b, report.LaTeX, "", fixture.Documents(t)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`94.7\% / 15.3\% / 2.74`, `Paper (CIFAR100, d=512)`, `% ccs reproduce pnorm (fixture)`, `$\pm$`, `\toprule`} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the LaTeX lacks %q", s)
		}
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// TestFiguresNameTheirRun: every figure of every kind's real results
// carries its document's command and build as its source (kept in the
// PNG's and SVG's metadata), so that a figure copied on its own names its
// run.
func TestFiguresNameTheirRun(t *testing.T) {
	for _, d := range append(fixture.Documents(t), fixture.CommandDocuments(t)...) {
		figs, err := d.Figures()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range figs {
			if !strings.Contains(f.Source, "computed by "+d.Command) || len(d.Build) > 0 && !strings.Contains(f.Source, "; build github.com/ccsets/ccs ") {
				t.Errorf("%s: figure %s's source %q", d.Kind, f.Name, f.Source)
			}
		}
	}
	d := *fixture.Documents(t)[0]
	d.Build = []byte(`{"module": "github.com/ccsets/ccs", "version": "(devel)", "code": "sha256:ab12", "kernels": "portable"}`)
	figs, err := d.Figures()
	if err != nil || len(figs) == 0 {
		t.Fatal(err)
	}
	if want := "computed by " + d.Command + "; build github.com/ccsets/ccs (devel) code sha256:ab12, kernels portable"; figs[0].Source != want {
		t.Errorf("a built document's figure: source %q, want %q", figs[0].Source, want)
	}
}
