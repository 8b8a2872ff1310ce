// Package baseline builds the vanilla conformal sets the paper compares
// against (docs/design.md §5): the ℓ2 ball and the Mahalanobis ellipsoid.
//
// The ball has no parameters and is calibrated on the whole calibration
// split. The ellipsoid's Σ must not be estimated on the scores that set its
// threshold: Ellipsoid halves the calibration split at random, Σ the
// covariance of anchor−positive differences on one half (plus a small
// ridge) and the threshold from the other half (the paper's protocol);
// EllipsoidFrom takes Σ from another split (the fit split), which shares no
// row with the calibration split even where positives are other items of
// the split.
package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
)

// covBlock is the fewest differences Covariance centres at a time, and
// covBlockBytes about how many bytes of them (float64) it centres at a
// time where that is more: each block is one parallel call of the rank
// update, and on two vCPUs fewer, larger blocks (4 MB, 4 096 differences
// at d = 128) took BenchmarkCovariance at two threads from 135–188 to
// 102–119 ms (alternating runs), where blocks of 256 made two threads no
// faster than one (164–192 ms).
const (
	covBlock      = 256
	covBlockBytes = 4 << 20
)

// meanBlock is about how many differences Covariance's mean pass makes at
// a time.
const meanBlock = 4096

// DefaultRidge is the ridge added to Σ's diagonal, relative to tr(Σ)/d.
const DefaultRidge = 1e-6

// Options configures the baselines. The zero value is one-per-anchor
// calibration with seed 0 and DefaultRidge.
type Options struct {
	Calibration conformal.Options
	// Ridge is added to Σ's diagonal as Ridge·tr(Σ)/d; 0 means DefaultRidge.
	Ridge float64
	// SplitSeed seeds the halving of the calibration split.
	SplitSeed uint64
	// Shift centres the sets at anchor + the fit split's mean offset of
	// positive − anchor (bundle.MeanOffset, geometry.Shifted): for
	// anchors and positives from two encoders. The ball needs a fit split
	// for it (BallFrom).
	Shift bool
}

// Ball calibrates the ℓ2 ball on cal.
func Ball(cal *bundle.Bundle, alpha float64, opt Options) (*conformal.Set, error) {
	s, err := conformal.Calibrate(geometry.Ball{D: cal.D}, cal, alpha, opt.Calibration)
	if err != nil {
		return nil, err
	}
	s.Fit = &conformal.FitInfo{Method: "none (ℓ2 ball)"}
	return s, nil
}

// BallFrom calibrates on cal the ℓ2 ball centred at anchor + the mean
// offset of fit's positives from their anchors (opt.Shift; without it,
// Ball): fit is a split of other items than cal's, ccs bundle's fit split.
func BallFrom(fit, cal *bundle.Bundle, alpha float64, opt Options) (*conformal.Set, error) {
	if !opt.Shift {
		return Ball(cal, alpha, opt)
	}
	if fit.D != cal.D {
		return nil, fmt.Errorf("baseline: ball: the fit split has dimension %d, the calibration split %d", fit.D, cal.D)
	}
	c, err := bundle.MeanOffset(fit)
	if err != nil {
		return nil, fmt.Errorf("baseline: ball: the shift: %w", err)
	}
	g, err := geometry.NewShifted(geometry.Ball{D: cal.D}, c)
	if err != nil {
		return nil, err
	}
	info := conformal.FitInfo{Method: "none (ℓ2 ball), centred at anchor + the fit split's mean offset of positive − anchor",
		N: fit.N, Splits: map[string]string{"fit": fit.Digest()}, Seen: bundle.NewRowFilter(fit)}
	info.Sources, info.Embeddings = conformal.SourcesOf(fit)
	return conformal.CalibrateFitted(&conformal.Set{Geometry: g, Fit: &info}, cal, alpha, opt.Calibration)
}

