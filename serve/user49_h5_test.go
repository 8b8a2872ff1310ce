package serve

// Tests from h5, a technical writer auditing the docs against the tool.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// TestUser49ScoreAnswerAsEncodingJSON: docs/serve.md says "The answers of
// score and ood are written as they are formatted, byte for byte what
// encoding/json would write" (and stream's comment: "byte for byte as
// writeJSON would write it (indented by two spaces)"). A /score answer
// with warnings (an all-zero anchor, the docs' own curl example) writes
// them with json.Marshal, on one line — "warnings": ["the anchor is all
// zeros: …"] — where every other field, and /retrieve's warnings, are
// indented: a client diffing answers, or a test comparing them with
// encoding/json's, sees the difference.
func TestUser49ScoreAnswerAsEncodingJSON(t *testing.T) {
	s, _ := fixture(t)
	defer s.Close()
	rec := do(t, s.Handler(), "POST", "/v1/sets/ball/score", "application/json", `{"anchor": [0, 0, 0], "points": [[1, 0, 0], [0, 2, 0]]}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("/score: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.Bytes()
	var want bytes.Buffer
	if err := json.Indent(&want, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(body), bytes.TrimSpace(want.Bytes())) {
		t.Errorf("the /score answer is not what encoding/json writes (indented by two spaces):\n%s\nwant:\n%s", body, want.Bytes())
	}
}
