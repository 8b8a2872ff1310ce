package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ccsets/ccs/serve"
)

// loadtestOptions are ccs loadtest's inputs.
type loadtestOptions struct {
	URL         string
	Body        string // the body's file
	Data        string // the body, inline
	ContentType string
	Rate        float64 // requests per second in all; 0: as fast as answered
	Duration    time.Duration
	Requests    int
	Concurrency int
	JSON        bool
	TokenFile   string
	CACert      string
}

func loadtestCommand() *command {
	return newCommand("loadtest", "-url URL (-body FILE | -data JSON) [-content-type T] [-rate R] [-duration 10s] [-requests N] [-concurrency 8] [-token-file FILE] [-ca-cert CERT.pem] [-json]",
		"send one request repeatedly to a server, bounded in time and count, and report throughput and latency percentiles",
		func(fs *flag.FlagSet, o *loadtestOptions) func() error {
			fs.StringVar(&o.URL, "url", "", "request `URL`, e.g. http://127.0.0.1:8080/v1/sets/NAME/score (not a production server's …/ood: its drift monitor observes every point sent, the same one thousands of times; POST …/ood/monitor/reset after)")
			fs.StringVar(&o.Body, "body", "", "request body `file`")
			fs.StringVar(&o.Data, "data", "", "request body given inline")
			fs.StringVar(&o.ContentType, "content-type", "application/json", "request `type` (application/x-npy for .npy bodies)")
			fs.Float64Var(&o.Rate, "rate", 0, "requests per second in all (0: as fast as answered)")
			fs.DurationVar(&o.Duration, "duration", 10*time.Second, "stop after this long (0: only -requests bounds it)")
			fs.IntVar(&o.Requests, "requests", 0, "stop after this many requests (0: only -duration bounds it)")
			fs.IntVar(&o.Concurrency, "concurrency", 8, "keep-alive connections")
			fs.BoolVar(&o.JSON, "json", false, "print JSON")
			fs.StringVar(&o.TokenFile, "token-file", "", "send the token in this `file` (its first line) as Authorization: Bearer")
			fs.StringVar(&o.CACert, "ca-cert", "", "trust this PEM certificate `file` for https URLs (a self-signed server's)")
			return nil
		}, runLoadtest)
}

func runLoadtest(ctx context.Context, o loadtestOptions, out *output) error {
	if err := required("loadtest", "url", o.URL); err != nil {
		return err
	}
	if u, err := url.Parse(o.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("loadtest: -url %q: want an http:// or https:// URL with a host, such as http://127.0.0.1:8080/v1/sets/NAME/score", o.URL)
	}
	if (o.Body == "") == (o.Data == "") {
		return usagef("loadtest: give one of -body and -data")
	}
	if o.Duration <= 0 && o.Requests <= 0 {
		return usagef("loadtest: give a positive -duration or -requests: a load test stops by itself")
	}
	if o.Concurrency < 1 || o.Rate < 0 || o.Requests < 0 {
		return usagef("loadtest: want -concurrency at least 1, -rate and -requests ≥ 0")
	}
	if u, _ := url.Parse(o.URL); strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/ood") {
		// The same point thousands of times is no exchangeable stream:
		// the set's drift monitor raises its alarm, on whatever server
		// this is.
		out.warn(fmt.Sprintf("-url %s: the set's OOD drift monitor observes every point sent, and one body sent over and over is no exchangeable stream: an outlying body raises its alarm (ccs_ood_martingale_alarm), an in-distribution one drives its martingale toward 0, so that a later shift takes longer to alarm; reset it after (POST %s/monitor/reset, an admin token), or load-test a server of your own", u.Path, strings.TrimSuffix(u.Path, "/")))
	}
	body := []byte(o.Data)
	if o.Body != "" {
		var err error
		if body, err = os.ReadFile(o.Body); err != nil {
			return err
		}
	}
	cfg := serve.LoadConfig{URL: o.URL, ContentType: o.ContentType, Body: body,
		Rate: o.Rate, Duration: o.Duration, MaxRequests: o.Requests, Concurrency: o.Concurrency}
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return err
		}
		tok, _, _ := strings.Cut(string(b), "\n")
		if cfg.Token = strings.TrimSpace(tok); cfg.Token == "" {
			return fmt.Errorf("%s: no token on its first line", o.TokenFile)
		}
	}
	if o.CACert != "" {
		pem, err := os.ReadFile(o.CACert)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: no PEM certificate", o.CACert)
		}
		cfg.TLS = &tls.Config{RootCAs: pool}
	}
	r, err := serve.LoadTest(ctx, cfg)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := writeJSON(out.stdout, r); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(out.stdout, r)
	}
	if r.Refused == r.Requests { // no answer worth timing: the figures above are of refusals
		return fmt.Errorf("loadtest: every one of the %d answered requests was refused: %s", r.Requests, r.FirstError)
	}
	if r.FirstError != "" {
		out.warn("first error: " + r.FirstError)
	}
	return nil
}
