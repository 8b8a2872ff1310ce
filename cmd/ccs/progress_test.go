package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/train"
)

// TestProgressSettles: a table's progress gives no ETA before its first
// seed's runs are done (their baselines take a moment, the learned rows
// minutes), then the elapsed time's projection.
func TestProgressSettles(t *testing.T) {
	var stderr bytes.Buffer
	p := newProgress(&output{stdout: &bytes.Buffer{}, stderr: &stderr}, false, "run")
	p.settle = 3
	p.step(1, 12, "seed 0, Conformal Ball (ℓ2)")
	p.last = p.last.Add(-10 * time.Second) // a plain line at most every 10 seconds
	p.step(3, 12, "seed 0, Generalized (Neg)")
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "run 1/12  elapsed 0s  ETA after the first seed's 3  (seed 0, Conformal Ball (ℓ2))") ||
		!strings.Contains(lines[1], "run 3/12  elapsed 0s  ETA 0s") {
		t.Errorf("progress:\n%s", stderr.String())
	}
}

// TestProgressETAAfterSetup: the ETA projects the rate since the first
// step, not since the start: a first step that took a setup's time
// (ccs evaluate -db's first chunk: 19 s, then 0.5 s a chunk) gives no
// ETA, and the next ones the chunks' own rate.
func TestProgressETAAfterSetup(t *testing.T) {
	var stderr bytes.Buffer
	p := newProgress(&output{stdout: &bytes.Buffer{}, stderr: &stderr}, false, "chunk")
	p.start = p.start.Add(-19 * time.Second)
	p.step(1, 180, "")
	p.firstAt = p.firstAt.Add(-10 * time.Second) // 18 chunks in 10 s since
	p.last = p.last.Add(-10 * time.Second)
	p.step(19, 180, "")
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "chunk 1/180  elapsed 19s  ETA —") || !strings.HasSuffix(lines[1], "chunk 19/180  elapsed 19s  ETA 1m29s") {
		t.Errorf("progress:\n%s", stderr.String())
	}
}

// TestProgressLazy: a lazy progress (ccs retrieve's batches) prints no
// plain line before the run has taken 10 seconds, not even the last, and
// then a line at most every 10 seconds and the last.
func TestProgressLazy(t *testing.T) {
	for _, c := range []struct {
		name  string
		ago   time.Duration // the run's start, before the steps
		steps []int
		want  []string
	}{
		{"a moment", 0, []int{1, 500, 1000}, nil},
		{"minutes", -11 * time.Second, []int{1, 2, 1000}, []string{"anchor 1/1000  elapsed 11s", "anchor 1000/1000  elapsed 11s  ETA 0s"}},
	} {
		var stderr bytes.Buffer
		p := newProgress(&output{stdout: &bytes.Buffer{}, stderr: &stderr}, false, "anchor")
		p.lazy = true
		p.start = p.start.Add(c.ago)
		for _, done := range c.steps {
			p.step(done, 1000, "")
		}
		got := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if len(c.want) == 0 {
			if stderr.Len() != 0 {
				t.Errorf("%s: printed %q", c.name, stderr.String())
			}
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: lines %q, want %q", c.name, got, c.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], c.want[i]) {
				t.Errorf("%s: line %d %q, want %q…", c.name, i, got[i], c.want[i])
			}
		}
	}
}

// TestTrainProgressPlain: off a terminal a training prints every tenth
// epoch, and any epoch 10 seconds or more after the last line (epochs of
// minutes on a large split), and says at epoch 0 when its rows are
// streamed, even with -quiet.
func TestTrainProgressPlain(t *testing.T) {
	for _, c := range []struct {
		name  string
		quiet bool
		since time.Duration // since the last line
		p     train.Progress
		want  string // "" prints nothing
	}{
		{"epoch 3 soon after", false, time.Second, train.Progress{Epoch: 3, MaxEpochs: 150, Elapsed: time.Second}, ""},
		{"epoch 3 after 11 s", false, 11 * time.Second, train.Progress{Epoch: 3, MaxEpochs: 150, Elapsed: 12 * time.Minute}, "epoch   3/150"},
		{"epoch 10", false, time.Second, train.Progress{Epoch: 10, MaxEpochs: 150, Elapsed: time.Second}, "epoch  10/150"},
		{"streamed", false, time.Second, train.Progress{Epoch: 0, MaxEpochs: 150, Streamed: "rows streamed"}, "note: rows streamed"},
		{"streamed, quiet", true, time.Second, train.Progress{Epoch: 0, MaxEpochs: 150, Streamed: "rows streamed"}, "note: rows streamed"},
		{"quiet", true, time.Minute, train.Progress{Epoch: 3, MaxEpochs: 150}, ""},
	} {
		var stderr bytes.Buffer
		p := trainProgress{newProgress(&output{stdout: &bytes.Buffer{}, stderr: &stderr}, c.quiet, "epoch")}
		p.last = time.Now().Add(-c.since)
		p.Observe(c.p)
		switch got := stderr.String(); {
		case c.want == "" && got != "":
			t.Errorf("%s: printed %q", c.name, got)
		case c.want != "" && !strings.HasPrefix(got, c.want):
			t.Errorf("%s: %q, want %q…", c.name, got, c.want)
		}
	}
}

