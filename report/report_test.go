package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/fixture"
	"github.com/ccsets/ccs/internal/race"
	"github.com/ccsets/ccs/report"
)

// chromium drives Debian's headless Chromium through ChromeDriver (the W3C
// WebDriver protocol over HTTP on loopback).
type chromium struct {
	t       *testing.T
	base    string
	session string
}

// startChromium starts ChromeDriver on a free loopback port and opens a
// session; both are stopped when the test ends.
func startChromium(t *testing.T) *chromium {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("/usr/bin/chromedriver", fmt.Sprintf("--port=%d", port))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromedriver (installed by scripts/setup): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := &chromium{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(c.base + "/status")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not start: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The flags keep Chromium off the network (the machine has none) and
	// let it run as root in a container.
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"goog:chromeOptions": map[string]any{"binary": "/usr/bin/chromium", "args": []string{
			"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1200,900"}},
		"goog:loggingPrefs": map[string]any{"browser": "ALL"},
	}}}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	c.call("POST", "/session", caps, &s)
	if s.SessionID == "" {
		t.Fatal("chromedriver: no session")
	}
	c.session = "/session/" + s.SessionID
	t.Cleanup(func() { c.call("DELETE", c.session, nil, nil) })
	return c
}

// call sends a WebDriver command and decodes its value into out.
func (c *chromium) call(method, path string, body, out any) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	var v struct{ Value json.RawMessage }
	if err := json.Unmarshal(b, &v); err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	if out != nil {
		if err := json.Unmarshal(v.Value, out); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, v.Value)
		}
	}
}

// open loads a file and returns the console messages logged since the
// last call, at level SEVERE (errors).
func (c *chromium) open(path string) (errors []string) {
	c.t.Helper()
	c.call("POST", c.session+"/url", map[string]string{"url": "file://" + path}, nil)
	var logs []struct{ Level, Message string }
	c.call("POST", c.session+"/se/log", map[string]string{"type": "browser"}, &logs)
	for _, l := range logs {
		if l.Level == "SEVERE" {
			errors = append(errors, l.Message)
		}
	}
	return errors
}

func (c *chromium) eval(script string, out any) {
	c.t.Helper()
	c.call("POST", c.session+"/execute/sync", map[string]any{"script": script, "args": []any{}}, out)
}

