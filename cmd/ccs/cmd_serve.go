package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strings"
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
	DrainDelay        time.Duration // serving on, /readyz 503, after SIGTERM
	Grace             time.Duration // in-flight requests' time after the drain delay
	MonitorDelta      float64       // the OOD drift monitors' alarm level
	MonitorLimit      int           // the points each monitor observes before it is full
	MonitorSeed       uint64        // the monitors' smoothing; drawn at start unless given
	monitorSeedSet    bool
	TransformMemory   int64  // bytes the single-norm, ellipsoid and head's transforms may take
	HalfCopy          bool   // the collections' compact copies
	AuthTokens        string // tokens file
	Metrics           string // token, open or off
	Insecure          bool   // listen beyond loopback without tokens
	TLSCert, TLSKey   string
	MaxConns          int
	MaxInflight       int
	BodyMemory        int64
}

// serveSignals are what ccs serve listens for; tests replace them.
var serveSignals = func() (hup, stop <-chan os.Signal, done func()) {
	h, s := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(h, syscall.SIGHUP)
	signal.Notify(s, syscall.SIGTERM, syscall.SIGINT)
	return h, s, func() { signal.Stop(h); signal.Stop(s) }
}

// serveNew makes the server, reading every file; tests replace it to
// hold the load while they probe.
var serveNew = serve.New

func serveCommand() *command {
	return newCommand("serve", "-set NAME=SET.json [-set …] [-db NAME=FILE|URL …] [-addr 127.0.0.1:8080] [-auth-tokens FILE] [-tls-cert CERT.pem -tls-key KEY.pem] [-metrics token|open|off] [-insecure] [-max-body BYTES] [-max-points N] [-max-results N] [-max-conns N] [-max-inflight N] [-body-memory BYTES] [-drain-delay D] [-shutdown-grace D] [-monitor-delta δ] [-monitor-limit N] [-monitor-seed S] [-transform-memory BYTES] [-half-copy=false]",
		"serve fitted sets over HTTP: membership, OOD scores, certified retrieval (SIGHUP reloads, SIGTERM drains and stops)",
		func(fs *flag.FlagSet, o *serveOptions) func() error {
			*o = serveOptions{Sets: namedFiles{}, Collections: namedFiles{}}
			fs.Var(o.Sets, "set", "a fitted set to serve, `NAME=FILE.json`; repeat for several")
			fs.Var(o.Collections, "db", "an embedding collection for retrieval, `NAME=FILE` (.npz or .safetensors: \"embeddings\" or \"anchors\", \"ids\" or \"index\"; .npy; .parquet: a \"id\", \"ids\" or \"_id\" column; a text table or JSON lines, as ccs bundle's -embeddings), FILE?ids=COLUMN for ids of another name (corpus.parquet?ids=doc_id), or NAME=clickhouse://HOST:PORT/DB.TABLE; repeat for several")
			fs.StringVar(&o.Addr, "addr", "127.0.0.1:8080", "`address` to listen on")
			fs.Int64Var(&o.MaxBody, "max-body", 32<<20, "largest request body in `bytes`")
			fs.IntVar(&o.MaxPoints, "max-points", 100_000, "most points per request")
			fs.IntVar(&o.MaxResults, "max-results", 10_000, "most retrieval hits per response")
			fs.DurationVar(&o.DrainDelay, "drain-delay", 0, "after SIGTERM or SIGINT, how long to go on serving with /readyz answering 503, for a load balancer to see it and send no more, before accepting no new connection")
			fs.DurationVar(&o.Grace, "shutdown-grace", 30*time.Second, "how long in-flight requests may take once no new connection is accepted (after -drain-delay); requests still running then are cut, and serve exits 1")
			fs.Float64Var(&o.MonitorDelta, "monitor-delta", 0.01, "each OOD drift monitor raises its alarm when its test martingale reaches 1/`δ` (false alarm on an in-distribution stream: probability ≤ δ)")
			fs.IntVar(&o.MonitorLimit, "monitor-limit", 1_000_000, "points each OOD drift monitor observes (8 to 16 bytes of memory each) before it is full: it then observes no more, and says so, until POST …/ood/monitor/reset; 0: no limit")
			fs.Uint64Var(&o.MonitorSeed, "monitor-seed", 0, "`seed` of the OOD drift monitors' smoothing (their p-values' tie-breaking draws; each reset and reload draws the seed's next ones): drawn at start unless given, and logged, so that a run's monitors can be replayed")
			fs.StringVar(&o.AuthTokens, "auth-tokens", "", "tokens `file`: one per line, TOKEN, NAME:TOKEN or NAME:TOKEN:ROLE (read, the default, or admin; at least 16 characters); every endpoint but /healthz and /readyz then needs Authorization: Bearer TOKEN; read again on reload")
			fs.StringVar(&o.Metrics, "metrics", "token", "who may read /metrics when there are tokens: token (a read token), open (anyone) or off (not served)")
			fs.BoolVar(&o.Insecure, "insecure", false, "listen on an address beyond loopback without -auth-tokens (anyone who reaches the port may read the sets)")
			fs.StringVar(&o.TLSCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) `file` (TLS 1.2 or later); read again on reload")
			fs.StringVar(&o.TLSKey, "tls-key", "", "the PEM private key `file` of -tls-cert")
			fs.IntVar(&o.MaxConns, "max-conns", 1024, "most connections open at once; more wait to be accepted")
			fs.IntVar(&o.MaxInflight, "max-inflight", 0, "most requests handled at once, others wait their turn (0: 2 per CPU, at least 4)")
			fs.Int64Var(&o.BodyMemory, "body-memory", 0, "memory in `bytes` all request bodies may hold at once, reserved as their bytes arrive; a body beyond it is answered 503 (0: 4 × -max-body, at least 256 MiB)")
			fs.BoolVar(&o.HalfCopy, "half-copy", true, "keep a compact copy of each collection an ℓ2 or generalized ball set searches, made at load (half-precision for the ℓ2 ball: half again the collection's memory; 8 bits for the generalized ball: a quarter again), and searches that screen it first, about twice as fast; -half-copy=false scans the float32 rows alone")
			fs.Int64Var(&o.TransformMemory, "transform-memory", 4<<30, "memory in `bytes` the single-norm, ellipsoid and head's sets may take for their transformed collections (M·z of each item, L⁻¹·z for an ellipsoid, W·z behind a head, made at each load so that retrieval costs O(d) per item); a transform over it is refused and that pair scanned plainly (GET /v1/sets says which); a reload holds both generations, up to twice this; 0 or negative: none")
			return func() error {
				fs.Visit(func(f *flag.Flag) { o.monitorSeedSet = o.monitorSeedSet || f.Name == "monitor-seed" })
				return nil
			}
		}, runServe)
}

