package ood

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// review50Bundle is n anchors of dimension d with k positives each, the
// anchors plus noise.
func review50Bundle(rng *rand.Rand, n, k, d int) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, d*n), Positives: make([]float32, d*n*k)}
	for i := range b.Anchors {
		b.Anchors[i] = float32(rng.NormFloat64())
	}
	for i := range b.Positives {
		b.Positives[i] = b.Anchors[(i/(k*d))*d+i%d] + float32(0.5*rng.NormFloat64())
	}
	return b
}

// review50Test is a calibrated per-input OOD test on 1 000 held-out
// inputs, and 2 000 fresh in-distribution queries.
func review50Test(t *testing.T) (*Conformal, []float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	const d = 4
	cal := review50Bundle(rng, 600, 2, d)
	set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if set.Reference, err = conformal.NewReference(cal, 100, 1, conformal.CalibrationAnchors); err != nil {
		t.Fatal(err)
	}
	near, err := NewNearest(set, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if set.OOD, err = near.Calibrate(review50Bundle(rng, 1000, 1, d).Anchors, "held"); err != nil {
		t.Fatal(err)
	}
	c, err := NewConformal(set, Test{Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	return c, review50Bundle(rng, 2000, 1, d).Anchors
}

// TestReview50AnswerChecksTestLevel checks that Conformal.Answer refuses a
// level that With refuses, set on its exported Test field, and that
// Test.PValues and Test.FlaggedRank take any δ without a panic (failed at
// 1c23c4e: Answer checked only a zero Alpha, so α_ood = 1.5 flagged every
// input, δ = 0.9 and an α_ood that 1 000 scores cannot reach were answered
// without an error, and a negative δ panicked in gonum's Beta.Quantile, as
// did PValues and FlaggedRank for δ < 0 or δ ≥ 1).
func TestReview50AnswerChecksTestLevel(t *testing.T) {
	c, queries := review50Test(t)
	for _, test := range []Test{{Alpha: 1.5}, {Alpha: 0.05, Delta: 0.9}, {Alpha: 0.0001}, {Alpha: 0.05, Delta: -1}, {Alpha: 0.05, Delta: 1}, {Alpha: 0.05, Delta: math.NaN()}} {
		_, want := c.With(test)
		if want == nil {
			t.Fatalf("With(%+v) accepted", test)
		}
		cc := *c
		cc.Test = test
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Test{Alpha: %v, Delta: %v} (refused by With) panicked: %v", test.Alpha, test.Delta, r)
				}
			}()
			a, err := cc.Answer(context.Background(), queries, 0)
			if err == nil {
				flagged := 0
				for _, r := range a.Results {
					if r.OOD {
						flagged++
					}
				}
				t.Errorf("Answer with Test{Alpha: %v, Delta: %v} (refused by With) answered without an error: %d of %d inputs flagged",
					test.Alpha, test.Delta, flagged, len(a.Results))
			} else if err.Error() != want.Error() {
				t.Errorf("Answer with Test{Alpha: %v, Delta: %v}: %v, want With's error %v", test.Alpha, test.Delta, err, want)
			}
			// Unchecked, an invalid δ has no level: p-values of 1, which
			// flag nothing.
			if d := test.Delta; !(d >= 0 && d < 1) {
				for _, simultaneous := range []bool{false, true} {
					u := Test{Alpha: 0.05, Delta: d, Simultaneous: simultaneous}
					for i, p := range u.PValues(c.Cal, []float64{0, 1e9}) {
						if p != 1 {
							t.Errorf("δ = %v (simultaneous %v): PValues[%d] = %v, want 1", d, simultaneous, i, p)
						}
					}
					if r := u.FlaggedRank(c.Cal.N()); r != 0 {
						t.Errorf("δ = %v (simultaneous %v): FlaggedRank = %d, want 0", d, simultaneous, r)
					}
				}
			}
		}()
	}
}

