package main

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/ccsets/ccs/serve"
)

// serveOptions are ccs.serve's keywords: ccs serve's flags. Sets and
// Collections name files (the Python side saves a Set given as an object
// first); zero limits take ccs serve's defaults.
type serveOptions struct {
	Sets        map[string]string `json:"sets"`
	Collections map[string]string `json:"collections"`
	Addr        string            `json:"addr"`
	AuthTokens  string            `json:"auth_tokens"`
	Metrics     string            `json:"metrics"`
	Insecure    bool              `json:"insecure"`
	TLSCert     string            `json:"tls_cert"`
	TLSKey      string            `json:"tls_key"`
	MaxBody     int64             `json:"max_body"`
	MaxPoints   int               `json:"max_points"`
	MaxResults  int               `json:"max_results"`
	// Grace is how long, in seconds, requests in flight may take when the
	// server is closed; default 30, as ccs serve's -shutdown-grace.
	Grace float64 `json:"grace"`
	// MonitorSeed seeds the OOD drift monitors' smoothing (ccs serve's
	// -monitor-seed); nil: drawn at start, as ccs serve draws it.
	MonitorSeed *uint64 `json:"monitor_seed"`
}

// serverInfo is what the caller learns of a server once it listens.
type serverInfo struct {
	URL         string `json:"url"` // scheme://host:port, the port the one bound
	Sets        int    `json:"sets"`
	Collections int    `json:"collections"`
	// Warnings are the server's (serve.Server.Warnings), as ccs serve
	// prints them.
	Warnings []string `json:"warnings"`
}

// startServer is ccs serve in the caller's process: it binds the address
// and loads the sets and collections before it returns (so that a port in
// use or a bad file is the call's error), then serves on the library's
// goroutines as a job, until the job is cancelled (it then drains, as
// ccs serve on SIGTERM) or the server fails. A server listening beyond
// loopback needs tokens, unless insecure, as ccs serve does.
func startServer(o serveOptions) (*job, serverInfo, error) {
	if len(o.Sets) == 0 {
		return nil, serverInfo{}, fmt.Errorf("serve: give at least one set")
	}
	if o.MaxBody < 0 || o.MaxPoints < 0 || o.MaxResults < 0 || o.Grace < 0 {
		return nil, serverInfo{}, fmt.Errorf("serve: max_body, max_points, max_results and grace must not be negative (0: the default)")
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, serverInfo{}, fmt.Errorf("serve: give tls_cert and tls_key together")
	}
	for name, c := range o.Collections {
		if strings.Contains(c, "://") {
			return nil, serverInfo{}, fmt.Errorf("serve: collection %q: %s: this library serves collection files; a database table is served by the command (ccs serve -db %s=%s), whose build carries the driver", name, c, name, c)
		}
	}
	metrics, err := serve.ParseMetricsAccess(cmp.Or(o.Metrics, "token"))
	if err != nil {
		return nil, serverInfo{}, fmt.Errorf("serve: metrics: %w", err)
	}
	grace := 30 * time.Second
	if o.Grace > 0 {
		grace = time.Duration(o.Grace * float64(time.Second))
	}
	cfg := serve.Config{Sets: o.Sets, Collections: o.Collections, MaxBody: o.MaxBody, MaxPoints: o.MaxPoints, MaxResults: o.MaxResults,
		TokensFile: o.AuthTokens, Metrics: metrics, TLSCert: o.TLSCert, TLSKey: o.TLSKey, MonitorSeed: rand.Uint64()}
	if o.MonitorSeed != nil {
		cfg.MonitorSeed = *o.MonitorSeed
	}
	if err := cfg.Check(); err != nil {
		return nil, serverInfo{}, err
	}
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, serverInfo{}, fmt.Errorf("serve: %w", err)
	}
	if !ln.Addr().(*net.TCPAddr).IP.IsLoopback() && o.AuthTokens == "" && !o.Insecure {
		ln.Close()
		return nil, serverInfo{}, fmt.Errorf("serve: addr %s would listen on %s, beyond this machine, where without auth_tokens anyone who reaches the port could read every set and collection: give auth_tokens (a tokens file, docs/security.md), or insecure=True if a proxy in front checks who calls", addr, ln.Addr())
	}
	srv, err := serve.New(cfg)
	if err != nil {
		ln.Close()
		return nil, serverInfo{}, err
	}
	ln, scheme := srv.Listener(ln)
	hs := srv.HTTPServer(addr)
	loopback := ln.Addr().(*net.TCPAddr).IP.IsLoopback()
	info := serverInfo{URL: scheme + "://" + ln.Addr().String(), Sets: len(o.Sets), Collections: len(o.Collections),
		Warnings: warningsOf(append(serve.TokensFileWarnings(o.AuthTokens, o.TLSCert != "", loopback, "a TLS certificate"), srv.Warnings()...)...)}
	j := startJob("serve", func(ctx context.Context, j *job) error {
		defer srv.Close()
		errc := make(chan error, 1)
		go func() { errc <- hs.Serve(ln) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		return srv.Stop(hs, errc, serve.StopOptions{Grace: grace})
	})
	j.srv = srv
	return j, info, nil
}

// reload is the server's Reload (the sets, collections, tokens and
// certificate read again), as ccs serve's SIGHUP.
func (j *job) reload() error {
	if j.srv == nil {
		return fmt.Errorf("the job is a %s, not a server", j.what)
	}
	select {
	case <-j.done:
		return fmt.Errorf("serve: the server has stopped")
	default:
	}
	return j.srv.Reload("ccs.Server.reload")
}
