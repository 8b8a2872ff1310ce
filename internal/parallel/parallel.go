// Package parallel runs loops over fixed chunks on a persistent pool of
// goroutines, so that results do not depend on how many goroutines there
// are and no goroutine is started per call.
//
// In an execution trace (runtime/trace) each call of For (or Phases) is a
// region "parallel.For" on the calling goroutine, and each goroutine's turn at a
// call's chunks a region "parallel.chunks": when the workers joined, how
// long the caller waited for the last chunks (bench/traceinfo.py).
package parallel

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"
)

// Chunks returns the number of chunks of size chunk covering n items.
func Chunks(n, chunk int) int { return (n + chunk - 1) / chunk }

// For calls f(c, lo, hi) for every chunk c = 0..Chunks(n, chunk)−1 covering
// items [lo, hi), on up to workers goroutines (0 means GOMAXPROCS): the
// caller and idle workers of the package's pool. The chunk boundaries
// depend only on n and chunk, never on workers, so a caller that keeps one
// partial result per chunk and combines them in chunk order gets the same
// numbers for any number of goroutines.
//
// Chunks are handed out in order, one at a time, to whichever goroutine
// asks next. f may call For itself: a call that finds no idle worker runs
// its chunks on the calling goroutine alone, so nested calls never wait
// for each other.
func For(n, chunk, workers int, f func(c, lo, hi int)) {
	nc := Chunks(n, chunk)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, nc)
	if workers <= 1 {
		for c := range nc {
			f(c, c*chunk, min(n, (c+1)*chunk))
		}
		return
	}
	defer trace.StartRegion(context.Background(), "parallel.For").End()
	j := &job{f: f, n: n, chunk: chunk, fin: make(chan struct{})}
	j.nc.Store(int64(nc))
	invite(j, workers-1)
	j.run()
	j.wait()
	withdraw(j)
}

// wait returns once every chunk of j is done. A caller whose call invited
// longSpinners workers or more watches j's count for up to callerSpin
// before it sleeps on fin: the last chunks are usually a chunk's time
// away, and a sleeping caller is woken late. On a lent 16-core Xeon, in
// traces of twenty generalized epochs at 16 threads, sleeping callers were
// runnable 12% of the time and began their own chunks of a call 40 µs
// after it began (the 90th percentile), 27 ms in all; watching, 4% and 2
// µs, 9 ms in all, and the twenty epochs took 339 ms instead of 388. Four
// alternating runs of ten epochs: generalized 16.3–17.9 ms against
// 17.8–21.1, single-norm 77.7–86.6 ms against 82.9–93.7.
//
// Narrow calls watch for spinShort only, as idle workers do, so that
// processes sharing two cores do not spin against each other for long.
// They used to sleep at once; on a 2-vCPU AMD EPYC (a virtual machine) the
// woken caller then ran 10–50 µs late, often after its worker's short
// spin had run out, so that the next call woke the worker too: calls of
// 48 chunks of 25 µs on two threads took 35–60 µs more than their share
// of the work (serial parts of 0–60 µs between calls), watching 25–35 µs
// (BenchmarkCallOverhead).
//
// The caller watches fin itself, not the count of chunks done: the last
// chunk's goroutine counts it, then closes fin, and a caller that saw the
// count complete went to sleep on fin in between — at two threads on a
// 2-vCPU AMD EPYC, in 86 of the 420 calls of ten generalized epochs
// (traced). Its processor then stood idle, the close woke it onto the
// worker's processor, and the worker, yielding to it, waited in turn for
// the idle processor to wake: 60 times for 50 µs or more, 23.7 ms of the
// ten epochs (the caller 18 times, 7.7 ms). Watching fin, the caller
// slept in 20 calls, and those waits were 2.6 and 2.8 ms.
// BenchmarkCallOverhead, three runs each: 24–43 µs a call against 41–58.
func (j *job) wait() {
	limit := spinShort
	if j.invited >= longSpinners {
		limit = callerSpin
	}
	start := time.Now()
	for i := 0; ; i++ {
		select {
		case <-j.fin:
			return
		default:
		}
		if i%64 == 63 {
			if time.Since(start) > limit {
				break
			}
			if i%yieldEvery == yieldEvery-1 {
				runtime.Gosched()
			}
		}
	}
	<-j.fin
}

