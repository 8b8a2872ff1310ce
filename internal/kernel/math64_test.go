package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	gonumblas "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/floats"
)

// math64Inputs returns values for Log64 and Exp64: random bits of every
// exponent and sign, the special values, and values around the vector
// paths' limits and the scalar code's branches (f1 against √2/2 in the
// logarithm; the rounding of x·log2 e to an integer in the exponential).
func math64Inputs(rng *rand.Rand, exp bool) []float64 {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 2, 0.5, math.Inf(1), math.Inf(-1), math.NaN(),
		math.MaxFloat64, -math.MaxFloat64, 0x1p-1022, math.Nextafter(0x1p-1022, 0), 0x1p-1074,
		math.Sqrt2 / 2, 7.07106781186547524401e-01, math.Nextafter(7.07106781186547524401e-01, 1),
		-708, 709, math.Nextafter(-708, -1000), math.Nextafter(709, 1000), 709.782712893384, 709.79, -745.1, -745.2, -1000, 1000}
	for range 20000 {
		var v float64
		switch rng.IntN(6) {
		case 0: // any bits
			v = math.Float64frombits(rng.Uint64())
		case 1: // near 1 and powers of two
			v = math.Ldexp(1+rng.NormFloat64()*1e-6, rng.IntN(200)-100)
		case 2: // the exponential's range and beyond
			v = (rng.Float64()*2 - 1) * 760
		case 3: // small arguments
			v = rng.NormFloat64() * math.Ldexp(1, -rng.IntN(60))
		case 4: // halves: x·log2 e near k + 1/2
			v = (float64(rng.IntN(2000)-1000) + 0.5) * math.Ln2 * (1 + rng.NormFloat64()*1e-15)
		default: // positive values of every magnitude
			v = math.Ldexp(rng.Float64()+0.5, rng.IntN(2100)-1075)
		}
		xs = append(xs, v)
	}
	if !exp {
		for i, v := range xs {
			if i%2 == 0 {
				xs[i] = math.Abs(v)
			}
		}
	}
	return xs
}

// TestLog64Exp64: at every level, Log64 and Exp64 give math.Log's and
// math.Exp's bits for every input, at lengths around the vector widths;
// and the assembly alone (where the level has it) gives them on the
// values it is for (positive normal finite x; x in [−708, 709]).
func TestLog64Exp64(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		for _, c := range []struct {
			name   string
			f      func(dst, x []float64)
			ref    func(float64) float64
			v      func(dst, x []float64)
			inPath func(float64) bool
		}{
			{"Log64", Log64, math.Log, log64V, func(x float64) bool { return x >= 0x1p-1022 && x <= math.MaxFloat64 }},
			{"Exp64", Exp64, math.Exp, exp64V, func(x float64) bool { return x >= -708 && x <= 709 }},
		} {
			xs := math64Inputs(rng, c.name == "Exp64")
			for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, len(xs)} {
				off := rng.IntN(len(xs) - n + 1)
				x := xs[off : off+n]
				dst := make([]float64, n)
				c.f(dst, x)
				for i, v := range x {
					if want := c.ref(v); math.Float64bits(dst[i]) != math.Float64bits(want) {
						t.Fatalf("%s(%v (%#x)) = %v (%#x), math's %v (%#x)", c.name, v, math.Float64bits(v), dst[i], math.Float64bits(dst[i]), want, math.Float64bits(want))
					}
				}
			}
			if c.v == nil {
				continue
			}
			var x []float64
			for _, v := range xs {
				if c.inPath(v) {
					x = append(x, v)
				}
			}
			x = x[:len(x)-len(x)%8]
			dst := make([]float64, len(x))
			c.v(dst, x)
			for i, v := range x {
				if want := c.ref(v); math.Float64bits(dst[i]) != math.Float64bits(want) {
					t.Fatalf("%s's assembly on %v (%#x) = %v (%#x), math's %v (%#x)", c.name, v, math.Float64bits(v), dst[i], math.Float64bits(dst[i]), want, math.Float64bits(want))
				}
			}
			if len(x) < 10000 {
				t.Errorf("%s: %d values on the assembly's path, want ≥ 10 000", c.name, len(x))
			}
		}
	})
}

