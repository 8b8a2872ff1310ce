package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestReloadUnderLoad reloads 100 times while two load tests drive score
// and retrieve over loopback: the files alternate between two valid
// generations' contents (a threshold and a collection each) and invalid
// ones. No request fails, and every answer is of one generation: the
// threshold and the collection's size it reports are those of the files
// that generation loaded.
func TestReloadUnderLoad(t *testing.T) {
	dir := t.TempDir()
	setPath, dbPath := filepath.Join(dir, "ball.json"), filepath.Join(dir, "db.npz")
	info := conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95}
	type variant struct {
		threshold float64
		rows      int
	}
	variants := []variant{{1.5, 40}, {2.5, 70}}
	write := func(v variant) {
		set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: v.threshold, Alpha: 0.05, Calibration: info}
		if err := set.Save(setPath); err != nil {
			t.Fatal(err)
		}
		rows := make([]float32, 3*v.rows)
		for i := range rows {
			rows[i] = float32(i%7) * 0.1
		}
		if err := bundle.WriteNPZ(dbPath, map[string]bundle.Array{"embeddings": bundle.Float32(rows, v.rows, 3)}); err != nil {
			t.Fatal(err)
		}
	}
	write(variants[0])
	s, err := New(Config{Sets: map[string]string{"ball": setPath}, Collections: map[string]string{"db": dbPath}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	var mu sync.Mutex
	loaded := map[uint64]variant{1: variants[0]}
	type seen struct {
		gen       uint64
		threshold float64
		total     int // -1 for score answers
	}
	var answers []seen
	record := func(b []byte) error {
		var a struct {
			Generation uint64
			Threshold  float64
			Total      *int
		}
		if err := json.Unmarshal(b, &a); err != nil || a.Generation == 0 {
			return fmt.Errorf("answer without a generation: %s", b)
		}
		sn := seen{a.Generation, a.Threshold, -1}
		if a.Total != nil {
			sn.total = *a.Total
		}
		mu.Lock()
		answers = append(answers, sn)
		mu.Unlock()
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan LoadResult, 2)
	for _, c := range []struct{ path, body string }{
		{"/v1/sets/ball/score", `{"anchor": [0, 0, 0], "points": [[0.1, 0.2, 0.3], [1, 1, 1]]}`},
		{"/v1/sets/ball/retrieve", `{"anchor": [0, 0, 0], "collection": "db", "limit": 5}`},
	} {
		go func() {
			r, err := LoadTest(ctx, LoadConfig{URL: ts.URL + c.path, Body: []byte(c.body), Duration: time.Minute, Concurrency: 2, Check: record})
			if err != nil {
				t.Error(err)
			}
			results <- r
		}()
	}
	okReloads, failed := 0, 0
	for i := range 100 {
		time.Sleep(5 * time.Millisecond)
		if i%3 == 2 {
			os.WriteFile(setPath, []byte(`{"format": "ccs-set", "version": 1, "dim": 3}`), 0o644)
			if err := s.Reload("test"); err == nil {
				t.Fatal("an invalid set file reloaded")
			}
			failed++
			continue
		}
		v := variants[(okReloads+1)%2]
		write(v)
		if err := s.Reload("test"); err != nil {
			t.Fatal(err)
		}
		okReloads++
		mu.Lock()
		loaded[s.Generation()] = v
		mu.Unlock()
	}
	cancel()
	var requests int
	for range 2 {
		r := <-results
		requests += r.Requests
		if r.Errors != 0 {
			t.Errorf("%d failed requests under reloads, the first: %s", r.Errors, r.FirstError)
		}
	}
	gens := map[uint64]bool{}
	for _, a := range answers {
		v, ok := loaded[a.gen]
		if !ok || a.threshold != v.threshold || a.total >= 0 && a.total != v.rows {
			t.Fatalf("answer of generation %d: threshold %v, total %d; that generation loaded %+v", a.gen, a.threshold, a.total, v)
		}
		gens[a.gen] = true
	}
	if s.Generation() != uint64(okReloads+1) || len(gens) < 10 {
		t.Errorf("generation %d after %d reloads; answers saw %d generations", s.Generation(), okReloads, len(gens))
	}
	t.Logf("%d requests (%d answers checked) across %d reloads (%d refused), %d generations seen", requests, len(answers), okReloads+failed, failed, len(gens))
}

// TestClientGoneMidAnswer: a client that closes its connection while a
// long answer is being written is counted as 499 (it went away), not as a
// server error; wrk and ccs loadtest do that at the end of their duration.
func TestClientGoneMidAnswer(t *testing.T) {
	dir := t.TempDir()
	setPath, dbPath := filepath.Join(dir, "ball.json"), filepath.Join(dir, "db.npz")
	set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 100, Alpha: 0.05, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95}}
	if err := set.Save(setPath); err != nil {
		t.Fatal(err)
	}
	const n = 200_000 // an answer of some megabytes
	if err := bundle.WriteNPZ(dbPath, map[string]bundle.Array{"embeddings": bundle.Float32(make([]float32, 3*n), n, 3)}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Sets: map[string]string{"ball": setPath}, Collections: map[string]string{"db": dbPath}, MaxResults: n})
	if err != nil {
		t.Fatal(err)
	}
	base := listen(t, s)
	for range 5 {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		body := `{"anchor": [0, 0, 0], "collection": "db"}`
		fmt.Fprintf(c, "POST /v1/sets/ball/retrieve HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		buf := make([]byte, 4096)
		io.ReadFull(c, buf) // the answer has begun
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	var cut float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cut = metric(t, s, `ccs_requests_total{code="499",endpoint="retrieve"}`); cut == 5 {
			break
		}
	}
	if cut != 5 {
		t.Errorf("%v of 5 cut answers counted as 499", cut)
	}
	if rec := do(t, s.Handler(), "GET", "/metrics", "", ""); strings.Contains(rec.Body.String(), `code="500"`) {
		t.Errorf("a cut answer was counted as a server error:\n%s", rec.Body.String())
	}
}
