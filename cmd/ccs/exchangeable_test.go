package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestEvaluateShift: a ball calibrated on donor A's cells, evaluated on
// A's test split and on donor B's, whose cells spread twice as far about
// their type's centre (a batch effect): on A, ccs evaluate's check line
// is within chance and nothing is warned; on B it warns, names the test
// bundle, and -json carries the check (p < 10⁻³) and the warning.
func TestEvaluateShift(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(31, 32))
	const n, d, types = 3000, 6, 5
	centres := make([]float64, types*d)
	for i := range centres {
		centres[i] = 6 * rng.NormFloat64()
	}
	for _, donor := range []struct {
		name   string
		spread float64
	}{{"a", 1}, {"b", 2}} {
		x, y := make([]float32, n*d), make([]int64, n)
		for i := range n {
			y[i] = int64(i % types)
			for j := range d {
				x[i*d+j] = float32(centres[int(y[i])*d+j] + donor.spread*rng.NormFloat64())
			}
		}
		if err := bundle.WriteNPY(p(donor.name+"-x.npy"), bundle.Float32(x, n, d)); err != nil {
			t.Fatal(err)
		}
		if err := bundle.WriteNPY(p(donor.name+"-y.npy"), bundle.Int64(y, n)); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	ccs := func(args ...string) (string, string) {
		t.Helper()
		stdout.Reset()
		stderr.Reset()
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	for _, donor := range []string{"a", "b"} {
		ccs("bundle", "-embeddings", p(donor+"-x.npy"), "-labels", p(donor+"-y.npy"), "-k", "5", "-kneg", "5", "-out", p(donor))
	}
	ccs("calibrate", "-cal", p("a/cal.npz"), "-geometry", "ball", "-alpha", "0.1", "-out", p("ball.json"))

	out, errs := ccs("evaluate", "-set", p("ball.json"), "-test", p("a/test.npz"))
	if !strings.Contains(out, "\ncheck      ") || !strings.Contains(out, "disjoint test pairs") || strings.Contains(errs, "chance allows") {
		t.Errorf("donor A: a check line within chance and no warning, got\n%s%s", out, errs)
	}
	out, errs = ccs("evaluate", "-set", p("ball.json"), "-test", p("b/test.npz"))
	if !strings.Contains(errs, p("b/test.npz")+": its anchors leave the set more often than chance allows") || !strings.Contains(errs, "a shift") {
		t.Errorf("donor B: no shift warning:\n%s%s", out, errs)
	}
	out, _ = ccs("evaluate", "-set", p("ball.json"), "-test", p("b/test.npz"), "-json")
	var doc struct {
		Warnings        []string `json:"warnings"`
		Exchangeability *struct {
			Units, Outside int
			Pairs          bool
			P              float64
		} `json:"exchangeability"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.Exchangeability
	if e == nil || !e.Pairs || e.Units < 100 || e.P >= 1e-3 || len(doc.Warnings) == 0 || !strings.Contains(doc.Warnings[0], "chance allows") {
		t.Errorf("donor B -json: %+v, warnings %q", e, doc.Warnings)
	}
}