// TestReportInChromium renders two reports and opens them in headless
// Chromium: one of small real results of every reproduced table, one of
// the documents ccs evaluate (with and without -per-class), ccs
// coverage-check and ccs ood printed with -json. Each loads without console
// errors and without fetching anything, every figure is there and drawn at
// a readable size, every table has rows, and the numbers (the paper's
// beside ours for the reproduced tables) and the protocol lines are on the
// page. A page that logs an error is caught (the check can fail).
func TestReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("Chromium: not in -short (the full suite runs it)")
	}
	dir := t.TempDir()
	c := startChromium(t)

	bad := filepath.Join(dir, "bad.html")
	if err := os.WriteFile(bad, []byte(`<!DOCTYPE html><title>x</title><script>console.error("broken")</script>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := c.open(bad); len(errs) != 1 || !strings.Contains(errs[0], "broken") {
		t.Fatalf("a page logging an error: console errors %q, want the one", errs)
	}

	// sim, pnorm, four sweeps, ood.
	checkPage(t, c, filepath.Join(dir, "reproduced.html"), fixture.Documents(t), 7, 20,
		[]string{"Results of ccs reproduce", "94.7% / 15.3% / 2.74", "Paper (CIFAR100, d=512)", "calibration one-per-anchor", "ccs reproduce pnorm (fixture)", "Sweeping α"})
	// evaluate: two tables and one; coverage-check one; ood one; compare
	// one of eight rows.
	checkPage(t, c, filepath.Join(dir, "commands.html"), fixture.CommandDocuments(t), 6, 26,
		[]string{"Results of ccs.", "A fitted set on a test bundle (ccs evaluate)", "ccs evaluate -set ball.json -test test.npz -per-class -json",
			"Per class of the test bundle's labels", "Worst class 0: coverage 59.19%", "Coverage over resplits (ccs coverage-check)",
			"the mean over calibration draws lies in [90.00%, 90.99%]", "OOD detection with a fitted set (ccs ood)", "CCS (batch)", "D-KNN",
			"Your data: the set families compared (ccs compare)", "Generalized (Neg,Vol)", "Worst class", "Resplits < 95%", "Coverage of each class's test positives"})
}

// checkPage writes the report of docs at page, opens it in c and checks it:
// no console error, nothing fetched, every figure of the documents there
// in order, drawn at least 600 × 150 px with its caption, at least tables
// tables and rows rows, and each of texts on the page.
func checkPage(t *testing.T, c *chromium, page string, docs []*experiment.Document, tables, rows int, texts []string) {
	t.Helper()
	var b bytes.Buffer
	if err := report.Write(&b, "ccs report test", docs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range docs {
		figs, err := d.Figures()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range figs {
			want = append(want, f.Name)
		}
	}
	if errs := c.open(page); len(errs) > 0 {
		t.Errorf("%s: console errors: %q", page, errs)
	}
	var figs []struct {
		ID            string
		Width, Height float64
		Paths         int
		Caption       string
	}
	c.eval(`return Array.from(document.querySelectorAll("figure[data-figure]")).map(f => {
		const s = f.querySelector("svg"), r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
		return {ID: f.dataset.figure, Width: r.width, Height: r.height, Paths: s ? s.querySelectorAll("path").length : 0,
			Caption: (f.querySelector("figcaption") || {}).textContent || ""};
	})`, &figs)
	var got []string
	for _, f := range figs {
		got = append(got, f.ID)
		if f.Width < 600 || f.Height < 150 || f.Paths < 20 || f.Caption == "" {
			t.Errorf("%s: figure %s: %.0f×%.0f px, %d paths, caption %q", page, f.ID, f.Width, f.Height, f.Paths, f.Caption)
		}
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("%s: figures on the page %v, want %v", page, got, want)
	}
	var p struct {
		Resources, Tables, Rows int
		Text                    string
	}
	c.eval(`return {Resources: performance.getEntriesByType("resource").length,
		Tables: document.querySelectorAll("table").length, Rows: document.querySelectorAll("tbody tr").length,
		Text: document.body.innerText}`, &p)
	if p.Resources != 0 {
		t.Errorf("%s: the page fetched %d resources; it must open offline", page, p.Resources)
	}
	if p.Tables < tables || p.Rows < rows {
		t.Errorf("%s: %d tables, %d rows; want at least %d and %d", page, p.Tables, p.Rows, tables, rows)
	}
	for _, s := range texts {
		if !strings.Contains(p.Text, s) {
			t.Errorf("%s: the page lacks %q", page, s)
		}
	}
}

// TestWriteOrder: the documents' sections appear in the order given, each
// table with its rows and protocol line.
func TestWriteOrder(t *testing.T) {
	docs := []*experiment.Document{{Kind: "ood", Command: "second", Result: &experiment.OODResult{OOD: []*experiment.OODTable{fixture.OOD()}}},
		{Kind: "sim", Command: "first", Result: &experiment.SimResult{Tables: []*experiment.Table{{Title: "T", Config: "c", Rows: []experiment.Row{{Method: "M"}}}}}}}
	var b bytes.Buffer
	if err := report.Write(&b, "x", docs); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if i, j := strings.Index(s, "<code>second</code>"), strings.Index(s, "<code>first</code>"); i < 0 || j < 0 || i > j {
		t.Errorf("sections out of order: %d, %d", i, j)
	}
	if !strings.Contains(s, "<td>M</td>") || !strings.Contains(s, `<p class="protocol">c</p>`) {
		t.Errorf("table T not rendered:\n%s", s[:min(len(s), 3000)])
	}
}

// TestWriteSameKind: two documents of one kind get distinct section and
// figure ids, and no figure shares a section's id, for every kind's
// real results (a page with duplicate ids would link and style wrongly).
func TestWriteSameKind(t *testing.T) {
	if race.Enabled {
		// 30 s under the race detector, drawing figures: code with no
		// goroutines (gonum/plot, PNG and SVG encoding). It runs in the
		// suite's other phases.
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	other := fixture.OOD()
	other.Title = "OOD detection, another encoder"
	docs := []*experiment.Document{{Kind: "ood", Command: "one", Result: &experiment.OODResult{OOD: []*experiment.OODTable{fixture.OOD()}}},
		{Kind: "ood", Command: "two", Result: &experiment.OODResult{OOD: []*experiment.OODTable{other}}}}
	docs = append(docs, fixture.Documents(t)...)
	sim2 := *docs[2] // the simulation again: its table's title does not start with its heading
	if sim2.Kind != "sim" {
		t.Fatalf("fixture order changed: %s", sim2.Kind)
	}
	docs = append(docs, &sim2)
	var b bytes.Buffer
	if err := report.Write(&b, "x", docs); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(b.String(), -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q appears %d times", id, n)
		}
	}
	if ids["ood"] != 1 || ids["ood-2"] != 1 || len(ids) < 4 {
		t.Errorf("sections: %v", ids)
	}
	// The contents link every section, and the three OOD sections' headings
	// tell them apart by their tables' titles, and by their commands where
	// the titles are the same (by their number where those are too); the
	// others are headed by their kind's name alone.
	page := b.String()
	for _, want := range []string{
		`<li><a href="#ood">OOD detection, fixture (ID), normal scores — one</a></li>`,
		`<li><a href="#ood-2">OOD detection, another encoder</a></li>`,
		`<li><a href="#ood-3">OOD detection, fixture (ID), normal scores — reproduce ood (fixture)</a></li>`,
		`<li><a href="#sim">The simulation (the paper&#39;s Table 1) — Simulated 3D clusters (mixed)</a></li>`,
		`<li><a href="#sim-2">The simulation (the paper&#39;s Table 1) — Simulated 3D clusters (mixed) (2)</a></li>`,
		`<li><a href="#pnorm">The effect of the p-norm</a></li>`,
		`<h2>Sensitivity analysis</h2>`,
		`<h2>OOD detection, another encoder</h2>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

// TestWriteTitle: without a title, a page of ccs reproduce's results only
// is titled and introduced as the paper's tables, any other as ccs's
// results; a title given is kept.
func TestWriteTitle(t *testing.T) {
	doc := func(command string) *experiment.Document {
		return &experiment.Document{Kind: "sim", Command: command,
			Result: &experiment.SimResult{Tables: []*experiment.Table{{Title: "T", Config: "c", Rows: []experiment.Row{{Method: "M"}}}}}}
	}
	for _, c := range []struct {
		title     string
		commands  []string
		want, not string
	}{
		{"", []string{"ccs reproduce sim", "ccs reproduce sim -seeds 2"}, "<title>" + report.ReproducedTitle + "</title>", "Results of <code>ccs</code>."},
		{"", []string{"ccs reproduce sim", "ccs evaluate -json"}, "<title>" + report.ResultsTitle + "</title>", "Results of <code>ccs reproduce</code>"},
		{"", []string{""}, "<title>" + report.ResultsTitle + "</title>", "Results of <code>ccs reproduce</code>"},
		{"Mine", []string{"ccs reproduce sim"}, "<title>Mine</title>", "Results of <code>ccs</code>."},
	} {
		var docs []*experiment.Document
		for _, cmd := range c.commands {
			docs = append(docs, doc(cmd))
		}
		var b bytes.Buffer
		if err := report.Write(&b, c.title, docs); err != nil {
			t.Fatal(err)
		}
		page := strings.ReplaceAll(b.String(), "&#39;", "'")
		if !strings.Contains(page, c.want) || strings.Contains(page, c.not) {
			t.Errorf("%q of %q: want %q and not %q in\n%.900s", c.title, c.commands, c.want, c.not, page)
		}
	}
}