// Halves splits cal into the ellipsoid's two halves, seeded by seed: the
// first (⌊n/2⌋ anchors) estimates Σ, the second calibrates the threshold.
func Halves(cal *bundle.Bundle, seed uint64) (fit, calibration *bundle.Bundle, err error) {
	if cal.N < 2 {
		return nil, nil, fmt.Errorf("baseline: ellipsoid: %d calibration anchors cannot be halved", cal.N)
	}
	rng := rand.New(rand.NewPCG(seed, 0x68616c766573)) // "halves"
	parts, err := bundle.SplitIndices(cal.N, rng, cal.N/2, cal.N-cal.N/2)
	if err != nil {
		return nil, nil, err
	}
	return cal.Subset(parts[0]), cal.Subset(parts[1]), nil
}

// ErrSharedRows is returned by Ellipsoid for a calibration bundle whose
// positives index its own anchors: halves of it share rows.
var ErrSharedRows = errors.New("the calibration bundle's positives are other anchors of it (ccs bundle -labels), so its halves share rows: Σ from one half would have seen the rows whose scores set the threshold on the other")

// Ellipsoid halves cal (Halves, seeded by opt.SplitSeed), estimates Σ on
// the first half and calibrates the ellipsoid on the second: the paper's
// protocol, sound where each anchor's positives are rows of its own
// (positives written out, or a pool: views, passages). It refuses, with
// ErrSharedRows, a bundle whose positives index its own anchors (ccs
// bundle -labels): a row of one half is a positive in the other, so Σ has
// seen the rows whose scores set the threshold, which comes out small —
// 93.4% coverage at α = 0.05 at d = 64, 46.8% at d = 768, where Σ of a
// few thousand differences fits them closely (docs/decisions.md).
// EllipsoidFrom with a split of other items (the fit split) has no such
// dependence.
// A cancelled ctx stops Σ's estimate between blocks of differences.
func Ellipsoid(ctx context.Context, cal *bundle.Bundle, alpha float64, opt Options) (*conformal.Set, error) {
	if err := cal.NeedPositives(); err != nil {
		return nil, fmt.Errorf("baseline: ellipsoid: %w", err)
	}
	if cal.PositiveIndex != nil && cal.PositivePool == nil {
		return nil, fmt.Errorf("baseline: ellipsoid: %w", ErrSharedRows)
	}
	fitHalf, calHalf, err := Halves(cal, opt.SplitSeed)
	if err != nil {
		return nil, err
	}
	s, err := EllipsoidFrom(ctx, fitHalf, calHalf, alpha, opt)
	if err != nil {
		return nil, err
	}
	s.Fit.Method = "covariance of anchor−positive differences on half of the calibration split"
	if opt.Shift {
		s.Fit.Method += ", centred at anchor + that half's mean offset of positive − anchor"
	}
	s.Fit.Seed = opt.SplitSeed
	return s, nil
}

// EllipsoidFrom estimates Σ on the anchor−positive differences of fit and
// calibrates the ellipsoid on the whole of cal (FitEllipsoid, then its
// Calibrate). With fit a split of items disjoint from cal's and the test's
// (ccs bundle's fit split), Σ is independent of every score the guarantee
// is about. A cancelled ctx stops Σ's estimate.
func EllipsoidFrom(ctx context.Context, fit, cal *bundle.Bundle, alpha float64, opt Options) (*conformal.Set, error) {
	f, err := FitEllipsoid(ctx, fit, opt)
	if err != nil {
		return nil, err
	}
	return f.Calibrate(cal, alpha, opt)
}

// FittedEllipsoid is an ellipsoid whose Σ was estimated on a fit split, not
// yet calibrated: Σ does not depend on the calibration's seed, so a caller
// calibrating on several seeds (ccs compare) estimates it once.
type FittedEllipsoid struct {
	Geometry *geometry.Ellipsoid
	Info     conformal.FitInfo // how Σ was estimated, for each set's file
	// Shift, when not nil, centres the sets at anchor + Shift
	// (Options.Shift: the fit split's mean offset).
	Shift []float64
}

