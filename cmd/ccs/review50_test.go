package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// review50Blocks is blocks×per anchors at the origin of R², k positives
// each at a distance scaled by its block's own hardness (a patient's
// images alike), each block of one class (block%3); blocks recorded where
// keep.
func review50Blocks(rng *rand.Rand, blocks, per, k int, keep bool) *bundle.Bundle {
	n := blocks * per
	b := &bundle.Bundle{N: n, K: k, D: 2, Anchors: make([]float32, 2*n), Positives: make([]float32, 2*n*k), Labels: make([]int64, n)}
	if keep {
		b.Blocks = make([]int64, n)
	}
	for bl := range blocks {
		scale := math.Exp(0.8 * rng.NormFloat64())
		for j := range per {
			i := bl*per + j
			b.Labels[i] = int64(bl % 3)
			if keep {
				b.Blocks[i] = int64(bl)
			}
			for a := range 2 * k {
				b.Positives[2*i*k+a] = float32(scale * rng.NormFloat64())
			}
		}
	}
	return b
}

// TestReview50CoverageCheckBlocksText checks that ccs coverage-check on a
// bundle whose anchors record their blocks says it halved it by its 24
// blocks and states none of the guarantees of anchors exchangeable one by
// one — for one positive per anchor, PAC and class-conditional sets —
// nor reads a class's shortfall as beyond the Monte-Carlo error (failed
// at 1c23c4e: the text never said "block", and said "at most δ = 10.00%
// of calibration draws cover less than 1−α", "each class's mean coverage
// over calibration draws is ≥ 1−α" and "beyond the resplits' Monte-Carlo
// error" of a halving whose mean docs/your-data.md shows below 1−α).
func TestReview50CoverageCheckBlocksText(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 3))
	cal, test := review50Blocks(rng, 60, 20, 3, false), review50Blocks(rng, 24, 30, 3, true)
	if err := bundle.WriteNPZ(filepath.Join(dir, "test.npz"), test.Arrays()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opt  conformal.Options
	}{
		{"one", conformal.Options{}},
		{"pac", conformal.Options{Mode: conformal.PAC, Delta: 0.1}},
		{"class", conformal.Options{Mode: conformal.Class}},
	} {
		s, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		set := filepath.Join(dir, c.name+".json")
		if err := s.Save(set); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, []string{"coverage-check", "-set", set, "-test", filepath.Join(dir, "test.npz"), "-resplits", "1000", "-seed", "1"}); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, stderr.String())
		}
		out := stdout.String()
		if !strings.Contains(out, "halved block by block: 24 blocks") || !strings.Contains(out, "guarantee  none for a halving by blocks") {
			t.Errorf("%s: halved by 24 blocks, and the text does not say so, or states a guarantee:\n%s", c.name, out)
		}
		for _, claim := range []string{"beyond the resplits' Monte-Carlo error", "guaranteed ≥ 1 − α", "is ≥ 1−α", "at most δ", "lies in ["} {
			if strings.Contains(out, claim) {
				t.Errorf("%s: a halving by blocks, yet the text says %q:\n%s", c.name, claim, out)
			}
		}
	}
}

// TestReview50CoverageCheckDominantBlockWarned checks that ccs
// coverage-check warns, on stderr and in the -out document's warnings, of
// a block holding more anchors than a side of the cut, which every
// resplit divides (failed at 1c23c4e: a block of 390 of the 720 anchors,
// 360 calibrating, and nothing said).
func TestReview50CoverageCheckDominantBlockWarned(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 3))
	cal, test := review50Blocks(rng, 60, 20, 3, false), review50Blocks(rng, 24, 30, 3, true)
	for i, v := range test.Blocks {
		if v <= 12 { // blocks 0–12 merged: 390 of the 720 anchors
			test.Blocks[i] = 0
		}
	}
	if err := bundle.WriteNPZ(filepath.Join(dir, "test.npz"), test.Arrays()); err != nil {
		t.Fatal(err)
	}
	s, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "ball.json")
	if err := s.Save(set); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	doc := filepath.Join(dir, "cc.json")
	if err := run(&stdout, &stderr, []string{"coverage-check", "-set", set, "-test", filepath.Join(dir, "test.npz"), "-resplits", "200", "-seed", "1", "-out", doc}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	const want = "a block holds 390 of the 720 anchors, more than a resplit's 360 calibration anchors"
	if !strings.Contains(strings.Join(strings.Fields(stderr.String()), " "), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), want) || !strings.Contains(string(raw), `"divided_share"`) {
		t.Errorf("%s has no warning %q or no divided_share:\n%s", doc, want, raw)
	}
}

// review50SimSet makes a small simulated bundle and an ℓ2 ball calibrated
// on it: its directory and the set's file.
func review50SimSet(t *testing.T) (dir, set string) {
	t.Helper()
	dir = t.TempDir()
	var so, se bytes.Buffer
	if err := runContext(context.Background(), &so, &se, []string{"simulate", "-out", dir, "-seed", "1", "-k", "10"}); err != nil {
		t.Fatalf("simulate: %v\n%s", err, se.String())
	}
	set = filepath.Join(dir, "ball.json")
	if err := runContext(context.Background(), &so, &se, []string{"calibrate", "-geometry", "ball", "-cal", filepath.Join(dir, "cal.npz"), "-seed", "1", "-out", set}); err != nil {
		t.Fatalf("calibrate: %v\n%s", err, se.String())
	}
	return dir, set
}

// TestReview50InterruptedEvaluateAndCoverageCheck checks that ccs
// evaluate and ccs coverage-check stop under a cancelled context (what
// main's Ctrl-C or SIGTERM do) with context.Canceled, exit status 130,
// and write no -out file, as the README promises ("Ctrl-C or SIGTERM stop
// a run within a second") (failed at 1c23c4e: runCoverageCheck took its
// context as `_` and eval.Evaluate, WithClasses and Resplits took none,
// so both ran to the end, returned nil — exit 0 — and wrote their file;
// on 30 000 × 384 embeddings a SIGINT 2.5 s in was followed by 6.6 s of
// coverage-check and 4.5 s of evaluate).
func TestReview50InterruptedEvaluateAndCoverageCheck(t *testing.T) {
	dir, set := review50SimSet(t)
	test := filepath.Join(dir, "test.npz")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"coverage-check", []string{"coverage-check", "-set", set, "-test", test, "-resplits", "2000", "-seed", "3", "-json"}},
		{"coverage-check -per-class", []string{"coverage-check", "-set", set, "-test", test, "-resplits", "2000", "-seed", "3", "-per-class", "-json"}},
		{"evaluate", []string{"evaluate", "-set", set, "-test", test, "-json"}},
		{"evaluate -per-class", []string{"evaluate", "-set", set, "-test", test, "-per-class", "-json"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // Ctrl-C before (or while) the command runs
			var so, se bytes.Buffer
			err := runContext(ctx, &so, &se, append(c.args, "-out", out))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s under a cancelled context: err = %v, want context.Canceled (exit 130)", c.name, err)
			}
			if _, statErr := os.Stat(out); statErr == nil {
				t.Errorf("%s under a cancelled context wrote its -out file %s", c.name, out)
			}
		})
	}
}
