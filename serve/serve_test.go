package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	stdlog "log"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/retrieve"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture writes two sets and a collection (d = 3) and returns a server
// over them and the set file paths.
func fixture(t testing.TB) (*Server, map[string]string) {
	t.Helper()
	cfg := fixtureConfig(t)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, cfg.Sets
}

// fixtureConfig writes fixture's files and returns its configuration.
func fixtureConfig(t testing.TB) Config {
	t.Helper()
	dir := t.TempDir()
	info := conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95}
	cal := make([]float64, 99) // the per-input score on held-out inputs: 0.02 … 1.98
	for i := range cal {
		cal[i] = 0.02 * float64(i+1)
	}
	oodCal, err := conformal.NewOODCalibration(1, cal, "test")
	if err != nil {
		t.Fatal(err)
	}
	ball := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 1.5, Alpha: 0.05, Calibration: info,
		Reference: &conformal.Reference{Source: "test", N: 2, Rows: []float32{0, 0, 0, 3, 0, 4}}, OOD: oodCal}
	gb, err := geometry.NewGenBall([]float64{1, 2, 0.5}, []float64{2, 1, 3})
	if err != nil {
		t.Fatal(err)
	}
	gen := &conformal.Set{Geometry: gb, Threshold: 2, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.Pooled, N: 99, Rank: 90}}
	paths := map[string]string{"ball": filepath.Join(dir, "ball.json"), "gen": filepath.Join(dir, "gen.json")}
	for name, s := range map[string]*conformal.Set{"ball": ball, "gen": gen} {
		if err := s.Save(paths[name]); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "db.npz")
	rows := []float32{0, 0, 0, 1, 0, 0, 0, 2, 0, 0.5, 0.5, 0.5, 5, 5, 5, -1, 0, 0.2}
	if err := bundle.WriteNPZ(db, map[string]bundle.Array{"embeddings": bundle.Float32(rows, 6, 3),
		"ids": bundle.Int64([]int64{10, 11, 12, 13, 14, 15}, 6)}); err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(dir, "wrong.npz")
	if err := bundle.WriteNPZ(wrong, map[string]bundle.Array{"embeddings": bundle.Float32(make([]float32, 4), 2, 2)}); err != nil {
		t.Fatal(err)
	}
	return Config{Sets: paths, Collections: map[string]string{"db": db, "flat": wrong}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 4}
}

func do(t testing.TB, h http.Handler, method, path, ctype, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// metric reads a series' value from /metrics (sending a read token, which
// a server without tokens ignores); 0 for a series not there yet.
func metric(t *testing.T, s *Server, series string) float64 {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+readToken)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from testdata/%s.json:\n%s", name, name, got)
	}
}

// TestEndpoints: each endpoint's answer, as golden JSON (an all-zero
// anchor's with its warning).
func TestEndpoints(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	for _, c := range []struct {
		name, method, path, body string
	}{
		{"sets", "GET", "/v1/sets", ""},
		{"score", "POST", "/v1/sets/ball/score", `{"anchor": [0, 0, 0], "points": [[1, 0, 0], [0, 2, 0], [1, 1, 1]]}`},
		{"score-gen", "POST", "/v1/sets/gen/score", `{"anchor": [0, 0, 0], "points": [[1, 0.5, 0], [0, 2, 0]]}`},
		{"ood", "POST", "/v1/sets/ball/ood", `{"points": [[0, 0, 0], [3, 0, 4.6], [30, 0, 0]]}`},
		{"ood-fdr", "POST", "/v1/sets/ball/ood?alpha_ood=0.1&fdr=0.2", `{"points": [[0, 0, 0], [3, 0, 4.6], [30, 0, 0], [0, 20, 0]]}`},
		// δ > 0: the p-values are adjusted; BH's marginal ones beside them.
		{"ood-fdr-delta", "POST", "/v1/sets/ball/ood?alpha_ood=0.1&delta=0.1&fdr=0.2", `{"points": [[0, 0, 0], [3, 0, 4.6], [30, 0, 0], [0, 20, 0]]}`},
		{"ood-reset", "POST", "/v1/sets/ball/ood/monitor/reset", ""},
		{"ood-reset", "POST", "/v1/sets/ball/ood/monitor/reset", " {}\n"}, // what a client sends for a POST of nothing
		{"ood-reset", "POST", "/v1/sets/ball/ood/monitor/reset", "null"},
		{"retrieve", "POST", "/v1/sets/ball/retrieve", `{"anchor": [0, 0, 0], "collection": "db"}`},
		{"retrieve-limit", "POST", "/v1/sets/ball/retrieve", `{"anchor": [0, 0, 0], "collection": "db", "limit": 2}`},
		// An anchor off the origin: no warning of an all-zero anchor.
		{"retrieve-anchor", "POST", "/v1/sets/ball/retrieve", `{"anchor": [0.5, 0, 0], "collection": "db"}`},
		{"score-anchor", "POST", "/v1/sets/ball/score", `{"anchor": [0, 0, 0.5], "points": [[1, 0, 0], [0, 2, 0]]}`},
		{"healthz", "GET", "/healthz", ""},
		{"readyz", "GET", "/readyz", ""},
	} {
		rec := do(t, h, c.method, c.path, "", c.body)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: status %d, type %q: %s", c.name, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		golden(t, c.name, rec.Body.Bytes())
	}
}

