package serve

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeLoading: while the files load, probes are answered — /healthz
// 200, /readyz 503, every other path 503 `loading` with Retry-After —
// each answer closing its connection; after stop the same listener,
// still open, serves the real server.
func TestServeLoading(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stop, err := ServeLoading(ln, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	for _, c := range []struct {
		method, path string
		status       int
		want         string // in the body
		retry        bool   // Retry-After: 1
	}{
		{"GET", "/healthz", 200, `"status": "loading"`, false},
		{"HEAD", "/healthz", 200, ``, false},
		{"GET", "/readyz", 503, `"status": "loading"`, true},
		{"HEAD", "/readyz", 503, ``, true},
		{"POST", "/readyz", 405, `"code": "method_not_allowed"`, false},
		{"GET", "/v1/sets", 503, `"code": "loading"`, true},
		{"POST", "/v1/sets/ball/score", 503, `"code": "loading"`, true},
		{"GET", "/metrics", 503, `"code": "loading"`, true},
		{"GET", "/no/such/path", 503, `"code": "loading"`, true},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(`{"anchor": [0]}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.want) {
			t.Errorf("%s %s: %d %s, want %d with %s", c.method, c.path, resp.StatusCode, b, c.status, c.want)
		}
		if got := resp.Header.Get("Retry-After") == "1"; got != c.retry {
			t.Errorf("%s %s: Retry-After %q, want it %v", c.method, c.path, resp.Header.Get("Retry-After"), c.retry)
		}
		if !resp.Close {
			t.Errorf("%s %s: the connection is kept alive, want it closed", c.method, c.path)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
		}
	}
	// A connection that has sent nothing (a client's preconnect) holds
	// no answer: stop closes it rather than waiting out its timeout,
	// while new connections queue unanswered.
	idle, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	time.Sleep(50 * time.Millisecond) // accepted by the loading server
	began := time.Now()
	stop()
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("stop took %v", d)
	}
	s, _ := fixture(t)
	t.Cleanup(func() { s.Close() })
	hs := s.HTTPServer("")
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	defer hs.Close()
	for _, p := range []struct {
		path   string
		status int
	}{{"/healthz", 200}, {"/readyz", 200}, {"/v1/sets", 200}} {
		resp, err := http.Get(base + p.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != p.status || strings.Contains(string(b), "loading") {
			t.Errorf("after the load, %s: %d %s", p.path, resp.StatusCode, b)
		}
	}
}

// TestServeLoadingListener: a listener whose Accept cannot be interrupted
// without closing it is refused, not served and then lost.
func TestServeLoadingListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := ServeLoading(keepOpen{Listener: ln}, nil); err == nil || !strings.Contains(err.Error(), "cannot hand over") {
		t.Errorf("a wrapped listener: %v, want refused", err)
	}
}
