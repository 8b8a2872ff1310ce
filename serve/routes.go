package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ccsets/ccs/internal/suggest"
)

// routes maps each endpoint to its handler, wrapped by endpoint (or guard)
// with the role it needs.
func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.mux.Handle("/v1/sets", s.endpoint("sets", http.MethodGet, RoleRead, params(s.listSets)))
	s.mux.Handle("/v1/sets/{name}/score", s.endpoint("score", http.MethodPost, RoleRead, params(s.score, "label")))
	s.mux.Handle("/v1/sets/{name}/ood", s.endpoint("ood", http.MethodPost, RoleRead, params(s.ood, "alpha_ood", "delta", "fdr")))
	s.mux.Handle("/v1/sets/{name}/ood/monitor/reset", s.endpoint("ood_monitor_reset", http.MethodPost, RoleAdmin, params(noBody(s.resetMonitor))))
	s.mux.Handle("/v1/sets/{name}/retrieve", s.endpoint("retrieve", http.MethodPost, RoleRead, params(s.retrieve, "collection", "limit", "label")))
	s.mux.Handle("/v1/admin/reload", s.endpoint("admin_reload", http.MethodPost, RoleAdmin, params(noBody(s.adminReload))))
	s.mux.Handle("/healthz", s.endpoint("healthz", http.MethodGet, RoleNone, func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}))
	s.mux.Handle("/readyz", s.endpoint("readyz", http.MethodGet, RoleNone, func(w http.ResponseWriter, r *http.Request) error {
		if s.draining.Load() {
			return writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		}
		return writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}))
	metrics := getOnly(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	switch s.cfg.Metrics {
	case MetricsToken:
		s.mux.Handle("/metrics", s.counted("metrics", s.guard(RoleRead, metrics)))
	case MetricsOpen:
		s.mux.Handle("/metrics", s.counted("metrics", metrics))
	}
	// Unknown paths need a token too: a stranger learns nothing of the
	// routes.
	s.mux.Handle("/", s.endpoint("other", "", RoleRead, func(w http.ResponseWriter, r *http.Request) error {
		return &apiError{status: http.StatusNotFound, code: "not_found", msg: s.notFound(r)}
	}))
	// A path that is not clean (., .., an empty segment) is refused here,
	// after the token (a read token, as an unknown path): the mux would
	// redirect it to its clean form before any check.
	unclean := s.endpoint("other", "", RoleRead, func(w http.ResponseWriter, r *http.Request) error {
		sent := r.URL.EscapedPath()
		if clean := cleanPath(sent); clean != sent {
			return badRequest("", "the path %s is not clean (no '.' or '..' segments, no '//'): send %s", quote(sent), quote(clean))
		}
		// The dots or slashes were sent escaped (%2E, %2F).
		return badRequest("", "the path %s is not clean once its escapes are decoded (%s): no '.' or '..' segments, no '//'", quote(sent), quote(r.URL.Path))
	})
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect && cleanPath(r.URL.Path) != r.URL.Path {
			unclean.ServeHTTP(w, r)
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// cleanPath is p as http.ServeMux would redirect it: rooted, without
// '.', '..' or empty segments, keeping a final slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// adminReload is POST /v1/admin/reload: Reload, answering the generation
// now served, or 422 with why the files were refused (the previous
// generation still served). The reload is logged as a SIGHUP's is, naming
// the token that asked and its address.
func (s *Server) adminReload(w http.ResponseWriter, r *http.Request) error {
	trigger := "POST /v1/admin/reload from " + r.RemoteAddr
	if name := s.caller(r); name != "" {
		trigger += fmt.Sprintf(", token %q", name)
	}
	if err := s.Reload(trigger); err != nil {
		return &apiError{status: http.StatusUnprocessableEntity, code: "reload_failed",
			msg: fmt.Sprintf("reload failed (the parts that failed keep their previous version; serving generation %d): %v", s.Generation(), err)}
	}
	st := s.state.Load()
	return writeJSON(w, http.StatusOK, map[string]any{"generation": st.generation, "loaded": st.loaded.UTC().Format(time.RFC3339Nano)})
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool // the header is sent
}

func (w *statusWriter) WriteHeader(code int) {
	w.status, w.wrote = code, true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true // an implicit 200
	return w.ResponseWriter.Write(b)
}

// guard lets a request through to h only with a token of role need (when
// the server has tokens); a refusal is answered with 401 (and
// WWW-Authenticate) or 403 and counted by reason.
func (s *Server) guard(need Role, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e, reason := s.authorize(r, need); e != nil {
			s.deny(w, e, reason)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// counted counts h's requests and their latencies as an endpoint's
// (ccs_requests_total and ccs_request_duration_seconds, endpoint name),
// h writing to a *statusWriter whose status is counted: every endpoint's,
// and /metrics's scrapes and refusals, so that the requests refused 401
// add up to the denials counted (ccs_auth_denied_total).
func (s *Server) counted(name string, h http.Handler) http.Handler {
	lat := s.latency.WithLabelValues(name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.requests.WithLabelValues(name, fmt.Sprint(sw.status)).Inc()
			lat.Observe(time.Since(start).Seconds())
		}()
		h.ServeHTTP(sw, r)
	})
}

func (s *Server) deny(w http.ResponseWriter, e *apiError, reason string) {
	s.denied.WithLabelValues(reason).Inc()
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ccs"`)
		// A caller without a valid token keeps no connection open.
		w.Header().Set("Connection", "close")
	}
	writeError(w, e)
}

// bodied are the endpoints that read a request body; the others leave it
// unread.
var bodied = map[string]bool{"score": true, "ood": true, "retrieve": true}

// bufferBody reads r's body into memory within MaxBody and the body
// memory (readBody) and puts it back as a bufferedBody; release returns
// its memory once the request is done.
func (s *Server) bufferBody(w http.ResponseWriter, r *http.Request) (release func(), err error) {
	if r.ContentLength > s.cfg.MaxBody {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: "body_too_large",
			msg: fmt.Sprintf("the request body of %d bytes exceeds %d", r.ContentLength, s.cfg.MaxBody)}
	}
	// The raw writer: MaxBytesReader marks its connection to close after
	// a 413.
	data, release, err := readBody(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody), r.ContentLength, s.bodies)
	if err != nil {
		return nil, err
	}
	r.Body = bufferedBody{bytes.NewReader(data), data}
	return release, nil
}

