package serve

// Tests from a first deployment of ccs serve. Each one failed at c3574ff
// for the reason in its comment.

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// h8OODSet writes a d = 3 ball with a per-input OOD test (pool of two
// rows, 99 calibration scores), of one class when class is not nil (what
// ccs calibrate -ood-class writes), calibrated on unit-norm embeddings.
func h8OODSet(t *testing.T, class *conformal.OODClass) string {
	t.Helper()
	cal := make([]float64, 99)
	for i := range cal {
		cal[i] = 0.02 * float64(i+1)
	}
	oc, err := conformal.NewOODCalibration(1, cal, "test")
	if err != nil {
		t.Fatal(err)
	}
	oc.Class = class
	set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 0.5, Alpha: 0.05,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95, UnitNorm: true},
		Reference:   &conformal.Reference{Source: "test", N: 2, Rows: []float32{1, 0, 0, 0, 1, 0}}, OOD: oc}
	path := filepath.Join(t.TempDir(), "set.json")
	if err := set.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestH8OODClassNamed: a set calibrated with -ood-class cat holds the test
// of class "cat" alone (its false-alarm bound is over cat inputs; an
// in-distribution dog sent to it is flagged nearly always: 99.7% in the
// report's deployment). The set file names the class
// (ood_calibration.class), but neither GET /v1/sets (its "ood" has k,
// calibration_n, min_alpha_ood, monitor) nor the /ood answer says which
// class the test is for, and the answer's guarantee reads "an
// in-distribution input is flagged with probability at most 0.05" — untrue
// of every other class's inputs. A client, or the person reading the
// answer, cannot check it routed the input to the right class's set.
func TestUser46OODClassNamed(t *testing.T) {
	path := h8OODSet(t, &conformal.OODClass{Label: 3, Name: "cat"})
	s, err := New(Config{Sets: map[string]string{"cat": path}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	rec := do(t, h, "GET", "/v1/sets", "", "")
	var list struct {
		Sets []struct {
			Name string         `json:"name"`
			OOD  map[string]any `json:"ood"`
		} `json:"sets"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Sets) != 1 {
		t.Fatalf("GET /v1/sets: %v %s", err, rec.Body)
	}
	if _, ok := list.Sets[0].OOD["class"]; !ok {
		t.Errorf("GET /v1/sets: set cat's \"ood\" does not name its class (the file's ood_calibration.class): %v", list.Sets[0].OOD)
	}
	rec = do(t, h, "POST", "/v1/sets/cat/ood", "application/json", `{"points": [[1, 0, 0]]}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("/ood: %d %s", rec.Code, rec.Body)
	}
	var ans map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
		t.Fatal(err)
	}
	g, _ := ans["guarantee"].(string)
	if _, ok := ans["class"]; !ok && !strings.Contains(g, "cat") {
		t.Errorf("/ood on a per-class test names no class: no \"class\" field and the guarantee %q speaks of every in-distribution input", g)
	}
}

// TestH8OODNormField: /score names the unnormalised point (field
// "points[1]"), as serve.md says every 422 does; /ood on the same set
// answers field "points" and a message about "query 1", so a client that
// maps the field back to its input cannot.
func TestUser46OODNormField(t *testing.T) {
	s, err := New(Config{Sets: map[string]string{"unit": h8OODSet(t, nil)}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	score := do(t, h, "POST", "/v1/sets/unit/score", "application/json", `{"anchor": [1, 0, 0], "points": [[0, 1, 0], [0, 0, 2]]}`)
	if score.Code != http.StatusUnprocessableEntity || !strings.Contains(score.Body.String(), `"field": "points[1]"`) {
		t.Fatalf("/score: %d %s", score.Code, score.Body)
	}
	rec := do(t, h, "POST", "/v1/sets/unit/ood", "application/json", `{"points": [[0, 1, 0], [0, 0, 2]]}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `"field": "points[1]"`) {
		t.Errorf("/ood with point 1 of norm 2: %d %s; want 422 naming field points[1], as /score does", rec.Code, rec.Body)
	}
}

// TestH8LoadTestSaysWhy: serve.md says ccs loadtest whose every request
// failed "exits 1 with that refusal". When every request fails before an
// answer — the server's certificate not trusted (-ca-cert forgotten), or
// nothing listening — LoadTest drops the first error it recorded and says
// only "loadtest: no request completed".
func TestUser46LoadTestSaysWhy(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	_, err := LoadTest(context.Background(), LoadConfig{URL: ts.URL, Body: []byte("{}"), MaxRequests: 4, Duration: 5 * time.Second, Concurrency: 1})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an untrusted certificate: error %v; want one that says the certificate is not trusted (-ca-cert)", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = LoadTest(context.Background(), LoadConfig{URL: "http://" + addr + "/v1/sets", Body: []byte("{}"), MaxRequests: 4, Duration: 5 * time.Second, Concurrency: 1})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("nothing listening: error %v; want one that says the connection was refused", err)
	}
}
