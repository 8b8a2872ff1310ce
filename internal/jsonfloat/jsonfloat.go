// Package jsonfloat is the one way ccs writes a float64 that may not be
// finite in JSON, which has no NaN or infinity: NaN (a value not measured)
// as null, ±Inf (a whole-space set's threshold and volume) as the strings
// "+Inf" and "-Inf". Every JSON output of ccs — set files, results, the
// service's answers — uses it.
package jsonfloat

import (
	"encoding/json"
	"fmt"
	"math"
)

// Float is a float64 that writes NaN as null and ±Inf as "+Inf"/"-Inf",
// and reads them back.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	switch v := float64(f); {
	case math.IsNaN(v):
		return []byte("null"), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(float64(f))
}

// UnmarshalJSON implements json.Unmarshaler: a number, null (NaN), or the
// strings "+Inf" and "-Inf".
func (f *Float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*f = Float(math.NaN())
		return nil
	case `"+Inf"`:
		*f = Float(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = Float(math.Inf(-1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("want a number, null, \"+Inf\" or \"-Inf\": %w", err)
	}
	*f = Float(v)
	return nil
}

// Floats converts x to Floats.
func Floats(x []float64) []Float {
	out := make([]Float, len(x))
	for i, v := range x {
		out[i] = Float(v)
	}
	return out
}
