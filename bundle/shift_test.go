package bundle

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMeanOffsetAndShifted: positives drawn at anchor + g + noise give a
// mean offset within the noise's standard error of g; the shifted
// bundle's differences are the original's plus c, for positives and
// negatives given by index into the anchors (labels' bundles) and
// written out, and b itself is unchanged.
func TestMeanOffsetAndShifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n, k, d = 400, 3, 4
	gap := []float64{1, -2, 0.5, 0}
	b := &Bundle{N: n, K: k, D: d, KNeg: 2, Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d),
		NegativeIndex: make([]int64, n*2)}
	for i := range b.Anchors {
		b.Anchors[i] = float32(rng.NormFloat64())
	}
	for i := range n {
		for c := range k {
			for j := range d {
				b.Positives[(i*k+c)*d+j] = b.Anchors[i*d+j] + float32(gap[j]+0.1*rng.NormFloat64())
			}
		}
		b.NegativeIndex[2*i], b.NegativeIndex[2*i+1] = int64((i+1)%n), int64((i+2)%n)
	}
	c, err := MeanOffset(b)
	if err != nil {
		t.Fatal(err)
	}
	for j := range d {
		if se := 0.1 / math.Sqrt(n*k); math.Abs(c[j]-gap[j]) > 5*se {
			t.Errorf("offset[%d] = %v, want %v ± %v", j, c[j], gap[j], 5*se)
		}
	}
	before := slices.Clone(b.Anchors)
	s, err := b.Shifted(c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Anchors, before) || b.Pool != nil {
		t.Fatal("Shifted changed its receiver")
	}
	for i := range n {
		pd, spd := b.PositiveDiffs(nil, i), s.PositiveDiffs(nil, i)
		nd, snd := b.NegativeDiffs(nil, i), s.NegativeDiffs(nil, i)
		for x := range pd {
			if want := pd[x] + float32(c[x%d]); math.Abs(float64(spd[x]-want)) > 1e-5 {
				t.Fatalf("anchor %d: positive difference %v, want %v", i, spd[x], want)
			}
		}
		for x := range nd {
			if want := nd[x] + float32(c[x%d]); math.Abs(float64(snd[x]-want)) > 1e-5 {
				t.Fatalf("anchor %d: negative difference %v, want %v", i, snd[x], want)
			}
		}
	}
	// Positives by index into the anchors (a labels bundle's).
	li := &Bundle{N: n, K: 2, D: d, Anchors: b.Anchors, PositiveIndex: b.NegativeIndex}
	sl, _ := li.Shifted(c)
	for i := range n {
		pd, spd := li.PositiveDiffs(nil, i), sl.PositiveDiffs(nil, i)
		for x := range pd {
			if want := pd[x] + float32(c[x%d]); math.Abs(float64(spd[x]-want)) > 1e-5 {
				t.Fatalf("indexed anchor %d: positive difference %v, want %v", i, spd[x], want)
			}
		}
	}
	if _, err := b.Shifted(c[:2]); err == nil {
		t.Error("a shift of another dimension was taken")
	}
	if _, err := MeanOffset(&Bundle{N: 2, D: 2, Anchors: make([]float32, 4)}); err == nil {
		t.Error("a bundle without positives has a mean offset")
	}
}

// TestOffsetSpread: positives at anchor + g exactly lie ‖g‖ from their
// anchors and 0 from anchor + g; the note says both, and ‖g‖.
func TestOffsetSpread(t *testing.T) {
	b := &Bundle{N: 3, K: 1, D: 2, Anchors: []float32{0, 0, 1, 1, 2, 0}, Positives: []float32{3, 4, 4, 5, 5, 4}}
	from, centre := OffsetSpread(b, []float64{3, 4})
	if from != 5 || centre != 0 {
		t.Errorf("OffsetSpread: %v, %v, want 5, 0", from, centre)
	}
	if got, want := ShiftNote(b, []float64{3, 4}), "‖c‖ = 5; the positives lie 5 from their anchor at the median, 0 from anchor + c"; got != want {
		t.Errorf("ShiftNote: %q, want %q", got, want)
	}
}
