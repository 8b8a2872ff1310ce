package parallel

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestForCoversEachChunkOnce: every chunk once, with the boundaries that
// depend only on n and chunk, for any number of workers (more than
// GOMAXPROCS included).
func TestForCoversEachChunkOnce(t *testing.T) {
	for _, tc := range []struct{ n, chunk, workers int }{
		{0, 4, 3}, {1, 4, 3}, {10, 3, 1}, {10, 3, 2}, {10, 3, 0}, {1000, 7, 8}, {64, 64, 4}, {65, 64, 4}, {5000, 1, 16},
	} {
		seen := make([]atomic.Int32, Chunks(tc.n, tc.chunk))
		var bad atomic.Int32
		For(tc.n, tc.chunk, tc.workers, func(c, lo, hi int) {
			if lo != c*tc.chunk || hi != min(tc.n, (c+1)*tc.chunk) {
				bad.Add(1)
			}
			seen[c].Add(1)
		})
		if bad.Load() != 0 {
			t.Errorf("n=%d chunk=%d workers=%d: %d chunks with wrong bounds", tc.n, tc.chunk, tc.workers, bad.Load())
		}
		for c := range seen {
			if v := seen[c].Load(); v != 1 {
				t.Errorf("n=%d chunk=%d workers=%d: chunk %d ran %d times", tc.n, tc.chunk, tc.workers, c, v)
			}
		}
	}
}

// TestForNested: For inside For's chunks, deeper than there are workers,
// finishes and covers everything (a call that finds no idle worker runs
// alone).
func TestForNested(t *testing.T) {
	var total atomic.Int64
	For(16, 1, 0, func(_, _, _ int) {
		For(16, 1, 0, func(_, _, _ int) {
			For(8, 2, 3, func(_, lo, hi int) { total.Add(int64(hi - lo)) })
		})
	})
	if got := total.Load(); got != 16*16*8 {
		t.Errorf("nested For covered %d items, want %d", got, 16*16*8)
	}
}

// TestForConcurrentCallers: For from many goroutines at once.
func TestForConcurrentCallers(t *testing.T) {
	var wg sync.WaitGroup
	sums := make([]int64, 12)
	for g := range sums {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := make([]int64, Chunks(1000, 9))
			For(1000, 9, 0, func(c, lo, hi int) {
				for i := lo; i < hi; i++ {
					part[c] += int64(i)
				}
			})
			for _, v := range part {
				sums[g] += v
			}
		}()
	}
	wg.Wait()
	for g, s := range sums {
		if s != 999*1000/2 {
			t.Errorf("caller %d: sum %d, want %d", g, s, 999*1000/2)
		}
	}
}

// TestForUsesPool: calls start no goroutines beyond the pool's workers.
func TestForUsesPool(t *testing.T) {
	w := max(2, runtime.GOMAXPROCS(0))
	For(100, 1, w, func(_, _, _ int) {}) // the pool's workers exist from here on
	before := runtime.NumGoroutine()
	for range 100 {
		For(100, 1, w, func(_, _, _ int) {})
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines after 100 calls, %d before", after, before)
	}
	if Started() < w-1 {
		t.Errorf("%d pool workers for %d goroutines", Started(), w)
	}
}

// TestForWorkersLimit: a call never runs its chunks on more goroutines
// than it asks for, also when pool workers are spinning from an earlier
// call with more.
func TestForWorkersLimit(t *testing.T) {
	old := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(old)
	busy := func(running, most *atomic.Int32) func(c, lo, hi int) {
		return func(_, _, _ int) {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(200 * time.Microsecond)
			running.Add(-1)
		}
	}
	for _, w := range []int{4, 2, 3, 2} {
		var running, most atomic.Int32
		For(64, 1, w, busy(&running, &most))
		if most.Load() > int32(w) {
			t.Errorf("workers %d: %d goroutines ran chunks at once", w, most.Load())
		}
	}
}

func TestTasks(t *testing.T) {
	got := make([]int, 37)
	Tasks(len(got), 0, func(i int) { got[i] = i * i })
	for i, v := range got {
		if v != i*i {
			t.Fatalf("task %d wrote %d", i, v)
		}
	}
}

