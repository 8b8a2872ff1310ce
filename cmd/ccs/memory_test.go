package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/serve"
)

// peakRSS reads a process's peak resident memory (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// memoryBound is the bound docs/security.md states for a server's
// resident memory: 64 MiB for the process itself, plus twice (Go's
// collector lets the heap grow to twice what is live) the bodies' memory
// (-body-memory) and the working memory of -max-inflight requests, each
// 8 × -max-body (its numbers decoded, in a margin) and 128 bytes per point
// of -max-points (scores, p-values…).
func memoryBound(maxBody, bodyMemory, inflight, maxPoints int64) int64 {
	return 64<<20 + 2*(bodyMemory+inflight*(8*maxBody+128*maxPoints))
}

// startServer runs ccs serve as a process of its own and returns its
// address and the process.
func startServer(t *testing.T, args ...string) (string, *os.Process) {
	t.Helper()
	cmd := ccsProcess(append([]string{"serve", "-addr", "127.0.0.1:0"}, args...)...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return listeningOn(t, &stderr), cmd.Process
}

// TestServeMemory drives a ccs serve process with a stream of maximal
// requests (bodies of -max-body bytes, 16 at a time; -max-points what
// such a body holds) and checks that its
// peak resident memory stays within the bound docs/security.md states
// (memoryBound).
func TestServeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test of a few seconds")
	}
	set := calibratedBall(t, t.TempDir())
	ball, err := conformal.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	const maxBody, bodyMemory, inflight = 8 << 20, 64 << 20, 4
	// A body just under -max-body: points of the set's dimension.
	var b bytes.Buffer
	point := "[" + strings.TrimSuffix(strings.Repeat("0.123456,", ball.Geometry.Dim()), ",") + "]"
	anchor := point
	b.WriteString(`{"anchor": ` + anchor + `, "points": [` + point)
	for b.Len()+len(point)+4 < maxBody {
		b.WriteString("," + point)
	}
	b.WriteString("]}")

	points := bytes.Count(b.Bytes(), []byte(point)) - 1 // all but the anchor
	base, proc := startServer(t, "-set", "ball="+set, "-max-body", strconv.Itoa(maxBody),
		"-max-points", strconv.Itoa(points), "-body-memory", strconv.Itoa(bodyMemory), "-max-inflight", strconv.Itoa(inflight))
	idle := peakRSS(t, proc.Pid)
	r, err := serve.LoadTest(context.Background(), serve.LoadConfig{URL: base + "/v1/sets/ball/score", Body: b.Bytes(),
		Duration: 4 * time.Second, Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	peak := peakRSS(t, proc.Pid)
	bound := memoryBound(maxBody, bodyMemory, inflight, int64(points))
	if peak > bound {
		t.Errorf("peak resident memory %d MiB, over the bound %d MiB", peak>>20, bound>>20)
	}
	if r.Requests < 16 || r.Errors == r.Requests {
		// On a loaded host the 16 bodies can hold the body memory the
		// whole time (every request 503): the bound held, but the test
		// must also see requests served. Two at a time fit in it.
		r2, err := serve.LoadTest(context.Background(), serve.LoadConfig{URL: base + "/v1/sets/ball/score", Body: b.Bytes(),
			Duration: 4 * time.Second, Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		if r2.Requests == 0 || r2.Errors == r2.Requests {
			t.Errorf("the load did not get through: %v (%s); two at a time: %v (%s)", r, r.FirstError, r2, r2.FirstError)
		}
		if peak := peakRSS(t, proc.Pid); peak > bound {
			t.Errorf("peak resident memory %d MiB, over the bound %d MiB", peak>>20, bound>>20)
		}
	}
	t.Logf("%d-byte bodies, 16 at a time for 4 s: %v; %d answered 503 (body memory spent); peak RSS %d MiB (idle %d MiB), bound %d MiB",
		b.Len(), r, r.Errors, peak>>20, idle>>20, bound>>20)
}

// hostileBody is a request body to /score (d = 3) built to make a decoder
// allocate far more than it weighs, the status it must get, and the
// -max-points it is sent with (0: the default, 100 000).
type hostileBody struct {
	name      string
	body      []byte
	status    int
	maxPoints int
}

// hostileBodies are the hostile bodies of about size bytes.
func hostileBodies(size int) []hostileBody {
	rows := func(head, row, tail string) []byte {
		var b bytes.Buffer
		b.Grow(size)
		b.WriteString(head)
		for b.Len()+len(row)+len(tail) < size {
			b.WriteString(row)
		}
		return append(bytes.TrimSuffix(b.Bytes(), []byte(",")), tail...)
	}
	deep := size/2 - 40
	smallest := rows(`{"anchor":[0.1,0.1,0.1],"points":[`, "[0,0,0],", "]}")
	return []hostileBody{
		{"empty rows", rows(`{"anchor":[0,0,0],"points":[`, "[],", "]}"), 422, 0},
		{"empty rows then null", rows(`{"anchor":[0,0,0],"points":[`, "[],", ",null]}"), 422, 0},
		{"deep arrays", []byte(`{"anchor":[0,0,0],"points":` + strings.Repeat("[", deep) + strings.Repeat("]", deep) + "}"), 400, 0},
		{"tiny rows", rows(`{"anchor":[0,0,0],"points":[`, "[0],", "]}"), 422, 0},
		{"null rows", rows(`{"anchor":[0,0,0],"points":[`, "[null,null,null],", "]}"), 422, 0},
		{"wide row", rows(`{"anchor":[0,0,0],"points":[[`, "0,", "]]}"), 422, 0},
		{"points beyond -max-points", rows(`{"anchor":[0,0,0],"points":[`, "[0,0,0],", "]}"), 413, 0},
		// Accepted, -max-points raised to what the body holds: the most
		// points a body of this size holds, each scored and answered.
		{"smallest points", smallest, 200, bytes.Count(smallest, []byte("[0,0,0]"))},
	}
}

// TestServeMemoryHostile sends each hostile body (hostileBodies) to a ccs
// serve process of its own, 4 at a time, twice, and checks that each gets
// its status and that the server's peak resident memory stays within the
// bound docs/security.md states: at -max-body 4 MiB, -body-memory 64 MiB,
// -max-inflight 4, and at the default limits.
func TestServeMemoryHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("a memory test of a minute")
	}
	set := calibratedBall(t, t.TempDir())
	defaultInflight := int64(max(4, 2*runtime.GOMAXPROCS(0)))
	for _, lim := range []struct {
		name                          string
		maxBody, bodyMemory, inflight int64
		args                          []string
	}{
		{"4MiB", 4 << 20, 64 << 20, 4, []string{"-max-body", "4194304", "-body-memory", "67108864", "-max-inflight", "4"}},
		{"defaults", 32 << 20, 256 << 20, defaultInflight, nil},
	} {
		for _, c := range hostileBodies(int(lim.maxBody) - 64) {
			t.Run(lim.name+"/"+c.name, func(t *testing.T) {
				maxPoints := int64(100_000)
				args := append([]string{"-set", "ball=" + set}, lim.args...)
				if c.maxPoints > 0 {
					maxPoints = int64(c.maxPoints)
					args = append(args, "-max-points", strconv.Itoa(c.maxPoints))
				}
				base, proc := startServer(t, args...)
				idle := peakRSS(t, proc.Pid)
				start := time.Now()
				var wrong sync.Once // one status error is enough
				for round := range 2 {
					var wg sync.WaitGroup
					for i := range 4 {
						wg.Go(func() {
							resp, err := http.Post(base+"/v1/sets/ball/score", "application/json", bytes.NewReader(c.body))
							if err != nil {
								t.Errorf("round %d, request %d: %v", round, i, err)
								return
							}
							msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							if resp.StatusCode != c.status {
								wrong.Do(func() { t.Errorf("round %d, request %d: %d %s, want %d", round, i, resp.StatusCode, msg, c.status) })
							}
						})
					}
					wg.Wait()
				}
				peak := peakRSS(t, proc.Pid)
				bound := memoryBound(lim.maxBody, lim.bodyMemory, lim.inflight, maxPoints)
				if peak > bound {
					t.Errorf("peak resident memory %d MiB, over the bound %d MiB", peak>>20, bound>>20)
				}
				t.Logf("%d-byte bodies, 4 at a time, twice, in %v: peak RSS %d MiB (idle %d MiB), bound %d MiB",
					len(c.body), time.Since(start).Round(time.Millisecond), peak>>20, idle>>20, bound>>20)
			})
		}
	}
}
