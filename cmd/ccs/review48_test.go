package main

// Findings of a review of the forty-eighth round's change (each test
// failed then).

import (
	"bytes"
	"strings"
	"testing"
)

// TestReview48OODIdAloneIgnoresMode: ccs ood -id without -ood (new in 827d740)
// replaces whatever -mode asked for by "conformal" (DetectOOD: ms =
// []string{"conformal"}) without a word: -mode batch (or reference) prints
// the per-input test's FAR row and exits 0, and -ood-by-class is dropped as
// silently. Expected: a usage error naming the flag (batch and reference
// scores are measured against an OOD sample), or at least a warning.
func TestReview48OODIdAloneIgnoresMode(t *testing.T) {
	t.Chdir(t.TempDir())
	h2Data(t, false)
	var out, errb bytes.Buffer
	if err := run(&out, &errb, []string{"bundle", "-embeddings", "x.npy", "-labels", "y.npy", "-out", "b", "-k", "5", "-allow-fewer", "-split", "0,0,0.5,0.5", "-ood-cal-share", "0.2"}); err != nil {
		t.Fatalf("bundle: %v\n%s", err, errb.String())
	}
	if err := run(&out, &errb, []string{"calibrate", "-geometry", "ball", "-cal", "b/cal.npz", "-alpha", "0.1", "-reference", "200", "-ood-cal", "b/ood-cal.npz", "-out", "s.json"}); err != nil {
		t.Fatalf("calibrate: %v", err)
	}
	for _, args := range [][]string{{"-mode", "batch"}, {"-mode", "reference"}, {"-ood-by-class"}} {
		out.Reset()
		errb.Reset()
		err := run(&out, &errb, append([]string{"ood", "-set", "s.json", "-id", "b/test.npz"}, args...))
		if err == nil && !strings.Contains(errb.String(), args[0]) {
			t.Errorf("ccs ood -id alone %v: exit 0, no word of %s; printed:\n%s", args, args[0], out.String())
		}
	}
}
