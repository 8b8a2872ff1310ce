package serve

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestUser50JSONUnderflowRefused (failed at 1c23c4e): a JSON coordinate that float32 cannot hold
// because it is too small (1e-50) is flushed to 0 and answered 200, while
// the same endpoint refuses it in an .npy body (422 "body[0][0]":
// "coordinate 1e-50 underflows to zero in float32 … x.astype(np.float32)
// first, if flushing such values to 0 is what you mean"), and the CSV and
// JSON-lines readers refuse it too ("which rounds to 0 in float32").
// Expected: 422 naming points[0][1], as 1e39 is ("not a finite float32").
func TestUser50JSONUnderflowRefused(t *testing.T) {
	spec := bodySpec{fields: fieldAnchor | fieldPoints, dim: 3, maxPoints: 2}
	for _, c := range []struct{ body, field string }{
		{`{"points": [[1, 1e-50, 3]]}`, "points[0][1]"},
		{`{"anchor": [-1e-46, 2, 3], "points": [[1, 2, 3]]}`, "anchor[0]"},
		{`{"points": [[1, 2, 0.000e-400]], "anchor": [1, 2, 3]}`, ""},
		{`{"points": [[1, 2, 1e-400]]}`, "points[0][2]"},
	} {
		got, err := decodeRequest([]byte(c.body), spec)
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: %v; a zero is a zero", c.body, err)
			}
			continue
		}
		e, _ := err.(*apiError)
		if e == nil || e.status != 422 || e.field != c.field || !strings.Contains(e.msg, "float32") {
			t.Errorf("%s: decoded as %+v (err %v); want 422 naming %s: it would be read as 0", c.body, got, err, c.field)
		}
	}
}

// TestUser50OODParamsSpelledOddlyRefused (failed at 1c23c4e): /ood's query parameters are read
// with strconv.ParseFloat after an empty value is taken for "absent":
// ?alpha_ood= (a client's unset template variable) is answered at the
// default 0.05, and Go-only spellings — a hex float 0x1p-4 (answered at
// α_ood 0.0625) and digits split by _ — are numbers, while the JSON
// reader refuses 0x10 and the tables refuse hex floats and 1_000 ("which
// NumPy reads as no number"), and ?alpha_ood=%200.1 is refused.
// Expected: 400 naming the parameter for each.
func TestUser50OODParamsSpelledOddlyRefused(t *testing.T) {
	for _, q := range []string{"alpha_ood=", "alpha_ood=0x1p-4", "delta=0x1p-5", "fdr=0.0_5"} {
		r := httptest.NewRequest("POST", "/v1/sets/s/ood?"+q, nil)
		test, fdr, err := oodParams(r, 1000)
		e, _ := err.(*apiError)
		if e == nil || e.status != 400 {
			t.Errorf("?%s: read as α_ood %v, δ %v, fdr %v (err %v); want 400 naming the parameter", q, test.Alpha, test.Delta, fdr, err)
		}
	}
}
