package main

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/jsonfloat"
	"github.com/ccsets/ccs/retrieve"
)

// TestWriteBatchJSON: a batch's JSON written an anchor at a time is the
// document writeJSON writes at once, byte for byte: with one threshold
// for all anchors, with one each, with labels, keys and empty sets.
func TestWriteBatchJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	a, b := &conformal.Set{Threshold: 0.25}, &conformal.Set{Threshold: 1.5}
	for trial := range 50 {
		results := make([]retrieveResult, 1+r.IntN(5))
		for i := range results {
			hits := []retrieve.Hit{}
			for j := range r.IntN(4) {
				h := retrieve.Hit{ID: int64(r.IntN(100)), Row: j, Score: r.NormFloat64()}
				if r.IntN(3) == 0 {
					h.Key = "<item>&\"" + string(rune('a'+j))
				}
				hits = append(hits, h)
			}
			results[i] = retrieveResult{Anchor: i, Total: len(hits) + r.IntN(2), Hits: hits, set: a}
			results[i].Truncated = len(hits) < results[i].Total
			if trial%2 == 1 && i%2 == 1 {
				results[i].set = b
			}
			if trial%3 == 0 {
				results[i].HitLabels = make(rowLabels, len(hits))
				results[i].Labels = []labelCount{{Label: "x", Count: len(hits)}}
			}
		}
		want := map[string]any{"anchors": results, "summary": summarize(results)}
		var threshold *jsonfloat.Float
		if trial%2 == 0 {
			th := jsonfloat.Float(a.Threshold)
			threshold = &th
			want["threshold"] = th
		} else {
			for i := range results {
				th := jsonfloat.Float(results[i].set.Threshold)
				results[i].Threshold = &th
			}
		}
		var ref, got, stderr bytes.Buffer
		if err := writeJSON(&ref, want); err != nil {
			t.Fatal(err)
		}
		if err := writeBatchJSON(&output{stdout: &got, stderr: &stderr}, results, threshold); err != nil {
			t.Fatal(err)
		}
		if got.String() != ref.String() {
			t.Fatalf("trial %d: got\n%s\nwriteJSON's\n%s", trial, got.String(), ref.String())
		}
		if stderr.Len() > 0 {
			t.Fatalf("trial %d: a moment's batch printed %q", trial, stderr.String())
		}
	}
}