// Log64 and Exp64 on 128 values (a d = 128 row's), against the math
// package's functions one value at a time.
func BenchmarkLog64(b *testing.B)     { benchMath64(b, Log64, math.Log) }
func BenchmarkExp64(b *testing.B)     { benchMath64(b, Exp64, math.Exp) }
func BenchmarkMathLog64(b *testing.B) { benchMath64(b, nil, math.Log) }
func BenchmarkMathExp64(b *testing.B) { benchMath64(b, nil, math.Exp) }

func benchMath64(b *testing.B, f func(dst, x []float64), ref func(float64) float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, dst := make([]float64, 128), make([]float64, 128)
	for i := range x {
		x[i] = math.Abs(rng.NormFloat64())
	}
	for b.Loop() {
		if f != nil {
			f(dst, x)
			continue
		}
		for i, v := range x {
			dst[i] = ref(v)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/128, "ns/value")
}

// TestAbsDiv: AbsDiv at every level gives math.Abs(x)/a's bits for the
// inputs of TestLog64Exp64 (NaNs, infinities, subnormals, ±0 among them)
// and divisors of every kind, at lengths around the vector widths, and in
// place.
func TestAbsDiv(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(23, 24))
		xs := math64Inputs(rng, true)
		for _, a := range []float64{1, 3, 0.7, 1e-310, 1e300, math.Inf(1), math.NaN(), 0, math.Copysign(0, -1), -2.5} {
			for _, n := range []int{0, 1, 3, 4, 5, 8, 9, 17, 1000} {
				off := rng.IntN(len(xs) - n + 1)
				x := slices.Clone(xs[off : off+n])
				dst := make([]float64, n)
				AbsDiv(dst, x, a)
				for i, v := range x {
					if want := math.Abs(v) / a; math.Float64bits(dst[i]) != math.Float64bits(want) {
						t.Fatalf("|%v|/%v = %v, want %v", v, a, dst[i], want)
					}
				}
				AbsDiv(x, x, a)
				if !slices.EqualFunc(x, dst, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) }) {
					t.Fatalf("a = %v, n = %d: in place %v, want %v", a, n, x, dst)
				}
			}
		}
	})
}

// TestSolveLower: SolveLower at every vector level gives each row the bits
// of the scalar forward substitution (its doc's loop), for d from 0 to 40
// and 128, on Cholesky-like factors of every scale and on entries with
// subnormal, huge, zero and non-finite values (compared as bits, any NaN
// for a NaN); and it panics on lengths that differ.
func TestSolveLower(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		w := SolveRows()
		if w == 0 {
			return // the portable level has no SolveLower
		}
		rng := rand.New(rand.NewPCG(11, 12))
		special := []float64{0, math.Copysign(0, -1), 5e-324, 1e-310, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
		dims := []int{128}
		for d := range 41 {
			dims = append(dims, d)
		}
		for _, d := range dims {
			for _, wild := range []bool{false, true} {
				l := make([]float64, d*d)
				scale := math.Pow(10, float64(rng.IntN(10)-5))
				for i := range d {
					for j := 0; j <= i; j++ {
						l[i*d+j] = scale * rng.NormFloat64()
					}
					l[i*d+i] = scale * (1 + rng.Float64())
					for j := i + 1; j < d; j++ {
						l[i*d+j] = math.NaN() // above the diagonal: never read
					}
				}
				yt := make([]float64, d*w)
				for i := range yt {
					yt[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
				}
				if wild && d > 0 {
					for range 1 + d/4 {
						yt[rng.IntN(len(yt))] = special[rng.IntN(len(special))]
						i := rng.IntN(d)
						l[i*d+rng.IntN(i+1)] = special[rng.IntN(len(special))]
					}
				}
				want := make([]float64, d*w)
				y := make([]float64, d)
				for r := range w {
					for i := range d {
						s := yt[i*w+r]
						for j := range i {
							s -= float64(l[i*d+j] * y[j])
						}
						y[i] = s / l[i*d+i]
						want[i*w+r] = y[i]
					}
				}
				SolveLower(yt, l, d)
				for k, v := range yt {
					if math.Float64bits(v) != math.Float64bits(want[k]) && !(v != v && want[k] != want[k]) {
						t.Fatalf("d=%d (special values %v): coordinate %d of row %d is %g, want %g", d, wild, k/w, k%w, v, want[k])
					}
				}
			}
		}
		defer func() {
			if recover() == nil {
				t.Error("SolveLower with a short yt did not panic")
			}
		}()
		SolveLower(make([]float64, 3*w-1), make([]float64, 9), 3)
	})
}

