package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
)

// TestClassSetOtherNumbering: a class-conditional set calibrated on one
// bundling of string labels, judged on a test bundle made from other rows
// (another donor: a class more, one fewer), whose numbers for the same
// classes differ. Each test class is judged with its own class's
// threshold, matched by name (before, by number: "boot" got "coat"'s), a
// note says so, and a class the set has no threshold for is refused by its
// name.
func TestClassSetOtherNumbering(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 2400, 4
	_, x64, y := mixture(11, n, d, 4)
	names := []string{"boot", "coat", "dress", "shirt"}
	var a strings.Builder
	for _, l := range y {
		fmt.Fprintln(&a, names[l])
	}
	writeNPY64(t, p("a.npy"), x64, n, d)
	os.WriteFile(p("a.txt"), []byte(a.String()), 0o644)
	// Donor B: no dress, and its shirts are a population of its own.
	var bx []float64
	var b strings.Builder
	for i, l := range y {
		switch names[l] {
		case "dress":
			continue
		case "shirt":
			fmt.Fprintln(&b, "abnormal")
		default:
			fmt.Fprintln(&b, names[l])
		}
		bx = append(bx, x64[i*d:(i+1)*d]...)
	}
	writeNPY64(t, p("b.npy"), bx, len(bx)/d, d)
	os.WriteFile(p("b.txt"), []byte(b.String()), 0o644)
	for _, args := range [][]string{
		{"bundle", "-embeddings", p("a.npy"), "-labels", p("a.txt"), "-out", p("A"), "-k", "5", "-ood-classes", "shirt"},
		{"bundle", "-embeddings", p("b.npy"), "-labels", p("b.txt"), "-out", p("B"), "-k", "5", "-ood-classes", "abnormal", "-seed", "1"},
		{"bundle", "-embeddings", p("b.npy"), "-labels", p("b.txt"), "-out", p("B2"), "-k", "5", "-seed", "1"},
		{"calibrate", "-geometry", "ball", "-cal", p("A/cal.npz"), "-calibration", "class", "-alpha", "0.2", "-out", p("class.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	set, err := conformal.Load(p("class.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, c := range set.Classes {
		want[c.Name] = c.Threshold
	}
	if want["boot"] == want["coat"] {
		t.Fatalf("the classes' thresholds should differ: %v", want)
	}
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"evaluate", "-set", p("class.json"), "-test", p("B/test.npz"), "-per-class", "-json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Classes []struct {
			Label     int64
			Name      string
			Threshold float64
		}
		LabelNames []string `json:"label_names"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Classes) != 2 {
		t.Errorf("classes %+v", doc.Classes)
	}
	for _, c := range doc.Classes {
		if name := doc.LabelNames[c.Label]; c.Threshold != want[name] || c.Name != name {
			t.Errorf("class %q (named %q) judged with threshold %v, its own is %v (label names %q)", name, c.Name, c.Threshold, want[name], doc.LabelNames)
		}
	}
	if !strings.Contains(stderr.String(), `its classes were matched to the set's by name ("boot" is 1 there, 0 in the set; "coat" is 2 there, 1 in the set)`) {
		t.Errorf("no note of the renumbering:\n%s", stderr.String())
	}
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"coverage-check", "-set", p("class.json"), "-test", p("B/test.npz"), "-resplits", "20"}); err != nil ||
		!strings.Contains(stdout.String(), "| boot ") || !strings.Contains(stdout.String(), "| coat ") {
		t.Errorf("coverage-check: %v\n%s", err, stdout.String())
	}
	// -json names each class as the table does, as evaluate -per-class's
	// classes are named.
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"coverage-check", "-set", p("class.json"), "-test", p("B/test.npz"), "-resplits", "20", "-json"}); err != nil {
		t.Fatalf("coverage-check -json: %v", err)
	}
	var checked struct {
		Classes []struct {
			Label int64  `json:"label"`
			Name  string `json:"name"`
		} `json:"classes"`
		LabelNames []string `json:"label_names"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &checked); err != nil || len(checked.Classes) == 0 {
		t.Fatalf("coverage-check -json: %v\n%s", err, stdout.String())
	}
	for _, c := range checked.Classes {
		if c.Label < 0 || c.Label >= int64(len(checked.LabelNames)) || c.Name != checked.LabelNames[c.Label] || c.Name == "" {
			t.Errorf("coverage-check -json: class %d named %q; label_names %q", c.Label, c.Name, checked.LabelNames)
		}
	}
	for _, cmd := range []string{"evaluate", "coverage-check"} {
		err := run(io.Discard, io.Discard, []string{cmd, "-set", p("class.json"), "-test", p("B2/test.npz")})
		if err == nil || !strings.Contains(err.Error(), `class "abnormal" (label 0 of the test bundle) is not one of the set's classes, so it has no threshold`) {
			t.Errorf("%s on a class the set lacks: %v", cmd, err)
		}
	}
}
