package jsonfloat

import (
	"encoding/json"
	"math"
	"testing"
)

// TestRoundTrip: every value writes as documented and reads back.
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		v    float64
		json string
	}{{1.5, "1.5"}, {0, "0"}, {-2e-300, "-2e-300"}, {math.Inf(1), `"+Inf"`}, {math.Inf(-1), `"-Inf"`}, {math.NaN(), "null"}} {
		b, err := json.Marshal(Float(c.v))
		if err != nil || string(b) != c.json {
			t.Errorf("%v: %s, %v; want %s", c.v, b, err, c.json)
		}
		var f Float
		if err := json.Unmarshal(b, &f); err != nil || !(float64(f) == c.v || math.IsNaN(c.v) && math.IsNaN(float64(f))) {
			t.Errorf("%s: read %v, %v", b, f, err)
		}
	}
	var f Float
	if err := json.Unmarshal([]byte(`"Inf"`), &f); err == nil {
		t.Error(`"Inf" accepted`)
	}
}
