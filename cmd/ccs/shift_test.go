package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestShiftDualEncoder: queries and their passages from two encoders, each
// passage at its query + a fixed gap + noise. calibrate -shift (the ball
// and the ellipsoid, the offset from the fit split) and fit -shift write
// sets centred off the anchor, which keep coverage near 1 − α on the test
// split and hold fewer passages a query than the sets centred on it
// (ccs retrieve over the test queries); the set file records the shift.
func TestShiftDualEncoder(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(12, 12))
	const n, d = 2000, 8
	queries, passages := make([]float32, n*d), make([]float32, n*d)
	pairs := make([]int64, 2*n)
	for i := range n {
		for j := range d {
			queries[i*d+j] = float32(2 * rng.NormFloat64())
			gap := 0.0
			if j < 3 {
				gap = 1.5
			}
			passages[i*d+j] = queries[i*d+j] + float32(gap+0.4*rng.NormFloat64())
		}
		pairs[2*i], pairs[2*i+1] = int64(i), int64(i)
	}
	for name, a := range map[string]bundle.Array{"queries.npy": bundle.Float32(queries, n, d), "passages.npy": bundle.Float32(passages, n, d), "pairs.npy": bundle.Int64(pairs, n, 2)} {
		if err := bundle.WriteNPY(p(name), a); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	ccs := func(args ...string) string {
		t.Helper()
		stdout.Reset()
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	ccs("bundle", "-embeddings", p("passages.npy"), "-queries", p("queries.npy"), "-pairs", p("pairs.npy"), "-k", "1", "-kneg", "20", "-out", p("b"))
	b := func(s string) string { return filepath.Join(dir, "b", s+".npz") }
	ccs("fit", "-geometry", "genball", "-objective", "neg", "-shift", "-train", b("fit"), "-val", b("val"), "-epochs", "3", "-out", p("gen-fitted.json"), "-quiet")
	for _, args := range [][]string{
		{"-geometry", "ball", "-out", p("ball.json")},
		{"-geometry", "ball", "-fit", b("fit"), "-shift", "-out", p("ball-shift.json")},
		{"-geometry", "ellipsoid", "-fit", b("fit"), "-out", p("ell.json")},
		{"-geometry", "ellipsoid", "-fit", b("fit"), "-shift", "-out", p("ell-shift.json")},
		{"-set", p("gen-fitted.json"), "-out", p("gen-shift.json")},
	} {
		got := ccs(append([]string{"calibrate", "-cal", b("cal"), "-alpha", "0.1"}, args...)...)
		if shifted := slices.Contains(args, "-shift"); shifted != strings.Contains(got, "\nshift: ‖c‖ = ") {
			t.Errorf("%v: the shift's note: %v\n%s", args, !shifted, got)
		}
	}
	// The gap is 1.5 along three axes: ‖c‖ near 2.6, the positives' median
	// distance from anchor + c about 0.4·√8 ≈ 1.1.
	note := regexp.MustCompile(`‖c‖ = ([0-9.]+); the positives lie ([0-9.]+) from their anchor at the median, ([0-9.]+) from anchor \+ c`).FindStringSubmatch(ccs("calibrate", "-cal", b("cal"), "-geometry", "ball", "-fit", b("fit"), "-shift", "-out", p("x.json")))
	if note == nil {
		t.Fatal("no shift note")
	}
	f := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	if c, from, centre := f(note[1]), f(note[2]), f(note[3]); math.Abs(c-1.5*math.Sqrt(3)) > 0.1 || math.Abs(centre-0.4*math.Sqrt(8)) > 0.15 || from < centre+1 {
		t.Errorf("shift note: ‖c‖ %v, from the anchor %v, from anchor + c %v", c, from, centre)
	}
	number := func(out, re string) float64 {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %q in\n%s", re, out)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	size := map[string]float64{}
	for _, name := range []string{"ball", "ball-shift", "ell", "ell-shift", "gen-shift"} {
		set := p(name + ".json")
		cov := number(ccs("evaluate", "-set", set, "-test", b("test")), `coverage +([0-9.]+)%`)
		if cov < 85 || cov > 95 {
			t.Errorf("%s: coverage %.2f%% of the test split, want about 90%%", name, cov)
		}
		size[name] = number(ccs("retrieve", "-set", set, "-db", p("passages.npy"), "-anchor", b("test"), "-limit", "1"), `anchors: ([0-9.]+) items inside`)
		text, _ := os.ReadFile(set)
		if shifted := strings.Contains(string(text), `"shift": [`); shifted != strings.HasSuffix(name, "shift") {
			t.Errorf("%s: the file's shift: %v", name, shifted)
		}
	}
	// compare -shift centres every row's sets, and says so.
	table := ccs("compare", "-data", p("b"), "-rows", "all", "-seeds", "1", "-epochs", "2", "-shift", "-out", p("res"), "-quiet")
	if !strings.Contains(table, "every set centred at anchor + c, the ") {
		t.Errorf("compare -shift: the table does not say the sets are shifted:\n%s", table)
	}
	for _, name := range []string{"ball", "ellipsoid", "genball-neg"} {
		text, err := os.ReadFile(filepath.Join(dir, "res", "sets", "compare", "seed-0", name+".json"))
		if err != nil || !strings.Contains(string(text), `"shift": [`) {
			t.Errorf("compare -shift: %s: %v, no shift in the set", name, err)
		}
	}
	t.Logf("passages a test query's set holds: %v", size)
	for _, name := range []string{"ball", "ell"} {
		if size[name+"-shift"] > size[name]/2 {
			t.Errorf("%s: %.1f passages a query shifted, %.1f not: want fewer than half", name, size[name+"-shift"], size[name])
		}
	}
}