// endpoint wraps a handler: the token check (need), the method check, the
// body read within its limits (MaxBody; the body memory), a turn among
// MaxInflight, errors as JSON, request counts and latencies. A panic in a
// handler is a bug; it is answered with 500 and counted, and the server
// goes on.
func (s *Server) endpoint(name, method string, need Role, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	reads := bodied[name]
	return s.counted(name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := w.(*statusWriter) // counted's: the status it counts
		defer func() {
			if p := recover(); p != nil {
				// The operator's log gets the panic and its stack: the
				// client's 500 alone leaves nothing to debug on the server.
				s.logf("internal error: %s %s: panic: %v\n%s", r.Method, quote(r.URL.Path), p, debug.Stack())
				writeError(sw, &apiError{status: http.StatusInternalServerError, code: "internal", msg: fmt.Sprint("internal error: ", p)})
			}
		}()
		if e, reason := s.authorize(r, need); e != nil {
			s.deny(sw, e, reason)
			return
		}
		// A GET endpoint answers HEAD too, without the body (net/http
		// drops it), as health checkers send it.
		if method != "" && r.Method != method && (method != http.MethodGet || r.Method != http.MethodHead) {
			allow := method
			if method == http.MethodGet {
				allow = "GET, HEAD"
			}
			sw.Header().Set("Allow", allow)
			writeError(sw, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
				msg: fmt.Sprintf("%s %s: use %s", clip(r.Method), quote(r.URL.EscapedPath()), method)})
			return
		}
		if reads && r.Body != nil {
			release, err := s.bufferBody(sw.ResponseWriter, r)
			if err != nil {
				writeError(sw, err)
				return
			}
			defer release()
		}
		if need != RoleNone {
			select {
			case s.inflight <- struct{}{}:
				defer func() { <-s.inflight }()
			case <-r.Context().Done():
				writeError(sw, cancelled(r.Context().Err()))
				return
			}
		}
		if err := h(sw, r); err != nil {
			if sw.wrote {
				// The answer was cut while being written: the client went
				// away (a load tool stopping at its duration). Not the
				// server's error: counted as 499 like a cancelled request.
				sw.status = 499
				return
			}
			var e *apiError
			if !errors.As(err, &e) {
				s.logf("internal error: %s %s: %v", r.Method, quote(r.URL.Path), err) // a 500: the server's, not the request's
			}
			writeError(sw, err)
		}
	}))
}

// params refuses a query parameter the endpoint does not take (400,
// naming it and those it takes), or one it takes given twice, as an
// unknown or repeated JSON field is: a misspelt
// ?alpha_odd=0.01, or an option of the Python call that the service does
// not have (?simultaneous=true), was answered at the defaults.
func params(h func(http.ResponseWriter, *http.Request) error, takes ...string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := queryParams(r)
		if err != nil {
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(q)) {
			if n := len(q[name]); n > 1 && slices.Contains(takes, name) {
				// As a JSON field given twice: parsers disagree on which
				// copy wins.
				return badRequest(name, "query parameter %s is given %d times: give it once", quote(name), n)
			}
			if !slices.Contains(takes, name) {
				want := "none"
				if len(takes) > 0 {
					want = strings.Join(takes, ", ")
				}
				return badRequest(name, "unknown query parameter %s (this endpoint takes %s)", quote(name), want)
			}
		}
		return h(w, r)
	}
}