// Tasks calls f(i) for i = 0..n−1 on up to workers goroutines (0 means
// GOMAXPROCS), as For with chunks of one item. Tasks are handed out in
// the order of i: a caller with tasks of unequal length puts the longest
// first.
func Tasks(n, workers int, f func(i int)) {
	For(n, 1, workers, func(i, _, _ int) { f(i) })
}

// job is one call of For or Phases: its chunks, the next to hand out and
// how many are done. A worker may still hold a job after its last chunk is
// done; it then finds no chunk left and drops it.
type job struct {
	f        func(c, lo, hi int)
	n, chunk int
	nc       atomic.Int64 // chunks in all (Phases: MaxInt64 until the last phase is known)
	next     atomic.Int64
	done     atomic.Int64
	seats    atomic.Int32  // workers that may still join
	invited  int           // workers invited (seats at the start)
	fin      chan struct{} // closed by whoever finishes the last chunk

	// Phases only: the phase running, and each goroutine's share of its
	// tasks not yet handed out (the caller's first).
	cur    atomic.Pointer[stage]
	shares []share
}

// stage is a phase of a Phases call as it runs: its tasks are numbered
// across the call, from base on; lead is the next of its lead tasks;
// ready is set once its shares are, and gate closed once the next phase's
// are (a final phase's, never).
type stage struct {
	Phase
	base  int64
	lead  atomic.Int64
	ready atomic.Bool
	gate  chan struct{}
}

// end is one past the stage's last task.
func (s *stage) end() int64 { return s.base + int64(max(0, s.N)) }

func (j *job) run() {
	defer trace.StartRegion(context.Background(), "parallel.chunks").End()
	for {
		c := j.next.Add(1) - 1
		if c >= j.nc.Load() {
			// Every chunk is handed out: make room in offer for another
			// call's job (a nested one, whose caller may still be running
			// one of these chunks).
			withdraw(j)
			return
		}
		lo := int(c) * j.chunk
		j.f(int(c), lo, min(j.n, lo+j.chunk))
		if j.done.Add(1) == j.nc.Load() {
			close(j.fin)
		}
	}
}

// A Phase is tasks 0..N−1 of a call of Phases: Do(i) for each i. The
// first Lead are handed out in order to whichever goroutine asks next, as
// Tasks hands tasks out (tasks longer than the others, put first); the
// others in shares (Phases). Then, unless nil, runs once every task is
// done and returns the next phase.
type Phase struct {
	N, Lead int
	Do      func(i int)
	Then    func() Phase
}

// Phases runs the tasks of first, then its Then once, then the tasks of
// the phase Then returns, and so on until a phase without Then, on up to
// workers goroutines (0 means GOMAXPROCS): as Tasks would run each phase,
// with the Thens between them, but in one call whose goroutines stay with
// it from phase to phase. A phase's Then sees every task of the phase
// done, and every task of the next phase sees Then done; the goroutine
// that finishes a phase's last task runs its Then while the others wait
// (watching, then asleep). A call has fewer than 2³¹ tasks in all.
//
// After its lead tasks, each goroutine has a share of a phase's tasks: a
// contiguous range (the caller's first), which it takes in order, and
// with its own share done it takes the last tasks of the others' shares.
// A loop of calls that write per-task results (partial sums by task)
// then mostly finds each task's results in the cache of the core that
// wrote them last, where For hands every task to whichever goroutine asks
// next.
//
// A training step is one call: its positives' pass, the threshold
// selected from their scores (a Then), and the negatives' pass. On a
// 2-vCPU AMD EPYC, the median of twelve generalized epochs at two
// threads, alternating in one process with one thread and the variants,
// four runs: 58.7–67.8 ms an epoch against 61.7–69.8 as two calls of
// Tasks and 62.3–71.0 as one call of Phases handing tasks out as For
// does (one thread 104–111 ms).
func Phases(workers int, first Phase) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	for first.N <= 0 && first.Then != nil {
		first = first.Then()
	}
	if first.N <= 0 || workers <= 1 {
		for p := first; ; p = p.Then() {
			Tasks(p.N, workers, p.Do)
			if p.Then == nil {
				return
			}
		}
	}
	checkPhase(first, 0)
	defer trace.StartRegion(context.Background(), "parallel.For").End()
	j := &job{fin: make(chan struct{})}
	j.nc.Store(math.MaxInt64) // until the last phase is known
	j.shares = make([]share, workers)
	j.start(&stage{Phase: first})
	invite(j, workers-1)
	j.runShares(0)
	j.wait()
	withdraw(j)
}