// review50Rows are n random rows of d.
func review50Rows(rng *rand.Rand, n, d int) []float32 {
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// TestReview50MeasureStopsOnCancel checks that Evaluation.Measure stops
// with its context's error while a set's CCS scores run, in each mode,
// within a chunk of inputs of the cancel, and that a score given the
// context is stopped by it (failed at 1c23c4e: Measure scored every ID
// input before it first looked at its context, and a Score took none:
// ccs ood -mode reference, 15 s of silent scoring of 7 451 ID inputs
// against a pool of 500, exited 7.7 s after SIGINT).
func TestReview50MeasureStopsOnCancel(t *testing.T) {
	const d = 8
	rng := rand.New(rand.NewPCG(50, 2))
	s := ballSet(d, 3)
	s.Reference = &conformal.Reference{N: 300, Rows: review50Rows(rng, 300, d)}
	near, err := NewNearest(s, s.Reference.Rows, 5)
	if err != nil {
		t.Fatal(err)
	}
	id := &bundle.Bundle{N: 4000, D: d, Anchors: review50Rows(rng, 4000, d)}
	oodB := &bundle.Bundle{N: 1000, D: d, Anchors: review50Rows(rng, 1000, d)}
	total := id.N + oodB.N
	workers := runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		mode  Mode
		chunk int // the inputs a goroutine may finish after the cancel
	}{
		{Batch, 64 * workers},
		{Reference, 16 * workers},
		{PerInput, 0},
	} {
		t.Run(c.mode.String(), func(t *testing.T) {
			score, err := CCS(s, c.mode, near)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			first, last := 0, 0
			e := Evaluation{ID: id, OOD: []*bundle.Bundle{oodB}, Names: []string{"ood"},
				Progress: func(done, _ int) {
					if done > 0 && first == 0 {
						first = done
						cancel() // Ctrl-C after the first chunk
					}
					last = done
				}}
			_, err = e.Measure(ctx, score, nil)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%v: Measure cancelled while scoring: err = %v, want context.Canceled", c.mode, err)
			}
			if first == 0 {
				t.Fatalf("%v: no progress reported", c.mode)
			}
			if last > first+c.chunk {
				t.Errorf("%v: %d of %d inputs scored after the context was cancelled at %d, want at most %d more", c.mode, last, total, first, c.chunk)
			}
		})
	}
	t.Run("score that waits", func(t *testing.T) {
		// The reporter's: a 3-second score, the context cancelled at 50 ms.
		e := Evaluation{ID: &bundle.Bundle{N: 4}, OOD: []*bundle.Bundle{{N: 4}}, Names: []string{"ood"}}
		score := func(ctx context.Context, b *bundle.Bundle, _ func(done, total int)) ([]float64, error) {
			select {
			case <-time.After(3 * time.Second): // a long scoring pass, as CCSReference's
				return make([]float64, b.N), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := e.Measure(ctx, score, nil)
		took := time.Since(start)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Measure after cancel: err = %v, want context.Canceled", err)
		}
		if took > time.Second {
			t.Errorf("Measure returned %v after its context was cancelled at 50 ms; want within a second", took.Round(time.Millisecond))
		}
	})
}

// TestReview50MeasureProgress checks that Measure tells its Progress the
// inputs scored, 0 first, then counts that only grow to all of them, and
// that the per-input score, scored a chunk at a time, is Nearest.Scores'
// (failed at 1c23c4e: the CCS rows were scored with no progress, ccs ood's
// first line coming 22.9 s in).
func TestReview50MeasureProgress(t *testing.T) {
	const d = 8
	rng := rand.New(rand.NewPCG(50, 3))
	s := ballSet(d, 3)
	s.Reference = &conformal.Reference{N: 200, Rows: review50Rows(rng, 200, d)}
	near, err := NewNearest(s, s.Reference.Rows, 3)
	if err != nil {
		t.Fatal(err)
	}
	id := &bundle.Bundle{N: 2*scoreChunk + 3, D: d, Anchors: review50Rows(rng, 2*scoreChunk+3, d)}
	oodB := &bundle.Bundle{N: 300, D: d, Anchors: review50Rows(rng, 300, d)}
	for _, m := range []Mode{Batch, Reference, PerInput} {
		score, err := CCS(s, m, near)
		if err != nil {
			t.Fatal(err)
		}
		var heard []int
		e := Evaluation{ID: id, OOD: []*bundle.Bundle{oodB}, Names: []string{"ood"},
			Progress: func(done, total int) {
				if total != id.N+oodB.N {
					t.Errorf("%v: progress total %d, want %d", m, total, id.N+oodB.N)
				}
				heard = append(heard, done)
			}}
		r, err := e.Measure(context.Background(), score, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(heard) < 3 || heard[0] != 0 || heard[len(heard)-1] != id.N+oodB.N || !slices.IsSorted(heard) {
			t.Errorf("%v: progress heard %v, want 0, then growing counts to %d", m, heard, id.N+oodB.N)
		}
		if m == PerInput {
			want, err := near.Scores(id.Anchors)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.ID, want) {
				t.Errorf("per-input scores of %d inputs a chunk at a time differ from Nearest.Scores'", id.N)
			}
		}
	}
}