// TestRankUpdate: RankUpdate at every level gives every entry on and below
// the diagonal of the rows it is given the bits of floats.AddScaled a row
// x_t at a time, for d from 0 to 40 and 100, row ranges that start and
// end inside the tiles, values of every magnitude with zeros, subnormals
// and non-finite ones (any NaN for a NaN), and leaves the other rows
// alone.
func TestRankUpdate(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		special := []float64{0, math.Copysign(0, -1), 5e-324, 1e-310, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
		dims := []int{100}
		for d := range 41 {
			dims = append(dims, d)
		}
		for _, d := range dims {
			for _, wild := range []bool{false, true} {
				n := 1 + rng.IntN(40)
				x := make([]float64, n*d)
				for i := range x {
					x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(10)-5))
					if wild && rng.IntN(30) == 0 {
						x[i] = special[rng.IntN(len(special))]
					}
				}
				sig := make([]float64, d*d)
				for i := range sig {
					sig[i] = rng.NormFloat64()
				}
				r0, r1 := 0, d // every row, or a random range
				if wild {
					r0 = rng.IntN(d + 1)
					r1 = r0 + rng.IntN(d-r0+1)
				}
				want := slices.Clone(sig)
				for r := r0; r < r1; r++ {
					for i := range n {
						xt := x[i*d : (i+1)*d]
						floats.AddScaled(want[r*d:r*d+r+1], xt[r], xt[:r+1])
					}
				}
				got := slices.Clone(sig)
				RankUpdate(got, x, n, d, r0, r1)
				for r := range d {
					for c := range d {
						k := r*d + c
						if r >= r0 && r < r1 && c > r {
							continue // above the diagonal: unspecified
						}
						if g, w := got[k], want[k]; math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
							t.Fatalf("d=%d, n=%d, rows %d–%d (special values %v): entry (%d, %d) is %g, want %g", d, n, r0, r1, wild, r, c, g, w)
						}
					}
				}
			}
		}
	})
}

// TestTrsmT: TrsmT at every vector level has the bits of gonum's Dtrsm
// (Left, Upper, Trans, NonUnit and Left, Lower, Trans, Unit), for d from 0
// to 40 and 100, on LU-like factors with zero entries (which gonum passes
// over) and, in half the cases, special values in a and in the right-hand
// sides (any NaN for a NaN).
func TestTrsmT(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		w := TrsmCols()
		if w == 0 {
			return // the portable level has no TrsmT
		}
		impl := gonumblas.Implementation{}
		rng := rand.New(rand.NewPCG(15, 16))
		special := []float64{0, math.Copysign(0, -1), 5e-324, 1e-310, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
		dims := []int{100}
		for d := range 41 {
			dims = append(dims, d)
		}
		for _, d := range dims {
			for _, wild := range []bool{false, true} {
				for _, upper := range []bool{true, false} {
					a := make([]float64, d*d)
					for i := range a {
						a[i] = rng.NormFloat64()
						if rng.IntN(6) == 0 {
							a[i] = 0
						}
					}
					for i := range d {
						a[i*d+i] = 1 + rng.Float64()
					}
					yt := make([]float64, d*w)
					for i := range yt {
						yt[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(10)-5))
					}
					if wild && d > 0 {
						for range 1 + d/4 {
							yt[rng.IntN(len(yt))] = special[rng.IntN(len(special))]
							a[rng.IntN(len(a))] = special[rng.IntN(len(special))]
						}
					}
					want := slices.Clone(yt)
					ul, diag := blas.Lower, blas.Unit
					if upper {
						ul, diag = blas.Upper, blas.NonUnit
					}
					if d > 0 {
						impl.Dtrsm(blas.Left, ul, blas.Trans, diag, d, w, 1, a, d, want, w)
					}
					TrsmT(upper, yt, a, d)
					for k, v := range yt {
						if math.Float64bits(v) != math.Float64bits(want[k]) && !(v != v && want[k] != want[k]) {
							t.Fatalf("d=%d, upper %v (special values %v): row %d, column %d is %g, gonum's %g", d, upper, wild, k/w, k%w, v, want[k])
						}
					}
				}
			}
		}
	})
}