func runServe(ctx context.Context, o serveOptions, out *output) error {
	if len(o.Sets) == 0 {
		return usagef("serve: give at least one -set NAME=FILE.json")
	}
	for _, f := range []struct {
		name  string
		value any
		ok    bool
		want  string
	}{
		{"max-body", o.MaxBody, o.MaxBody >= 1, "a positive value"}, {"max-points", o.MaxPoints, o.MaxPoints >= 1, "a positive value"},
		{"max-results", o.MaxResults, o.MaxResults >= 1, "a positive value"}, {"max-conns", o.MaxConns, o.MaxConns >= 1, "a positive value"},
		{"shutdown-grace", o.Grace, o.Grace > 0, "a positive value"}, {"max-inflight", o.MaxInflight, o.MaxInflight >= 0, "0 (2 per CPU, at least 4) or more"},
		{"body-memory", o.BodyMemory, o.BodyMemory >= 0, "0 (4 × -max-body, at least 256 MiB) or more"}, {"drain-delay", o.DrainDelay, o.DrainDelay >= 0, "0 or more"},
	} {
		if !f.ok {
			return usagef("serve: -%s %v: want %s", f.name, f.value, f.want)
		}
	}
	if !(o.MonitorDelta > 0 && o.MonitorDelta < 1) {
		return usagef("serve: -monitor-delta %v: want 0 < δ < 1", o.MonitorDelta)
	}
	if o.MonitorLimit < 0 {
		return usagef("serve: -monitor-limit %d: want ≥ 0 (0: no limit)", o.MonitorLimit)
	}
	if !o.monitorSeedSet {
		o.MonitorSeed = rand.Uint64() // a run's own draws; logged below
	}
	monitorLimit := o.MonitorLimit
	if monitorLimit == 0 {
		monitorLimit = -1 // serve.Config's "none"
	}
	metrics, err := serve.ParseMetricsAccess(o.Metrics)
	if err != nil {
		return usagef("serve: -metrics: %v", err)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return usagef("serve: give -tls-cert and -tls-key together")
	}
	cfg := serve.Config{Sets: o.Sets, Collections: o.Collections, MaxBody: o.MaxBody, MaxPoints: o.MaxPoints, MaxResults: o.MaxResults,
		MonitorDelta: cmp.Or(o.MonitorDelta, 0.01), MonitorLimit: monitorLimit, MonitorSeed: o.MonitorSeed, TransformBytes: cmp.Or(o.TransformMemory, -1), NoHalf: !o.HalfCopy,
		TokensFile: o.AuthTokens, Metrics: metrics, TLSCert: o.TLSCert, TLSKey: o.TLSKey, MaxConns: o.MaxConns, MaxInflight: o.MaxInflight, BodyMemory: o.BodyMemory,
		Logger: log.New(out.stderr, "ccs serve: ", 0)}
	// Limits whose byte budgets would overflow are refused before
	// anything is read or bound.
	if err := cfg.Check(); err != nil {
		return usagef("%v", err)
	}
	// An address that no listener could take is a flag's mistake.
	if _, port, err := net.SplitHostPort(o.Addr); err != nil {
		return usagef("serve: -addr %s: %v: want HOST:PORT (127.0.0.1:8080; :8080 for every interface)", o.Addr, err)
	} else if _, err := net.LookupPort("tcp", port); err != nil { // a number to 65535, or a service's name
		return usagef("serve: -addr %s: port %s: want a number from 0 to 65535 (0: any free port)", o.Addr, port)
	}
	// A tokens file that cannot be read, or holds none, is refused before
	// the port is bound and the loading probes answer healthy (serve.New
	// reads it again, as SIGHUP does).
	if o.AuthTokens != "" {
		if _, err := serve.ReadTokens(o.AuthTokens); err != nil {
			return fmt.Errorf("-auth-tokens: %w", err)
		}
	}
	// Listen first, so that the address judged is the one bound (a name
	// resolved once, by the listener).
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	local := ln.Addr().(*net.TCPAddr).IP.IsLoopback()
	if !local && o.AuthTokens == "" && !o.Insecure {
		return usagef("serve: -addr %s would listen on %s, beyond this machine, where without -auth-tokens anyone who reaches the port could read every set and collection: give -auth-tokens FILE (see docs/security.md), or -insecure if a proxy in front checks who calls", o.Addr, ln.Addr())
	}
	for _, w := range serve.TokensFileWarnings(o.AuthTokens, o.TLSCert != "", local, "-tls-cert") {
		fmt.Fprintf(out.stderr, "ccs serve: warning: %s\n", w)
	}
	// While the files load (seconds for a large collection), probes are
	// answered — /healthz 200, /readyz 503 — rather than left hanging on
	// a bound port that accepts nothing.
	var loadingTLS *tls.Config
	if o.TLSCert != "" {
		if cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey); err == nil { // else serve.New says why
			loadingTLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		}
	}
	stopLoading, err := serve.ServeLoading(ln, loadingTLS)
	if err != nil {
		return err
	}
	fmt.Fprintf(out.stderr, "ccs serve: loading %s and %s on %s: /healthz answers 200, /readyz 503, until they are served\n", plural(len(o.Sets), "set", "sets"), plural(len(o.Collections), "collection", "collections"), ln.Addr())
	// The signals are ours from before the load: SIGTERM while the files
	// load stops the process (the load is left to the exiting process)
	// rather than being taken by the command's context and ignored. One
	// that came before this (while the flags were read, the port bound)
	// the command's context alone has: it stops serve too.
	hup, stop, done := serveSignals()
	defer done()
	type loaded struct {
		srv *serve.Server
		err error
	}
	lc, load := make(chan loaded, 1), serveNew
	go func() {
		srv, err := load(cfg)
		lc <- loaded{srv, err}
	}()
	var srv *serve.Server
	stopped := ""
	select {
	case l := <-lc:
		srv, err = l.srv, l.err
	case sig := <-stop:
		stopped = sig.String()
	case <-ctx.Done():
		stopped = signalCause(ctx)
	}
	if stopped == "" && err == nil && ctx.Err() != nil { // loaded as the signal's cancel was on its way
		stopped = signalCause(ctx)
		lc <- loaded{srv: srv}
	}
	if stopped != "" {
		stopLoading()
		go func() { // a test's process lives on: close what the load makes
			if l := <-lc; l.srv != nil {
				l.srv.Close()
			}
		}()
		fmt.Fprintf(out.stderr, "ccs serve: %s while loading: stopped\n", stopped)
		return nil
	}
	stopLoading()
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, scheme := srv.Listener(ln)
	hs := srv.HTTPServer(o.Addr)
	auth := "no tokens"
	if o.AuthTokens != "" {
		auth = "tokens from " + o.AuthTokens
	}
	for _, w := range srv.Warnings() {
		fmt.Fprintf(out.stderr, "ccs serve: warning: %s\n", w)
	}
	if n := srv.Monitors(); n > 0 && !o.monitorSeedSet {
		fmt.Fprintf(out.stderr, "ccs serve: %s seeded %d (-monitor-seed %d replays the draws)\n", plural(n, "OOD drift monitor", "OOD drift monitors"), o.MonitorSeed, o.MonitorSeed)
	}
	fmt.Fprintf(out.stderr, "ccs serve: %s, %s, %s, listening on %s://%s\n", plural(len(o.Sets), "set", "sets"), plural(len(o.Collections), "collection", "collections"), auth, scheme, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	for {
		select {
		case err := <-errc:
			return err
		case <-hup:
			srv.Reload("SIGHUP") // logged, as over HTTP
		case sig := <-stop:
			srv.Drain() // /readyz answers 503 from before the line that says so
			how := fmt.Sprintf("up to %v for requests in flight", o.Grace)
			if o.DrainDelay > 0 {
				how = fmt.Sprintf("serving on for %v with /readyz answering 503, then %s", o.DrainDelay, how)
			}
			fmt.Fprintf(out.stderr, "ccs serve: %v: draining (%s; a second signal stops at once)\n", sig, how)
			if err := srv.Stop(hs, errc, serve.StopOptions{Delay: o.DrainDelay, Grace: o.Grace, Force: stop}); err != nil {
				return err
			}
			fmt.Fprintf(out.stderr, "ccs serve: stopped\n")
			return nil
		}
	}
}

// signalCause is what stopped ctx, as serve's log names a signal:
// "terminated" for signal.NotifyContext's "terminated signal received".
func signalCause(ctx context.Context) string {
	return strings.TrimSuffix(context.Cause(ctx).Error(), " signal received")
}
