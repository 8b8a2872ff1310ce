package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// listen serves s on a free loopback port as ccs serve does (its
// Listener, its HTTPServer) and returns the base URL.
func listen(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, scheme := s.Listener(ln)
	hs := s.HTTPServer("")
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return scheme + "://" + ln.Addr().String()
}

// latencies sends n score requests one after another on a keep-alive
// connection and returns their sorted latencies; any failure fails the
// test.
func latencies(t *testing.T, base string, n int) []time.Duration {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	var lat []time.Duration
	for range n {
		t0 := time.Now()
		resp, err := c.Post(base+"/v1/sets/ball/score", "application/json", strings.NewReader(`{"anchor": [0, 0, 0], "points": [[1, 0, 0], [0, 2, 0]]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	return lat
}

func quantile(lat []time.Duration, q float64) time.Duration {
	return lat[min(len(lat)-1, int(q*float64(len(lat))))]
}

// trickle opens a connection and sends head at once, then rest a byte at a
// time every gap, until ctx ends.
func trickle(ctx context.Context, t *testing.T, addr, head, rest string, gap time.Duration, wg *sync.WaitGroup) {
	defer wg.Done()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Close()
	c.Write([]byte(head))
	for i := 0; i < len(rest); i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(gap):
		}
		if _, err := c.Write([]byte{rest[i]}); err != nil {
			return // the server closed it: its timeouts at work
		}
	}
	<-ctx.Done()
}

// TestSlowClients: 40 idle connections, 10 clients trickling their headers
// and 10 trickling their bodies a byte every 20 ms do not starve 3000 normal
// requests: all are answered (none waits 5 s), at a p99 the log
// gives beside the unloaded one; the open connections are counted.
func TestSlowClients(t *testing.T) {
	cfg := fixtureConfig(t)
	cfg.MaxConns = 128
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := listen(t, s)
	addr := strings.TrimPrefix(base, "http://")
	latencies(t, base, 50) // warm up
	before := latencies(t, base, 3000)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	body := `{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`
	for i := range 60 {
		wg.Add(1)
		switch {
		case i < 40: // idle
			go trickle(ctx, t, addr, "", "", 0, &wg)
		case i < 50: // headers a byte at a time
			go trickle(ctx, t, addr, "", "POST /v1/sets/ball/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n"+body, 20*time.Millisecond, &wg)
		default: // the body a byte at a time
			go trickle(ctx, t, addr, fmt.Sprintf("POST /v1/sets/ball/score HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body)), body, 20*time.Millisecond, &wg)
		}
	}
	open := 0.0
	for deadline := time.Now().Add(10 * time.Second); open < 60 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		open = metric(t, s, "ccs_open_connections")
	}
	during := latencies(t, base, 3000)
	cancel()
	wg.Wait()
	if open < 60 || open > 128 {
		t.Errorf("ccs_open_connections %v with 60 slow clients and the test's own", open)
	}
	if m := during[len(during)-1]; m > 5*time.Second {
		t.Errorf("a normal request waited %v among slow clients", m)
	}
	t.Logf("score p50/p99: unloaded %v/%v, among 60 slow clients %v/%v (%.2f× the p99); %v connections open",
		quantile(before, 0.5), quantile(before, 0.99), quantile(during, 0.5), quantile(during, 0.99),
		float64(quantile(during, 0.99))/float64(quantile(before, 0.99)), open)
}

// TestConnectionCap: with MaxConns 4 and four connections held open, a
// fifth client is not served until one of them closes, then it is.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	cfg := fixtureConfig(t)
	cfg.MaxConns = 4
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := listen(t, s)
	var held []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	done := make(chan int, 1)
	go func() {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case code := <-done:
		t.Fatalf("a fifth connection was served (%d) while four were open", code)
	case <-time.After(300 * time.Millisecond):
	}
	held[0].Close()
	select {
	case code := <-done:
		if code != 200 {
			t.Errorf("the fifth client, once a connection closed: %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Error("the fifth client was not served after a connection closed")
	}
	for _, c := range held[1:] {
		c.Close()
	}
}

// TestBodyLimits: a Content-Length over -max-body is refused with 413
// before anything is read or reserved (a length of 2⁶³−1 once wrapped the
// budget's arithmetic); a 128-byte .npy body announcing 24 MB is refused
// before the allocation; a body cut short by its client is counted as the
// client's going away; afterwards no body memory is held.
func TestBodyLimits(t *testing.T) {
	cfg := fixtureConfig(t)
	cfg.MaxPoints = 2_000_000 // the element cap allows the shape; the body's length does not
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := listen(t, s)
	addr := strings.TrimPrefix(base, "http://")
	raw := func(req string) string {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte(req))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		return string(b)
	}
	if got := raw("POST /v1/sets/ball/score HTTP/1.1\r\nHost: x\r\nContent-Length: 9223372036854775807\r\nConnection: close\r\n\r\n{}"); !strings.HasPrefix(got, "HTTP/1.1 413") {
		t.Errorf("Content-Length 2^63-1: %.60q, want 413", got)
	}
	// A .npy header announcing (1000000, 3) float64 in a 128-byte body.
	h := "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 3), }"
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	npy := "\x93NUMPY\x01\x00" + string([]byte{byte(len(h) + 1), 0}) + h + "\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rec := do(t, s.Handler(), "POST", "/v1/sets/ball/ood", "application/x-npy", npy)
	runtime.ReadMemStats(&after)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "bytes stored") {
		t.Errorf(".npy announcing more than its body: %d %s", rec.Code, rec.Body)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf(".npy announcing 24 MB in %d bytes: %d bytes allocated", len(npy), alloc)
	}
	// A body cut short: the client closes after half of it.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("POST /v1/sets/ball/score HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"anchor\": [0, 0, 0],"))
	time.Sleep(100 * time.Millisecond)
	c.Close()
	var cut float64
	for deadline := time.Now().Add(10 * time.Second); cut < 1 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		cut = metric(t, s, `ccs_requests_total{code="499",endpoint="score"}`)
	}
	if cut != 1 {
		t.Errorf("a body cut short: %v counted as 499", cut)
	}
	if rec := do(t, s.Handler(), "POST", "/v1/sets/ball/score", "", `{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`); rec.Code != 200 {
		t.Errorf("a normal request afterwards: %d %s", rec.Code, rec.Body)
	}
	if !s.bodies.TryAcquire(s.cfg.BodyMemory) { // all of it free
		t.Errorf("body memory still held")
	} else {
		s.bodies.Release(s.cfg.BodyMemory)
	}
	if _, err := New(Config{Sets: fixtureConfig(t).Sets, MaxBody: 1 << 20, BodyMemory: 1<<20 + 1<<17}); err == nil || !strings.Contains(err.Error(), "2 × -max-body") {
		t.Errorf("body memory under twice max-body: %v", err)
	}
}
