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
		s := indexSpans(rng, d, 1+rng.IntN(6), 7)
		total := s.Len()
		want := s.Gather(make([]float32, s.Len()))
		count := 0 // the values, counted one by one
		for _, sp := range s {
			count += len(sp)
		}
		if total != count || len(want) != count {
			t.Fatalf("trial %d: Len %d, Gather %d values, want %d", trial, total, len(want), count)
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

// TestSpansBlocks: a cursor's blocks are the rows of the spans gathered,
// W rows a block and what is left in the last, whatever the spans'
// lengths; a block inside one span is that span's own memory, one that
// straddles two is in its own part of pads.
func TestSpansBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 300 {
		d, W := 1+rng.IntN(4), []int{8, 16}[rng.IntN(2)]
		s := indexSpans(rng, d, 1+rng.IntN(8), 3*W)
		total := s.Len()
		want := s.Gather(make([]float32, s.Len()))
		rows := total / d
		c := cursor{s: s}
		var got []float32
		for lo := 0; lo < rows; {
			g := min(rows-lo, (1+rng.IntN(4))*W) // a group's rows
			nb := (g + W - 1) / W
			dst := make([][]float32, nb)
			pads := make([]float32, nb*W*d)
			c.blocks(dst, g, W, d, pads)
			for b, blk := range dst {
				if n := min(W, g-b*W) * d; len(blk) != n {
					t.Fatalf("trial %d: block %d of %d values, want %d", trial, b, len(blk), n)
				}
				inSpan := false // blk is a span's own memory (values are their global index)
				for _, sp := range s {
					if len(sp) == 0 {
						continue
					}
					if off := int(blk[0]) - int(sp[0]); off >= 0 && off+len(blk) <= len(sp) && &sp[off] == &blk[0] {
						inSpan = true
					}
				}
				if !inSpan && &blk[0] != &pads[b*W*d] {
					t.Fatalf("trial %d: block %d is neither in a span nor in its pad", trial, b)
				}
				got = append(got, blk...)
			}
			lo += g
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: blocks %v, want %v", trial, got, want)
		}
	}
}

// indexSpans returns n spans of 0 to maxRows−1 rows of d values each,
// every value its index among all of them.
func indexSpans(rng *rand.Rand, d, n, maxRows int) Spans {
	var s Spans
	total := 0
	for range n {
		sp := make([]float32, rng.IntN(maxRows)*d)
		for i := range sp {
			sp[i] = float32(total + i)
		}
		total += len(sp)
		s = append(s, sp)
	}
	return s
}
