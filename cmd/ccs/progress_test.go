package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressSettles: a table's progress gives no ETA before its first
// seed's runs are done (their baselines take a moment, the learned rows
// minutes), then the elapsed time's projection.
func TestProgressSettles(t *testing.T) {
	var stderr bytes.Buffer
	p := newProgress(&output{stdout: &bytes.Buffer{}, stderr: &stderr}, false, "run")
	p.settle = 3
	p.step(1, 12, "seed 0, Conformal Ball (ℓ2)")
	p.last = p.last.Add(-10 * time.Second) // a plain line at most every 10 seconds
	p.step(3, 12, "seed 0, Generalized (Neg)")
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "run 1/12  elapsed 0s  ETA after the first seed's 3  (seed 0, Conformal Ball (ℓ2))") ||
		!strings.Contains(lines[1], "run 3/12  elapsed 0s  ETA 0s") {
		t.Errorf("progress:\n%s", stderr.String())
	}
}
