package kernel

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSpansTake: a cursor's blocks are the rows of the spans gathered, in
// order, whatever the spans' lengths (empty ones included) and the block
// sizes; a block inside one span is that span's own memory.
func TestSpansTake(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for trial := range 200 {
		d := 1 + rng.IntN(5)
		var s Spans
		total := 0
		for range 1 + rng.IntN(6) {
			r := rng.IntN(7) // rows in this span, 0 included
			sp := make([]float32, r*d)
			for i := range sp {
				sp[i] = float32(total + i)
			}
			total += len(sp)
			s = append(s, sp)
		}
		want := s.Gather(make([]float32, s.Len()))
		if s.Len() != total || len(want) != total {
			t.Fatalf("trial %d: Len %d, Gather %d values, want %d", trial, s.Len(), len(want), total)
		}
		c := cursor{s: s}
		var got []float32
		for rows := total / d; rows > 0; {
			n := 1 + rng.IntN(rows)
			buf := make([]float32, n*d)
			b := c.take(n, d, buf)
			if len(b) != n*d {
				t.Fatalf("trial %d: take(%d) gave %d values", trial, n, len(b))
			}
			got = append(got, b...)
			rows -= n
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: blocks %v, want %v", trial, got, want)
		}
	}
	// In one span: no copy.
	s := Spans{make([]float32, 12)}
	c := cursor{s: s}
	if b := c.take(2, 3, nil); &b[0] != &s[0][0] {
		t.Error("a block inside one span was copied")
	}
}
