package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/serve"
)

// namedFiles is a repeatable NAME=FILE flag.
type namedFiles map[string]string

func (m namedFiles) String() string { return fmt.Sprint(map[string]string(m)) }
func (m namedFiles) Set(v string) error {
	name, file, ok := strings.Cut(v, "=")
	if !ok || name == "" || file == "" || strings.ContainsAny(name, "/ ") {
		return fmt.Errorf("%q: want NAME=FILE (a name without '/' or spaces)", v)
	}
	if _, dup := m[name]; dup {
		return fmt.Errorf("name %q given twice", name)
	}
	m[name] = file
	return nil
}

// signals are what ccs serve listens for; tests replace them.
var serveSignals = func() (hup, stop <-chan os.Signal, done func()) {
	h, s := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(h, syscall.SIGHUP)
	signal.Notify(s, syscall.SIGTERM, syscall.SIGINT)
	return h, s, func() { signal.Stop(h); signal.Stop(s) }
}

func init() {
	register(&command{
		name:  "serve",
		args:  "-set NAME=SET.json [-set …] [-db NAME=FILE.npz …] [-addr 127.0.0.1:8080] [-max-body BYTES] [-max-points N] [-max-results N]",
		short: "serve fitted sets over HTTP: membership, OOD scores, certified retrieval (SIGHUP reloads, SIGTERM drains and stops)",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			sets, dbs := namedFiles{}, namedFiles{}
			fs.Var(sets, "set", "a fitted set to serve, `NAME=FILE.json`; repeat for several")
			fs.Var(dbs, "db", "an embedding collection for retrieval, `NAME=FILE.npz` (\"embeddings\" or \"anchors\", \"ids\" or \"index\"); repeat for several")
			addr := fs.String("addr", "127.0.0.1:8080", "`address` to listen on")
			maxBody := fs.Int64("max-body", 32<<20, "largest request body in `bytes`")
			maxPoints := fs.Int("max-points", 100_000, "most points per request")
			maxResults := fs.Int("max-results", 10_000, "most retrieval hits per response")
			grace := fs.Duration("shutdown-grace", 30*time.Second, "how long in-flight requests may take after SIGTERM")
			return func([]string) error {
				if len(sets) == 0 {
					return usagef("serve: give at least one -set NAME=FILE.json")
				}
				if *maxBody < 1 || *maxPoints < 1 || *maxResults < 1 || *grace <= 0 {
					return usagef("serve: -max-body, -max-points, -max-results and -shutdown-grace must be positive")
				}
				srv, err := serve.New(serve.Config{Sets: sets, Collections: dbs, MaxBody: *maxBody, MaxPoints: *maxPoints, MaxResults: *maxResults})
				if err != nil {
					return err
				}
				ln, err := net.Listen("tcp", *addr)
				if err != nil {
					return err
				}
				hs := srv.HTTPServer(*addr)
				hup, stop, done := serveSignals()
				defer done()
				fmt.Fprintf(out.stderr, "ccs serve: %d sets, %d collections, listening on %s\n", len(sets), len(dbs), ln.Addr())
				errc := make(chan error, 1)
				go func() { errc <- hs.Serve(ln) }()
				for {
					select {
					case err := <-errc:
						return err
					case <-hup:
						if err := srv.Reload(); err != nil {
							fmt.Fprintf(out.stderr, "ccs serve: reload failed, still serving the previous files: %v\n", err)
						} else {
							fmt.Fprintf(out.stderr, "ccs serve: reloaded\n")
						}
					case sig := <-stop:
						fmt.Fprintf(out.stderr, "ccs serve: %v: draining\n", sig)
						srv.Drain()
						ctx, cancel := context.WithTimeout(context.Background(), *grace)
						err := hs.Shutdown(ctx)
						cancel()
						if err != nil {
							return fmt.Errorf("shutdown: %w", err)
						}
						if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
							return err
						}
						fmt.Fprintf(out.stderr, "ccs serve: stopped\n")
						return nil
					}
				}
			}
		},
	})
	register(&command{
		name:  "retrieve",
		args:  "-set SET.json -db FILE.npz (-anchor-index I | -anchor FILE.npy) [-limit N] [-json]",
		short: "list the collection items inside a fitted set around an anchor (retrieval with recall ≥ 1−α)",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			setPath := fs.String("set", "", "calibrated set `file` (.json)")
			dbPath := fs.String("db", "", "collection `file` (.npz)")
			index := fs.Int("anchor-index", -1, "use the collection's row `I` as the anchor")
			anchorPath := fs.String("anchor", "", "anchor embedding `file` (.npy, float32, (d,) or (1, d))")
			limit := fs.Int("limit", 0, "print at most `N` hits, nearest first (0: all)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func([]string) error {
				if err := required("retrieve", "set", *setPath, "db", *dbPath); err != nil {
					return err
				}
				if (*index >= 0) == (*anchorPath != "") {
					return usagef("retrieve: give one of -anchor-index and -anchor")
				}
				if *limit < 0 {
					return usagef("retrieve: -limit %d must be ≥ 0", *limit)
				}
				set, err := conformal.Load(*setPath)
				if err != nil {
					return err
				}
				c, err := retrieve.ReadCollection(*dbPath)
				if err != nil {
					return err
				}
				var anchor []float32
				if *index >= 0 {
					if *index >= c.N {
						return fmt.Errorf("%s: -anchor-index %d, the collection has %d rows", *dbPath, *index, c.N)
					}
					anchor = c.Rows[*index*c.D : (*index+1)*c.D]
				} else {
					a, err := bundle.ReadNPY(*anchorPath)
					if err != nil {
						return err
					}
					if a.F32 == nil || a.Len() != set.Geometry.Dim() || len(a.Shape) > 2 {
						return fmt.Errorf("%s: want float32 (%d,) or (1, %d), got shape %v", *anchorPath, set.Geometry.Dim(), set.Geometry.Dim(), a.Shape)
					}
					anchor = a.F32
				}
				hits, total, err := retrieve.Search(context.Background(), set, anchor, c, *limit)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", *setPath, *dbPath, err)
				}
				if *asJSON {
					if hits == nil {
						hits = []retrieve.Hit{}
					}
					enc := json.NewEncoder(out.stdout)
					enc.SetIndent("", "  ")
					var q any = set.Threshold
					if math.IsInf(set.Threshold, 1) {
						q = "+Inf"
					}
					return enc.Encode(map[string]any{"total": total, "hits": hits, "threshold": q})
				}
				fmt.Fprintf(out.stdout, "%d of %d items inside the set (threshold %.6g, α=%v)\n", total, c.N, set.Threshold, set.Alpha)
				for _, h := range hits {
					fmt.Fprintf(out.stdout, "%d\t%d\t%.6g\n", h.ID, h.Row, h.Score)
				}
				for _, w := range set.Warnings() {
					out.warn(w)
				}
				return nil
			}
		},
	})
}