// npyBody encodes rows (m×3) as a float32 .npy stream.
func npyBody(t testing.TB, rows []float32, shape ...int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.npy")
	if err := bundle.WriteNPY(path, bundle.Float32(rows, shape...)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNPYBodies: a .npy body gives the same answer as the same points in
// JSON.
func TestNPYBodies(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	for _, c := range []struct {
		path, json, npy string
	}{
		{"/v1/sets/ball/score", `{"anchor": [0, 0, 0], "points": [[1, 0, 0], [0, 2, 0], [1, 1, 1]]}`,
			npyBody(t, []float32{0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 1, 1}, 4, 3)},
		{"/v1/sets/ball/ood", `{"points": [[0, 0, 0], [3, 0, 4]]}`, npyBody(t, []float32{0, 0, 0, 3, 0, 4}, 2, 3)},
		{"/v1/sets/ball/retrieve?collection=db&limit=2", `{"anchor": [0, 0, 0], "collection": "db", "limit": 2}`, npyBody(t, []float32{0, 0, 0}, 3)},
	} {
		path, _, _ := strings.Cut(c.path, "?")
		want := do(t, h, "POST", path, "application/json", c.json)
		got := do(t, h, "POST", c.path, "application/x-npy", c.npy)
		// The OOD monitor has seen the first request's points by the second.
		var w, g map[string]any
		json.Unmarshal(want.Body.Bytes(), &w)
		json.Unmarshal(got.Body.Bytes(), &g)
		delete(w, "monitor")
		delete(g, "monitor")
		if got.Code != 200 || !reflect.DeepEqual(g, w) {
			t.Errorf("%s: .npy answer %d %s, JSON answer %s", c.path, got.Code, got.Body, want.Body)
		}
	}
}

// TestNPYBodyHeaders: a .npy body's header is read as NumPy reads it
// (keys in any order, either quotes, 0x, 1_0, Python 2's 2L), and one
// that lies is a 400 saying what is wrong, never a recovered panic.
func TestNPYBodyHeaders(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	data := string(make([]byte, 4*6)) // (2, 3) float32 zeros
	body := func(version byte, text string) string {
		for (10+len(text)+1)%64 != 0 {
			text += " "
		}
		text += "\n"
		return "\x93NUMPY" + string([]byte{version, 0, byte(len(text)), byte(len(text) >> 8)}) + text + data
	}
	for _, c := range []struct {
		name, body string
		status     int
		message    string
	}{
		{"keys in another order", body(1, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}"), 200, ""},
		{"double quotes, no spaces", body(1, `{"descr":"<f4","fortran_order":False,"shape":(2,3)}`), 200, ""},
		{"Python's integers", body(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0x2, 3L,)}"), 200, ""},
		{"underscores", body(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0_3)}"), 400, "0_3 is not a Python number"},
		{"a shape of strings", body(1, `{'descr': '<f4', 'fortran_order': False, 'shape': (2, "x")}`), 400, `array "body": header: key "shape": (2, "x") is not a tuple of integers`},
		{"version 9", "\x93NUMPY\x09" + body(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}")[7:], 400, `unsupported .npy format version 9.0`},
		{"a header past the end", "\x93NUMPY\x01\x00\x60\xea{'descr': '<f4'", 400, `the header claims 60000 bytes, the file has 15 after its preamble`},
		{"a negative dimension", body(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3)}"), 400, `shape (-2, 3): dimension -2 is negative`},
		// A dtype no embedding is, as an integer one: 422 in the service's
		// words, not the file reader's list offering integers.
		{"complex", body(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1, 3)}"), 422, `.npy body: dtype "<c8": must be floating point (float32, or float64 or float16, converted)`},
		{"integers", body(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3)}"), 422, `.npy body: dtype must be floating point`},
	} {
		rec := do(t, h, "POST", "/v1/sets/ball/ood", "application/x-npy", c.body)
		var e struct{ Error struct{ Message string } }
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != c.status || !strings.Contains(e.Error.Message, c.message) || strings.Contains(rec.Body.String(), "runtime error") {
			t.Errorf("%s: %d %s, want %d %q", c.name, rec.Code, rec.Body, c.status, c.message)
		}
	}
}

// TestErrors: every error path answers its status with a JSON error
// naming the field where there is one.
func TestErrors(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	many := `{"anchor": [0, 0, 0], "points": [` + strings.Repeat("[0, 0, 0], ", 50) + `[0, 0, 0]]}`
	huge := `{"anchor": [0, 0, 0], "points": [[` + strings.Repeat("0, ", 40000) + `0]]}`
	for _, c := range []struct {
		name, method, path, ctype, body string
		status                          int
		code, field                     string
	}{
		{"unknown set", "POST", "/v1/sets/nope/score", "", `{}`, 404, "unknown_set", "name"},
		{"unknown path", "GET", "/v2/things", "", "", 404, "not_found", ""},
		{"unclean path", "POST", "/v1/sets/../admin/reload", "", "", 400, "bad_request", ""}, // not redirected
		{"unclean path, empty segment", "GET", "/v1//sets", "", "", 400, "bad_request", ""},
		{"method", "GET", "/v1/sets/ball/score", "", "", 405, "method_not_allowed", ""},
		{"method sets", "POST", "/v1/sets", "", "", 405, "method_not_allowed", ""},
		{"malformed JSON", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0`, 400, "bad_request", ""},
		{"unknown field", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "pts": []}`, 400, "bad_request", "pts"},
		{"trailing data", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[0, 0, 0]]} {}`, 400, "bad_request", ""},
		{"wrong type", "POST", "/v1/sets/ball/score", "", `{"anchor": "origin", "points": [[0, 0, 0]]}`, 400, "bad_request", "anchor"},
		{"missing anchor", "POST", "/v1/sets/ball/score", "", `{"points": [[0, 0, 0]]}`, 422, "invalid", "anchor"},
		{"anchor dimension", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0], "points": [[0, 0, 0]]}`, 422, "invalid", "anchor"},
		{"point dimension", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[0, 0, 0], [1, 2]]}`, 422, "invalid", "points[1]"},
		{"not float32", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[0, 1e39, 0]]}`, 422, "invalid", "points[0][1]"},
		{"not float64", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[0, 1e999, 0]]}`, 422, "invalid", "points[0][1]"},
		{"no points", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": []}`, 422, "invalid", "points"},
		{"too many points", "POST", "/v1/sets/ball/score", "", many, 413, "too_many_points", "points"},
		{"body too large", "POST", "/v1/sets/ball/score", "", huge, 413, "body_too_large", ""},
		{"media type", "POST", "/v1/sets/ball/score", "text/csv", "0,0,0", 415, "unsupported_media_type", ""},
		{"curl's default type, not JSON", "POST", "/v1/sets/ball/score", "application/x-www-form-urlencoded", "a=1&b=2", 400, "bad_request", ""},
		{"ood anchor", "POST", "/v1/sets/ball/ood", "", `{"anchor": [0, 0, 0], "points": [[0, 0, 0]]}`, 400, "bad_request", "anchor"},
		{"no OOD calibration", "POST", "/v1/sets/gen/ood", "", `{"points": [[0, 0, 0]]}`, 422, "no_ood_calibration", "name"},
		{"no OOD monitor", "POST", "/v1/sets/gen/ood/monitor/reset", "", "", 422, "no_ood_calibration", "name"},
		{"a body to the monitor's reset", "POST", "/v1/sets/ball/ood/monitor/reset", "", `{"points": [[0, 0, 0]]}`, 400, "bad_request", "body"},
		{"a body to the reload", "POST", "/v1/admin/reload", "", `{"set": "ball"}`, 400, "bad_request", "body"},
		{"alpha_ood", "POST", "/v1/sets/ball/ood?alpha_ood=0.001", "", `{"points": [[0, 0, 0]]}`, 422, "invalid", "alpha_ood"},
		{"alpha_ood range", "POST", "/v1/sets/ball/ood?alpha_ood=2", "", `{"points": [[0, 0, 0]]}`, 422, "invalid", "alpha_ood"},
		{"alpha_ood number", "POST", "/v1/sets/ball/ood?alpha_ood=x", "", `{"points": [[0, 0, 0]]}`, 400, "bad_request", "alpha_ood"},
		{"misspelt query parameter", "POST", "/v1/sets/ball/ood?alpha_odd=0.2", "", `{"points": [[0, 0, 0]]}`, 400, "bad_request", "alpha_odd"},
		{"a Python option the service lacks", "POST", "/v1/sets/ball/ood?delta=0.1&simultaneous=true", "", `{"points": [[0, 0, 0]]}`, 400, "bad_request", "simultaneous"},
		{"query parameter of another endpoint", "POST", "/v1/sets/ball/score?limit=3", "", `{"anchor": [0, 0, 0], "points": [[0, 0, 0]]}`, 400, "bad_request", "limit"},
		{"query parameter where none is taken", "GET", "/v1/sets?verbose=1", "", ``, 400, "bad_request", "verbose"},
		{"an .npy body's limit with JSON", "POST", "/v1/sets/ball/retrieve?limit=1", "", `{"anchor": [0, 0, 0], "collection": "db"}`, 400, "bad_request", "limit"},
		{"an .npy body's collection with JSON", "POST", "/v1/sets/ball/retrieve?collection=zzz", "", `{"anchor": [0, 0, 0], "collection": "db"}`, 400, "bad_request", "collection"},
		{"an .npy body's label with JSON", "POST", "/v1/sets/ball/score?label=1", "", `{"anchor": [0, 0, 0], "points": [[0, 0, 0]]}`, 400, "bad_request", "label"},
		{"delta", "POST", "/v1/sets/ball/ood?delta=1", "", `{"points": [[0, 0, 0]]}`, 422, "invalid", "delta"},
		{"delta past the limit", "POST", "/v1/sets/ball/ood?delta=0.9", "", `{"points": [[0, 0, 0]]}`, 422, "invalid", "delta"},
		{"fdr", "POST", "/v1/sets/ball/ood?fdr=1.5", "", `{"points": [[0, 0, 0]]}`, 422, "invalid", "fdr"},
		{"unknown collection", "POST", "/v1/sets/ball/retrieve", "", `{"anchor": [0, 0, 0], "collection": "x"}`, 404, "unknown_collection", "collection"},
		{"collection dimension", "POST", "/v1/sets/ball/retrieve", "", `{"anchor": [0, 0, 0], "collection": "flat"}`, 422, "invalid", "collection"},
		{"missing collection", "POST", "/v1/sets/ball/retrieve", "", `{"anchor": [0, 0, 0]}`, 422, "invalid", "collection"},
		{"limit", "POST", "/v1/sets/ball/retrieve", "", `{"anchor": [0, 0, 0], "collection": "db", "limit": 5}`, 422, "invalid", "limit"},
		{"npy shape", "POST", "/v1/sets/ball/score", "application/x-npy", npyBody(t, make([]float32, 8), 2, 4), 422, "invalid", "body"},
		{"npy anchor only", "POST", "/v1/sets/ball/score", "application/x-npy", npyBody(t, make([]float32, 3), 1, 3), 422, "invalid", "body"},
		{"npy NaN", "POST", "/v1/sets/ball/ood", "application/x-npy", npyBody(t, []float32{0, float32(math.NaN()), 0}, 1, 3), 422, "invalid", "body[0][1]"},
		{"npy int64", "POST", "/v1/sets/ball/ood", "application/x-npy", npyInt(t), 422, "invalid", "body"},
		{"npy garbage", "POST", "/v1/sets/ball/ood", "application/x-npy", "\x93NUMPY garbage", 400, "bad_request", "body"},
		{"npy limit", "POST", "/v1/sets/ball/retrieve?collection=db&limit=x", "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3), 400, "bad_request", "limit"},
		// JavaScript's JSON.stringify writes NaN and ±Infinity as null.
		{"null point coordinate", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[null, null, null], [9, 9, 9]]}`, 422, "invalid", "points[0][0]"},
		{"null anchor coordinate", "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, null], "points": [[9, 9, 9]]}`, 422, "invalid", "anchor[2]"},
		{"null retrieve anchor coordinate", "POST", "/v1/sets/ball/retrieve", "", `{"anchor": [0, null, 0], "collection": "db"}`, 422, "invalid", "anchor[1]"},
		{"null ood coordinate", "POST", "/v1/sets/ball/ood", "", `{"points": [[0, 0, 0], [1, 2, null]]}`, 422, "invalid", "points[1][2]"},
		{"null point", "POST", "/v1/sets/ball/ood", "", `{"points": [[0, 0, 0], null]}`, 422, "invalid", "points[1]"},
		{"null anchor", "POST", "/v1/sets/ball/score", "", `{"anchor": null, "points": [[0, 0, 0]]}`, 422, "invalid", "anchor"},
		{"null points", "POST", "/v1/sets/ball/ood", "", `{"points": null}`, 422, "invalid", "points"},
		{"null retrieve anchor", "POST", "/v1/sets/ball/retrieve", "", `{"anchor": null, "collection": "db"}`, 422, "invalid", "anchor"},
		{"duplicate field", "POST", "/v1/sets/ball/retrieve", "", `{"anchor": [0, 0, 0], "collection": "db", "limit": 1, "limit": 2}`, 400, "bad_request", "limit"},
		{"deep arrays", "POST", "/v1/sets/ball/ood", "", `{"points": [` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `]}`, 400, "bad_request", "points[0][0]"},
		{"too many points, then garbage", "POST", "/v1/sets/ball/score", "", strings.TrimSuffix(many, "]}") + `, [0, 0, 0]] garbage`, 413, "too_many_points", "points"},
		{"ood point dimension", "POST", "/v1/sets/ball/ood", "", `{"points": [[0, 0, 0], [1, 2, 3, 4]]}`, 422, "invalid", "points[1]"},
		{"retrieve anchor dimension", "POST", "/v1/sets/ball/retrieve", "", `{"anchor": [0, 0], "collection": "db"}`, 422, "invalid", "anchor"},
		{"npy ood dimension", "POST", "/v1/sets/ball/ood", "application/x-npy", npyBody(t, make([]float32, 8), 2, 4), 422, "invalid", "body"},
		{"npy retrieve dimension", "POST", "/v1/sets/ball/retrieve?collection=db", "application/x-npy", npyBody(t, make([]float32, 2), 2), 422, "invalid", "body"},
		{"npy retrieve rows", "POST", "/v1/sets/ball/retrieve?collection=db", "application/x-npy", npyBody(t, make([]float32, 6), 2, 3), 422, "invalid", "body"},
		// More rows than a request takes: answered as for as many JSON
		// points (413), not by the values the header announces.
		{"npy too many points", "POST", "/v1/sets/ball/ood", "application/x-npy", npyBody(t, make([]float32, 3*60), 60, 3), 413, "too_many_points", "points"},
		{"npy too many points after the anchor", "POST", "/v1/sets/ball/score", "application/x-npy", npyBody(t, make([]float32, 3*60), 60, 3), 413, "too_many_points", "points"},
		{"npy retrieve, many rows", "POST", "/v1/sets/ball/retrieve?collection=db", "application/x-npy", npyBody(t, make([]float32, 3*60), 60, 3), 422, "invalid", "body"},
		{"npy too many values of another dimension", "POST", "/v1/sets/ball/ood", "application/x-npy", npyBody(t, make([]float32, 4*60), 60, 4), 422, "invalid", "body"},
		{"a query parameter twice", "POST", "/v1/sets/ball/ood?alpha_ood=0.1&alpha_ood=0.2", "", `{"points": [[0, 0, 0]]}`, 400, "bad_request", "alpha_ood"},
		// A query string url.ParseQuery cannot read whole: its broken
		// pairs were dropped and the request answered at the defaults.
		{"a ';' in the query", "POST", "/v1/sets/ball/ood?alpha_ood=0.3;", "", `{"points": [[0, 0, 0]]}`, 400, "bad_request", "query"},
		{"a ';' between parameters", "POST", "/v1/sets/ball/ood?alpha_ood=0.3;fdr=0.2", "", `{"points": [[0, 0, 0]]}`, 400, "bad_request", "query"},
		{"a bad %-escape in the query", "POST", "/v1/sets/ball/ood?alpha_ood=0.3%", "", `{"points": [[0, 0, 0]]}`, 400, "bad_request", "query"},
		{"a ';' in an unknown parameter", "POST", "/v1/sets/ball/score?bogus;=1", "", `{"anchor": [0, 0, 0], "points": [[0, 0, 0]]}`, 400, "bad_request", "query"},
		{"a ';' in an .npy body's limit", "POST", "/v1/sets/ball/retrieve?collection=db&limit=1;", "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3), 400, "bad_request", "query"},
		{"a bad %-escape in an .npy body's limit", "POST", "/v1/sets/ball/retrieve?collection=db&limit=1%zz", "application/x-npy", npyBody(t, []float32{0, 0, 0}, 3), 400, "bad_request", "query"},
		{"a ';' where no parameter is taken", "GET", "/v1/sets?a;b", "", ``, 400, "bad_request", "query"},
	} {
		rec := do(t, h, c.method, c.path, c.ctype, c.body)
		var e struct {
			Error struct{ Code, Message, Field string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Errorf("%s: not a JSON error: %s", c.name, rec.Body)
			continue
		}
		if rec.Code != c.status || e.Error.Code != c.code || e.Error.Field != c.field || e.Error.Message == "" {
			t.Errorf("%s: %d %+v, want %d %s field %q", c.name, rec.Code, e.Error, c.status, c.code, c.field)
		}
	}
	// What the rows' refusals say: the points after the anchor, the rows
	// a retrieval's one anchor cannot be; HEAD on a GET endpoint is GET's
	// status without a body.
	for _, c := range []struct{ path, want string }{
		{"/v1/sets/ball/score", "59 points, at most 50 per request"},
		{"/v1/sets/ball/ood", "60 points, at most 50 per request"},
		{"/v1/sets/ball/retrieve?collection=db", ".npy body: 60 rows, want one anchor: (3,) or (1, 3)"},
	} {
		var e apiErr
		rec := do(t, h, "POST", c.path, "application/x-npy", npyBody(t, make([]float32, 3*60), 60, 3))
		if json.Unmarshal(rec.Body.Bytes(), &e); !strings.HasPrefix(e.Error.Message, c.want) {
			t.Errorf("%s, 60 rows: %q, want %q", c.path, e.Error.Message, c.want)
		}
	}
	// A body of another dimension: a retrieval's says it takes one anchor.
	for _, c := range []struct{ path, want string }{
		{"/v1/sets/ball/ood", ".npy body: shape (4,), want (3,) or (m, 3): the set's dimension is 3"},
		{"/v1/sets/ball/retrieve?collection=db", ".npy body: shape (4,), want one anchor, (3,) or (1, 3): the set's dimension is 3"},
	} {
		var e apiErr
		rec := do(t, h, "POST", c.path, "application/x-npy", npyBody(t, make([]float32, 4), 4))
		if json.Unmarshal(rec.Body.Bytes(), &e); rec.Code != 422 || e.Error.Message != c.want {
			t.Errorf("%s, shape (4,): %d %q, want %q", c.path, rec.Code, e.Error.Message, c.want)
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/v1/sets"} {
		if rec := do(t, h, "HEAD", path, "", ""); rec.Code != 200 {
			t.Errorf("HEAD %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	if rec := do(t, h, "PUT", "/healthz", "", ""); rec.Code != 405 || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("PUT /healthz: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
	// A retrieval without a collection says which there are and where to
	// name one, for a JSON body and an .npy one alike.
	for _, c := range []struct{ ctype, body string }{{"", `{"anchor": [0, 0, 0]}`}, {"application/x-npy", npyBody(t, make([]float32, 3), 3)}} {
		var e apiErr
		rec := do(t, h, "POST", "/v1/sets/ball/retrieve", c.ctype, c.body)
		if json.Unmarshal(rec.Body.Bytes(), &e); rec.Code != 422 || !strings.Contains(e.Error.Message, `missing: name the collection to search, one of [`) || !strings.Contains(e.Error.Message, "?collection=NAME") {
			t.Errorf("no collection (%q): %d %+v", c.ctype, rec.Code, e.Error)
		}
	}
}

// apiErr is an error answer's body.
type apiErr struct {
	Error struct{ Code, Message, Field string }
}

// TestWrongDimension: a body of another dimension than the set's is
// refused on every endpoint, JSON or .npy, with 422 naming the field, the
// shape found and the dimension wanted.
func TestWrongDimension(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	for _, c := range []struct {
		path, ctype, body string
		field, found      string
	}{
		{"/v1/sets/ball/score", "", `{"anchor": [0, 0], "points": [[0, 0, 0]]}`, "anchor", "2 coordinates"},
		{"/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[0, 0, 0, 0]]}`, "points[0]", "has 4 coordinates"},
		{"/v1/sets/ball/ood", "", `{"points": [[0, 0, 0], [0]]}`, "points[1]", "1 coordinates"},
		{"/v1/sets/ball/retrieve", "", `{"anchor": [0, 0, 0, 0, 0], "collection": "db"}`, "anchor", "has 5 coordinates"},
		{"/v1/sets/ball/score", "application/x-npy", npyBody(t, make([]float32, 8), 2, 4), "body", "shape (2, 4)"},
		{"/v1/sets/ball/ood", "application/x-npy", npyBody(t, make([]float32, 4), 4), "body", "shape (4,)"},
		{"/v1/sets/ball/retrieve?collection=db", "application/x-npy", npyBody(t, make([]float32, 2), 1, 2), "body", "shape (1, 2)"},
	} {
		rec := do(t, h, "POST", c.path, c.ctype, c.body)
		var e apiErr
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != 422 || e.Error.Field != c.field || !strings.Contains(e.Error.Message, c.found) || !strings.Contains(e.Error.Message, "dimension is 3") {
			t.Errorf("%s %s: %d %+v, want 422 naming %s, %q and the dimension 3", c.path, c.ctype, rec.Code, e.Error, c.field, c.found)
		}
	}
}

// TestEchoCut: an error message repeats at most 64 bytes of any input
// (a 100 kB number, set name, collection, query value, content type or
// field name), marked as cut.
func TestEchoCut(t *testing.T) {
	cfg := fixtureConfig(t)
	cfg.MaxBody = 1 << 20
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	long := strings.Repeat("7", 100_000)
	for _, c := range []struct{ name, path, ctype, body string }{
		{"number", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[0, ` + long + `, 0]]}`},
		{"number beyond float64", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[0, ` + long + `e999, 0]]}`},
		{"integer", "/v1/sets/ball/retrieve", "", `{"anchor": [0, 0, 0], "collection": "db", "limit": ` + long + `}`},
		{"set", "/v1/sets/" + long + "/score", "", `{}`},
		{"collection", "/v1/sets/ball/retrieve", "", `{"anchor": [0, 0, 0], "collection": "` + long + `"}`},
		{"field", "/v1/sets/ball/retrieve", "", `{"` + long + `": 1}`},
		{"query", "/v1/sets/ball/ood?alpha_ood=" + long, "", `{"points": [[0, 0, 0]]}`},
		{"label", "/v1/sets/ball/score?label=" + long, "application/x-npy", npyBody(t, make([]float32, 6), 2, 3)},
		{"content type", "/v1/sets/ball/score", "text/" + long, "0"},
		{"path", "/v2/" + long, "", ""},
	} {
		rec := do(t, h, "POST", c.path, c.ctype, c.body)
		var e apiErr
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code < 400 {
			t.Errorf("%s: %d %.200s", c.name, rec.Code, rec.Body)
			continue
		}
		if len(e.Error.Message) > 300 || len(e.Error.Field) > 100 || strings.Contains(e.Error.Message, strings.Repeat("7", 65)) {
			t.Errorf("%s: %d, a message of %d bytes and a field of %d: %.300s", c.name, rec.Code, len(e.Error.Message), len(e.Error.Field), e.Error.Message)
		}
	}
}

// TestFlaggedEmpty: ?fdr=Q with no rejection answers "flagged": [], not
// no field.
func TestFlaggedEmpty(t *testing.T) {
	s, _ := fixture(t)
	rec := do(t, s.Handler(), "POST", "/v1/sets/ball/ood?fdr=0.1", "", `{"points": [[0, 0, 0]]}`)
	var v map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if f, ok := v["flagged"].([]any); !ok || len(f) != 0 {
		t.Errorf("flagged = %#v, want []:\n%s", v["flagged"], rec.Body)
	}
}

func npyInt(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "i.npy")
	if err := bundle.WriteNPY(path, bundle.Int64([]int64{1, 2, 3}, 1, 3)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestReload: an invalid new file keeps the old state; a valid one is
// served after Reload.
func TestReload(t *testing.T) {
	s, paths := fixture(t)
	h := s.Handler()
	threshold := func() float64 {
		var r struct{ Threshold float64 }
		json.Unmarshal(do(t, h, "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[0, 0, 0]]}`).Body.Bytes(), &r)
		return r.Threshold
	}
	if err := os.WriteFile(paths["ball"], []byte(`{"format": "ccs-set"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload("test"); err == nil || !strings.Contains(err.Error(), `set "ball"`) {
		t.Errorf("reload of a broken file: %v", err)
	}
	if q := threshold(); q != 1.5 {
		t.Errorf("after a failed reload the threshold is %v, want the old 1.5", q)
	}
	set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 2.5, Alpha: 0.05, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95}}
	if err := set.Save(paths["ball"]); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if q := threshold(); q != 2.5 {
		t.Errorf("after a reload the threshold is %v, want 2.5", q)
	}
	// New's load and both reloads, the failed one too (its garbage and
	// the previous generation), returned their memory to the system.
	if n := s.releases.Load(); n != 3 {
		t.Errorf("memory returned after %d loads, want 3 (New, two reloads)", n)
	}
	s.Drain()
	if rec := do(t, h, "GET", "/readyz", "", ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz while draining: %d", rec.Code)
	}
	metrics := do(t, h, "GET", "/metrics", "", "").Body.String()
	for _, want := range []string{`ccs_requests_total{code="200",endpoint="score"} 2`, `ccs_reloads_total{result="failed"} 1`,
		`ccs_request_duration_seconds_bucket{endpoint="score"`, "go_memstats_heap_alloc_bytes"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestCancelled: a retrieval whose request is cancelled stops and answers
// 499.
func TestCancelled(t *testing.T) {
	s, _ := fixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("POST", "/v1/sets/ball/retrieve", strings.NewReader(`{"anchor": [0, 0, 0], "collection": "db"}`)).WithContext(ctx)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != 499 || !strings.Contains(rec.Body.String(), "cancelled") {
		t.Errorf("cancelled retrieval: %d %s", rec.Code, rec.Body)
	}
}

// TestMemoryBound: the bound docs/security.md states, at its two
// examples.
func TestMemoryBound(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want int64
	}{
		{Config{MaxBody: 4 << 20, BodyMemory: 64 << 20, MaxInflight: 4}, 64<<20 + 2*(64<<20+4*(8*4<<20+128*100_000))},
		{Config{MaxInflight: 4}, 64<<20 + 2*(256<<20+4*(8*32<<20+128*100_000))},
	} {
		if got, err := c.cfg.MemoryBound(); err != nil || got != c.want {
			t.Errorf("%+v: %d %v, want %d", c.cfg, got, err, c.want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	_, paths := fixture(t)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no sets"},
		{Config{Sets: map[string]string{"x": "/nonexistent.json"}}, `set "x"`},
		{Config{Sets: paths, Collections: map[string]string{"db": paths["ball"]}}, `collection "db"`},
		{Config{Sets: paths, MaxPoints: -1}, "limits must be positive"},
		// Names no endpoint's path could reach.
		{Config{Sets: map[string]string{"a/b": paths["ball"]}}, `serve: set name "a/b": want a name that is one segment of a URL path`},
		{Config{Sets: map[string]string{"": paths["ball"]}}, `serve: set name ""`},
		{Config{Sets: map[string]string{"a b": paths["ball"]}}, `serve: set name "a b"`},
		{Config{Sets: paths, Collections: map[string]string{"db?x": paths["ball"]}}, `serve: collection name "db?x"`},
		// Byte budgets that would wrap around int64.
		{Config{Sets: paths, MaxBody: 1 << 62}, "overflows"},
		{Config{Sets: paths, MaxBody: 1 << 40, MaxInflight: 1 << 30}, "overflows"},
		{Config{Sets: paths, MaxBody: 1 << 20, BodyMemory: math.MaxInt64}, "overflows"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// FuzzScoreJSON: no request body makes the score or retrieve endpoint
// panic or answer 500, and every error answer is a JSON error whose
// message and field are short (the body is never echoed whole).
func FuzzScoreJSON(f *testing.F) {
	for _, seed := range append([]string{`{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`, `{"anchor": [1e38, -1e38, 0], "points": [[3, 4, 5], [0, 0, 0]]}`,
		`{"points": []}`, `[]`, `null`, `{"anchor": [0, 0, 0], "points": [[1, 0, 0]]} x`}, decodeSeeds...) {
		f.Add(seed)
	}
	s, _ := fixture(f)
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/sets/ball/score", "/v1/sets/gen/score", "/v1/sets/ball/retrieve"} {
			rec := do(t, h, "POST", path, "", body)
			if rec.Code >= 500 {
				t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
			if rec.Code >= 400 {
				var e apiErr
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Message == "" ||
					len(e.Error.Message) > maxMessage+16 || utf8.RuneCountInString(e.Error.Field) > 2*maxEcho { // an invalid byte is 3 as U+FFFD
					t.Fatalf("%s: %d %.2000s", path, rec.Code, rec.Body)
				}
			}
		}
	})
}

// FuzzScoreNPY: no .npy body makes the endpoints panic or answer 500.
func FuzzScoreNPY(f *testing.F) {
	f.Add(npyBody(f, []float32{0, 0, 0, 1, 0, 0}, 2, 3))
	f.Add(npyBody(f, []float32{0, 0, 0}, 3))
	f.Add(npyInt(f))
	f.Add("\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 3), }")
	// Header forms NumPy reads, and headers that lie (bundle's seeds
	// have them all).
	f.Add("\x93NUMPY\x01\x00\x40\x00{\"shape\":(0x2,3L,),\"fortran_order\":False,\"descr\":'<f4'}        \n" + string(make([]byte, 24)))
	f.Add("\x93NUMPY\x01\x00\x60\xea{'descr': '<f4'")
	f.Add("\x93NUMPY\x09\x00\x3c\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}")
	s, _ := fixture(f)
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/sets/ball/score", "/v1/sets/ball/ood", "/v1/sets/gen/score", "/v1/sets/ball/retrieve?collection=db"} {
			if rec := do(t, h, "POST", path, "application/x-npy", body); rec.Code >= 500 {
				t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
		}
	})
}

// hostileBody is a JSON body of about size bytes: head, then rows
// repeated, then tail.
func hostileBody(size int, head, row, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	for b.Len()+len(row)+len(tail) < size {
		b.WriteString(row)
	}
	return strings.TrimSuffix(b.String(), ",") + tail
}

// TestHostileBodies: bodies built to make the decoder allocate far more
// than they weigh — 4 MiB of empty rows (with and without a null at the
// end), of arrays nested 2 million deep, of rows of one number, one row of
// a million numbers, and more points than the cap — are refused with
// what is wrong, and the whole request (the body read into memory,
// decoded and answered) allocates at most 3 × the body + 1 MiB.
func TestHostileBodies(t *testing.T) {
	cfg := fixtureConfig(t)
	cfg.MaxBody, cfg.MaxPoints = 8<<20, 100_000
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const size = 4 << 20
	for _, c := range []struct {
		name, path, body string
		status           int
		field            string
	}{
		{"empty rows", "/v1/sets/ball/score", hostileBody(size, `{"anchor": [0, 0, 0], "points": [`, "[],", "]}"), 422, "points[0]"},
		{"empty rows then null", "/v1/sets/ball/score", hostileBody(size, `{"anchor": [0, 0, 0], "points": [`, "[],", ", null]}"), 422, "points[0]"},
		{"empty ood rows", "/v1/sets/ball/ood", hostileBody(size, `{"points": [`, "[],", "]}"), 422, "points[0]"},
		{"deep arrays", "/v1/sets/ball/ood", `{"points": ` + strings.Repeat("[", size/2) + strings.Repeat("]", size/2) + `}`, 400, "points[0][0]"},
		{"tiny rows", "/v1/sets/ball/ood", hostileBody(size, `{"points": [`, "[0],", "]}"), 422, "points[0]"},
		{"wide row", "/v1/sets/ball/ood", hostileBody(size, `{"points": [[`, "0,", "]]}"), 422, "points[0]"},
		{"too many points", "/v1/sets/ball/ood", hostileBody(size, `{"points": [`, "[0,0,0],", "]}"), 413, "points"},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rec := do(t, s.Handler(), "POST", c.path, "", c.body)
		runtime.ReadMemStats(&after)
		var e apiErr
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != c.status || e.Error.Field != c.field {
			t.Errorf("%s: %d %.200s, want %d naming %s", c.name, rec.Code, rec.Body, c.status, c.field)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		if limit := 3*uint64(len(c.body)) + 1<<20; alloc > limit {
			t.Errorf("%s: a %d-byte body made the request allocate %d MiB, over %d MiB", c.name, len(c.body), alloc>>20, limit>>20)
		}
		t.Logf("%s: %d bytes: %d %s; %.1f MiB allocated", c.name, len(c.body), rec.Code, e.Error.Field, float64(alloc)/(1<<20))
	}
}

// TestMonitorOverflow: a long drift takes an OOD monitor's martingale past
// the largest float64; it is answered "+Inf" (as thresholds are), not a
// 500 on every /ood request and on GET /v1/sets from then on.
func TestMonitorOverflow(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	var m struct{ Monitor struct{ Martingale, Max any } }
	for i := range 20 { // each point farther than all before: p = θ/(n+1)
		rows := make([]string, 50)
		for j := range rows {
			rows[j] = fmt.Sprintf("[%d, 0, 0]", 30+50*i+j)
		}
		rec := do(t, h, "POST", "/v1/sets/ball/ood", "", `{"points": [`+strings.Join(rows, ", ")+`]}`)
		if rec.Code != 200 {
			t.Fatalf("/ood: %d %s", rec.Code, rec.Body)
		}
		json.Unmarshal(rec.Body.Bytes(), &m)
	}
	if m.Monitor.Martingale != "+Inf" || m.Monitor.Max != "+Inf" {
		t.Errorf("after 1 000 far points the martingale is %v (max %v), want \"+Inf\"", m.Monitor.Martingale, m.Monitor.Max)
	}
	if rec := do(t, h, "GET", "/v1/sets", "", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"martingale": "+Inf"`) {
		t.Errorf("GET /v1/sets after the overflow: %d %.300s", rec.Code, rec.Body)
	}
}

// TestCurlDefaultType: a JSON body sent with curl's default content type
// (curl -d, application/x-www-form-urlencoded) is read as JSON.
func TestCurlDefaultType(t *testing.T) {
	s, _ := fixture(t)
	req := httptest.NewRequest("POST", "/v1/sets/ball/score", strings.NewReader(`{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"inside"`) {
		t.Errorf("%d %s", rec.Code, rec.Body.String())
	}
}

// TestMonitorLimit: a set's OOD monitor observes MonitorLimit points and
// then no more, saying so in every answer and in /metrics, while /ood keeps
// answering each point's test; a reset makes room again.
func TestMonitorLimit(t *testing.T) {
	cfg := fixtureConfig(t)
	cfg.MonitorLimit = 5
	cfg.Metrics = MetricsOpen
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	var m struct {
		Results []any
		Monitor struct {
			N     int
			Limit int
			Full  bool
		}
	}
	for i, want := range []int{3, 5, 5} {
		rec := do(t, h, "POST", "/v1/sets/ball/ood", "", `{"points": [[1, 0, 0], [0, 1, 0], [9, 9, 9]]}`)
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &m) != nil {
			t.Fatalf("/ood: %d %s", rec.Code, rec.Body)
		}
		if len(m.Results) != 3 || m.Monitor.N != want || m.Monitor.Limit != 5 || m.Monitor.Full != (want == 5) {
			t.Errorf("request %d: %d results, monitor %+v; want n %d", i, len(m.Results), m.Monitor, want)
		}
	}
	if rec := do(t, h, "GET", "/metrics", "", ""); !strings.Contains(rec.Body.String(), `ccs_ood_monitor_full{set="ball"} 1`) {
		t.Errorf("/metrics does not say the monitor is full:\n%s", rec.Body)
	}
	rec := do(t, h, "POST", "/v1/sets/ball/ood/monitor/reset", "", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"n": 0`) || strings.Contains(rec.Body.String(), `"full"`) {
		t.Errorf("reset: %d %s", rec.Code, rec.Body)
	}
}

// TestNoHalf: with NoHalf (ccs serve -half-copy=false) the server's
// collections make no compact copy (half-precision or 8-bit), and the hits are those of a
// server with one. (That the default makes the copy at load, not at the
// second search, this does not check: PrepareHalf below would make it.)
func TestNoHalf(t *testing.T) {
	cfg := fixtureConfig(t)
	const n = retrieve.HalfMinRows // the smallest collection with a copy
	rows := make([]float32, 3*n)
	for i := range rows {
		rows[i] = float32(i%7) * 0.25
	}
	big := filepath.Join(t.TempDir(), "big.npz")
	if err := bundle.WriteNPZ(big, map[string]bundle.Array{"embeddings": bundle.Float32(rows, n, 3)}); err != nil {
		t.Fatal(err)
	}
	cfg.Collections = map[string]string{"big": big}
	var answers []string
	for _, noHalf := range []bool{false, true} {
		cfg.NoHalf = noHalf
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// PrepareHalf reports the copy's bytes: none where NoHalf forbids
		// it.
		c := s.state.Load().colls["big"].(retrieve.HalfPreparer)
		if got, want := c.PrepareHalf(), map[bool]int64{false: retrieve.HalfBytes(n, 3), true: 0}[noHalf]; got != want {
			t.Errorf("NoHalf %v: a half-precision copy of %d bytes, want %d", noHalf, got, want)
		}
		if got, want := c.PrepareBytes(), map[bool]int64{false: retrieve.ByteBytes(n, 3), true: 0}[noHalf]; got != want {
			t.Errorf("NoHalf %v: an 8-bit copy of %d bytes, want %d", noHalf, got, want)
		}
		rec := do(t, s.Handler(), "POST", "/v1/sets/ball/retrieve", "application/json", `{"anchor": [0.5, 0.5, 0.5], "collection": "big", "limit": 4}`)
		if rec.Code != 200 {
			t.Fatalf("NoHalf %v: %d %s", noHalf, rec.Code, rec.Body)
		}
		answers = append(answers, rec.Body.String())
	}
	if answers[0] != answers[1] {
		t.Errorf("the hits differ without the copy:\n%s\n%s", answers[0], answers[1])
	}
}

// TestWarnings: a collection of a dimension no set has is warned about at
// load, naming the sets' dimensions; one that a set can search is not.
func TestWarnings(t *testing.T) {
	t.Parallel()
	cfg := fixtureConfig(t)
	var log strings.Builder
	cfg.Logger = stdlog.New(&log, "", 0)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := s.Warnings()
	want := `collection "flat" has dimension 2, and no set has: the sets' dimensions are 3 (ball, gen), so every retrieval from it would be refused`
	if len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want [%q]", w, want)
	}
	// A reload logs them too: the collection "db" replaced by rows of
	// dimension 16.
	if err := bundle.WriteNPZ(cfg.Collections["db"], map[string]bundle.Array{"embeddings": bundle.Float32(make([]float32, 5*16), 5, 16)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); !strings.Contains(got, "reloaded (test): generation 2; OOD monitors kept for \"ball\" (set files unchanged)\nwarning: collection \"db\" has dimension 16, and no set has") {
		t.Errorf("the reload's log:\n%s", got)
	}
	// Three rows of dimension 16: a collection of 16 embeddings of the
	// sets' dimension 3, saved transposed.
	if err := bundle.WriteNPZ(cfg.Collections["db"], map[string]bundle.Array{"embeddings": bundle.Float32(make([]float32, 3*16), 3, 16)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); !strings.Contains(got, "warning: collection \"db\" has dimension 16, and no set has: the sets' dimensions are 3 (ball, gen), so every retrieval from it would be refused (its 3 rows are a set's dimension: transposed? Rows are embeddings: give x.T (np.save(path, x.T) for a file))") {
		t.Errorf("the reload's log:\n%s", got)
	}
	// A set file whose checksum was deleted: named where the service
	// starts and reloads, not only in GET /v1/sets.
	raw, err := os.ReadFile(cfg.Sets["gen"])
	if err != nil {
		t.Fatal(err)
	}
	without := regexp.MustCompile(`,\n  "checksum": "[^"]*"`).ReplaceAll(raw, nil)
	if err := os.WriteFile(cfg.Sets["gen"], without, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); !strings.Contains(got, `warning: set "gen": `+conformal.UncheckedWarning) {
		t.Errorf("a set without its checksum: the reload's log\n%s", got)
	}
}

// TestUnitNormSet: a set calibrated on unit-norm embeddings refuses an
// anchor or point of another norm (422, naming it), in /score and
// /retrieve, and the start-up warnings name a collection file whose rows
// are not of unit norm.
func TestUnitNormSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 0.5, Alpha: 0.1,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90, UnitNorm: true}}
	path := filepath.Join(dir, "unit.json")
	if err := set.Save(path); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "db.npz")
	rows := []float32{1, 0, 0, 0, 1, 0, 0, 0, 0, 0.6, 0.8, 0}
	if err := bundle.WriteNPZ(db, map[string]bundle.Array{"embeddings": bundle.Float32(rows, 4, 3)}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Sets: map[string]string{"unit": path}, Collections: map[string]string{"db": db}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := `collection "db": 1 of its 4 rows is not of unit norm (the first: row 2, norm 0), and set unit was calibrated on unit-norm embeddings`
	if w := s.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], want) {
		t.Errorf("warnings %q, want one starting %q", w, want)
	}
	h := s.Handler()
	for _, c := range []struct {
		name, path, body, field string
	}{
		{"an unnormalised anchor", "/v1/sets/unit/score", `{"anchor": [3, 0, 0], "points": [[1, 0, 0]]}`, "anchor"},
		{"an unnormalised point", "/v1/sets/unit/score", `{"anchor": [1, 0, 0], "points": [[0, 1, 0], [0, 0, 0]]}`, "points[1]"},
		{"an unnormalised query", "/v1/sets/unit/retrieve", `{"anchor": [0, 2, 0], "collection": "db"}`, "anchor"},
	} {
		rec := do(t, h, "POST", c.path, "application/json", c.body)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `"field": "`+c.field+`"`) || !strings.Contains(rec.Body.String(), "the set was calibrated on unit-norm embeddings") {
			t.Errorf("%s: %d %s", c.name, rec.Code, rec.Body.String())
		}
	}
	if rec := do(t, h, "POST", "/v1/sets/unit/retrieve", "application/json", `{"anchor": [0, 1, 0], "collection": "db"}`); rec.Code != http.StatusOK {
		t.Errorf("a unit-norm query: %d %s", rec.Code, rec.Body.String())
	}
}

// TestUnitNormAnchorsSet: a set calibrated around unit-norm anchors, its
// positives of other norms (the inner-product map's users and items),
// refuses an anchor of another norm (422, naming it) in /score and
// /retrieve, takes points of any norm, and warns of no collection.
func TestUnitNormAnchorsSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 0.5, Alpha: 0.1,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90, UnitNormAnchors: true}}
	path := filepath.Join(dir, "users.json")
	if err := set.Save(path); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "db.npz")
	rows := []float32{1, 0, 0, 0, 2, 0, 0, 0, 0, 0.6, 0.8, 0}
	if err := bundle.WriteNPZ(db, map[string]bundle.Array{"embeddings": bundle.Float32(rows, 4, 3)}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Sets: map[string]string{"users": path}, Collections: map[string]string{"db": db}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if w := s.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q, want none", w)
	}
	h := s.Handler()
	for _, c := range []struct {
		name, path, body string
	}{
		{"an unnormalised anchor", "/v1/sets/users/score", `{"anchor": [3, 0, 0], "points": [[1, 0, 0]]}`},
		{"an unnormalised query", "/v1/sets/users/retrieve", `{"anchor": [0, 2, 0], "collection": "db"}`},
	} {
		rec := do(t, h, "POST", c.path, "application/json", c.body)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `"field": "anchor"`) || !strings.Contains(rec.Body.String(), "the set was calibrated around unit-norm anchors") {
			t.Errorf("%s: %d %s", c.name, rec.Code, rec.Body.String())
		}
	}
	for _, c := range []struct{ path, body string }{
		{"/v1/sets/users/score", `{"anchor": [1, 0, 0], "points": [[0, 2, 0], [0, 0, 0]]}`},
		{"/v1/sets/users/retrieve", `{"anchor": [0, 1, 0], "collection": "db"}`},
	} {
		if rec := do(t, h, "POST", c.path, "application/json", c.body); rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s", c.path, rec.Code, rec.Body.String())
		}
	}
}

// TestShiftedSet: a set centred off its anchors is listed with its
// shift's norm, and /score and /retrieve centre it: around the anchor 0
// with shift (1, 0, 0) the row (1, 0, 0) scores 0 and is the only hit,
// and the anchor itself scores 1, outside.
func TestShiftedSet(t *testing.T) {
	t.Parallel()
	cfg := fixtureConfig(t)
	sh, err := geometry.NewShifted(geometry.Ball{D: 3}, []float64{1, 0, 0}) // φ(a − z + c): centred at a + c
	if err != nil {
		t.Fatal(err)
	}
	set := &conformal.Set{Geometry: sh, Threshold: 0.6, Alpha: 0.05, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95}}
	cfg.Sets["shifted"] = filepath.Join(t.TempDir(), "shifted.json")
	if err := set.Save(cfg.Sets["shifted"]); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	if rec := do(t, h, "GET", "/v1/sets", "", ""); !strings.Contains(rec.Body.String(), `"shift_norm": 1`) {
		t.Errorf("/v1/sets: %s", rec.Body)
	}
	rec := do(t, h, "POST", "/v1/sets/shifted/score", "", `{"anchor": [0, 0, 0], "points": [[1, 0, 0], [0, 0, 0]]}`)
	var sc struct {
		Scores []float64
		Inside []bool
	}
	if json.Unmarshal(rec.Body.Bytes(), &sc); rec.Code != 200 || !slices.Equal(sc.Scores, []float64{0, 1}) || !slices.Equal(sc.Inside, []bool{true, false}) {
		t.Errorf("/score: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, h, "POST", "/v1/sets/shifted/retrieve", "", `{"anchor": [0, 0, 0], "collection": "db"}`)
	var rt struct {
		Total int
		Hits  []struct {
			ID    int64
			Score float64
		}
	}
	// db's rows: (1, 0, 0) id 11 at 0, (0.5, 0.5, 0.5) id 13 at √0.75 > 0.6.
	if json.Unmarshal(rec.Body.Bytes(), &rt); rec.Code != 200 || rt.Total != 1 || rt.Hits[0].ID != 11 || rt.Hits[0].Score != 0 {
		t.Errorf("/retrieve: %d %s", rec.Code, rec.Body)
	}
}

// TestUnknownPathHint: a path a few edits from an endpoint's, or without
// its /v1, names the endpoint meant; a set's own path lists its
// endpoints; a path far from all names none.
func TestUnknownPathHint(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	for path, want := range map[string]string{
		"/v1/sets/ball/scor":             `no endpoint "/v1/sets/ball/scor": did you mean /v1/sets/ball/score?`,
		"/v1/sets/ball/retreive":         `did you mean /v1/sets/ball/retrieve?`,
		"/sets/ball/ood":                 `did you mean /v1/sets/ball/ood?`,
		"/v1/set/ball/ood":               `did you mean /v1/sets/ball/ood?`,
		"/v1/set":                        `did you mean /v1/sets?`,
		"/health":                        `did you mean /healthz?`,
		"/v1/admin/relaod":               `did you mean /v1/admin/reload?`,
		"/v1/sets/ball":                  `a set's endpoints are /v1/sets/ball/score, /v1/sets/ball/ood and /v1/sets/ball/retrieve (POST)`,
		"/v2/things":                     `no endpoint "/v2/things"`,
		"/v1/sets/bal/scor":              `did you mean /v1/sets/ball/score?`, // the set and the endpoint mistyped
		"/v1/sets/bal/score":             `did you mean "ball"?`,              // a set's name mistyped
		"/v1/sets/ball/ood/monitor/rest": `did you mean /v1/sets/ball/ood/monitor/reset?`,
	} {
		rec := do(t, h, "POST", path, "", `{}`)
		var e apiErr
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != 404 || !strings.Contains(e.Error.Message, want) {
			t.Errorf("%s: %d %s, want 404 saying %q", path, rec.Code, rec.Body, want)
		}
		if path == "/v2/things" && strings.Contains(e.Error.Message, "did you mean") {
			t.Errorf("%s: %s, want no suggestion", path, e.Error.Message)
		}
	}
	// A collection's name mistyped.
	rec := do(t, h, "POST", "/v1/sets/ball/retrieve", "", `{"anchor": [1, 0, 0], "collection": "dbb"}`)
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), `did you mean \"db\"?`) {
		t.Errorf("collection dbb: %d %s, want 404 suggesting db", rec.Code, rec.Body)
	}
}
