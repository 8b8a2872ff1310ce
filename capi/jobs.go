package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/serve"
	"github.com/ccsets/ccs/train"
)

// job is a long run — a fit, a comparison — on its own goroutine: the
// caller polls its progress and waits for it in slices, so that no call
// into the caller's language is ever made from Go, and cancels it by
// closing it.
type job struct {
	what string // "fit", "compare": in messages
	// bare leaves the work's error as it is, not prefixed by what: an
	// evaluation's name the call already.
	bare   bool
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	reports []any // progress not yet taken by the caller
	err     error
	// A fit's outcome.
	set      *conformal.Set
	result   *train.Result
	warnings []string // the fit's: its α, an untrained geometry
	// A comparison's: the document (ccs compare -json) and its text.
	doc   []byte
	text  string
	cells *cellCounts // with a results directory
	// A server's (ccs.serve): reloaded while it runs.
	srv *serve.Server
}

// startJob runs work on a goroutine of its own; a panic in it is the
// job's error, as an internal one.
func startJob(what string, work func(ctx context.Context, j *job) error) *job {
	return startJobBare(what, false, work)
}

// startJobBare is startJob, its error prefixed by what unless bare.
func startJobBare(what string, bare bool, work func(ctx context.Context, j *job) error) *job {
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{what: what, bare: bare, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(j.done)
		defer j.cancel()
		err := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = internalError(p)
				}
			}()
			return work(ctx, j)
		}()
		if err != nil {
			j.mu.Lock()
			if !j.bare {
				err = fmt.Errorf("%s: %w", j.what, err)
			}
			j.err = err
			j.mu.Unlock()
		}
	}()
	return j
}

// report keeps a progress report for the caller.
func (j *job) report(r any) {
	j.mu.Lock()
	j.reports = append(j.reports, r)
	j.mu.Unlock()
}

// wait waits for the job at most timeout and reports whether it is done.
func (j *job) wait(timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-j.done:
		return true
	case <-t.C:
		return false
	}
}

// partReports returns what a job's parts report through: {part, done,
// total, what} kept for the caller, at most one a part each 100 ms (a
// search reports every few inputs) but each part's end, and every step of
// the part named every; a step of done 0 says nothing.
func (j *job) partReports(every string) func(part string, done, total int, what string) {
	var last time.Time
	var lastPart string
	return func(part string, done, total int, what string) {
		if done == 0 || (done < total && part != every && part == lastPart && time.Since(last) < 100*time.Millisecond) {
			return
		}
		last, lastPart = time.Now(), part
		msg := fmt.Sprintf("%s %d/%d", part, done, total)
		if what != "" {
			msg += " (" + what + ")"
		}
		j.report(map[string]any{"part": part, "done": done, "total": total, "what": msg})
	}
}

// progress takes the reports made since the last call.
func (j *job) progress() []any {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.reports
	j.reports = nil
	if r == nil {
		r = []any{}
	}
	return r
}

// finished is nil once the job is done without an error; then its outcome
// fields are set and no longer change.
func (j *job) finished() error {
	select {
	case <-j.done:
	default:
		return fmt.Errorf("%s: the job is still running", j.what)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}
