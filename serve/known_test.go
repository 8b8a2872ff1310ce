package serve

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ccsets/ccs/ood"
)

// TestKnownPoints: /ood's warning names the points that are pool rows
// (exact) apart from those matching the calibration inputs' filter (said
// as may be), by index, the first ten and a count of the rest.
func TestKnownPoints(t *testing.T) {
	many := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	for _, c := range []struct {
		pooled, calibrated []int
		m                  int
		want               string
	}{
		{nil, nil, 5, ""},
		{[]int{3}, nil, 5, "point 3 of 5 is a row of the set's reference pool: a pool row's nearest pool row is itself, so it scores 0 (p-value 1), not as a new input would; the drift monitor did not observe it"},
		{nil, []int{2840}, 3000, "point 2840 of 3000 matches the filter of the inputs the OOD test was calibrated on (a filter of their rows, which a new input matches about once in 2 000): if it is one, its score and p-value are not a new input's; the drift monitor did not observe it"},
		{[]int{0, 1}, []int{4}, 5, "points 0, 1 of 5 are rows of the set's reference pool: a pool row's nearest pool row is itself, so it scores 0 (p-value 1), not as a new input would; point 4 of 5 matches the filter of the inputs the OOD test was calibrated on (a filter of their rows, which a new input matches about once in 2 000): if it is one, its score and p-value are not a new input's; the drift monitor did not observe them"},
		{nil, many, 20, "points 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more of 20 match the filter of the inputs the OOD test was calibrated on (a filter of their rows, which a new input matches about once in 2 000): if they are such inputs, their scores and p-values are not a new input's; the drift monitor did not observe them"},
	} {
		if got := ood.KnownWarning(c.pooled, c.calibrated, c.m, true); got != c.want {
			t.Errorf("KnownWarning(%v, %v, %d)\n = %q\nwant %q", c.pooled, c.calibrated, c.m, got, c.want)
		}
		// Python's Set.ood, which has no monitor, says the rest.
		if got, want := ood.KnownWarning(c.pooled, c.calibrated, c.m, false), strings.TrimSuffix(strings.TrimSuffix(c.want, "; the drift monitor did not observe it"), "; the drift monitor did not observe them"); got != want {
			t.Errorf("KnownWarning(…, false) = %q, want %q", got, want)
		}
	}
}

// TestBodyNotJSON: a body that is no JSON by its first bytes is told what
// it is — an .npy sent without its Content-Type, a gzip-compressed one —
// and a Content-Encoding is refused (415) before the body is read.
func TestBodyNotJSON(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	npy := npyBody(t, make([]float32, 6), 2, 3)
	for _, c := range []struct {
		name, ctype, encoding, body string
		status                      int
		want                        string
	}{
		{"npy without its type", "", "", npy, 400, "an .npy body, sent without its Content-Type: send it with Content-Type: application/x-npy"},
		{"npy as form data", "application/x-www-form-urlencoded", "", npy, 400, "Content-Type: application/x-npy"},
		{"gzip bytes", "", "", "\x1f\x8b\x08\x00rest", 400, "a gzip-compressed body: send it uncompressed"},
		{"gzip encoding", "application/json", "gzip", "\x1f\x8b\x08\x00rest", 415, `Content-Encoding \"gzip\": the body must be sent uncompressed`},
		{"identity encoding", "application/json", "identity", `{"anchor": [0, 0, 0], "points": [[0, 0, 0]]}`, 200, ""},
		// An .npy sent as JSON with the query parameters an .npy takes: told
		// of its Content-Type, not of the parameters (a trial's retrieve).
		{"npy as JSON, with ?collection=", "application/json", "", npy, 400, "Content-Type: application/x-npy"},
		{"npy as JSON, with ?label=", "application/json", "", npy, 400, "Content-Type: application/x-npy"},
	} {
		path := "/v1/sets/ball/score"
		switch {
		case strings.Contains(c.name, "?collection="):
			path = "/v1/sets/ball/retrieve?collection=c"
		case strings.Contains(c.name, "?label="):
			path = "/v1/sets/ball/score?label=1"
		}
		req := httptest.NewRequest("POST", path, strings.NewReader(c.body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		if c.encoding != "" {
			req.Header.Set("Content-Encoding", c.encoding)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%s: %d %s, want %d and %q", c.name, rec.Code, rec.Body.String(), c.status, c.want)
		}
	}
}
