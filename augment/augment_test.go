package augment

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randImage(rng *rand.Rand, h, w int) []float32 {
	x := make([]float32, h*w)
	for i := range x {
		x[i] = float32(rng.Float64())
	}
	return x
}

func TestIdentityAndFlip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	src := randImage(rng, 5, 7)
	if got := View(nil, src, 5, 7, Params{}, rng); !slices.Equal(got, src) {
		t.Errorf("the zero Params changed the image")
	}
	// A full-image crop is the identity too.
	if got := View(nil, src, 5, 7, Params{ScaleMin: 1, ScaleMax: 1, RatioMin: 7.0 / 5, RatioMax: 7.0 / 5}, rng); !near(got, src, 1e-6) {
		t.Errorf("a crop of the whole image changed it")
	}
	got := View(nil, src, 5, 7, Params{Flip: 1}, rng)
	for v := range 5 {
		for u := range 7 {
			if got[v*7+u] != src[v*7+6-u] {
				t.Fatalf("flip: pixel (%d,%d) = %v, want %v", v, u, got[v*7+u], src[v*7+6-u])
			}
		}
	}
}

func near(a, b []float32, tol float64) bool {
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > tol {
			return false
		}
	}
	return true
}

// TestCropZooms: a crop of a quarter of the area, resized, doubles the
// scale: a horizontal ramp's slope doubles.
func TestCropZooms(t *testing.T) {
	t.Parallel()
	const n = 16
	ramp := make([]float32, n*n)
	for v := range n {
		for u := range n {
			ramp[v*n+u] = float32(u) / n
		}
	}
	rng := rand.New(rand.NewPCG(2, 2))
	got := View(nil, ramp, n, n, Params{ScaleMin: 0.25, ScaleMax: 0.25, RatioMin: 1, RatioMax: 1}, rng)
	for v := range n {
		for u := 1; u < n-1; u++ {
			if d := got[v*n+u+1] - got[v*n+u]; math.Abs(float64(d)-0.5/n) > 1e-5 {
				t.Fatalf("crop: slope %v at (%d,%d), want %v", d, v, u, 0.5/n)
			}
		}
	}
}

// TestRotation: rotating a centred disc leaves it (nearly) unchanged, and a
// bar through the centre turns.
func TestRotation(t *testing.T) {
	t.Parallel()
	const n = 28
	disc, bar := make([]float32, n*n), make([]float32, n*n)
	for v := range n {
		for u := range n {
			x, y := float64(u)+0.5-n/2, float64(v)+0.5-n/2
			if x*x+y*y < 64 {
				disc[v*n+u] = 1
			}
			if math.Abs(y) < 1.5 && math.Abs(x) < 10 {
				bar[v*n+u] = 1
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 3))
	p := Params{Rotate: 45}
	got := View(nil, disc, n, n, p, rng)
	var diff float64
	for i := range got {
		diff += math.Abs(float64(got[i] - disc[i]))
	}
	if diff > 20 {
		t.Errorf("rotated disc differs from the disc by %v (of %v)", diff, 64*math.Pi)
	}
	// The bar's mass is kept, its pixels move.
	rot := View(nil, bar, n, n, Params{Rotate: 90}, rand.New(rand.NewPCG(4, 4)))
	var mb, mr, same float64
	for i := range rot {
		mb += float64(bar[i])
		mr += float64(rot[i])
		same += float64(bar[i] * rot[i])
	}
	if math.Abs(mr-mb) > 0.05*mb || same > 0.8*mb {
		t.Errorf("rotated bar: mass %v (was %v), overlap %v", mr, mb, same)
	}
}

func TestNoiseAndDeterminism(t *testing.T) {
	t.Parallel()
	grey := make([]float32, 100*100)
	for i := range grey {
		grey[i] = 0.5
	}
	got := View(nil, grey, 100, 100, Params{Noise: 0.05}, rand.New(rand.NewPCG(5, 5)))
	var s, ss float64
	for _, v := range got {
		d := float64(v) - 0.5
		s += d
		ss += d * d
	}
	n := float64(len(got))
	if mean, sd := s/n, math.Sqrt(ss/n); math.Abs(mean) > 0.002 || math.Abs(sd-0.05) > 0.002 {
		t.Errorf("noise: mean %v, sd %v; want 0 and 0.05", mean, sd)
	}
	src := randImage(rand.New(rand.NewPCG(6, 6)), 28, 28)
	a := View(nil, src, 28, 28, Default, rand.New(rand.NewPCG(7, 7)))
	b := View(nil, src, 28, 28, Default, rand.New(rand.NewPCG(7, 7)))
	c := View(nil, src, 28, 28, Default, rand.New(rand.NewPCG(8, 7)))
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Error("a view is not a function of its random source")
	}
	for _, v := range a {
		if v < 0 || v > 1 {
			t.Fatalf("view intensity %v outside [0, 1]", v)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := Default.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Params{
		{ScaleMin: 0.5, ScaleMax: 1.2, RatioMin: 1, RatioMax: 1},
		{ScaleMin: 0.5, ScaleMax: 1},
		{Flip: 2},
		{Rotate: -1},
		{Translate: 3},
		{Noise: math.NaN()},
	} {
		if p.Validate() == nil {
			t.Errorf("%+v: no error", p)
		}
	}
}
