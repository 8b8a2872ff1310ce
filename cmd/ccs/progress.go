package main

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/ccsets/ccs/internal/percent"
	"github.com/ccsets/ccs/train"
)

// progress shows how far a long command is: on a terminal one line redrawn
// in place, otherwise a plain line at most every 10 seconds and at the end.
type progress struct {
	out         *output
	off, tty    bool
	unit        string
	start, last time.Time
	// settle is the count of steps before which the ETA is not given:
	// a table's first seed, whose baselines run in a moment and its
	// learned rows in minutes (an ETA of 9 s for a 9-minute run).
	settle int
	// lazy keeps a plain line back until the run has taken 10 seconds
	// (the last too, if none came before): a batch that answers in a
	// moment prints nothing, one of minutes its progress.
	lazy bool
	// firstAt and firstDone are the first step's time and count: the
	// ETA projects the rate since then, not since start, whose first
	// step may hold a setup of its own (ccs evaluate -db's first chunk
	// took 19 s of preparing the collection, then 0.5 s a chunk: an ETA
	// of 56 minutes for a run of 100 seconds).
	firstAt   time.Time
	firstDone int
	// stepAt, done and total are the last step's time and counts, for
	// alive.
	stepAt      time.Time
	done, total int
	// quick, when positive, is a part's least time worth a line off a
	// terminal (ccs ood's k-NN searches, each a part): its end is shown
	// only once it has run that long, a line before its end only 10
	// seconds after its start or the last line.
	quick time.Duration
	mu    sync.Mutex // step and epoch may be called from several goroutines
}

func newProgress(out *output, quiet bool, unit string) *progress {
	return &progress{out: out, off: quiet, tty: out.terminal(), unit: unit, start: time.Now()}
}

func (p *progress) step(done, total int, what string) {
	if p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	el := now.Sub(p.start)
	if p.firstAt.IsZero() {
		p.firstAt, p.firstDone = now, done
	}
	p.stepAt, p.done, p.total = now, done, total
	eta := "—" // no rate before a second step
	if done > p.firstDone {
		eta = time.Duration(float64(now.Sub(p.firstAt)) / float64(done-p.firstDone) * float64(total-done)).Round(time.Second).String()
	} else if done >= total {
		eta = "0s"
	}
	msg := fmt.Sprintf("%s %d/%d  elapsed %s  ETA %s", p.unit, done, total, el.Round(time.Second), eta)
	if done < p.settle {
		msg = fmt.Sprintf("%s %d/%d  elapsed %s  ETA after the first seed's %d", p.unit, done, total, el.Round(time.Second), p.settle)
	}
	if what != "" {
		msg += "  (" + what + ")"
	}
	switch {
	case p.tty:
		fmt.Fprintf(p.out.stderr, "\r\033[K%s", msg)
		if done == total {
			fmt.Fprintln(p.out.stderr)
		}
	case p.lazy && p.last.IsZero() && el < 10*time.Second:
	case p.quick > 0 && done < total && now.Sub(p.since()) < 10*time.Second:
	case p.quick > 0 && done == total && el < p.quick:
	case done == total || now.Sub(p.last) >= 10*time.Second:
		fmt.Fprintln(p.out.stderr, msg)
		p.last = now
	}
}

