package fastfloat

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// agree checks each reading of s against strconv's: where a function says
// ok, its value is strconv's bit for bit (Narrow's v on the same side of
// every integer and within 2e-15 of it, relatively). It returns which
// said ok: 1 Float64, 2 Narrow, 4 Float32.
func agree(t testing.TB, s string) (n int) {
	t.Helper()
	want64, err64 := strconv.ParseFloat(s, 64)
	want32, err32 := strconv.ParseFloat(s, 32)
	if v, ok := Float64(s); ok {
		n |= 1
		if err64 != nil || math.Float64bits(v) != math.Float64bits(want64) {
			t.Errorf("Float64(%q) = %v, strconv %v (%v)", s, v, want64, err64)
		}
	}
	if v, x, ok := Narrow(s); ok {
		n |= 2
		switch {
		case err64 != nil:
			t.Errorf("Narrow(%q) read it, strconv refuses: %v", s, err64)
		case math.Float32bits(x) != math.Float32bits(float32(want64)):
			t.Errorf("Narrow(%q) = %v, float32 of strconv's %v", s, x, float32(want64))
		case x != float32(v):
			t.Errorf("Narrow(%q): x %v is not float32(v) of %v", s, x, v)
		case (v == math.Trunc(v)) != (want64 == math.Trunc(want64)):
			t.Errorf("Narrow(%q) = %v, an integer %v; strconv's %v", s, v, v == math.Trunc(v), want64)
		case math.Abs(v-want64) > 2e-15*math.Abs(want64):
			t.Errorf("Narrow(%q) = %v, strconv %v: more than 2e-15 apart", s, v, want64)
		case x == 0 && want64 != 0 || math.IsInf(float64(x), 0):
			t.Errorf("Narrow(%q) = %v: 0 or infinite", s, x)
		}
	}
	if x, ok := Float32(s); ok {
		n |= 4
		if err32 != nil || math.Float32bits(x) != math.Float32bits(float32(want32)) {
			t.Errorf("Float32(%q) = %v, strconv %v (%v)", s, x, float32(want32), err32)
		}
	}
	return n
}

func TestCases(t *testing.T) {
	for _, c := range []struct {
		s           string
		f64, n, f32 bool // which read it
	}{
		{"0", true, true, true},
		{"-0", true, true, true},
		{"-0.0", true, true, true},
		{"1", true, true, true},
		{"+1.5", true, true, true},
		{".5", true, true, true},
		{"5.", true, true, true},
		{"-0.12345678", true, true, true},
		{"1.234567890123456789e-01", false, true, true}, // np.savetxt's %.18e
		{"0.12345678901234568", false, true, true},      // Python's repr of a float64
		{"1e22", true, true, true},
		{"9007199254740993", false, false, true},         // beyond 2^53, an integer: Narrow's v would not be it
		{"123456789012345678901234", false, false, true}, // an integer past 19 digits
		{"1e23", false, false, false},                    // strconv's
		{"1e-23", false, false, false},
		{"1e-400", false, false, false},
		{"1e400", false, false, false},
		{"1.000000059604644775390625", false, false, false}, // 1 + 2^-24, halfway between two float32s
		{"1.0000000596046448", false, false, false},         // just above it: its float64 is it
		{"", false, false, false},
		{"-", false, false, false},
		{".", false, false, false},
		{"e5", false, false, false},
		{"1e", false, false, false},
		{"1e+", false, false, false},
		{"1.5.3", false, false, false},
		{" 1", false, false, false},
		{"1 ", false, false, false},
		{"1,5", false, false, false},
		{"inf", false, false, false},
		{"NaN", false, false, false},
		{"0x1p-2", false, false, false},
		{"1_000", false, false, false},
		{"1e0000000000000000000001", true, true, true},
		{"1e99999999999999999999", false, false, false},
		{"--1", false, false, false},
	} {
		_, ok64 := Float64(c.s)
		_, _, okN := Narrow(c.s)
		_, ok32 := Float32(c.s)
		if ok64 != c.f64 || okN != c.n || ok32 != c.f32 {
			t.Errorf("%q: Float64, Narrow, Float32 read it %v %v %v; want %v %v %v", c.s, ok64, okN, ok32, c.f64, c.n, c.f32)
		}
		agree(t, c.s)
	}
}

