package main

import (
	"context"
	"flag"
	"fmt"
	"os"
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
}

func loadtestCommand() *command {
	return newCommand("loadtest", "-url URL (-body FILE | -data JSON) [-content-type T] [-rate R] [-duration 10s] [-requests N] [-concurrency 8] [-json]",
		"send one request repeatedly to a server, bounded in time and count, and report throughput and latency percentiles",
		func(fs *flag.FlagSet, o *loadtestOptions) func() error {
			fs.StringVar(&o.URL, "url", "", "request `URL`, e.g. http://127.0.0.1:8080/v1/sets/NAME/score")
			fs.StringVar(&o.Body, "body", "", "request body `file`")
			fs.StringVar(&o.Data, "data", "", "request body given inline")
			fs.StringVar(&o.ContentType, "content-type", "application/json", "request `type` (application/x-npy for .npy bodies)")
			fs.Float64Var(&o.Rate, "rate", 0, "requests per second in all (0: as fast as answered)")
			fs.DurationVar(&o.Duration, "duration", 10*time.Second, "stop after this long (0: only -requests bounds it)")
			fs.IntVar(&o.Requests, "requests", 0, "stop after this many requests (0: only -duration bounds it)")
			fs.IntVar(&o.Concurrency, "concurrency", 8, "keep-alive connections")
			fs.BoolVar(&o.JSON, "json", false, "print JSON")
			return nil
		}, runLoadtest)
}

func runLoadtest(ctx context.Context, o loadtestOptions, out *output) error {
	if err := required("loadtest", "url", o.URL); err != nil {
		return err
	}
	if (o.Body == "") == (o.Data == "") {
		return usagef("loadtest: give one of -body and -data")
	}
	if o.Duration <= 0 && o.Requests <= 0 {
		return usagef("loadtest: give a positive -duration or -requests: a load test must stop by itself")
	}
	if o.Concurrency < 1 || o.Rate < 0 || o.Requests < 0 {
		return usagef("loadtest: -concurrency must be at least 1, -rate and -requests at least 0")
	}
	body := []byte(o.Data)
	if o.Body != "" {
		var err error
		if body, err = os.ReadFile(o.Body); err != nil {
			return err
		}
	}
	r, err := serve.LoadTest(ctx, serve.LoadConfig{URL: o.URL, ContentType: o.ContentType, Body: body,
		Rate: o.Rate, Duration: o.Duration, MaxRequests: o.Requests, Concurrency: o.Concurrency})
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(out.stdout, r)
	}
	fmt.Fprintln(out.stdout, r)
	if r.FirstError != "" {
		out.warn("first error: " + r.FirstError)
	}
	return nil
}
