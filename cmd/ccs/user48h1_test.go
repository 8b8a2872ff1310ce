package main

// Tests from h1, a platform engineer putting a set behind ccs serve (a
// forty-eighth round's user). Each failed at 22a3ce9 for the reason in
// its comment.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestH1LoadtestOODWarnsOfMonitor: `ccs loadtest` is the documented way to
// measure the service (docs/serve.md); pointed at …/ood with one
// in-distribution point (p-value 0.17, not flagged) it sends that point
// thousands of times, the set's drift monitor observes every copy and
// raises the alarm (after 30 requests in the report's run: martingale
// 1e42), and the command prints only its throughput line. Only `-h`'s text
// of -url mentions it; the run itself says nothing, so the production
// alarm goes off with no hint of why.
func TestH1LoadtestOODWarnsOfMonitor(t *testing.T) {
	dir := t.TempDir()
	set := simulatedOODBall(t, dir)
	sv := startServe(t, "serve", "-set", "ball="+set, "-addr", "127.0.0.1:0")
	defer sv.stop(t)
	anchor, _ := json.Marshal(anchorRow(t, filepath.Join(dir, "test.npz"), 3))
	var out, errOut bytes.Buffer
	if err := run(&out, &errOut, []string{"loadtest", "-url", sv.base + "/v1/sets/ball/ood", "-data", fmt.Sprintf(`{"points": [%s]}`, anchor),
		"-requests", "500", "-concurrency", "2"}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(sv.base + "/v1/sets")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	alarmed := strings.Contains(string(b), `"alarm": true`)
	t.Logf("after the load test the drift monitor's alarm is %v", alarmed)
	if !strings.Contains(out.String()+errOut.String(), "monitor") {
		t.Errorf("ccs loadtest against …/ood fed the production drift monitor 500 copies of one point (alarm %v) "+
			"and said nothing of it:\nstdout: %s\nstderr: %s", alarmed, out.String(), errOut.String())
	}
}
