package kernel

// Spans are rows read where they lie: the rows of Spans[0], then those of
// Spans[1], and so on, each span a whole number of rows. A training batch
// is a few rows of many anchors of a split prepared once; the kernels read
// them in place instead of copying them together first.
type Spans [][]float32

// Len is the number of values in s.
func (s Spans) Len() int {
	n := 0
	for _, sp := range s {
		n += len(sp)
	}
	return n
}

// Gather copies the values of s, in order, into dst (which must hold
// s.Len() values) and returns it.
func (s Spans) Gather(dst []float32) []float32 {
	k := 0
	for _, sp := range s {
		k += copy(dst[k:], sp)
	}
	return dst[:k]
}

// Joined is the values of s in one slice: its only span itself, or a
// gathered copy.
func (s Spans) Joined() []float32 {
	if len(s) == 1 {
		return s[0]
	}
	return s.Gather(make([]float32, s.Len()))
}

// cursor walks spans from the start, a block of rows at a time.
type cursor struct {
	s      Spans
	i, off int // the next value: s[i][off]
}

// take returns the next n rows of d values: a slice of the span they lie
// in, or, when they straddle two or more, a copy in buf (which must hold
// n·d values).
func (c *cursor) take(n, d int, buf []float32) []float32 {
	w := n * d
	for c.i < len(c.s) && c.off == len(c.s[c.i]) {
		c.i, c.off = c.i+1, 0
	}
	if sp := c.s[c.i]; c.off+w <= len(sp) {
		r := sp[c.off : c.off+w]
		c.off += w
		return r
	}
	out := buf[:w]
	for k := 0; k < w; {
		sp := c.s[c.i]
		m := copy(out[k:], sp[c.off:])
		k += m
		if c.off += m; c.off == len(sp) {
			c.i, c.off = c.i+1, 0
		}
	}
	return out
}

// blocks sets dst[b] to the next block of W rows of d values, for each b
// (the last block holds what is left of rows, if fewer): take's, with the
// blocks that lie inside one span sliced in a loop of their own; a block
// that straddles spans is copied into its own part of pads (W·d values a
// block).
func (c *cursor) blocks(dst [][]float32, rows, W, d int, pads []float32) {
	dw := W * d
	for b := 0; b < len(dst); {
		for c.i < len(c.s) && c.off == len(c.s[c.i]) {
			c.i, c.off = c.i+1, 0
		}
		// The whole blocks left in this span, at most those asked for.
		sp := c.s[c.i]
		whole := min((len(sp)-c.off)/dw, len(dst)-b, (rows-b*W)/W)
		for range whole {
			dst[b] = sp[c.off : c.off+dw : c.off+dw]
			c.off += dw
			b++
		}
		if b < len(dst) {
			nr := min(W, rows-b*W)
			dst[b] = c.take(nr, d, pads[b*dw:(b+1)*dw])
			b++
		}
	}
}

// padded copies blk, a last block of fewer rows than pad holds, into pad
// and fills the rest of pad with fill.
func padded(blk, pad []float32, fill float32) []float32 {
	n := copy(pad, blk)
	for j := n; j < len(pad); j++ {
		pad[j] = fill
	}
	return pad
}