// TestProgressEpochs: a table's learned rows' epochs show off a terminal
// once the run has taken 10 seconds, at most every 10 seconds, named by
// seed and row; a quick table shows none.
func TestProgressEpochs(t *testing.T) {
	for _, c := range []struct {
		name       string
		ago, since time.Duration // the run's start, the last line
		want       string
	}{
		{"a quick table", time.Second, time.Minute, ""},
		{"soon after a line", time.Minute, time.Second, ""},
		{"minutes in", time.Minute, 11 * time.Second, "  seed 1, Generalized (Neg): epoch 12/150, validation exclusion 99.7% (best 99.8% at epoch 9), 3m2s in its training, at most 34m53s more"},
	} {
		var stderr bytes.Buffer
		p := newProgress(&output{stdout: &bytes.Buffer{}, stderr: &stderr}, false, "run")
		p.start, p.last = time.Now().Add(-c.ago), time.Now().Add(-c.since)
		p.epoch("Generalized (Neg)", 1, train.Progress{Epoch: 12, MaxEpochs: 150, ValExclusion: 0.997, BestExclusion: 0.998, BestEpoch: 9, Elapsed: 182 * time.Second})
		if got := strings.TrimSuffix(stderr.String(), "\n"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		// A cell's Size column, counted for minutes with a head's sets,
		// shows by the same rule.
		stderr.Reset()
		p.last = time.Now().Add(-c.since)
		p.sizes("Single (Vol) + InfoNCE", 0, 30, 120)
		if got, want := strings.TrimSuffix(stderr.String(), "\n"), "  seed 0, Single (Vol) + InfoNCE: the Size column's sets, 25% counted"; (got == want) != (c.want != "") {
			t.Errorf("%s: sizes %q, want %q or nothing", c.name, got, want)
		}
	}
}

// TestParts: ccs ood's parts (its k-NN searches, the baselines done) each
// keep a clock of their own from their first report; off a terminal a
// part done within a second prints nothing, a longer one its end, and a
// line before its end only 10 seconds after its start or the last line;
// a part run again starts afresh.
func TestParts(t *testing.T) {
	type report struct {
		name        string
		done, total int
		ago         time.Duration // the part's clock moved back before the report
	}
	for _, c := range []struct {
		name    string
		reports []report
		want    []string
	}{
		{"quick", []report{{"KNN score", 96, 5000, 0}, {"KNN score", 5000, 5000, 0}}, nil},
		{"over a second", []report{{"KNN score", 96, 5000, 0}, {"KNN score", 5000, 5000, 2 * time.Second}},
			[]string{"KNN score 5000/5000  elapsed 2s  ETA 0s"}},
		{"long", []report{{"D-KNN fit", 96, 60000, 0}, {"D-KNN fit", 30000, 60000, 11 * time.Second}, {"D-KNN fit", 31000, 60000, 0}, {"D-KNN fit", 60000, 60000, 10 * time.Second}},
			[]string{"D-KNN fit 30000/60000  elapsed 11s  ETA 11s", "D-KNN fit 60000/60000  elapsed 21s  ETA 0s"}},
		{"again", []report{{"KNN score", 96, 5000, 0}, {"KNN score", 5000, 5000, 2 * time.Second}, {"KNN score", 96, 9998, 0}, {"KNN score", 9998, 9998, 0}},
			[]string{"KNN score 5000/5000  elapsed 2s  ETA 0s"}},
		{"zero starts the clock", []report{{"baselines", 0, 8, 0}, {"baselines", 8, 8, 3 * time.Second}},
			[]string{"baselines 8/8  elapsed 3s  ETA 0s"}},
	} {
		var stderr bytes.Buffer
		p := newParts(&output{stdout: &bytes.Buffer{}, stderr: &stderr}, false)
		for _, r := range c.reports {
			if b := p.bars[r.name]; b != nil {
				b.start = b.start.Add(-r.ago)
				if !b.last.IsZero() {
					b.last = b.last.Add(-r.ago)
				}
				if !b.firstAt.IsZero() {
					b.firstAt = b.firstAt.Add(-r.ago)
				}
			}
			p.step(r.name, r.done, r.total, "")
		}
		var got []string
		if s := strings.TrimSpace(stderr.String()); s != "" {
			got = strings.Split(s, "\n")
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: lines %q, want %q", c.name, got, c.want)
		}
	}
}

// TestProgressAlive: a run of minutes between two steps says every after
// that the next is still running (a comparison's ellipsoid cell at
// d = 768 was silent 3 min 37 s); steps in time, or a quiet progress,
// say nothing more, and stop ends it.
func TestProgressAlive(t *testing.T) {
	var stderr syncBuffer
	p := newProgress(&output{stdout: &bytes.Buffer{}, stderr: &stderr}, false, "run")
	stop := p.alive(40 * time.Millisecond)
	time.Sleep(400 * time.Millisecond)
	if !strings.Contains(stderr.String(), "the first run running for") {
		t.Errorf("before the first step: %q", stderr.String())
	}
	p.step(1, 2, "")
	time.Sleep(400 * time.Millisecond)
	stop()
	got := stderr.String()
	if !strings.Contains(got, "run 1/2  elapsed") || !strings.Contains(got, "(the next run running for") {
		t.Errorf("after a step: %q", got)
	}
	time.Sleep(60 * time.Millisecond)
	if stderr.String() != got {
		t.Errorf("a line after stop: %q", stderr.String()[len(got):])
	}
	var quiet syncBuffer
	q := newProgress(&output{stdout: &bytes.Buffer{}, stderr: &quiet}, true, "run")
	stopQ := q.alive(10 * time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	stopQ()
	if quiet.String() != "" {
		t.Errorf("quiet: %q", quiet.String())
	}
}
