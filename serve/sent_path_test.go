package serve

import (
	"encoding/json"
	"testing"
)

// TestSentPathInMessages checks that a 405 and an unclean path's 400 quote
// the path as the client sent it, escapes and all, as the 404 does (they
// quoted it decoded: GET /v1/sets/b%61ll/score was answered with
// "/v1/sets/ball/score", a path the client never wrote).
func TestSentPathInMessages(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	for _, c := range []struct {
		method, path string
		status       int
		want         string
	}{
		{"GET", "/v1/sets/b%61ll/score", 405, `GET "/v1/sets/b%61ll/score": use POST`},
		{"DELETE", "/v1/sets/b%61ll/ood", 405, `DELETE "/v1/sets/b%61ll/ood": use POST`},
		{"POST", "/v1/sets/b%61ll/./score", 400, `the path "/v1/sets/b%61ll/./score" is not clean (no '.' or '..' segments, no '//'): send "/v1/sets/b%61ll/score"`},
		{"POST", "/v1/sets/b%61ll//score", 400, `the path "/v1/sets/b%61ll//score" is not clean (no '.' or '..' segments, no '//'): send "/v1/sets/b%61ll/score"`},
		{"POST", "/v1/sets/%2E%2E/admin/reload", 400, `the path "/v1/sets/%2E%2E/admin/reload" is not clean once its escapes are decoded ("/v1/sets/../admin/reload"): no '.' or '..' segments, no '//'`},
		{"POST", "/v1/sets/ball%2F%2Fscore", 400, `the path "/v1/sets/ball%2F%2Fscore" is not clean once its escapes are decoded ("/v1/sets/ball//score"): no '.' or '..' segments, no '//'`},
	} {
		rec := do(t, h, c.method, c.path, "application/json", `{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`)
		var e apiErr
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != c.status || e.Error.Message != c.want {
			t.Errorf("%s %s: %d %s\nwant %d saying %s", c.method, c.path, rec.Code, rec.Body, c.status, c.want)
		}
	}
}