// TestPhases: every task of every phase once, each phase's Then once
// between it and the next (after all its tasks, before any of the
// next's), on no more goroutines than asked for, also with tasks of
// unequal length, empty phases, Thens that take a while, nested calls in
// tasks and in Thens, and callers at once.
func TestPhases(t *testing.T) {
	old := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(old)
	check := func(t *testing.T, ns []int, lead, workers int, nested bool) {
		seen := make([][]atomic.Int32, len(ns))
		done := make([]atomic.Int32, len(ns))
		thens := make([]atomic.Int32, len(ns))
		for k, n := range ns {
			seen[k] = make([]atomic.Int32, max(0, n))
		}
		var stage, wrong, running, most, inner atomic.Int32 // stage: Thens run
		busy := func(i int) {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			if i%7 == 0 {
				time.Sleep(50 * time.Microsecond)
			}
			if nested && i%5 == 0 {
				For(10, 3, 0, func(_, lo, hi int) { inner.Add(int32(hi - lo)) })
			}
			running.Add(-1)
		}
		var phase func(k int) Phase
		phase = func(k int) Phase {
			p := Phase{N: ns[k], Lead: lead, Do: func(i int) {
				if stage.Load() != int32(k) {
					wrong.Add(1)
				}
				busy(i)
				seen[k][i].Add(1)
				done[k].Add(1)
			}}
			if k+1 < len(ns) {
				p.Then = func() Phase {
					thens[k].Add(1)
					if done[k].Load() != int32(max(0, ns[k])) || stage.Load() != int32(k) {
						wrong.Add(1)
					}
					time.Sleep(100 * time.Microsecond)
					if nested {
						Tasks(4, 0, func(int) { inner.Add(10) })
					}
					stage.Add(1)
					return phase(k + 1)
				}
			}
			return p
		}
		Phases(workers, phase(0))
		name := fmt.Sprintf("phases %v, lead %d, workers %d", ns, lead, workers)
		if wrong.Load() != 0 || int(stage.Load()) != len(ns)-1 {
			t.Errorf("%s: %d tasks or Thens out of turn; %d Thens ran", name, wrong.Load(), stage.Load())
		}
		for k := range ns {
			if v := thens[k].Load(); k+1 < len(ns) && v != 1 {
				t.Errorf("%s: phase %d's Then ran %d times", name, k, v)
			}
			for i := range seen[k] {
				if v := seen[k][i].Load(); v != 1 {
					t.Errorf("%s: phase %d's task %d ran %d times", name, k, i, v)
				}
			}
		}
		if w := int32(max(1, workers)); workers > 0 && most.Load() > w {
			t.Errorf("%s: %d goroutines ran tasks at once", name, most.Load())
		}
		if nested {
			want := int32(10 * 4 * (len(ns) - 1))
			for _, n := range ns {
				want += int32(10 * Chunks(max(0, n), 5))
			}
			if inner.Load() != want {
				t.Errorf("%s: nested calls covered %d items, want %d", name, inner.Load(), want)
			}
		}
	}
	for _, tc := range []struct {
		ns            []int
		lead, workers int
	}{
		{[]int{0, 5}, 0, 3}, {[]int{5, 0}, 1, 3}, {[]int{1, 1}, 0, 2}, {[]int{1, 1}, 1, 2}, {[]int{37, 53}, 3, 0},
		{[]int{100, 100}, 0, 8}, {[]int{3, 200}, 5, 16}, {[]int{200, 3}, 2, 2}, {[]int{20, 20}, 1, 1}, {[]int{-1, 4}, 0, 2},
		{[]int{10, 10}, 10, 3}, {[]int{7}, 1, 3}, {[]int{0}, 0, 2}, {[]int{30, 40, 9}, 1, 0}, {[]int{5, 0, 0, 6, 0}, 2, 3},
		{[]int{0, 0, 3, 1, 50}, 0, 2}, {[]int{48, 48, 4}, 1, 1},
	} {
		check(t, tc.ns, tc.lead, tc.workers, false)
		check(t, tc.ns, tc.lead, tc.workers, true)
	}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			check(t, []int{48, 50, 16}, 2, 0, true)
		}()
	}
	wg.Wait()
	// Phases inside For's chunks and For's inside Phases'.
	var total atomic.Int64
	For(8, 1, 0, func(_, _, _ int) {
		Phases(0, Phase{N: 6, Do: func(int) { total.Add(1) }, Then: func() Phase {
			return Phase{N: 6, Lead: 1, Do: func(int) {
				For(4, 1, 0, func(_, _, _ int) { total.Add(1) })
			}}
		}})
	})
	if got := total.Load(); got != 8*(6+6*4) {
		t.Errorf("nested Phases and For ran %d tasks, want %d", got, 8*(6+6*4))
	}
}

// BenchmarkForEmpty is the cost of one call of For with nothing to do in
// its chunks (what a loop of small calls pays per call).
func BenchmarkForEmpty(b *testing.B) {
	var sink atomic.Int64
	for b.Loop() {
		For(64, 1, 0, func(c, _, _ int) { sink.Add(int64(c)) })
	}
}

// benchWork is a training step's shape: three calls of For in a row, 50
// chunks each of about 25 µs of arithmetic, with a little serial work
// between them. -cpu 1,2 shows what a second core adds.
func benchWork(b *testing.B) {
	var sink atomic.Uint64
	work := func(c, lo, hi int) {
		x := uint64(c + 1)
		for i := lo; i < hi; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sink.Add(x)
	}
	for b.Loop() {
		for range 3 {
			For(50*20000, 20000, 0, work)
			x := uint64(1)
			for range 20000 { // serial work between the calls
				x = x*6364136223846793005 + 1
			}
			sink.Add(x)
		}
	}
}

func BenchmarkForWork(b *testing.B) { benchWork(b) }