func init() {
	register(&command{
		name:  "loadtest",
		args:  "-url URL (-body FILE | -data JSON) [-content-type T] [-rate R] [-duration 10s] [-requests N] [-concurrency 8] [-json]",
		short: "send one request repeatedly to a server, bounded in time and count, and report throughput and latency percentiles",
		flags: func(fs *flag.FlagSet, out *output) func([]string) error {
			url := fs.String("url", "", "request `URL`, e.g. http://127.0.0.1:8080/v1/sets/NAME/score")
			bodyPath := fs.String("body", "", "request body `file`")
			data := fs.String("data", "", "request body given inline")
			ctype := fs.String("content-type", "application/json", "request `type` (application/x-npy for .npy bodies)")
			rate := fs.Float64("rate", 0, "requests per second in all (0: as fast as answered)")
			duration := fs.Duration("duration", 10*time.Second, "stop after this long (0: only -requests bounds it)")
			requests := fs.Int("requests", 0, "stop after this many requests (0: only -duration bounds it)")
			conc := fs.Int("concurrency", 8, "keep-alive connections")
			asJSON := fs.Bool("json", false, "print JSON")
			return func([]string) error {
				if err := required("loadtest", "url", *url); err != nil {
					return err
				}
				if (*bodyPath == "") == (*data == "") {
					return usagef("loadtest: give one of -body and -data")
				}
				if *duration <= 0 && *requests <= 0 {
					return usagef("loadtest: give a positive -duration or -requests: a load test must stop by itself")
				}
				if *conc < 1 || *rate < 0 || *requests < 0 {
					return usagef("loadtest: -concurrency must be at least 1, -rate and -requests at least 0")
				}
				body := []byte(*data)
				if *bodyPath != "" {
					var err error
					if body, err = os.ReadFile(*bodyPath); err != nil {
						return err
					}
				}
				r, err := serve.LoadTest(context.Background(), serve.LoadConfig{URL: *url, ContentType: *ctype, Body: body,
					Rate: *rate, Duration: *duration, MaxRequests: *requests, Concurrency: *conc})
				if err != nil {
					return err
				}
				if *asJSON {
					return writeJSON(out.stdout, r)
				}
				fmt.Fprintln(out.stdout, r)
				if r.FirstError != "" {
					out.warn("first error: " + r.FirstError)
				}
				return nil
			}
		},
	})
}
