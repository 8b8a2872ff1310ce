package retrieve_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/retrieve"
)

// review51GenBallBatch is a generalized-ball set, a collection and a batch of
// anchors large enough that one block of probes (batchProbeBytes / (512·d)
// = 16 384 anchors at d = 32) takes seconds to prepare.
func review51GenBallBatch(t *testing.T) (*conformal.Set, *retrieve.Collection, []float32) {
	t.Helper()
	const d, n, m = 32, 8192, 20000
	rng := rand.New(rand.NewPCG(4, 4))
	rows, anchors := normalValues(rng, n*d), normalValues(rng, m*d)
	c, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &conformal.Set{Geometry: randomGenBall(t, rng, d), Threshold: 40, Alpha: 0.05, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95}}
	c.PrepareBytes() // the compact copy made beforehand: only the batch itself is timed
	return s, c, anchors
}

// TestReview51BatchStopsWhileItsProbesAreMade checks that a batch
// returns promptly when its context is cancelled while it prepares its
// probes (failed at 2131dd3: a generalized ball's batch made a whole
// block's probes, a byte table an anchor, 16 384 anchors at d = 32, on one
// core without looking at ctx: cancelled 50 ms in, SearchBatch returned
// 4.96 s later and CountBatch 2.8 s, though docs/go.md says a batch
// "returns at once").
func TestReview51BatchStopsWhileItsProbesAreMade(t *testing.T) {
	s, c, anchors := review51GenBallBatch(t)
	for _, name := range []string{"SearchBatch", "CountBatch"} {
		ctx, cancel := context.WithCancel(context.Background())
		var cancelled time.Time
		time.AfterFunc(50*time.Millisecond, func() { cancelled = time.Now(); cancel() })
		var err error
		if name == "SearchBatch" {
			_, _, err = retrieve.SearchBatch(ctx, s, anchors, c, 10, nil)
		} else {
			_, err = retrieve.CountBatch(ctx, s, anchors, c, nil)
		}
		end := time.Now()
		cancel()
		if cancelled.IsZero() {
			t.Fatalf("%s finished in under 50 ms; the test decides nothing", name)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err %v, want context.Canceled", name, err)
		}
		if lat := end.Sub(cancelled); lat > 500*time.Millisecond {
			t.Errorf("%s returned %v after its context was cancelled, want well under a second", name, lat.Round(time.Millisecond))
		}
	}
}
