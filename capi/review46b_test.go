package main

// A review of d0de70e..5138705: each test failed at 5138705 for the
// reason its comment gives.

import (
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestH7FortranConvertedNote: aeebc42's Fortran fast path in decode gives
// the decoder's values but not its Converted note: a Fortran-order
// float32 array says nothing (the decoder: "Fortran order → C order") and
// a float64 one "float64 → float32" alone (the decoder: "float64 →
// float32, Fortran order → C order"), so Bundle.converted (and its
// pickle) lost the order conversion it said at d0de70e.
func TestReview46bFortranConvertedNote(t *testing.T) {
	const rows, cols = 5, 3
	f := make([]float64, rows*cols)
	for i := range f {
		f[i] = float64(i) / 3
	}
	for _, c := range []struct {
		dtype string
		size  int
	}{{"<f4", 4}, {"<f8", 8}} {
		data := encode(f, 'f', c.size, false)
		got, err := decode(rawArray{Name: "x", Data: data, Dtype: c.dtype, Shape: []int{rows, cols}, Fortran: true})
		want, err2 := bundle.DecodeRaw(data, "x", c.dtype, []int{rows, cols}, true)
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if got.Converted != want.Converted {
			t.Errorf("%s Fortran: Converted %q, the decoder's %q", c.dtype, got.Converted, want.Converted)
		}
	}
}
