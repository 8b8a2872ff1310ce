package serve

// Findings of a review of the forty-eighth round's change (each test
// failed then).

import (
	"os"
	"strings"
	"testing"
)

// TestReview48DocsReloadKeepsUnchangedMonitors: since 1156b28 a reload keeps the
// OOD drift monitor of a set whose file is unchanged (Reload's doc, and
// docs/serve.md's new paragraph), but the same page further down still
// says "A reload (`SIGHUP`) restarts every monitor.", docs/security.md
// says of a full monitor "a reload restarts every monitor" (an operator
// would SIGHUP to free a full monitor's memory and get nothing).
func TestReview48DocsReloadKeepsUnchangedMonitors(t *testing.T) {
	for _, c := range []struct{ file, stale string }{
		{"../docs/serve.md", "A reload (`SIGHUP`) restarts every monitor."},
		{"../docs/security.md", "a reload restarts every monitor"},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), c.stale) {
			t.Errorf("%s still says %q", c.file, c.stale)
		}
	}
}
