package serve

// Tests from h1, a platform engineer putting a set behind ccs serve (a
// forty-eighth round's user). Each TestH1 failed at 22a3ce9 for the reason
// in its comment.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
)

// TestH1AnswersNameTheSetFile: docs/serve.md says "Every answer about sets
// carries "generation": N (1 at start)". The generation restarts at 1 with
// every process, so after a restart with a new set file (or on two
// replicas serving different files) the answer (set "mine", generation 1)
// is the same for two different calibrations. The set file carries a
// checksum that would name it exactly; neither GET /v1/sets nor a /score
// answer gives it, so a client cannot audit which set and calibration
// answered.
func TestH1AnswersNameTheSetFile(t *testing.T) {
	path := h8OODSet(t, nil)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Checksum string `json:"checksum"`
	}
	if err := json.Unmarshal(raw, &file); err != nil || file.Checksum == "" {
		t.Fatalf("set file without a checksum: %v", err)
	}
	sum := strings.TrimPrefix(file.Checksum, "sha256:")
	s, err := New(Config{Sets: map[string]string{"mine": path}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	list := do(t, h, "GET", "/v1/sets", "", "")
	if !strings.Contains(list.Body.String(), sum) {
		t.Errorf("GET /v1/sets does not carry the served set file's checksum %s: %s", file.Checksum, list.Body)
	}
	score := do(t, h, "POST", "/v1/sets/mine/score", "application/json", `{"anchor": [1, 0, 0], "points": [[0, 1, 0]]}`)
	if score.Code != http.StatusOK {
		t.Fatalf("/score: %d %s", score.Code, score.Body)
	}
	if !strings.Contains(score.Body.String(), sum) {
		t.Errorf("a /score answer names the set (%q) and generation, nothing that tells this file from another "+
			"calibration served under the same name after a restart: %s", "mine", score.Body)
	}
}

// TestH1ReloadKeepsOrReportsAlarm: security.md says to rotate tokens and
// renew TLS certificates by a reload (SIGHUP or POST /v1/admin/reload). A
// reload also makes a new generation of the (unchanged) sets, whose OOD
// drift monitors start afresh: a raised drift alarm is wiped, the gauge
// ccs_ood_martingale_alarm falls back to 0, and the log line says only
// "every set's OOD monitor starts afresh" — nothing records that set
// "mine" was in alarm (martingale 1.7e55 after 2 OOD inputs in the
// report's run). An operator's cron renewing a certificate erases the
// alarm before anyone has seen it.
func TestH1ReloadKeepsOrReportsAlarm(t *testing.T) {
	path := h8OODSet(t, nil)
	s, logs := loggedServer(t, path)
	h := s.Handler()
	pts := strings.TrimSuffix(strings.Repeat("[0, 0, 1], ", 40), ", ")
	rec := do(t, h, "POST", "/v1/sets/mine/ood", "application/json", `{"points": [`+pts+`]}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("/ood: %d %s", rec.Code, rec.Body)
	}
	var ans struct {
		Monitor struct {
			Alarm bool `json:"alarm"`
		} `json:"monitor"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil || !ans.Monitor.Alarm {
		t.Fatalf("the OOD points did not raise the alarm (test premise): %v %s", err, rec.Body)
	}
	if err := s.Reload("SIGHUP"); err != nil { // the same files: a certificate renewal, a token rotation
		t.Fatal(err)
	}
	after := metric(t, s, `ccs_ood_martingale_alarm{set="mine"}`)
	// "every set's OOD monitor starts afresh (its false-alarm bound …)" is
	// logged on every reload; what is missing is which set was in alarm.
	if after != 1 && !strings.Contains(logs.String(), `"mine"`) {
		t.Errorf("a reload of unchanged set files wiped set \"mine\"'s raised drift alarm (gauge now %v) and the log "+
			"does not say an alarm was discarded:\n%s", after, logs.String())
	}
}

// TestH1NPYFloat64OverflowIs422: docs/serve.md: errors name the offending
// part, `body[0][1]` for a `.npy` body, and 422 is "a well-formed request
// that is wrong for the set (… a value that is not a finite float32)" —
// the JSON body's 1e39 is 422 `points[0][0]`, a float32 .npy body's NaN
// is 422 `body[0][0]`. A float64 .npy body (what np.save of a client's
// float64 embeddings writes) with 1e39 is answered 400 with field `body`
// alone (the element only inside the message).
func TestH1NPYFloat64OverflowIs422(t *testing.T) {
	s, _ := fixture(t)
	h := s.Handler()
	b := npyFloat64(3, 3, []float64{0, 0, 0, 1, 0, 0, 0, 1e39, 0})
	rec := do(t, h, "POST", "/v1/sets/ball/score", "application/x-npy", string(b))
	var e struct {
		Error struct{ Code, Field, Message string } `json:"error"`
	}
	json.Unmarshal(rec.Body.Bytes(), &e)
	if rec.Code != http.StatusUnprocessableEntity || e.Error.Field != "body[2][1]" {
		t.Errorf("float64 .npy body with 1e39 at [2][1]: %d field %q (%s); want 422 field \"body[2][1]\", as JSON's 1e39 "+
			"and an .npy NaN are answered", rec.Code, e.Error.Field, e.Error.Message)
	}
}

// npyFloat64 writes an (r, c) float64 .npy stream, as np.save of a float64
// array does.
func npyFloat64(r, c int, v []float64) []byte {
	hdr := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", r, c)
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	out = append(out, hdr...)
	for _, x := range v {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
	}
	return out
}

// TestH1PanicIsLogged: a handler panic "is answered with 500 and counted,
// and the server goes on" (routes.go) — and that is all: the panic's value
// goes to the client in the 500's message, and nothing reaches the
// server's log (Config.Logger, ccs serve's standard error), not even a
// line, let alone a stack. An operator who sees ccs_requests_total{code=
// "500"} rise has nothing on the server to debug it with.
func TestH1PanicIsLogged(t *testing.T) {
	s, logs := loggedServer(t, h8OODSet(t, nil))
	h := s.endpoint("sets", http.MethodGet, RoleRead, func(http.ResponseWriter, *http.Request) error {
		var m map[string]int
		m["x"] = 1 // a bug: assignment to entry in nil map
		return nil
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/sets", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("premise: a panicking handler answered %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "nil map") {
		t.Errorf("a handler panic answered 500 (%s) left no line in the server's log: %q", strings.TrimSpace(rec.Body.String()), logs.String())
	}
}

// TestReloadMonitors: a reload keeps the OOD monitor of a set whose file is
// unchanged (its count goes on) and starts afresh that of a set whose file
// changed, logging the raised alarm it discards with its value; every
// answer carries the served file's checksum, which changes with the file.
func TestReloadMonitors(t *testing.T) {
	path := h8OODSet(t, nil)
	s, logs := loggedServer(t, path)
	h := s.Handler()
	type answer struct {
		Checksum string `json:"checksum"`
		Monitor  struct {
			N     int  `json:"n"`
			Alarm bool `json:"alarm"`
		} `json:"monitor"`
	}
	post := func(pts string) answer {
		t.Helper()
		rec := do(t, h, "POST", "/v1/sets/mine/ood", "application/json", `{"points": [`+pts+`]}`)
		var a answer
		if err := json.Unmarshal(rec.Body.Bytes(), &a); rec.Code != http.StatusOK || err != nil {
			t.Fatalf("/ood: %d %s", rec.Code, rec.Body)
		}
		return a
	}
	far := strings.TrimSuffix(strings.Repeat("[0, 0, 1], ", 40), ", ")
	first := post(far)
	if !first.Monitor.Alarm || first.Monitor.N != 40 || !strings.HasPrefix(first.Checksum, "sha256:") {
		t.Fatalf("premise: %+v", first)
	}
	if err := s.Reload("SIGHUP"); err != nil {
		t.Fatal(err)
	}
	if a := post("[0.6, 0.8, 0]"); a.Monitor.N != 41 || !a.Monitor.Alarm || a.Checksum != first.Checksum {
		t.Errorf("after a reload of the same file: %+v, want the monitor going on (n 41, in alarm) and checksum %s", a, first.Checksum)
	}
	// Another calibration in the file's place: its monitor starts afresh,
	// and the log says which alarm was discarded.
	other := h8OODSet(t, nil)
	set, err := conformal.Load(other)
	if err != nil {
		t.Fatal(err)
	}
	set.Threshold = 0.7
	if err := set.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload("SIGHUP"); err != nil {
		t.Fatal(err)
	}
	a := post("[0.6, 0.8, 0]")
	if a.Monitor.N != 1 || a.Monitor.Alarm || a.Checksum == first.Checksum || !strings.HasPrefix(a.Checksum, "sha256:") {
		t.Errorf("after a reload of a new file: %+v, want a fresh monitor (n 1) and a new checksum (was %s)", a, first.Checksum)
	}
	if want := `set "mine": its OOD drift monitor was in alarm (martingale `; !strings.Contains(logs.String(), want) ||
		!strings.Contains(logs.String(), "41 inputs seen) and is discarded: its set file changed") ||
		!strings.Contains(logs.String(), `started afresh for "mine" (new set files`) {
		t.Errorf("the log:\n%s\nwant the discarded alarm named", logs.String())
	}
}

// loggedServer serves the set file at path as "mine", its log in the
// buffer returned; closed when the test ends.
func loggedServer(t *testing.T, path string) (*Server, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	s, err := New(Config{Sets: map[string]string{"mine": path}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 4,
		Logger: log.New(&logs, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, &logs
}
