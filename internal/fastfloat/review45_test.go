package fastfloat

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestReview45LongDecimals (bde724f, low): the readers promise strconv's
// value bit for bit, but strconv itself misreads two kinds of long decimal
// and fastfloat does not, so they disagree (fastfloat being the one right):
//
//   - more than 800 significant digits before the point: strconv's slow
//     path (internal/strconv decimal.set, 800 digits kept) sets the point at
//     the 800 digits it kept, so "5"+800 zeros+"e-800" (806 bytes) is 0.5 to
//     strconv, 5 to Float32, and "…e-801" 0.05 to strconv, 0.5 to Narrow;
//   - an exponent of 6 digits and more (see below).
//
// Expected, per the package's promise: ok false (left to strconv) where
// strconv would read otherwise — e.g. refuse more than 800 integer digits
// and an exponent of 10000 or more — or the promise reworded.
func TestReview45LongDecimals(t *testing.T) {
	for _, s := range []string{
		"5" + strings.Repeat("0", 800) + "e-800",
		"5" + strings.Repeat("0", 800) + "e-801",
		"-5" + strings.Repeat("0", 800) + ".0e-801",
	} {
		want64, err64 := strconv.ParseFloat(s, 64)
		want32, err32 := strconv.ParseFloat(s, 32)
		if v, ok := Float64(s); ok && (err64 != nil || math.Float64bits(v) != math.Float64bits(want64)) {
			t.Errorf("Float64(%.12q…, %d bytes) = %v; strconv.ParseFloat(s, 64) = %v, %v", s, len(s), v, want64, err64)
		}
		if _, x, ok := Narrow(s); ok && (err64 != nil || x != float32(want64)) {
			t.Errorf("Narrow(%.12q…, %d bytes) x = %v; float32 of strconv's = %v, %v", s, len(s), x, float32(want64), err64)
		}
		if x, ok := Float32(s); ok && (err32 != nil || x != float32(want32)) {
			t.Errorf("Float32(%.12q…, %d bytes) = %v; strconv.ParseFloat(s, 32) = %v, %v", s, len(s), x, float32(want32), err32)
		}
	}
}

// TestReview45ExponentCap (bde724f, low): strconv stops accumulating an exponent's digits
// once it reaches 10000 (readFloat's `if e < 10000`), so "…e100000" is read
// as "…e10000"; decimal's guard (x > 10000, checked before the next digit)
// lets x reach 100000..100009. With a mantissa whose digits move the point
// back by as much (a long but valid decimal), the readers then return a
// different value from strconv's.
func TestReview45ExponentCap(t *testing.T) {
	cases := []string{
		"0." + strings.Repeat("0", 99999) + "5e100000", // strconv: 5e-90000 → 0
		"-0." + strings.Repeat("0", 99999) + "5e100000",
	}
	for _, s := range cases {
		want64, err64 := strconv.ParseFloat(s, 64)
		want32, err32 := strconv.ParseFloat(s, 32)
		if v, ok := Float64(s); ok && (err64 != nil || math.Float64bits(v) != math.Float64bits(want64)) {
			t.Errorf("Float64(%.20q…, %d bytes) = %v; strconv.ParseFloat(s, 64) = %v, %v", s, len(s), v, want64, err64)
		}
		if _, x, ok := Narrow(s); ok && (err64 != nil || x != float32(want64)) {
			t.Errorf("Narrow(%.20q…, %d bytes) x = %v; float32 of strconv's = %v, %v", s, len(s), x, float32(want64), err64)
		}
		if x, ok := Float32(s); ok && (err32 != nil || x != float32(want32)) {
			t.Errorf("Float32(%.20q…, %d bytes) = %v; strconv.ParseFloat(s, 32) = %v, %v", s, len(s), x, float32(want32), err32)
		}
	}
}
