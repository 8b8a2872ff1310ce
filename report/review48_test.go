package report_test

// Findings of a review of the forty-eighth round's change: the Markdown
// and LaTeX reports (each test failed then).

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/fixture"
	"github.com/ccsets/ccs/report"
)

// TestReview48LaTeXLabelsUniqueAcrossSections: two results of one kind (two
// ccs evaluate -per-class runs, two ccs ood runs: the second section's ID
// is KIND-2) where the first has two grids: its second grid's label is
// tab:KIND-2 — the second section's first grid's too. pdflatex says
// "Label `tab:evaluate-2' multiply defined", and \ref points at the wrong
// table. TestWriteLaTeXCompiles checks uniqueness, but its fixtures hold
// one document of each kind.
func TestReview48LaTeXLabelsUniqueAcrossSections(t *testing.T) {
	docs := fixture.CommandDocuments(t)               // evaluate, evaluate-per-class (two grids), …
	twice := []*experiment.Document{docs[1], docs[0]} // per class first: tab:evaluate, tab:evaluate-2; then tab:evaluate-2
	var b bytes.Buffer
	if err := report.WriteFormat(&b, report.LaTeX, "", twice); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range regexp.MustCompile(`\\label\{([^}]*)\}`).FindAllStringSubmatch(b.String(), -1) {
		if seen[l[1]] {
			t.Errorf("label %s twice", l[1])
		}
		seen[l[1]] = true
	}
}

// TestReview48ReportNamesTheCode: commit 0a2b6d3 gives a document of a build no
// VCS revision names a "code" (the executable's SHA-256) so that "a
// reviewer can tell which code printed a table", and ccs plot's figures
// carry it; but report's build list (module, version, revision, modified,
// go, platform, kernels, blas) leaves it out, so the HTML, Markdown and
// LaTeX reports of such a build — the very case the field is for — name
// no code.
func TestReview48ReportNamesTheCode(t *testing.T) {
	d := *fixture.Documents(t)[0]
	d.Build = []byte(`{"module": "github.com/ccsets/ccs", "version": "(devel)", "code": "sha256:ab12cd", "kernels": "portable"}`)
	for _, f := range []string{report.HTML, report.Markdown, report.LaTeX} {
		var b bytes.Buffer
		if err := report.WriteFormat(&b, f, "", []*experiment.Document{&d}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "sha256:ab12cd") {
			t.Errorf("%s report of a (devel) build with code sha256:ab12cd: the code is not named", f)
		}
	}
}
