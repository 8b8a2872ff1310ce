package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// freeAddr is a free loopback address.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPrometheus runs Debian's Prometheus (scripts/setup installs it) on
// loopback, scraping target every 500 ms with the token in tokenFile, and
// returns its address; it is stopped when the test ends.
func startPrometheus(t *testing.T, target, tokenFile string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not installed (scripts/setup installs Debian's): %v", err)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 500ms
  scrape_timeout: 450ms
scrape_configs:
  - job_name: ccs
    authorization:
      credentials_file: %s
    static_configs:
      - targets: [%q]
`, tokenFile, target)
	conf := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return addr
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			t.Fatalf("prometheus did not start:\n%s", log)
		}
	}
}

// promValue asks Prometheus for an instant query's single value (-1 if no
// series yet).
func promValue(t *testing.T, addr, query string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct{ Value [2]any }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s", query, err, r.Status)
	}
	if len(r.Data.Result) == 0 {
		return -1
	}
	v, _ := strconv.ParseFloat(fmt.Sprint(r.Data.Result[0].Value[1]), 64)
	return v
}

// TestPrometheus: a real Prometheus scrapes a server with tokens (its
// token from a credentials file) while requests of known outcomes are
// sent; the counters it stores equal what was sent, by endpoint and code.
func TestPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("an outside tool on loopback: the full run has it")
	}
	cfg := fixtureConfig(t)
	cfg.TokensFile = writeTokens(t, "prometheus:"+readToken+"\n")
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := listen(t, s)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(readToken), 0o600)
	prom := startPrometheus(t, strings.TrimPrefix(base, "http://"), tokenFile)

	sent := map[string]int{}
	for _, c := range []struct {
		key, path, body, token string
		n                      int
	}{
		{`score",code="200`, "/v1/sets/ball/score", `{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`, readToken, 700},
		{`score",code="422`, "/v1/sets/ball/score", `{"anchor": [0, 0], "points": [[1, 0]]}`, readToken, 0},
		{`score",code="401`, "/v1/sets/ball/score", `{}`, "", 0},
		{`retrieve",code="200`, "/v1/sets/ball/retrieve", `{"anchor": [0, 0, 0], "collection": "db"}`, readToken, 300},
	} {
		n := c.n
		if n == 0 {
			n = 25
		}
		r, err := LoadTest(context.Background(), LoadConfig{URL: base + c.path, Body: []byte(c.body), Token: c.token, MaxRequests: n, Concurrency: 4})
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests != n {
			t.Fatalf("%s: %d requests completed of %d", c.path, r.Requests, n)
		}
		sent[c.key] += n
	}
	for key, n := range sent {
		q := `ccs_requests_total{job="ccs",endpoint="` + key + `"}`
		var got float64
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if got = promValue(t, prom, q); got == float64(n) || time.Now().After(deadline) {
				break
			}
		}
		if got != float64(n) {
			t.Errorf("%s: Prometheus stored %v, %d were sent", q, got, n)
		}
	}
	if up := promValue(t, prom, `max_over_time(up{job="ccs"}[1m])`); up != 1 {
		t.Errorf("up = %v: Prometheus could not scrape with its token", up)
	}
	t.Logf("Prometheus stored %v", sent)
}
