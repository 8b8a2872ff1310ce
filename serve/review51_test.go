package serve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReview51MalformedQueryRefused checks that a query string
// url.ParseQuery cannot read whole — a ';' (Go no longer splits on it) or
// a bad %-escape — is a 400 quoting the query string and saying what is
// wrong, at params and at each reader of a parameter behind it (failed at
// 2131dd3: r.URL.Query() dropped the broken pairs, and ?alpha_ood=0.3; was
// answered at α_ood 0.05, ?fdr=0.2; without Benjamini–Hochberg,
// ?limit=1; with every hit, and ?bogus;=1 was not refused).
func TestReview51MalformedQueryRefused(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	points := `{"points": [[0, 0, 0], [30, 0, 0]]}`
	for _, c := range []struct{ path, ctype, body, want string }{
		{"/v1/sets/ball/ood?alpha_ood=0.3;", "application/json", points, `the query string "alpha_ood=0.3;" cannot be read: invalid semicolon separator in query`},
		{"/v1/sets/ball/ood?alpha_ood=0.3%", "application/json", points, `the query string "alpha_ood=0.3%" cannot be read: invalid URL escape "%"`},
		{"/v1/sets/ball/ood?fdr=0.2;", "application/json", points, `"fdr=0.2;"`},
		{"/v1/sets/ball/ood?alpha_ood=0.3;fdr=0.2", "application/json", points, `"alpha_ood=0.3;fdr=0.2"`},
		{"/v1/sets/ball/score?bogus;=1", "application/json", `{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`, `"bogus;=1"`},
		{"/v1/sets/ball/retrieve?collection=db&limit=1;", "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3), `"collection=db&limit=1;"`},
		{"/v1/sets/ball/retrieve?collection=db&limit=1%zz", "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3), `invalid URL escape "%zz"`},
	} {
		rec := do(t, h, "POST", c.path, c.ctype, c.body)
		var e apiErr
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != http.StatusBadRequest || e.Error.Field != "query" || !strings.Contains(e.Error.Message, c.want) || !strings.Contains(e.Error.Message, "separate parameters with '&'") {
			t.Errorf("%s: %d %s\nwant 400, field query, saying %s and how to send one", c.path, rec.Code, rec.Body, c.want)
		}
	}
	// The readers behind params (which refuses first) take the
	// parameters from the same place, and refuse alike.
	r := httptest.NewRequest("POST", "/v1/sets/ball/ood?alpha_ood=0.3;", nil)
	if _, _, err := oodParams(r, 99); err == nil || !strings.Contains(err.Error(), "semicolon") {
		t.Errorf("oodParams: %v, want the query string refused", err)
	}
	r = httptest.NewRequest("POST", "/v1/sets/ball/retrieve?label=a;", nil)
	if err := npyOnly(r, "limit"); err == nil || !strings.Contains(err.Error(), "semicolon") {
		t.Errorf("npyOnly: %v, want the query string refused", err)
	}
	if _, err := queryLabel(r); err == nil || !strings.Contains(err.Error(), "semicolon") {
		t.Errorf("queryLabel: %v, want the query string refused", err)
	}
}

// TestReview51EscapedSlashPathMessage checks that the 404 for a path with
// a slash sent escaped (%2F, %2f) quotes the path as sent and hints at
// nothing but the path with its slashes as they are (failed at 2131dd3:
// /v1/sets/ball%2Fscore was answered `no endpoint "/v1/sets/ball/score":
// did you mean /v1/sets/ball/ood?`, the decoded path, a valid endpoint,
// quoted as unknown, and another suggested).
func TestReview51EscapedSlashPathMessage(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	for path, want := range map[string]string{
		"/v1/sets/ball%2Fscore": `no endpoint "/v1/sets/ball%2Fscore": a slash sent escaped, %2F, separates no segments of the path, and no set's name holds one: send "/v1/sets/ball/score"`,
		"/v1/sets/ball%2food":   `no endpoint "/v1/sets/ball%2food": a slash sent escaped, %2F, separates no segments of the path, and no set's name holds one: send "/v1/sets/ball/ood"`,
		"/v1/sets/ball%2Fscor":  `no endpoint "/v1/sets/ball%2Fscor": a slash sent escaped, %2F, separates no segments of the path, and no set's name holds one`,
	} {
		rec := do(t, h, "POST", path, "application/json", `{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`)
		var e apiErr
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusNotFound || e.Error.Message != want {
			t.Errorf("%s: %d %s\nwant 404 saying %s", path, rec.Code, rec.Body, want)
		}
	}
}