// alive shows, every after without a step, that the next one is still
// running and for how long, until stop is called (stop waits for a line
// being written): a comparison's Mahalanobis ellipsoid at d = 768 and
// 150 000 rows ran 3 min 37 s between two lines.
func (p *progress) alive(after time.Duration) (stop func()) {
	if p.off {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(after / 4)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				p.mu.Lock()
				from := p.stepAt
				if from.IsZero() {
					from = p.start
				}
				if now.Sub(from) >= after && now.Sub(p.since()) >= after && p.done < p.total || p.total == 0 && now.Sub(p.since()) >= after {
					msg := fmt.Sprintf("%s %d/%d  elapsed %s  (the next %s running for %s)", p.unit, p.done, p.total, now.Sub(p.start).Round(time.Second), p.unit, now.Sub(from).Round(time.Second))
					if p.total == 0 {
						msg = fmt.Sprintf("the first %s running for %s", p.unit, now.Sub(from).Round(time.Second))
					}
					if p.tty {
						fmt.Fprintf(p.out.stderr, "\r\033[K%s", msg)
					} else {
						fmt.Fprintln(p.out.stderr, msg)
					}
					p.last = now
				}
				p.mu.Unlock()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// since is when the last line was shown, or the start before any.
func (p *progress) since() time.Time {
	if p.last.IsZero() {
		return p.start
	}
	return p.last
}

// parts shows the named parts of a long run (ccs ood's baselines and
// their k-NN searches), each a progress of its own from its first report
// (done 0 starts its clock) to its end; a part run again (a search of
// another file) starts afresh. Off a terminal a part shorter than a
// second prints nothing.
type parts struct {
	out  *output
	off  bool
	mu   sync.Mutex
	bars map[string]*progress
}

func newParts(out *output, quiet bool) *parts {
	return &parts{out: out, off: quiet, bars: map[string]*progress{}}
}

// step reports part name's done of total units; what, if not empty,
// says what was done last.
func (p *parts) step(name string, done, total int, what string) {
	if p.off {
		return
	}
	p.mu.Lock()
	b := p.bars[name]
	if b == nil || done == 0 {
		b = newProgress(p.out, false, name)
		b.quick = time.Second
		p.bars[name] = b
	}
	if done >= total {
		delete(p.bars, name)
	}
	p.mu.Unlock()
	if done > 0 {
		b.step(done, total, what)
	}
}

// epoch shows a table's learned row training (experiment.Config.Epochs):
// a cell of a large split trains for minutes, hours for a whole table,
// between two of step's lines. Off a terminal a line comes once the run
// has taken 10 seconds and 10 seconds after the last line; nothing at
// all for a quick table.
func (p *progress) epoch(row string, seed uint64, pr train.Progress) {
	if p.off {
		return
	}
	// A bound on what the row's training has left (its early stop may end
	// it sooner): a table's first seed gives no ETA until it ends, and a
	// d = 768 user's ran 6 minutes without one.
	left := ""
	if pr.Epoch > 0 && pr.MaxEpochs > pr.Epoch {
		left = fmt.Sprintf(", at most %s more", (pr.Elapsed / time.Duration(pr.Epoch) * time.Duration(pr.MaxEpochs-pr.Epoch)).Round(time.Second))
	}
	p.note(fmt.Sprintf("  seed %d, %s: epoch %d/%d, validation exclusion %.1f%% (best %.1f%% at epoch %d), %s in its training%s",
		seed, row, pr.Epoch, pr.MaxEpochs, 100*pr.ValExclusion, 100*pr.BestExclusion, pr.BestEpoch, pr.Elapsed.Round(time.Second), left))
}

// note shows a line within a cell: on a terminal at once, in place;
// otherwise once the run has taken 10 seconds and 10 seconds after the
// last line.
func (p *progress) note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	switch {
	case p.tty:
		fmt.Fprintf(p.out.stderr, "\r\033[K%s", msg)
	case now.Sub(p.start) >= 10*time.Second && now.Sub(p.last) >= 10*time.Second:
		fmt.Fprintln(p.out.stderr, msg)
		p.last = now
	}
}

// sizes shows a cell's Size column being counted
// (experiment.Config.SizeProgress), as epoch shows a training: a head's
// sets took minutes a cell there, with no line.
func (p *progress) sizes(row string, seed uint64, done, total int) {
	if p.off || total <= 0 {
		return
	}
	p.note(fmt.Sprintf("  seed %d, %s: the Size column's sets, %d%% counted", seed, row, 100*done/total))
}

// trainProgress shows a training run: epoch, loss, validation exclusion and
// an ETA bounded by the maximum number of epochs (early stopping may end it
// sooner).
type trainProgress struct{ *progress }

func (p trainProgress) Observe(pr train.Progress) {
	if pr.Streamed != "" && pr.Epoch == 0 {
		fmt.Fprintf(p.out.stderr, "note: %s\n", pr.Streamed)
	}
	if p.off {
		return
	}
	loss := "—"
	if !math.IsNaN(pr.Loss) {
		loss = fmt.Sprintf("%.4g", pr.Loss)
	}
	eta := "—" // nothing timed yet at epoch 0
	if pr.Epoch > 0 {
		eta = (pr.Elapsed / time.Duration(pr.Epoch) * time.Duration(pr.MaxEpochs-pr.Epoch)).Round(time.Second).String()
	}
	const width = 20
	fill := width * pr.Epoch / pr.MaxEpochs
	bar := "[" + strings.Repeat("=", fill) + strings.Repeat(" ", width-fill) + "]"
	msg := fmt.Sprintf("epoch %3d/%d %s loss %s  val exclusion %s (best %s at epoch %d)  ETA ≤ %s",
		pr.Epoch, pr.MaxEpochs, bar, loss, percent.Format(pr.ValExclusion, 1), percent.Format(pr.BestExclusion, 1), pr.BestEpoch, eta)
	if pr.Done {
		msg = fmt.Sprintf("trained %d epochs (%s) in %s: best validation exclusion %s at epoch %d",
			pr.Epoch, pr.StopReason, pr.Elapsed.Round(time.Millisecond), percent.Format(pr.BestExclusion, 1), pr.BestEpoch)
	}
	now := time.Now()
	switch {
	case p.tty:
		fmt.Fprintf(p.out.stderr, "\r\033[K%s", msg)
		if pr.Done {
			fmt.Fprintln(p.out.stderr)
		}
	case pr.Done || pr.Epoch%10 == 0 || now.Sub(p.last) >= 10*time.Second:
		// Every tenth epoch, and at least every 10 seconds where epochs
		// are long (a 400 000-item fit's take minutes each).
		fmt.Fprintln(p.out.stderr, msg)
		p.last = now
	}
}

// heartbeat says on stderr, after after and then every every, that what
// is still running and for how long — for a step that reports no
// progress of its own (an evaluation of a single-norm set at d = 3 072
// ran 11 minutes without a word) — until stop is called; stop waits for
// a line being written.
func heartbeat(out *output, what string, after, every time.Duration) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTimer(after)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(out.stderr, "%s: %s so far\n", what, time.Since(start).Round(time.Second))
				t.Reset(every)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