// BenchmarkCallOverhead is what a call of two goroutines costs beyond its
// share of the work: 48 tasks of 25 µs each (a generalized-ball step's
// call at d = 128) and a serial part between calls, reported as
// overhead-µs/call (wall time less 24 tasks and the serial part). Half a
// task (12.5 µs) is the unevenness of the last chunks; the rest is
// hand-over: callers and workers waking late.
func BenchmarkCallOverhead(b *testing.B) {
	busy := func(d time.Duration) {
		for start := time.Now(); time.Since(start) < d; {
		}
	}
	const task = 25 * time.Microsecond
	for _, serial := range []time.Duration{0, 20 * time.Microsecond, 60 * time.Microsecond} {
		b.Run("serial="+serial.String(), func(b *testing.B) {
			for b.Loop() {
				Tasks(48, 2, func(int) { busy(task) })
				busy(serial)
			}
			ideal := time.Duration(b.N) * (24*task + serial)
			b.ReportMetric(float64(b.Elapsed()-ideal)/float64(b.N)/1e3, "overhead-µs/call")
		})
	}
}

// BenchmarkStepOverhead is a training step of two goroutines, 48 tasks
// of 25 µs, a serial part of 20 µs (the threshold), 48 more tasks and a
// gap between steps (the update: 20 µs, a generalized ball's, or 150 µs,
// a single-norm's at d = 128), as one call of Phases or as two calls of
// Tasks around the serial part, reported as overhead-µs/step (wall time
// less 48 tasks and the serial parts).
func BenchmarkStepOverhead(b *testing.B) {
	busy := func(d time.Duration) {
		for start := time.Now(); time.Since(start) < d; {
		}
	}
	const task, serial = 25 * time.Microsecond, 20 * time.Microsecond
	for _, gap := range []time.Duration{serial, 150 * time.Microsecond} {
		for _, phases := range []bool{true, false} {
			name := "Tasks"
			if phases {
				name = "Phases"
			}
			b.Run(fmt.Sprintf("%s/gap=%v", name, gap), func(b *testing.B) {
				mid := func() int { busy(serial); return 48 }
				for b.Loop() {
					if phases {
						Phases(2, Phase{N: 48, Do: func(int) { busy(task) }, Then: func() Phase { return Phase{N: mid(), Do: func(int) { busy(task) }} }})
					} else {
						Tasks(48, 2, func(int) { busy(task) })
						Tasks(mid(), 2, func(int) { busy(task) })
					}
					busy(gap)
				}
				ideal := time.Duration(b.N) * (48*task + serial + gap)
				b.ReportMetric(float64(b.Elapsed()-ideal)/float64(b.N)/1e3, "overhead-µs/step")
			})
		}
	}
}

// TestTasksTailGetsIdleWorkers: a task still running when the other tasks
// are done gets a pool worker they freed for its loops (the table runner's
// long last run, a training run calling For every step), instead of
// running them alone. Three tasks on three goroutines (the caller and two
// workers): whichever runs the long one, a pool worker is left free (the
// caller, once its tasks are handed out, only waits).
func TestTasksTailGetsIdleWorkers(t *testing.T) {
	var short sync.WaitGroup
	short.Add(2)
	var together atomic.Bool
	Tasks(3, 3, func(i int) {
		if i < 2 {
			short.Done()
			return
		}
		short.Wait()
		deadline := time.Now().Add(5 * time.Second)
		for !together.Load() && time.Now().Before(deadline) {
			var running atomic.Int32
			For(2, 1, 2, func(_, _, _ int) {
				running.Add(1)
				defer running.Add(-1)
				for range 50 {
					if running.Load() >= 2 {
						together.Store(true)
						return
					}
					time.Sleep(20 * time.Microsecond)
				}
			})
		}
	})
	if !together.Load() {
		t.Error("the last task's loops ran alone for 5 s: no worker freed by the other tasks joined")
	}
}

// TestTraceRegions: a traced run's calls and chunk turns appear as the
// regions bench/traceinfo.py reads (go tool trace's parsed events through
// the script), so that a renamed region cannot silently empty its report.
func TestTraceRegions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool and python3 (the full suite runs it)")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	file := filepath.Join(t.TempDir(), "trace.out")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 1<<16)
	for range 50 {
		For(len(x), 1024, 4, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				x[i] += float64(i)
			}
		})
	}
	trace.Stop()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	parsed, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "tool", "trace", "-d=parsed", file).Output()
	if err != nil {
		t.Fatalf("go tool trace: %v", err)
	}
	cmd := exec.Command("/usr/bin/python3", filepath.Join("..", "..", "bench", "traceinfo.py"))
	cmd.Stdin = bytes.NewReader(parsed)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("traceinfo.py: %v\n%s", err, out)
	}
	report := string(out)
	for _, want := range []string{"driver G", "50 calls", "goroutine #2 started after", "the caller waited for the last chunks",
		"the caller started on its own chunks after", "delays before the first chunks, summed"} {
		if !strings.Contains(report, want) {
			t.Errorf("traceinfo.py's report lacks %q:\n%s", want, report)
		}
	}
}
