package serve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// wrkScript is a wrk Lua script sending one POST with a token.
func wrkScript(t *testing.T, body, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "post.lua")
	script := fmt.Sprintf("wrk.method = \"POST\"\nwrk.body = %q\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"Authorization\"] = \"Bearer %s\"\n", body, token)
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWrk drives score and retrieve with Debian's wrk (scripts/setup
// installs it), a load tool nobody here wrote, for 2 s each: no socket
// error, no non-2xx answer, and the server counted what wrk completed
// (plus at most the requests in flight on its 4 connections when it
// stopped).
func TestWrk(t *testing.T) {
	if testing.Short() {
		t.Skip("an outside tool on loopback: the full run has it")
	}
	bin, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatalf("wrk is not installed (scripts/setup installs Debian's): %v", err)
	}
	cfg := fixtureConfig(t)
	cfg.TokensFile = writeTokens(t, readToken+"\n")
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := listen(t, s)
	for _, c := range []struct{ endpoint, path, body string }{
		{"score", "/v1/sets/ball/score", `{"anchor": [0, 0, 0], "points": [[1, 0, 0], [0, 2, 0]]}`},
		{"retrieve", "/v1/sets/ball/retrieve", `{"anchor": [0, 0, 0], "collection": "db", "limit": 3}`},
	} {
		out, err := exec.Command(bin, "-t", "1", "-c", "4", "-d", "2s", "--latency", "-s", wrkScript(t, c.body, readToken), base+c.path).CombinedOutput()
		if err != nil {
			t.Fatalf("wrk: %v\n%s", err, out)
		}
		text := string(out)
		m := regexp.MustCompile(`(\d+) requests in`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("wrk's output lacks a request count:\n%s", text)
		}
		n, _ := strconv.Atoi(m[1])
		if strings.Contains(text, "Non-2xx") || strings.Contains(text, "Socket errors") || n == 0 {
			t.Errorf("%s: wrk saw errors:\n%s", c.endpoint, text)
		}
		counted := metric(t, s, `ccs_requests_total{code="200",endpoint="`+c.endpoint+`"}`)
		if counted < float64(n) || counted > float64(n+4) {
			t.Errorf("%s: the server counted %v answers, wrk completed %d", c.endpoint, counted, n)
		}
		var lat []string
		for _, q := range regexp.MustCompile(`(?m)^\s+(50|99)%\s+(\S+)`).FindAllStringSubmatch(text, -1) {
			lat = append(lat, "p"+q[1]+" "+q[2])
		}
		t.Logf("%s: wrk completed %d requests in 2 s (%v counted by the server); %s", c.endpoint, n, counted, strings.Join(lat, ", "))
	}
}
