package serve

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStop: after the signal the server serves on for the drain delay with
// /readyz answering 503, then accepts no connection while a request in
// flight finishes within the grace; a request that outlasts the grace, or
// a second signal, is cut and reported as ErrCut.
func TestStop(t *testing.T) {
	body := `{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`
	head := "POST /v1/sets/ball/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	start := func(t *testing.T) (s *Server, addr string, hs *http.Server, served chan error) {
		s, _ = fixture(t)
		t.Cleanup(func() { s.Close() })
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs, served = s.HTTPServer(""), make(chan error, 1)
		go func() { served <- hs.Serve(ln) }()
		return s, ln.Addr().String(), hs, served
	}
	// inFlight sends a score request's head and half its body: the
	// request is in flight until finish sends the rest.
	inFlight := func(t *testing.T, addr string) (finish func() (string, error)) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, head+body[:10])
		time.Sleep(50 * time.Millisecond) // the server has read the head
		return func() (string, error) {
			io.WriteString(c, body[10:])
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.Status + " " + string(b), nil
		}
	}
	get := func(addr, path string) string {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(b)
	}

	t.Run("delay, then grace", func(t *testing.T) {
		s, addr, hs, served := start(t)
		finish := inFlight(t, addr)
		stopped := make(chan error, 1)
		go func() {
			stopped <- s.Stop(hs, served, StopOptions{Delay: 1500 * time.Millisecond, Grace: 10 * time.Second})
		}()
		// Polled, not slept: a loaded machine (the race detector in CI)
		// may start Stop late.
		got := ""
		for range 100 {
			if got = get(addr, "/readyz"); strings.HasPrefix(got, "503 ") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if !strings.HasPrefix(got, "503 ") || !strings.Contains(got, "draining") {
			t.Errorf("readyz during the drain delay: %s", got)
		}
		if got := get(addr, "/v1/sets"); !strings.HasPrefix(got, "200 ") {
			t.Errorf("a request during the drain delay: %s", got)
		}
		for range 500 { // served until the delay ends, then no new connection
			if got = get(addr, "/healthz"); !strings.HasPrefix(got, "200 ") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if strings.HasPrefix(got, "200 ") {
			t.Errorf("a new connection after the delay: %s", got)
		}
		if got, err := finish(); err != nil || !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"inside"`) {
			t.Errorf("the request in flight: %s, %v", got, err)
		}
		if err := <-stopped; err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	t.Run("grace run out", func(t *testing.T) {
		s, addr, hs, served := start(t)
		inFlight(t, addr) // never finished
		err := s.Stop(hs, served, StopOptions{Grace: 200 * time.Millisecond})
		if !errors.Is(err, ErrCut) || err.Error() != "requests still running after the grace of 200ms: requests in flight were cut" {
			t.Errorf("Stop: %v", err)
		}
	})
	for _, c := range []struct {
		name  string
		delay time.Duration
		want  string
	}{
		{"a second signal in the grace", 0, "stopped at a second signal: requests in flight were cut"},
		{"a second signal in the delay", time.Minute, "stopped at a second signal during the drain delay: requests in flight were cut"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, addr, hs, served := start(t)
			inFlight(t, addr)
			force := make(chan os.Signal, 1)
			t0 := time.Now()
			time.AfterFunc(200*time.Millisecond, func() { force <- os.Interrupt })
			err := s.Stop(hs, served, StopOptions{Delay: c.delay, Grace: time.Minute, Force: force})
			if !errors.Is(err, ErrCut) || err.Error() != c.want {
				t.Errorf("Stop: %v", err)
			}
			if d := time.Since(t0); d > 10*time.Second {
				t.Errorf("Stop took %v after the second signal", d)
			}
		})
	}
}
