package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

func TestLoadTest(t *testing.T) {
	s, _ := fixture(t)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	body := []byte(`{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`)
	r, err := LoadTest(context.Background(), LoadConfig{URL: ts.URL + "/v1/sets/ball/score", Body: body, MaxRequests: 300, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 300 || r.Errors != 0 || !(r.P50 <= r.P99 && r.P99 <= r.Max) || r.Throughput <= 0 {
		t.Errorf("unpaced: %v", r)
	}
	// Paced at 400/s for 0.5 s: about 200 requests, never more than the
	// pace allows; fewer on a loaded machine (the race detector, other
	// packages' tests on both cores), but not none.
	r, err = LoadTest(context.Background(), LoadConfig{URL: ts.URL + "/v1/sets/ball/score", Body: body, Rate: 400, Duration: 500 * time.Millisecond, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests < 40 || r.Requests > 210 || r.Errors != 0 {
		t.Errorf("paced at 400/s for 0.5 s: %v", r)
	}
	r, err = LoadTest(context.Background(), LoadConfig{URL: ts.URL + "/v1/sets/nope/score", Body: body, MaxRequests: 10})
	// The refusal's own words, not only its status.
	if err != nil || r.Errors != 10 || r.FirstError != `status 404: { "error": { "code": "unknown_set", "message": "no set \"nope\" (have [ball gen])", "field": "name" } }` {
		t.Errorf("unknown set: %v %v: %s", r, err, r.FirstError)
	}
	if _, err := LoadTest(context.Background(), LoadConfig{URL: ts.URL}); err == nil {
		t.Error("an unbounded load test was started")
	}
}

// BenchmarkLoopback measures single-point membership at d = 128 over
// loopback HTTP with keep-alive, client and server in one process on all
// cores: b.N requests from 8 connections.
func BenchmarkLoopback(b *testing.B) {
	const d = 128
	set := &conformal.Set{Geometry: geometry.Ball{D: d}, Threshold: 10, Alpha: 0.05, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95}}
	path := filepath.Join(b.TempDir(), "set.json")
	if err := set.Save(path); err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{Sets: map[string]string{"s": path}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	vec := strings.TrimSuffix(strings.Repeat("0.125, ", d), ", ")
	body := []byte(fmt.Sprintf(`{"anchor": [%s], "points": [[%s]]}`, vec, vec))
	b.ResetTimer()
	r, err := LoadTest(context.Background(), LoadConfig{URL: ts.URL + "/v1/sets/s/score", Body: body, MaxRequests: max(b.N, 100), Concurrency: 8})
	if err != nil || r.Errors > 0 {
		b.Fatal(r, err)
	}
	b.ReportMetric(r.Throughput, "req/s")
	b.ReportMetric(float64(r.P99.Microseconds()), "p99-µs")
}