// FitEllipsoid estimates Σ on the anchor−positive differences of fit (plus
// opt.Ridge, or DefaultRidge, times tr(Σ)/d on the diagonal). A cancelled
// ctx stops it between blocks of differences, with ctx's error.
func FitEllipsoid(ctx context.Context, fit *bundle.Bundle, opt Options) (*FittedEllipsoid, error) {
	if err := fit.NeedPositives(); err != nil {
		return nil, fmt.Errorf("baseline: ellipsoid: Σ: %w", err)
	}
	ridge := opt.Ridge
	if ridge == 0 {
		ridge = DefaultRidge
	}
	sigma, added, err := Covariance(ctx, fit, ridge)
	if err != nil {
		return nil, err
	}
	g, err := geometry.NewEllipsoid(fit.D, sigma)
	if err != nil {
		return nil, fmt.Errorf("baseline: ellipsoid: covariance of %d anchor−positive differences: %w", fit.N*fit.K, err)
	}
	f := &FittedEllipsoid{Geometry: g, Info: conformal.FitInfo{Method: "covariance of anchor−positive differences on the fit split",
		N: fit.N, Differences: fit.N * fit.K, Rank: defined(sigma, fit.D, added), Ridge: added, Splits: map[string]string{"fit": fit.Digest()}, Seen: bundle.NewRowFilter(fit)}}
	f.Info.Sources, f.Info.Embeddings = conformal.SourcesOf(fit)
	if opt.Shift {
		// Σ is a covariance, centred: the same about the shifted centre.
		if f.Shift, err = bundle.MeanOffset(fit); err != nil {
			return nil, fmt.Errorf("baseline: ellipsoid: the shift: %w", err)
		}
		f.Info.Method += ", centred at anchor + its mean offset of positive − anchor"
	}
	return f, nil
}

// defined is the number of directions the data of Σ (with ridge on its
// diagonal) define: the steps of a Cholesky factorisation of Σ − ridge·I
// with diagonal pivoting until no remaining variance exceeds the ridge
// (the ridge's own scale, along which the data add less than it). For Σ
// from differences of few items, O(d·r²) for r directions.
func defined(sigma []float64, d int, ridge float64) int {
	res := make([]float64, d) // the variance each direction has left
	for i := range d {
		res[i] = sigma[i*d+i] - ridge
	}
	var cols [][]float64 // the factor's columns so far
	for len(cols) < d {
		j := 0
		for i, v := range res {
			if v > res[j] {
				j = i
			}
		}
		if !(res[j] > ridge) {
			break
		}
		piv := math.Sqrt(res[j])
		col := make([]float64, d)
		for i := range d {
			v := sigma[i*d+j]
			if i == j {
				v -= ridge
			}
			for _, c := range cols {
				v -= c[i] * c[j]
			}
			col[i] = v / piv
		}
		for i, v := range col {
			res[i] -= v * v
		}
		res[j] = 0
		cols = append(cols, col)
	}
	return len(cols)
}

// Calibrate calibrates the ellipsoid on cal; the set's Fit is a copy of
// f.Info. The geometry is shared, read only, by every set f calibrates.
func (f *FittedEllipsoid) Calibrate(cal *bundle.Bundle, alpha float64, opt Options) (*conformal.Set, error) {
	if d := f.Geometry.Dim(); d != cal.D {
		return nil, fmt.Errorf("baseline: ellipsoid: Σ's split has dimension %d, the calibration split %d", d, cal.D)
	}
	info := f.Info
	var g geometry.Geometry = f.Geometry
	if f.Shift != nil {
		var err error
		if g, err = geometry.NewShifted(f.Geometry, f.Shift); err != nil {
			return nil, err
		}
	}
	return conformal.CalibrateFitted(&conformal.Set{Geometry: g, Fit: &info}, cal, alpha, opt.Calibration)
}

