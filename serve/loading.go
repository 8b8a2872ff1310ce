package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// loadingHandler answers while the served files load: /healthz 200 (the
// process is alive), /readyz 503 (send it nothing yet), every other path
// 503 `loading` with Retry-After: 1. Each answer closes its connection,
// so that no keep-alive connection outlives the load.
func loadingHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	switch r.URL.Path {
	case "/healthz", "/readyz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
				msg: fmt.Sprintf("%s %s: use GET", clip(r.Method), quote(r.URL.EscapedPath()))})
			return
		}
		status := http.StatusOK
		if r.URL.Path == "/readyz" {
			status = http.StatusServiceUnavailable
			w.Header().Set("Retry-After", "1")
		}
		writeJSON(w, status, map[string]string{"status": "loading"})
	default:
		writeError(w, &apiError{status: http.StatusServiceUnavailable, code: "loading",
			msg: "the server is loading its sets and collections: /readyz answers 200 once it serves them"})
	}
}

// deadliner is a listener whose Accept can be interrupted without closing
// it (*net.TCPListener, *net.UnixListener).
type deadliner interface {
	net.Listener
	SetDeadline(time.Time) error
}

// keepOpen is a listener whose Close leaves it open — the loading
// server's shutdown must leave it to the server that follows — and only
// says that it was called (closed, when not nil).
type keepOpen struct {
	net.Listener
	closed chan struct{}
	once   *sync.Once
}

func (k keepOpen) Close() error {
	if k.closed != nil {
		k.once.Do(func() { close(k.closed) })
	}
	return nil
}

// ServeLoading answers on ln while a server is made (New reads and
// validates every file, seconds for a large collection): /healthz 200 and
// /readyz 503 with {"status": "loading"}, any other path 503 `loading`
// with Retry-After: 1, over TLS with tc when it is not nil — so that a
// load balancer and a liveness probe get an answer rather than a
// connection that hangs until the load ends. ln must be a TCP or Unix
// listener (its Accept is interrupted by a deadline, never closed).
//
// The returned stop ends it: it stops accepting, closes the connections
// that have sent nothing yet, waits up to 5 s for the answers being
// written (each closes its connection), then closes what is left, and leaves ln open and without a deadline for the server that
// follows. stop must be called once, before ln is served again.
func ServeLoading(ln net.Listener, tc *tls.Config) (stop func(), err error) {
	dl, ok := ln.(deadliner)
	if !ok {
		return nil, fmt.Errorf("serve: a listener of type %T cannot hand over after loading", ln)
	}
	closed := make(chan struct{})
	var l net.Listener = keepOpen{ln, closed, new(sync.Once)}
	if tc != nil {
		l = tls.NewListener(l, tc)
	}
	hs := &http.Server{Handler: http.HandlerFunc(loadingHandler),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
		IdleTimeout: time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: log.New(io.Discard, "", 0)} // a library prints nothing
	hs.SetKeepAlivesEnabled(false)
	// The connections that have sent no byte yet: stop closes them, as
	// they hold no answer to wait for (Shutdown would wait out their
	// read timeout, 5 s, while new connections queue unanswered).
	var mu sync.Mutex
	fresh := map[net.Conn]struct{}{}
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		if st == http.StateNew {
			fresh[c] = struct{}{}
		} else {
			delete(fresh, c)
		}
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(l) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shut := make(chan error, 1)
		go func() { shut <- hs.Shutdown(ctx) }()
		// Shutdown marks the server as shutting down, then closes its
		// listener: from then on an interrupted Accept makes Serve return.
		<-closed
		dl.SetDeadline(time.Now())
		<-served
		mu.Lock()
		for c := range fresh {
			c.Close()
		}
		mu.Unlock()
		dl.SetDeadline(time.Time{})
		if err := <-shut; err != nil && !errors.Is(err, http.ErrServerClosed) {
			hs.Close()
		}
	}, nil
}