// TestAgree reads numbers written the ways tables are written — Python's
// repr of float32s and float64s, NumPy's savetxt, R's 15 digits, fixed
// decimals, integers — and float32 rounding boundaries written to 15–17
// digits (whose float64 is the boundary itself), checking every reading
// against strconv's, and that the common shapes take the fast path.
func TestAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	type shape struct {
		name string
		f    func() string
		min  float64 // the share read fast, at least
	}
	scale := func() float64 { return r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)) }
	shapes := []shape{
		{"float32 repr", func() string { return strconv.FormatFloat(float64(float32(scale())), 'g', -1, 32) }, 0.99},
		{"float64 repr", func() string { return strconv.FormatFloat(scale(), 'g', -1, 64) }, 0.99},
		{"savetxt %.18e", func() string { return strconv.FormatFloat(scale(), 'e', 18, 64) }, 0.99},
		{"R 15 digits", func() string { return strconv.FormatFloat(scale(), 'g', 15, 64) }, 0.99},
		{"%.6f", func() string { return strconv.FormatFloat(r.NormFloat64(), 'f', 6, 64) }, 0.99},
		{"integers", func() string { return strconv.Itoa(r.IntN(1 << 40)) }, 0.99},
		{"midpoints, 15–17 digits", func() string {
			m := math.Float64frombits(math.Float64bits(float64(float32(scale()))) | 1<<28)
			return strconv.FormatFloat(m, 'g', 15+r.IntN(3), 64)
		}, 0},
		{"random digits", func() string {
			var b strings.Builder
			if r.IntN(2) == 0 {
				b.WriteByte('-')
			}
			for range 1 + r.IntN(25) {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
			if r.IntN(2) == 0 {
				b.WriteByte('.')
				for range r.IntN(25) {
					b.WriteByte(byte('0' + r.IntN(10)))
				}
			}
			if r.IntN(3) == 0 {
				b.WriteString("e" + strconv.Itoa(r.IntN(90)-45))
			}
			return b.String()
		}, 0},
		{"tiny and huge", func() string {
			return strconv.FormatFloat(r.NormFloat64()*math.Pow(10, float64(r.IntN(100)-50)), 'g', -1, 64)
		}, 0},
	}
	for _, sh := range shapes {
		const n = 200000
		var read [3]int
		for range n {
			a := agree(t, sh.f())
			for k := range read {
				read[k] += a >> k & 1
			}
		}
		// Float64 reads only what it reads exactly: 16 digits and more, rarely.
		t.Logf("%s: read fast by Float64 %.4f, Narrow %.4f, Float32 %.4f", sh.name, float64(read[0])/n, float64(read[1])/n, float64(read[2])/n)
		if share := float64(min(read[1], read[2])) / n; share < sh.min {
			t.Errorf("%s: %.4f read fast, want ≥ %.2f", sh.name, share, sh.min)
		}
	}
}

func FuzzAgree(f *testing.F) {
	for _, s := range []string{"0", "-0.12345678", "1.234567890123456789e-01", "1.0000000596046448", "9007199254740993", "1e22", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { agree(t, s) })
}

var sink float32

// BenchmarkParse reads 48 numbers as a pandas CSV's row writes them
// (float32 repr) and as NumPy's savetxt does (%.18e), fast and by strconv.
func BenchmarkParse(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name string
		f    func(float64) string
	}{
		{"repr32", func(v float64) string { return strconv.FormatFloat(float64(float32(v)), 'g', -1, 32) }},
		{"savetxt", func(v float64) string { return strconv.FormatFloat(v, 'e', 18, 64) }},
	} {
		var s []string
		for range 48 {
			s = append(s, c.f(r.NormFloat64()))
		}
		b.Run(c.name+"/strconv", func(b *testing.B) {
			for b.Loop() {
				for _, f := range s {
					v, _ := strconv.ParseFloat(f, 64)
					sink = float32(v)
				}
			}
		})
		b.Run(c.name+"/Narrow", func(b *testing.B) {
			for b.Loop() {
				for _, f := range s {
					_, sink, _ = Narrow(f)
				}
			}
		})
	}
}
