package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ccsets/ccs/serve"
)

// serveOptions are ccs serve's inputs.
type serveOptions struct {
	Sets, Collections namedFiles // NAME=FILE
	Addr              string
	MaxBody           int64
	MaxPoints         int
	MaxResults        int
	Grace             time.Duration // in-flight requests' time after SIGTERM
	MonitorDelta      float64       // the OOD drift monitors' alarm level
	TransformMemory   int64         // bytes the single-norm transforms may take
}

// serveSignals are what ccs serve listens for; tests replace them.
var serveSignals = func() (hup, stop <-chan os.Signal, done func()) {
	h, s := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(h, syscall.SIGHUP)
	signal.Notify(s, syscall.SIGTERM, syscall.SIGINT)
	return h, s, func() { signal.Stop(h); signal.Stop(s) }
}

func serveCommand() *command {
	return newCommand("serve", "-set NAME=SET.json [-set …] [-db NAME=FILE.npz …] [-addr 127.0.0.1:8080] [-max-body BYTES] [-max-points N] [-max-results N] [-monitor-delta δ] [-transform-memory BYTES]",
		"serve fitted sets over HTTP: membership, OOD scores, certified retrieval (SIGHUP reloads, SIGTERM drains and stops)",
		func(fs *flag.FlagSet, o *serveOptions) func() error {
			*o = serveOptions{Sets: namedFiles{}, Collections: namedFiles{}}
			fs.Var(o.Sets, "set", "a fitted set to serve, `NAME=FILE.json`; repeat for several")
			fs.Var(o.Collections, "db", "an embedding collection for retrieval, `NAME=FILE` (.npz: \"embeddings\" or \"anchors\", \"ids\" or \"index\"; .npy; .parquet) or NAME=clickhouse://HOST:PORT/DB.TABLE; repeat for several")
			fs.StringVar(&o.Addr, "addr", "127.0.0.1:8080", "`address` to listen on")
			fs.Int64Var(&o.MaxBody, "max-body", 32<<20, "largest request body in `bytes`")
			fs.IntVar(&o.MaxPoints, "max-points", 100_000, "most points per request")
			fs.IntVar(&o.MaxResults, "max-results", 10_000, "most retrieval hits per response")
			fs.DurationVar(&o.Grace, "shutdown-grace", 30*time.Second, "how long in-flight requests may take after SIGTERM")
			fs.Float64Var(&o.MonitorDelta, "monitor-delta", 0.01, "each OOD drift monitor raises its alarm when its test martingale reaches 1/`δ` (false alarm on an in-distribution stream: probability ≤ δ)")
			fs.Int64Var(&o.TransformMemory, "transform-memory", 4<<30, "memory in `bytes` the single-norm sets may take for their transformed collections (M·z of each item, made at each load so that retrieval costs O(d) per item); a transform over it is refused and that pair scanned plainly (GET /v1/sets says which); a reload holds both generations, up to twice this; 0 or negative: none")
			return nil
		}, runServe)
}

func runServe(_ context.Context, o serveOptions, out *output) error {
	if len(o.Sets) == 0 {
		return usagef("serve: give at least one -set NAME=FILE.json")
	}
	if o.MaxBody < 1 || o.MaxPoints < 1 || o.MaxResults < 1 || o.Grace <= 0 {
		return usagef("serve: -max-body, -max-points, -max-results and -shutdown-grace must be positive")
	}
	if !(o.MonitorDelta > 0 && o.MonitorDelta < 1) {
		return usagef("serve: -monitor-delta %v: want 0 < δ < 1", o.MonitorDelta)
	}
	srv, err := serve.New(serve.Config{Sets: o.Sets, Collections: o.Collections, MaxBody: o.MaxBody, MaxPoints: o.MaxPoints, MaxResults: o.MaxResults,
		MonitorDelta: cmp.Or(o.MonitorDelta, 0.01), TransformBytes: cmp.Or(o.TransformMemory, -1)})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return err
	}
	hs := srv.HTTPServer(o.Addr)
	hup, stop, done := serveSignals()
	defer done()
	fmt.Fprintf(out.stderr, "ccs serve: %d sets, %d collections, listening on %s\n", len(o.Sets), len(o.Collections), ln.Addr())
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
			ctx, cancel := context.WithTimeout(context.Background(), o.Grace)
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
