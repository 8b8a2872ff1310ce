package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
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

// TestServeMemory drives a ccs serve process with a stream of maximal
// requests (bodies of -max-body bytes, 16 at a time) and checks that its
// peak resident memory stays within the bound docs/security.md states:
// 64 MiB for the process itself, plus twice (Go's collector lets the heap
// grow to twice what is live) the bodies' memory (-body-memory) and the
// working memory of -max-inflight requests, 8 × -max-body each (a JSON
// body's numbers decoded, converted, scored, and the answer written).
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

	cmd := ccsProcess("serve", "-set", "ball="+set, "-addr", "127.0.0.1:0", "-max-body", strconv.Itoa(maxBody),
		"-max-points", "10000000", "-body-memory", strconv.Itoa(bodyMemory), "-max-inflight", strconv.Itoa(inflight))
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := listeningOn(t, &stderr)
	idle := peakRSS(t, cmd.Process.Pid)
	r, err := serve.LoadTest(context.Background(), serve.LoadConfig{URL: base + "/v1/sets/ball/score", Body: b.Bytes(),
		Duration: 4 * time.Second, Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	peak := peakRSS(t, cmd.Process.Pid)
	bound := int64(64<<20 + 2*(bodyMemory+inflight*8*maxBody))
	if peak > bound {
		t.Errorf("peak resident memory %d MiB, over the bound %d MiB", peak>>20, bound>>20)
	}
	if r.Requests < 16 || r.Errors == r.Requests {
		t.Errorf("the load did not get through: %v (%s)", r, r.FirstError)
	}
	t.Logf("%d-byte bodies, 16 at a time for 4 s: %v; %d answered 503 (body memory spent); peak RSS %d MiB (idle %d MiB), bound %d MiB",
		b.Len(), r, r.Errors, peak>>20, idle>>20, bound>>20)
}
