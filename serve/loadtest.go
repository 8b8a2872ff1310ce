package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// LoadConfig is a bounded load test: one request, repeated by Concurrency
// keep-alive connections until Duration has passed or MaxRequests have been
// sent, whichever comes first, at Rate requests per second in all (0: as
// fast as the server answers).
type LoadConfig struct {
	URL         string
	Method      string // default POST
	ContentType string // default application/json
	Body        []byte
	Rate        float64
	Duration    time.Duration
	MaxRequests int
	Concurrency int // default 8
	// Token, if set, is sent as "Authorization: Bearer Token".
	Token string
	// TLS configures https URLs (nil: the system's roots).
	TLS *tls.Config
	// Check, if set, judges each 2xx answer's body; an error counts as an
	// error of the test (the first one in FirstError).
	Check func(body []byte) error
}

// LoadResult is what a load test measured. Latencies are from sending the
// request to reading the whole response.
type LoadResult struct {
	Requests int `json:"requests"`
	Errors   int `json:"errors"` // transport errors and non-2xx answers
	// Refused counts the answered requests (Requests) that were refused:
	// non-2xx, or failing Check.
	Refused    int           `json:"refused"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	Throughput float64       `json:"requests_per_second"`
	P50        time.Duration `json:"p50_ns"`
	P90        time.Duration `json:"p90_ns"`
	P99        time.Duration `json:"p99_ns"`
	Max        time.Duration `json:"max_ns"`
	FirstError string        `json:"first_error,omitempty"`
}

// String is a one-line account of the result: the requests answered (and
// of them refused), and those no answer came for (a connection refused or
// cut: Errors beyond Refused), apart, so that a server that went away
// mid-run does not read as more errors than requests.
func (r LoadResult) String() string {
	lost := ""
	if n := r.Errors - r.Refused; n > 0 {
		lost = fmt.Sprintf(", %d not answered (connection refused or cut)", n)
	}
	return fmt.Sprintf("%d requests answered (%d refused)%s in %v: %.0f req/s, latency p50 %v p90 %v p99 %v max %v",
		r.Requests, r.Refused, lost, r.Elapsed.Round(time.Millisecond), r.Throughput, r.P50, r.P90, r.P99, r.Max)
}

// LoadTest runs cfg against a server. It is bounded: it needs a positive
// Duration or MaxRequests, and stops at ctx's end too.
func LoadTest(ctx context.Context, cfg LoadConfig) (LoadResult, error) {
	if cfg.Method == "" {
		cfg.Method = http.MethodPost
	}
	if cfg.ContentType == "" {
		cfg.ContentType = "application/json"
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 8
	}
	switch {
	case cfg.Duration <= 0 && cfg.MaxRequests <= 0:
		return LoadResult{}, errors.New("loadtest: give a duration or a number of requests (it must stop by itself)")
	case cfg.Concurrency < 1 || cfg.Rate < 0 || cfg.MaxRequests < 0:
		return LoadResult{}, fmt.Errorf("loadtest: concurrency %d, rate %v, requests %d", cfg.Concurrency, cfg.Rate, cfg.MaxRequests)
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: cfg.Concurrency, MaxIdleConnsPerHost: cfg.Concurrency,
		MaxConnsPerHost: cfg.Concurrency, IdleConnTimeout: time.Minute, TLSClientConfig: cfg.TLS}}
	defer client.CloseIdleConnections()

	// tickets hands out the right to send one request: counted, and paced
	// when Rate is set — request n is due at start + n/Rate, so the average
	// rate holds even when the sender falls behind for a moment.
	tickets := make(chan struct{})
	go func() {
		defer close(tickets)
		t0 := time.Now()
		for n := 0; cfg.MaxRequests == 0 || n < cfg.MaxRequests; n++ {
			if cfg.Rate > 0 {
				if wait := time.Until(t0.Add(time.Duration(float64(n) / cfg.Rate * float64(time.Second)))); wait > 0 {
					select {
					case <-time.After(wait):
					case <-ctx.Done():
						return
					}
				}
			}
			select {
			case tickets <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var mu sync.Mutex
	var lat []time.Duration
	res := LoadResult{}
	start := time.Now()
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			var errs, refused int // every failure, and the answers among them that refused
			var first string
			for range tickets {
				t0 := time.Now()
				req, err := http.NewRequestWithContext(ctx, cfg.Method, cfg.URL, bytes.NewReader(cfg.Body))
				if err != nil {
					errs++
					first = err.Error()
					continue
				}
				req.Header.Set("Content-Type", cfg.ContentType)
				if cfg.Token != "" {
					req.Header.Set("Authorization", "Bearer "+cfg.Token)
				}
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() != nil {
						break // the deadline, not the server
					}
					errs++
					first = err.Error()
					continue
				}
				var b []byte
				ok := resp.StatusCode/100 == 2
				switch {
				case cfg.Check != nil || !ok: // a refusal's body says why
					b, err = io.ReadAll(resp.Body)
				default:
					_, err = io.Copy(io.Discard, resp.Body)
				}
				resp.Body.Close()
				if err != nil && ctx.Err() != nil {
					break // the deadline, in the middle of the answer: not the server's
				}
				mine = append(mine, time.Since(t0))
				switch {
				case err != nil:
					errs, refused = errs+1, refused+1
					first = fmt.Sprintf("status %d, reading the answer: %v", resp.StatusCode, err)
				case !ok:
					errs, refused = errs+1, refused+1
					first = fmt.Sprintf("status %d: %s", resp.StatusCode, answerText(b))
				case cfg.Check != nil:
					if err := cfg.Check(b); err != nil {
						errs, refused = errs+1, refused+1
						first = err.Error()
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			res.Errors, res.Refused = res.Errors+errs, res.Refused+refused
			if first != "" && res.FirstError == "" {
				res.FirstError = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Requests = len(lat)
	if res.Requests == 0 && res.FirstError != "" {
		// Every request failed before an answer: why (an untrusted
		// certificate, nothing listening), with what to do where known.
		return res, fmt.Errorf("loadtest: no request completed: %d failed, the first: %s%s", res.Errors, res.FirstError, connectHint(res.FirstError))
	}
	if res.Requests == 0 {
		return res, errors.New("loadtest: no request completed")
	}
	slices.Sort(lat)
	at := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	res.P50, res.P90, res.P99, res.Max = at(0.5), at(0.9), at(0.99), lat[len(lat)-1]
	res.Throughput = float64(res.Requests) / res.Elapsed.Seconds()
	return res, nil
}

// answerText is a refusal's body for a message: its first 300 bytes, on
// one line.
func answerText(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:cutAt(s, 300)] + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return s
}

// connectHint is what to do about a request that failed before an answer
// (err's text): a server certificate not trusted, or nothing listening.
func connectHint(err string) string {
	switch {
	case strings.Contains(err, "unknown authority"):
		return " (a server of a self-signed certificate: give its CA, -ca-cert FILE)"
	case strings.Contains(err, "connection refused"):
		return " (is the server running, at that address and port?)"
	}
	return ""
}
