package conformal

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// review50Bundle is n anchors of dimension d with k positives each, the
// anchors plus noise.
func review50Bundle(n, k, d int) *bundle.Bundle {
	rng := rand.New(rand.NewPCG(5, 6))
	b := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, d*n), Positives: make([]float32, d*n*k)}
	for i := range b.Anchors {
		b.Anchors[i] = float32(rng.NormFloat64())
	}
	for i := range b.Positives {
		b.Positives[i] = b.Anchors[(i/(k*d))*d+i%d] + float32(rng.NormFloat64())
	}
	return b
}

// TestReview50NewReferenceChecksBundle checks that NewReference refuses,
// with an error naming the array, the hand-built bundles Calibrate refuses
// (failed at 1c23c4e: NewReference checked n against N alone, so an N or
// D saying more rows than Anchors holds panicked, slice bounds out of
// range, and short or non-finite anchors were taken into the pool).
func TestReview50NewReferenceChecksBundle(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(b *bundle.Bundle)
		want  string
	}{
		{"N larger than the anchors", func(b *bundle.Bundle) { b.N = 300 }, "conformal: reference pool bundle: anchors: 800 values, want [300 4] = 1200"},
		{"D larger than the rows", func(b *bundle.Bundle) { b.D = 5 }, "conformal: reference pool bundle: anchors: 800 values, want [200 5] = 1000"},
		{"short anchors", func(b *bundle.Bundle) { b.Anchors = b.Anchors[:len(b.Anchors)-4] }, "conformal: reference pool bundle: anchors: 796 values, want [200 4] = 800"},
		{"an infinite anchor", func(b *bundle.Bundle) { b.Anchors[7] = float32(math.Inf(1)) }, "conformal: reference pool bundle: anchors[1][3] is +Inf"},
		{"short features", func(b *bundle.Bundle) { b.K, b.Positives, b.Anchors = 0, nil, b.Anchors[:len(b.Anchors)-1] }, "conformal: reference pool bundle: anchors: 799 values, want [200 4] = 800"},
	}
	// Anchors alone (features) are a pool all the same.
	f := review50Bundle(200, 3, 4)
	f.K, f.Positives = 0, nil
	if r, err := NewReference(f, 50, 1, "features"); err != nil || r.N != 50 {
		t.Errorf("NewReference of features: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := review50Bundle(200, 3, 4)
			c.spoil(b)
			if _, err := Calibrate(geometry.Ball{D: 4}, b, 0.1, Options{}); err == nil {
				t.Fatalf("Calibrate took it: the case is no bad bundle")
			}
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("NewReference panicked: %v", r)
				}
			}()
			_, err := NewReference(b, 200, 1, CalibrationAnchors)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewReference: %v, want %q", err, c.want)
			}
		})
	}
}