// start makes s the phase running: its shares set, then ready.
func (j *job) start(s *stage) {
	s.gate = make(chan struct{})
	if s.Then == nil {
		j.nc.Store(s.end())
	}
	j.cur.Store(s)
	setShares(j.shares, s.base+int64(min(max(0, s.Lead), s.N)), s.end())
	s.ready.Store(true)
}

// advance runs once every task of s is done, on the goroutine that did
// the last: s's Then and the next phase's start, again while a phase has
// no tasks, or the call's end.
func (j *job) advance(s *stage) {
	for {
		if s.Then == nil {
			close(j.fin)
			return
		}
		next := &stage{Phase: s.Then(), base: s.end()}
		checkPhase(next.Phase, next.base)
		j.start(next)
		close(s.gate)
		if next.N > 0 {
			return
		}
		s = next
	}
}

func checkPhase(p Phase, base int64) {
	if base+int64(p.N) >= maxShare || p.Lead < 0 {
		panic(fmt.Sprintf("parallel: a phase of %d tasks, %d of them lead tasks, after %d tasks", p.N, p.Lead, base))
	}
}

// maxShare bounds a Phases call's tasks: a share packs two task indices in
// 64 bits.
const maxShare = 1 << 31

// share is one goroutine's range of a Phases call's tasks not yet handed
// out, packed front<<32 | back, on a cache line of its own: the owner
// takes from the front, others from the back.
type share struct {
	fb atomic.Uint64
	_  [56]byte
}

// setShares shares tasks [lo, hi) out among shares in contiguous ranges.
func setShares(shares []share, lo, hi int64) {
	k := int64(len(shares))
	for p := range shares {
		a, b := lo+(hi-lo)*int64(p)/k, lo+(hi-lo)*int64(p+1)/k
		shares[p].fb.Store(uint64(a)<<32 | uint64(b))
	}
}

// take hands goroutine p a task: the front of its own share, else the back
// of another's.
func take(shares []share, p int) (int64, bool) {
	k := len(shares)
	for i := range k {
		fb := &shares[(p+i)%k].fb
		for {
			v := fb.Load()
			f, b := v>>32, v&(1<<32-1)
			if f >= b {
				break
			}
			if i == 0 {
				if fb.CompareAndSwap(v, (f+1)<<32|b) {
					return int64(f), true
				}
			} else if fb.CompareAndSwap(v, f<<32|(b-1)) {
				return int64(b - 1), true
			}
		}
	}
	return 0, false
}

// takeTask hands goroutine p a task of a Phases call, s being the phase
// running, its shares set: a lead task of s, else one from the shares.
// That may be a later phase's (s having ended since), and it returns the
// task's phase: the one running now, since a phase starts before its
// shares are set and cannot end before this task has run.
func (j *job) takeTask(s *stage, p int) (*stage, int64, bool) {
	if lead := int64(s.Lead); s.lead.Load() < lead {
		if c := s.lead.Add(1) - 1; c < lead && c < int64(s.N) {
			return s, s.base + c, true
		}
	}
	c, ok := take(j.shares, p)
	if ok && c >= s.end() {
		s = j.cur.Load()
	}
	return s, c, ok
}

// runShares is run for goroutine p of a Phases call (the caller is 0).
func (j *job) runShares(p int) {
	defer trace.StartRegion(context.Background(), "parallel.chunks").End()
	for {
		s := j.cur.Load()
		if !s.ready.Load() {
			runtime.Gosched() // its shares are being set
			continue
		}
		t, c, ok := j.takeTask(s, p)
		if !ok {
			// Every task of s is handed out (its shares were set before
			// they were found empty).
			if s.Then == nil {
				withdraw(j)
				return
			}
			j.awaitGate(s)
			continue
		}
		t.Do(int(c - t.base))
		if j.done.Add(1) == t.end() {
			j.advance(t)
		}
	}
}

// wanted reports whether j may still have work for one more goroutine: a
// call of For with chunks not yet handed out, a call of Phases not yet
// done (a phase's tasks are not known before the one before it is done).
func (j *job) wanted() bool {
	if j.shares != nil {
		return j.done.Load() < j.nc.Load()
	}
	return j.next.Load() < j.nc.Load()
}

