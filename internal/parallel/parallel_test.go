package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
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

func TestTasks(t *testing.T) {
	got := make([]int, 37)
	Tasks(len(got), 0, func(i int) { got[i] = i * i })
	for i, v := range got {
		if v != i*i {
			t.Fatalf("task %d wrote %d", i, v)
		}
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
