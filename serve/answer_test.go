package serve

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAppendNumber: the streamed answers format numbers as encoding/json
// does (through number's MarshalJSON), over special values and 200 000
// random float64 bit patterns.
func TestAppendNumber(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, -1, 1e-6, 9.99999e-7, 1e21, 9.999999e20, 1e-9, 1.5e-300, math.MaxFloat64,
		math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 0.1, 1.0 / 3, 123456789012345678}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		values = append(values, math.Float64frombits(r.Uint64()))
	}
	for _, f := range values {
		want, err := json.Marshal(number(f))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendNumber(nil, f); string(got) != string(want) {
			t.Fatalf("%v (%#x): %s, encoding/json %s", f, math.Float64bits(f), got, want)
		}
	}
}