// awaitGate waits for the phase after s to start: watching for up to
// spinLong (a Then is a training step's serial part, tens of
// microseconds), then asleep.
func (j *job) awaitGate(s *stage) {
	start := time.Now()
	for i := 0; j.cur.Load() == s; i++ {
		if i%64 == 63 {
			if time.Since(start) > spinLong {
				<-s.gate
				return
			}
			if i%yieldEvery == yieldEvery-1 {
				runtime.Gosched()
			}
		}
	}
}

// The pool. A worker that has finished a job spins for a while watching
// offer, where For puts its job first: the next call of a loop of calls (a
// training step's) then starts on every core at once instead of waiting
// for sleeping workers to wake. Otherwise workers wait on an unbuffered
// channel, so a send succeeds only while a worker is idle, and a job is
// never queued behind busy ones.
var (
	jobs    = make(chan *job)
	offer   atomic.Pointer[job] // a job for spinning workers to join
	mu      sync.Mutex
	started atomic.Int64 // workers started
)

// spinShort and spinLong are how long an idle worker watches offer before
// it sleeps: spinLong after a spin that found a job of longSpinners or more
// workers (the worker is in a loop of wide calls, whose serial parts
// between calls it spans), otherwise spinShort (a few times what waking a
// sleeping goroutine costs), so that a process calling For now and then
// spends little on spinning.
//
// Waking sleeping workers is slow on many cores: each woken worker's
// thread is woken in turn, so on a lent 16-core Xeon (a virtual machine)
// the 13th worker joined a call 118 µs after it began (the median), in a
// training step whose calls take 150–900 µs. With 50 µs for every spin,
// the single-norm step's serial part (about 270 µs there: the SGD update,
// the selection of the threshold, M's float32 copy) put every worker to
// sleep once a step.
// Spinning 200 µs made the 16-thread generalized epoch 16.8–18.5 ms
// against 24.7–25.7 (one machine, alternating runs); these spins, with the
// single-norm's volume solves shared out better, 20.0–24.3 ms against
// 23.5–26.9, and the single-norm's 106–120 ms against 121–133.
//
// Only calls that invite at least longSpinners workers lead to long spins:
// waking one or two is quick, and where processes share few cores (go test
// running two packages' tests on 2 cores) a spinning worker takes a core
// from the other process's work: long spins for calls of any width made
// two of the test suite's longest packages, run side by side on 2 cores,
// 13% slower (92.1, 99.0 s against 80.6, 88.2).
//
// A worker that has run a call of Phases spins spinStep at least, however
// wide the call: Phases is a training step's call, in a loop of them, and
// the single-norm's serial part between steps (the SGD update, M's copies,
// the threshold's gradient: 110–160 µs at two threads on a 2-vCPU AMD
// EPYC) outlasted a spinShort spin every step, so that every step began by
// waking the worker. Traced (ten single-norm epochs at two threads), the
// delays before the caller's and the worker's first chunks came to 21.2
// ms instead of 50.7; two-thread epochs alternating in one process, six
// runs, 1.2% shorter on average (−6.8 to +1.1 ms of 200–213); the
// generalized ball's, whose steps are 14 µs apart, the same. The test
// suite's two longest packages side by side, three alternating runs:
// 660 s in all against 662.
const (
	callerSpin   = 200 * time.Microsecond
	spinStep     = 200 * time.Microsecond
	spinShort    = 50 * time.Microsecond
	spinLong     = 500 * time.Microsecond
	spinTail     = time.Millisecond
	longSpinners = 3
)

// yieldEvery is how many turns of the spin loop (a multiple of 64) pass
// between two runtime.Gosched calls, about 10 µs: a goroutine waiting for
// the spinning worker's P gets it within that, and the spinners no longer
// take the scheduler's lock in turn every few hundred nanoseconds (a
// Gosched every 64 turns). On a lent 16-core Xeon, one run each: the 2-,
// 4- and 8-thread generalized epochs 68.9, 41.8 and 24.6 ms before, 59.9,
// 34.6 and 23.1 ms after; the single-norm's 346, 218 and 134 ms before,
// 331, 215 and 121 after; at 16 threads mixed (generalized 18.6 → 21.7
// ms, single-norm 104 → 98 ms); the 20-seed simulation 598 → 577
// CPU-seconds. Never yielding made the 16-thread generalized epoch 25.2 ms.
const yieldEvery = 4096

