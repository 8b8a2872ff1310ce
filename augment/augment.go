// Package augment makes the augmented views that serve as positives in the
// real-image experiments (paper §5: k augmented views of each anchor image):
// random resized crop, horizontal flip, small rotation and translation, and
// Gaussian noise, on grey-scale images with intensities in [0, 1].
//
// A view is a function of the image and the random source alone: with a
// generator seeded per anchor, the views do not depend on the order or the
// number of goroutines that make them.
package augment

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Params are the augmentations' ranges. The zero value is the identity (no
// augmentation); Default is what ccs embed uses.
type Params struct {
	// Random resized crop: a region of a uniform fraction [ScaleMin,
	// ScaleMax] of the image's area and log-uniform aspect ratio (width /
	// height) in [RatioMin, RatioMax], placed uniformly, resized to the
	// whole image (bilinear). Zero ScaleMin and ScaleMax mean no crop.
	ScaleMin, ScaleMax float64
	RatioMin, RatioMax float64
	// Flip is the probability of a horizontal flip.
	Flip float64
	// Rotate is the largest rotation in degrees (uniform in ±Rotate), and
	// Translate the largest shift as a fraction of the image's side
	// (uniform in ±Translate on each axis).
	Rotate, Translate float64
	// Noise is the standard deviation of the Gaussian noise added to every
	// pixel; the result is clipped to [0, 1].
	Noise float64
}

// Default are the ranges ccs embed uses: crops of 60–100% of the area with
// aspect ratios 3/4–4/3 (torchvision's RandomResizedCrop ratios), a flip
// with probability ½, rotations up to ±15°, shifts up to ±10%, noise σ 0.05.
var Default = Params{ScaleMin: 0.6, ScaleMax: 1, RatioMin: 3.0 / 4, RatioMax: 4.0 / 3, Flip: 0.5, Rotate: 15, Translate: 0.1, Noise: 0.05}

// Validate checks the ranges.
func (p Params) Validate() error {
	crop := p.ScaleMin != 0 || p.ScaleMax != 0
	switch {
	case crop && !(p.ScaleMin > 0 && p.ScaleMin <= p.ScaleMax && p.ScaleMax <= 1):
		return fmt.Errorf("augment: crop scale [%v, %v], want 0 < min ≤ max ≤ 1", p.ScaleMin, p.ScaleMax)
	case crop && !(p.RatioMin > 0 && p.RatioMin <= p.RatioMax):
		return fmt.Errorf("augment: crop ratio [%v, %v], want 0 < min ≤ max", p.RatioMin, p.RatioMax)
	case !(p.Flip >= 0 && p.Flip <= 1):
		return fmt.Errorf("augment: flip probability %v, want 0 ≤ p ≤ 1", p.Flip)
	case !(p.Rotate >= 0 && p.Rotate <= 180):
		return fmt.Errorf("augment: rotation %v°, want 0–180", p.Rotate)
	case !(p.Translate >= 0 && p.Translate <= 1):
		return fmt.Errorf("augment: translation %v, want 0–1", p.Translate)
	case !(p.Noise >= 0) || math.IsInf(p.Noise, 0):
		return fmt.Errorf("augment: noise σ %v, want ≥ 0", p.Noise)
	}
	return nil
}

// View writes one augmented view of src (h×w) into dst (allocated when nil)
// and returns it. The random draws are, in order: crop (scale, ratio, x, y),
// flip, rotation, translation (x, y), then the noise of each pixel.
func View(dst, src []float32, h, w int, p Params, rng *rand.Rand) []float32 {
	if len(src) != h*w {
		panic("ccs/augment: image size mismatch")
	}
	if dst == nil {
		dst = make([]float32, h*w)
	}
	fw, fh := float64(w), float64(h)
	// The crop: the region [x0, x0+cw] × [y0, y0+ch] of the source.
	x0, y0, cw, ch := 0.0, 0.0, fw, fh
	if p.ScaleMax > 0 {
		area := (p.ScaleMin + (p.ScaleMax-p.ScaleMin)*rng.Float64()) * fw * fh
		ratio := math.Exp(math.Log(p.RatioMin) + (math.Log(p.RatioMax)-math.Log(p.RatioMin))*rng.Float64())
		cw = math.Min(fw, math.Sqrt(area*ratio))
		ch = math.Min(fh, math.Sqrt(area/ratio))
		x0 = (fw - cw) * rng.Float64()
		y0 = (fh - ch) * rng.Float64()
	}
	flip := p.Flip > 0 && rng.Float64() < p.Flip
	theta := p.Rotate * math.Pi / 180 * (2*rng.Float64() - 1)
	tx := p.Translate * fw * (2*rng.Float64() - 1)
	ty := p.Translate * fh * (2*rng.Float64() - 1)
	cos, sin := math.Cos(theta), math.Sin(theta)
	cx, cy := fw/2, fh/2
	for v := range h {
		for u := range w {
			// Output pixel centre → undo the shift and rotation about the
			// centre → the flip → the crop's coordinates in the source.
			x, y := float64(u)+0.5-cx-tx, float64(v)+0.5-cy-ty
			x, y = cos*x+sin*y+cx, -sin*x+cos*y+cy
			if flip {
				x = fw - x
			}
			x, y = x0+x*cw/fw, y0+y*ch/fh
			dst[v*w+u] = bilinear(src, h, w, x-0.5, y-0.5)
		}
	}
	if p.Noise > 0 {
		for i, v := range dst {
			dst[i] = float32(math.Min(1, math.Max(0, float64(v)+p.Noise*rng.NormFloat64())))
		}
	}
	return dst
}

// bilinear samples src at pixel coordinates (x, y) (pixel centres at
// integers), with zero (the background) outside the image.
func bilinear(src []float32, h, w int, x, y float64) float32 {
	fx, fy := math.Floor(x), math.Floor(y)
	ax, ay := x-fx, y-fy
	ix, iy := int(fx), int(fy)
	at := func(i, j int) float64 {
		if i < 0 || j < 0 || i >= w || j >= h {
			return 0
		}
		return float64(src[j*w+i])
	}
	v := (1-ay)*((1-ax)*at(ix, iy)+ax*at(ix+1, iy)) + ay*((1-ax)*at(ix, iy+1)+ax*at(ix+1, iy+1))
	return float32(v)
}