// queryParams is r's query parameters, or a 400 (field "query") quoting
// the query string as sent and saying what is wrong with it. Every reader
// of a query parameter takes them from here: r.URL.Query() drops each
// pair url.ParseQuery cannot read — one with a ';', which Go no longer
// takes for a separator, or a bad %-escape — and the request was answered
// as if it had not given them (?alpha_ood=0.1; at α_ood 0.05, ?limit=2;
// with every hit, ?bogus;=1 not refused).
func queryParams(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("query", "the query string %s cannot be read: %v: separate parameters with '&', and escape a ';' or '%%' in a value (%%3B, %%25)", quote(r.URL.RawQuery), err)
	}
	return q, nil
}

// noBody refuses a body to h, an endpoint that reads none (as params
// refuses a query parameter it does not take): a caller who sends
// {"set": "ball"} to the reload expecting one set reloaded learns that
// nothing of it is read. An empty body, blanks, {} or null (what
// clients send for a POST of nothing) pass.
func noBody(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if r.Body != nil {
			b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				return badRequest("body", "reading the body: %v", err)
			}
			if t := strings.Join(strings.Fields(string(b)), ""); t != "" && t != "{}" && t != "null" {
				return badRequest("body", "%s %s takes no body, and nothing in this one would be read (%s): send none", r.Method, r.URL.Path, quote(string(b)))
			}
		}
		return h(w, r)
	}
}

// notFound is the 404's message for r's path: the path as sent (escaped,
// as the routes match it) and what it likely meant. A slash sent escaped,
// %2F, separates no segments: /v1/sets/ball%2Fscore is no endpoint, and
// its decoded path, /v1/sets/ball/score, was quoted as unknown — an
// endpoint — with a hint for another one.
func (s *Server) notFound(r *http.Request) string {
	sent := r.URL.EscapedPath()
	if !strings.Contains(strings.ToUpper(sent), "%2F") {
		return fmt.Sprintf("no endpoint %s%s", quote(sent), s.pathHint(r.URL.Path))
	}
	msg := fmt.Sprintf("no endpoint %s: a slash sent escaped, %%2F, separates no segments of the path, and no set's name holds one", quote(sent))
	if _, pattern := s.mux.Handler(&http.Request{Method: r.Method, Host: r.Host, URL: &url.URL{Path: r.URL.Path}}); pattern != "/" && pattern != "" {
		msg += fmt.Sprintf(": send %s", quote(r.URL.Path))
	}
	return msg
}

// setEndpoints are the paths under /v1/sets/{name}/.
var setEndpoints = []string{"score", "ood", "ood/monitor/reset", "retrieve"}

// pathHint is what an unknown path likely meant, for its 404: a set's own
// path lists the set's endpoints; a path a few edits from an endpoint's
// (the set's name taken from the path as sent, /v1 added where it was
// left out) names that one. Empty when none is near.
func (s *Server) pathHint(p string) string {
	seg := strings.Split(strings.Trim(p, "/"), "/")
	if len(seg) >= 3 && seg[0] == "v1" && seg[1] == "sets" && seg[2] != "" {
		if len(seg) == 3 {
			// The endpoints this set answers: /ood where it has an OOD
			// test (a class-conditional set has none).
			if set := s.state.Load().sets[seg[2]]; set != nil && set.ClassConditional() {
				return fmt.Sprintf(": a set's endpoints are /v1/sets/%[1]s/score and /v1/sets/%[1]s/retrieve (POST; a class-conditional set has no /ood)", seg[2])
			}
			return fmt.Sprintf(": a set's endpoints are /v1/sets/%[1]s/score, /v1/sets/%[1]s/ood and /v1/sets/%[1]s/retrieve (POST)", seg[2])
		}
	}
	name := "NAME"
	switch {
	case len(seg) >= 3 && seg[0] == "v1":
		name = seg[2]
	case len(seg) >= 2 && strings.HasPrefix(seg[0], "set"):
		name = seg[1]
	}
	if sets := s.state.Load().sets; sets[name] == nil { // a set's name mistyped too: the one meant
		if near, ok := suggest.Nearest(name, slices.Collect(maps.Keys(sets))); ok {
			name = near
		}
	}
	candidates := []string{"/v1/sets", "/v1/admin/reload", "/healthz", "/readyz"}
	if s.cfg.Metrics != MetricsOff {
		candidates = append(candidates, "/metrics")
	}
	for _, e := range setEndpoints {
		candidates = append(candidates, "/v1/sets/"+name+"/"+e)
	}
	try := p
	if !strings.HasPrefix(p, "/v1/") && p != "/v1" {
		try = "/v1" + p // a path without its version: /sets/ball/score
		if slices.Contains(candidates, try) {
			return fmt.Sprintf(": did you mean %s?", try)
		}
	}
	for _, q := range []string{p, try} {
		if c, ok := suggest.Nearest(q, candidates); ok {
			return fmt.Sprintf(": did you mean %s?", c)
		}
	}
	return ""
}

// getOnly answers h's GET and HEAD, and any other method 405 as every
// endpoint does (/metrics answered POST and DELETE with its page).
func getOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
				msg: fmt.Sprintf("%s %s: use GET", clip(r.Method), quote(r.URL.EscapedPath()))})
			return
		}
		h.ServeHTTP(w, r)
	})
}