// invite offers j to up to k workers: those spinning join it through
// offer, and it is sent to idle ones, starting workers (once, for the life
// of the process) until there are k.
//
// A worker woken by a send goes to the caller's processor's next slot,
// which another processor takes it from only after a pause (the runtime's
// runqgrab sleeps 3 µs first, far longer where sleeps are slow): in a
// trace of two threads on a 2-core AMD EPYC (a virtual machine) a woken
// worker ran 122 µs after the send, the median, its processor having
// started after 26 µs. So the caller yields once after waking workers:
// the last woken runs at once, on the caller's processor, and the caller
// goes on where a processor is free. Traced (three single-norm epochs at
// two threads), the worker began a call's chunks 24 µs after it began
// instead of 114 µs, the caller its own 53 µs instead of 16: together
// 35.5 ms of the epochs instead of 46.0 (the generalized ball's, 11.3
// instead of 9.3 ms: no gain).
func invite(j *job, k int) {
	if int(started.Load()) < k {
		grow(k)
	}
	j.invited = k
	j.seats.Store(int32(k))
	offer.CompareAndSwap(nil, j) // unless another call's job is there
	woke := false
	for range k {
		if j.seats.Load() <= 0 || !trySend(j) {
			break // every seat taken, or no idle worker: the caller and those invited do the rest
		}
		woke = true
	}
	if woke {
		runtime.Gosched()
	}
}

// trySend hands j to an idle worker, if one is waiting.
func trySend(j *job) bool {
	select {
	case jobs <- j:
		return true
	default:
		return false
	}
}

// withdraw takes j out of offer once it is done.
func withdraw(j *job) { offer.CompareAndSwap(j, nil) }

// join runs j's chunks if one of its seats is free.
func (j *job) join() {
	if s := j.seats.Add(-1); s >= 0 {
		if j.shares != nil {
			j.runShares(j.invited - int(s))
			return
		}
		j.run()
	}
}

func grow(k int) {
	mu.Lock()
	defer mu.Unlock()
	for int(started.Load()) < k {
		go worker()
		started.Add(1)
	}
	// Give the new workers a chance to reach their receive, so that this
	// call's invitations can find them.
	runtime.Gosched()
}

func worker() {
	var last *job
	spinFor := spinShort
	for {
		j := spin(last, spinFor)
		spinFor = spinShort
		if j == nil {
			j = <-jobs
		} else if j.invited >= longSpinners {
			spinFor = spinLong
		}
		if j.shares != nil {
			spinFor = max(spinFor, spinStep)
		}
		j.join()
		last = j
	}
}

// spin watches offer for a job other than last for spinFor, counted from
// the worker's own last chunk — or, where last is a call of longSpinners
// workers or more, from the end of that call: while another goroutine
// still runs one of its chunks the call is not over, and its caller's
// next call may follow at once (this for at most spinTail: a chunk may be
// a whole training). Counted from the worker's last chunk, the caller's
// last chunk and the serial part after it outlasted a 50 µs spin in 196
// of the generalized ball's 410 calls at two threads (invite's trace).
// Counting from the call's end at two threads too cut the delays before
// the caller's and the worker's chunks from 46.0 to 16.3 ms in three
// single-norm epochs (9.3 to 5.9 ms, generalized), but made five of the
// test suite's packages, run as go test runs them on 2 cores, 4.5% slower
// (128, 116 s against 122, 111); gated as the long spins are, 110, 115 s
// against 108, 122.
func spin(last *job, spinFor time.Duration) *job {
	start := time.Now()
	from := start // when last was last seen running
	for i := 0; ; i++ {
		if j := offer.Load(); j != nil && j != last && j.wanted() {
			return j
		}
		if i%64 == 63 {
			now := time.Now()
			if last != nil && last.invited >= longSpinners && last.done.Load() < last.nc.Load() && now.Sub(start) < spinTail {
				from = now
			} else if now.Sub(from) > spinFor {
				return nil
			}
			if i%yieldEvery == yieldEvery-1 {
				runtime.Gosched()
			}
		}
	}
}

// Started reports how many pool workers are running (for tests and
// benchmarks; they are started on demand and never stopped).
func Started() int { return int(started.Load()) }
