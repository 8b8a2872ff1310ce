package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestUser50ThousandsAmongPointsRefused: a comma-separated table whose numbers
// are written with decimal points reads one quoted "1,500" (a spreadsheet's
// thousands separator, as Excel quotes it) as 1.5 — a decimal comma — with
// only the note "decimal commas read as points". "1,234,567" and
// "1,500.25" are refused as thousands separators; "1,500" beside
// 0.25 and 0.75 is the same mistake. Expected: refused naming its line
// and column, as a number with thousands separators is.
func TestUser50ThousandsAmongPointsRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mixed.csv")
	os.WriteFile(p, []byte("a,b\n0.5,0.25\n\"1,500\",0.75\n2.5,1.25\n"), 0o644)
	emb, err := readEmbeddings(p, false)
	if err == nil || !strings.Contains(err.Error(), "mixed.csv:3") {
		var v any
		if err == nil {
			v = emb.Rows
		}
		t.Errorf("a quoted 1,500 among decimal points: rows %v, err %v; want it refused naming mixed.csv:3", v, err)
	}
}

// TestUser50TrialsMissPercent (failed at 1c23c4e): commit 9120cbab ("no rate short of 100% printed
// as 100.00%", percent.Format: "nor one above 0% down to it") says the
// trials' report uses Percent, yet its miss line — the rate the set's
// guarantee bounds — and the cosine's figures still use %.2f: one target
// trial outside the set among 20 001 prints "miss 0.00%", no miss at all
// to the reader, where false acc beside it prints 0.005%.
func TestUser50TrialsMissPercent(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(5, 5))
	cal := review50Blocks(rng, 50, 20, 1, false)
	s, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(p("ball.json")); err != nil {
		t.Fatal(err)
	}
	// Utterances: u0 at (1, 0), u1 beside it, u2 far away.
	if err := bundle.WriteNPY(p("emb.npy"), bundle.Float32([]float32{1, 0, 1.01, 0, -1000, 0}, 3, 2)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("utt.txt"), []byte("a/u0.wav\nb/u1.wav\nc/u2.wav\n"), 0o644)
	var tr strings.Builder
	for range 20000 {
		tr.WriteString("1 a/u0.wav b/u1.wav\n")
	}
	tr.WriteString("1 a/u0.wav c/u2.wav\n")
	for range 20000 {
		tr.WriteString("0 a/u0.wav c/u2.wav\n")
	}
	tr.WriteString("0 a/u0.wav b/u1.wav\n")
	os.WriteFile(p("trials.txt"), []byte(tr.String()), 0o644)
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"evaluate", "-set", p("ball.json"), "-trials", p("trials.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt")}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if out := stdout.String(); strings.Contains(out, "miss       0.00%") {
		t.Errorf("one miss in 20 001 target trials printed as 0.00%%:\n%s", out)
	}
}
