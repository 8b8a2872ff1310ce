package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/serve"
)

// syncBuffer is a bytes.Buffer safe to write from the server's goroutine
// and read from the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServeRetrieveLoadtest: ccs serve on a free port answers, reloads on
// SIGHUP (keeping the old set when the new file is broken), drains and
// stops on SIGTERM; ccs retrieve prints the same hits; ccs loadtest drives
// the server.
func TestServeRetrieveLoadtest(t *testing.T) {
	dir := t.TempDir()
	set := simulatedOODBall(t, dir)
	var sink bytes.Buffer
	db := filepath.Join(dir, "test.npz")
	if err := golden(t, "retrieve", dir, "retrieve", "-set", set, "-db", db, "-anchor-index", "3", "-limit", "4"); err != nil {
		t.Fatal(err)
	}

	sv := startServe(t, "serve", "-set", "ball="+set, "-db", "test="+db, "-addr", "127.0.0.1:0")
	base, hup, stderr := sv.base, sv.hup, sv.stderr
	get := func(path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprint(resp.StatusCode, " ", string(b))
	}
	if got := get("/v1/sets"); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"ood_reference_rows": 20`) {
		t.Errorf("/v1/sets: %s", got)
	}
	// The server's retrieval equals ccs retrieve's.
	var cli struct{ Hits []struct{ ID int64 } }
	var out bytes.Buffer
	if err := run(&out, &sink, []string{"retrieve", "-set", set, "-db", db, "-anchor-index", "3", "-json"}); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(out.Bytes(), &cli)
	anchor, _ := json.Marshal(anchorRow(t, db, 3))
	resp, err := http.Post(base+"/v1/sets/ball/retrieve", "application/json", strings.NewReader(fmt.Sprintf(`{"anchor": %s, "collection": "test"}`, anchor)))
	if err != nil {
		t.Fatal(err)
	}
	var srv struct{ Hits []struct{ ID int64 } }
	json.NewDecoder(resp.Body).Decode(&srv)
	resp.Body.Close()
	if len(srv.Hits) == 0 || fmt.Sprint(srv.Hits) != fmt.Sprint(cli.Hits) {
		t.Errorf("server hits %v, ccs retrieve %v", srv.Hits, cli.Hits)
	}
	out.Reset()
	if err := run(&out, &sink, []string{"loadtest", "-url", base + "/v1/sets/ball/ood", "-data", fmt.Sprintf(`{"points": [%s]}`, anchor),
		"-requests", "50", "-concurrency", "2", "-json"}); err != nil {
		t.Fatal(err)
	}
	var lr struct{ Requests, Errors int }
	if json.Unmarshal(out.Bytes(), &lr); lr.Requests != 50 || lr.Errors != 0 {
		t.Errorf("loadtest: %s", out.String())
	}
	// SIGHUP with a broken file: the old set stays.
	good, _ := os.ReadFile(set)
	os.WriteFile(set, []byte("{"), 0o644)
	hup <- os.Interrupt
	waitFor(t, stderr, "reload failed")
	if got := get("/v1/sets"); !strings.HasPrefix(got, "200 ") {
		t.Errorf("after a failed reload: %s", got)
	}
	os.WriteFile(set, good, 0o644)
	hup <- os.Interrupt
	waitFor(t, stderr, "reloaded")
	sv.stop(t)
	for _, want := range []string{"draining (up to 30s for requests in flight; a second signal stops at once)", "stopped"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	// The monitor's seed was drawn, and logged to be replayed; a given one
	// is not logged.
	if !regexp.MustCompile(`ccs serve: 1 OOD drift monitor seeded (\d+) \(-monitor-seed (\d+) replays the draws\)`).MatchString(stderr.String()) {
		t.Errorf("no monitor seed logged:\n%s", stderr.String())
	}
	sv = startServe(t, "serve", "-set", "ball="+set, "-addr", "127.0.0.1:0", "-monitor-seed", "5")
	sv.stop(t)
	if strings.Contains(sv.stderr.String(), "seeded") {
		t.Errorf("a given seed logged:\n%s", sv.stderr.String())
	}

	// With -drain-delay it serves on, /readyz 503, until a second signal
	// stops it at once: exit 1, the requests in flight cut.
	sv = startServe(t, "serve", "-set", "ball="+set, "-addr", "127.0.0.1:0", "-drain-delay", "1m")
	sv.term <- os.Interrupt
	waitFor(t, sv.stderr, "draining (serving on for 1m0s with /readyz answering 503, then up to 30s for requests in flight; a second signal stops at once)")
	base = sv.base
	if got := get("/readyz"); !strings.HasPrefix(got, "503 ") {
		t.Errorf("/readyz in the drain delay: %s", got)
	}
	sv.term <- os.Interrupt
	select {
	case err := <-sv.done:
		if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "stopped at a second signal during the drain delay: requests in flight were cut") {
			t.Errorf("after a second signal: %v (exit %d)", err, exitCode(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a second signal did not stop the server")
	}
}

// served is a ccs serve running in the test's process on a free port.
type served struct {
	base   string // http://127.0.0.1:PORT or https://…
	hup    chan os.Signal
	term   chan os.Signal
	stderr *syncBuffer
	done   chan error
}

// startServe runs ccs with args (a serve command) and waits until it
// listens; its signals are the test's channels.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	s := &served{hup: make(chan os.Signal, 1), term: make(chan os.Signal, 1), stderr: &syncBuffer{}, done: make(chan error, 1)}
	fakeSignals(t, s.hup, s.term)
	go func() { s.done <- run(io.Discard, s.stderr, args) }()
	s.base = listeningOn(t, s.stderr)
	return s
}

// listeningOn waits until a ccs serve's log says where it listens and
// returns that base URL (http://… or https://…).
func listeningOn(t *testing.T, log *syncBuffer) string {
	t.Helper()
	listening := regexp.MustCompile(`listening on (\S+)`)
	for i := 0; ; i++ {
		if m := listening.FindStringSubmatch(log.String()); m != nil {
			return m[1]
		} else if i > 3000 {
			t.Fatalf("the server did not start in 30 s: %s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean stop.
func (s *served) stop(t *testing.T) {
	t.Helper()
	s.term <- os.Interrupt
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
}

func waitFor(t *testing.T, b *syncBuffer, s string) {
	t.Helper()
	for i := 0; !strings.Contains(b.String(), s); i++ {
		if i > 500 {
			t.Fatalf("no %q in:\n%s", s, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func anchorRow(t *testing.T, path string, i int) []float32 {
	t.Helper()
	b, err := bundle.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return b.Anchor(i)
}

// smallBallSet writes a small simulated ℓ2 ball set and returns its file.
func smallBallSet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var sink bytes.Buffer
	if err := run(&sink, &sink, []string{"simulate", "-out", dir, "-per-class", "50", "-k", "3", "-seed", "2"}); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "ball.json")
	if err := run(&sink, &sink, []string{"calibrate", "-geometry", "ball", "-cal", filepath.Join(dir, "cal.npz"), "-out", set}); err != nil {
		t.Fatal(err)
	}
	return set
}

// holdLoad makes ccs serve's load wait until release is closed.
func holdLoad(t *testing.T, release <-chan struct{}) {
	old := serveNew
	serveNew = func(cfg serve.Config) (*serve.Server, error) { <-release; return old(cfg) }
	t.Cleanup(func() { serveNew = old })
}

// fakeSignals makes hup and term the signals ccs serve listens for.
func fakeSignals(t *testing.T, hup, term chan os.Signal) {
	old := serveSignals
	serveSignals = func() (<-chan os.Signal, <-chan os.Signal, func()) { return hup, term, func() {} }
	t.Cleanup(func() { serveSignals = old })
}

// TestServeProbesWhileLoading: while serve reads its files the port
// answers the probes — /healthz 200, /readyz 503 `loading`, an API path
// 503 — instead of accepting connections it answers only once loaded;
// then the same port serves the sets, /readyz 200; SIGTERM while
// loading stops it.
func TestServeProbesWhileLoading(t *testing.T) {
	t.Run("loaded", func(t *testing.T) { probesWhileLoading(t, false) })
	t.Run("SIGTERM", func(t *testing.T) { probesWhileLoading(t, true) })
}

// probesWhileLoading probes a ccs serve held in its load, then lets it
// load, or (stop) sends it SIGTERM while loading: it stops at once.
func probesWhileLoading(t *testing.T, stop bool) {
	set := smallBallSet(t)
	release := make(chan struct{})
	holdLoad(t, release)
	s := &served{hup: make(chan os.Signal, 1), term: make(chan os.Signal, 1), stderr: &syncBuffer{}, done: make(chan error, 1)}
	fakeSignals(t, s.hup, s.term)
	go func() {
		s.done <- run(io.Discard, s.stderr, []string{"serve", "-set", "ball=" + set, "-addr", "127.0.0.1:0"})
	}()
	loading := regexp.MustCompile(`loading 1 set and 0 collections on (\S+):`)
	var addr string
	for i := 0; addr == ""; i++ {
		if m := loading.FindStringSubmatch(s.stderr.String()); m != nil {
			addr = m[1]
		} else if i > 3000 {
			close(release)
			t.Fatalf("no loading line: %s", s.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	probe := func(path string) string {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprint(resp.StatusCode, " ", string(b))
	}
	for _, c := range []struct{ path, want string }{
		{"/healthz", `200 {
  "status": "loading"
}`},
		{"/readyz", `503 {
  "status": "loading"
}`},
		{"/v1/sets", `503 {
  "error": {
    "code": "loading",`},
	} {
		if got := probe(c.path); !strings.HasPrefix(got, c.want) {
			t.Errorf("while loading, %s: %s, want %s", c.path, got, c.want)
		}
	}
	if stop {
		s.term <- os.Interrupt
		select {
		case err := <-s.done:
			if err != nil || !strings.Contains(s.stderr.String(), "ccs serve: interrupt while loading: stopped") {
				t.Errorf("SIGTERM while loading: %v; log %s", err, s.stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Error("SIGTERM while loading did not stop the server")
		}
		close(release)
		return
	}
	close(release)
	s.base = listeningOn(t, s.stderr)
	for _, c := range []struct{ path, want string }{{"/readyz", `200 {
  "status": "ready"
}`}, {"/v1/sets", "200 "}} {
		if got := probe(c.path); !strings.HasPrefix(got, c.want) {
			t.Errorf("once loaded, %s: %s, want %s", c.path, got, c.want)
		}
	}
	s.stop(t)
}

// TestServeSignalBeforeItsOwn: a SIGTERM that arrives before serve takes
// its signals (while it parses its flags, binds its port or starts the
// probes' server) is taken by the command's context; serve stops on it
// rather than loading and serving on, a stop that was lost.
func TestServeSignalBeforeItsOwn(t *testing.T) {
	set := smallBallSet(t)
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprintf("hold=%v", hold), func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			if hold { // a load of seconds
				holdLoad(t, release)
			}
			term := make(chan os.Signal, 1) // serve's own: nothing comes
			fakeSignals(t, make(chan os.Signal, 1), term)
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(errors.New("terminated signal received")) // signal.NotifyContext's cause
			stderr, done := &syncBuffer{}, make(chan error, 1)
			go func() {
				done <- runContext(ctx, io.Discard, stderr, []string{"serve", "-set", "ball=" + set, "-addr", "127.0.0.1:0"})
			}()
			select {
			case err := <-done:
				if err != nil || !strings.Contains(stderr.String(), "ccs serve: terminated while loading: stopped") || strings.Contains(stderr.String(), "listening on") {
					t.Errorf("a SIGTERM before serve's own signals: %v; log %s", err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Errorf("a SIGTERM before serve's own signals did not stop it; log %s", stderr.String())
				term <- os.Interrupt // let it go
				<-done
			}
		})
	}
}

// simulatedOODBall writes the simulation's bundles in dir and an ℓ2 ball
// calibrated on them with a per-input OOD test (a pool of 20 calibration
// anchors, val.npz as its held-out inputs), returning the set file's path.
func simulatedOODBall(t *testing.T, dir string) string {
	t.Helper()
	var sink bytes.Buffer
	if err := run(&sink, &sink, []string{"simulate", "-out", dir, "-per-class", "100", "-k", "5", "-seed", "2"}); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "ball.json")
	if err := run(&sink, &sink, []string{"calibrate", "-geometry", "ball", "-cal", filepath.Join(dir, "cal.npz"), "-reference", "20",
		"-ood-cal", filepath.Join(dir, "val.npz"), "-out", set}); err != nil {
		t.Fatalf("%v\n%s", err, sink.String())
	}
	return set
}