// TestGemmSub: GemmSub at every vector level has the bits of gonum's
// Dgemm(NoTrans, NoTrans, …, −1, …, 1, …), for shapes around the tiles'
// edges, strides wider than the rows, A with zero entries (which gonum
// passes over) and, in half the cases, special values (any NaN for a
// NaN); C's values outside m×n untouched.
func TestGemmSub(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 18))
		special := []float64{0, math.Copysign(0, -1), 5e-324, 1e-310, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
		impl := gonumblas.Implementation{}
		for _, m := range []int{0, 1, 3, 4, 5, 8, 9, 17, 70} {
			for _, n := range []int{1, 7, 8, 16, 17, 33, 130} {
				for _, k := range []int{0, 1, 5, 64, 70} {
					wild := rng.IntN(2) == 0
					lda, ldb, ldc := k+2, n+3, n+1
					a, b, c := make([]float64, max(1, m*lda)), make([]float64, max(1, k*ldb)), make([]float64, max(1, m*ldc))
					for _, x := range [][]float64{a, b, c} {
						for i := range x {
							x[i] = rng.NormFloat64()
							if wild && rng.IntN(20) == 0 {
								x[i] = special[rng.IntN(len(special))]
							}
						}
					}
					for i := range a {
						if rng.IntN(6) == 0 {
							a[i] = 0
						}
					}
					want := slices.Clone(c)
					impl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, -1, a, lda, b, ldb, 1, want, ldc)
					if !GemmSub(m, n, k, a, lda, b, ldb, c, ldc) {
						if SolveRows() != 0 {
							t.Fatal("GemmSub refused at a vector level")
						}
						return
					}
					for i, v := range c {
						if math.Float64bits(v) != math.Float64bits(want[i]) && !(v != v && want[i] != want[i]) {
							t.Fatalf("m=%d n=%d k=%d (special values %v): C[%d][%d] = %g, gonum's %g", m, n, k, wild, i/ldc, i%ldc, v, want[i])
						}
					}
				}
			}
		}
	})
}

// TestDotMTRows: DotMTRows gives every row DotMT's bits, at every level,
// for row counts around its group of rows and dimensions around the lanes
// and gonum's block of 64, with zeros, infinities and NaNs.
func TestDotMTRows(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(19, 20))
		for _, d := range []int{1, 4, 8, 9, 16, 63, 64, 65, 130} {
			mt := make([]float64, d*d)
			for i := range mt {
				mt[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
			}
			for _, n := range []int{1, 2, 3, 4, 5, 9} {
				x := make([]float64, n*d)
				for i := range x {
					switch rng.IntN(40) {
					case 0:
						x[i] = 0
					case 1:
						x[i] = math.Inf(-1)
					case 2:
						x[i] = math.NaN()
					default:
						x[i] = rng.NormFloat64() * math.Exp(5*rng.NormFloat64())
					}
				}
				got := make([]float64, n*d)
				done := DotMTRows(got, x, mt, d)
				want := make([]float64, d)
				for i := range n {
					if w := DotMT(want, x[i*d:(i+1)*d], mt); w != done {
						t.Fatalf("d=%d: DotMTRows wrote %d outputs a row, DotMT %d", d, done, w)
					}
					for j := range done {
						if g := got[i*d+j]; math.Float64bits(g) != math.Float64bits(want[j]) {
							t.Fatalf("d=%d, %d rows: row %d, output %d is %v, DotMT's %v", d, n, i, j, g, want[j])
						}
					}
				}
			}
		}
	})
}