// Covariance is the sample covariance (divisor m−1, numpy.cov's) of all m
// anchor−positive differences of b, with ridge·tr(Σ)/d added to the diagonal;
// it returns Σ (d×d row-major) and the amount added. It needs m ≥ 2.
//
// Each entry Σ_rc sums its m products x_r·x_c in the differences' order,
// as a rank-one update a difference at a time would (floats.AddScaled, the
// same bits): the differences go in blocks of covBlock, centred once a
// block, and Σ's rows are shared out over all cores, 8 at a time, with the
// same sums whatever the number of goroutines. kernel.RankUpdate holds a
// tile of Σ in vector registers while a block's differences stream by: at
// d = 768 and m = 200 000 the rows a vector at a time had taken 26% of ccs
// compare's CPU (at d = 512, 18 s in one goroutine a scalar update a
// product). The differences and their mean are made on all cores too, the
// mean's sums in the same order: serial, they had taken a third of the
// CPU at d = 128. A cancelled ctx stops it between blocks (a scale
// trial's Ctrl-C waited 7.7–13.3 s for Σ of 100 000 × 20 differences of
// d = 256), with ctx's error.
func Covariance(ctx context.Context, b *bundle.Bundle, ridge float64) ([]float64, float64, error) {
	d := b.D
	m := b.N * b.K
	if m < 2 {
		return nil, 0, fmt.Errorf("baseline: covariance: %d anchor−positive differences, need at least 2", m)
	}
	// The mean, each coordinate's sum in the differences' order: blocks of
	// anchors' differences made on all cores, summed a few coordinates a
	// task.
	mean := make([]float64, d)
	pw := b.K * d
	anchors := max(1, meanBlock/b.K)
	diffs := make([]float32, min(b.N, anchors)*pw)
	for i0 := 0; i0 < b.N; i0 += anchors {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		i1 := min(b.N, i0+anchors)
		parallel.For(i1-i0, 16, 0, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				b.PositiveDiffs(diffs[i*pw:(i+1)*pw], i0+i)
			}
		})
		rows := (i1 - i0) * b.K
		parallel.For(d, 16, 0, func(_, lo, hi int) {
			acc := mean[lo:hi]
			for r := range rows {
				for j, v := range diffs[r*d+lo : r*d+hi] {
					acc[j] += float64(v)
				}
			}
		})
	}
	for j := range mean {
		mean[j] /= float64(m)
	}
	sigma := make([]float64, d*d)
	// A block of centred differences, whole anchors at a time, made on
	// all cores.
	anchors = max(1, max(covBlock, covBlockBytes/(8*d))/b.K)
	x := make([]float64, min(b.N, anchors)*pw)
	if len(diffs) < len(x) {
		diffs = make([]float32, len(x))
	}
	for i0 := 0; i0 < b.N; i0 += anchors {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		i1 := min(b.N, i0+anchors)
		parallel.For(i1-i0, 1, 0, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				b.PositiveDiffs(diffs[i*pw:(i+1)*pw], i0+i)
				for r := i * b.K; r < (i+1)*b.K; r++ {
					xr := x[r*d : (r+1)*d]
					for j, v := range diffs[r*d : (r+1)*d] {
						xr[j] = float64(v) - mean[j]
					}
				}
			}
		})
		rows := (i1 - i0) * b.K
		parallel.For(d, 8, 0, func(_, lo, hi int) { kernel.RankUpdate(sigma, x[:rows*d], rows, d, lo, hi) })
	}
	var trace float64
	for r := range d {
		for c := 0; c <= r; c++ {
			sigma[r*d+c] /= float64(m - 1)
			sigma[c*d+r] = sigma[r*d+c]
		}
		trace += sigma[r*d+r]
	}
	added := ridge * trace / float64(d)
	for r := range d {
		sigma[r*d+r] += added
	}
	return sigma, added, nil
}
