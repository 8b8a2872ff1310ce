package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	readToken  = "r3ad-0123456789abcdef"
	adminToken = "adm1n-0123456789abcdef"
)

// writeTokens writes a tokens file and returns its path.
func writeTokens(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadTokens(t *testing.T) {
	t.Parallel()
	good := "# the team's tokens\n\n" + readToken + "\nops:" + adminToken + ":admin\nci:ci-0123456789abcdef:read\n"
	tk, err := ReadTokens(writeTokens(t, good))
	if err != nil {
		t.Fatal(err)
	}
	if tk.Len() != 3 {
		t.Fatalf("%d tokens, want 3", tk.Len())
	}
	for _, c := range []struct {
		secret string
		name   string
		role   Role
	}{{readToken, "line-3", RoleRead}, {adminToken, "ops", RoleAdmin}, {"ci-0123456789abcdef", "ci", RoleRead}} {
		got, ok := tk.lookup(c.secret)
		if !ok || got.name != c.name || got.role != c.role {
			t.Errorf("lookup(%s) = %v %v %v, want %s %v", c.name, got.name, got.role, ok, c.name, c.role)
		}
	}
	for _, bad := range []string{"", readToken[:5], readToken + "x", adminToken[1:]} {
		if _, ok := tk.lookup(bad); ok {
			t.Errorf("lookup(%q) accepted", bad)
		}
	}
	// Comments after an entry, as docs/security.md shows them, after a
	// space or tab; a '#' inside a token is the token's.
	commented := readToken + "      # TOKEN: role read\nops:" + adminToken + ":admin\t# the operators\nci:ci-0123#456789abcdef\n"
	if tk, err = ReadTokens(writeTokens(t, commented)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		secret, name string
		role         Role
	}{{readToken, "line-1", RoleRead}, {adminToken, "ops", RoleAdmin}, {"ci-0123#456789abcdef", "ci", RoleRead}} {
		if got, ok := tk.lookup(c.secret); !ok || got.name != c.name || got.role != c.role {
			t.Errorf("commented file: lookup(%s) = %v %v %v", c.name, got.name, got.role, ok)
		}
	}
	// A Windows editor's byte-order mark before the first name.
	if tk, err = ReadTokens(writeTokens(t, "\ufeffops:"+adminToken+":admin\r\n")); err != nil {
		t.Fatal(err)
	}
	if got, ok := tk.lookup(adminToken); !ok || got.name != "ops" {
		t.Errorf("a file with a byte-order mark: lookup = %v %v", got.name, ok)
	}
	secret := "s3cret-0123456789abcdef"
	for _, c := range []struct{ text, want string }{
		{"", "no tokens"},
		{"# only a comment\n", "no tokens"},
		{"short", "line 1: the token has 5 characters, want at least 16"},
		{"a:" + secret + ":root", "line 1: unknown role"},
		{"a:" + secret + ":" + secret, "line 1: unknown role"},
		{"a:b:" + secret + ":admin", "4 colon-separated fields"},
		{"a:" + secret + "\na:x" + secret, "line 2: the name appears on an earlier line"},
		{"a:" + secret + "\nb:" + secret, "line 2: the same token as an earlier line"},
		{"a:" + secret + "é", "printable ASCII"},
		{"a:" + secret + " x", "printable ASCII"}, // a space not before a comment
		{":" + secret, "a name is letters"},
		{secret[:8] + "/:" + secret[8:], "a name is letters"},
		{"a:" + secret + "\n# " + strings.Repeat("x", 70<<10) + "\n", "line 2: longer than 65536 bytes"},
	} {
		_, err := ReadTokens(writeTokens(t, c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "tokens file ") {
			t.Errorf("%q: error %v, want %q after the file's name", c.text, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), secret[:6]) || strings.Contains(err.Error(), secret[len(secret)-6:])) {
			t.Errorf("%q: the error shows the token: %v", c.text, err)
		}
	}
}

// authRequest is one request of the auth matrix and the role it needs.
type authRequest struct {
	method, path, body string
	need               Role
}

var authRequests = []authRequest{
	{"GET", "/v1/sets", "", RoleRead},
	{"POST", "/v1/sets/ball/score", `{"anchor": [0, 0, 0], "points": [[1, 0, 0]]}`, RoleRead},
	{"POST", "/v1/sets/ball/ood", `{"points": [[1, 0, 0]]}`, RoleRead},
	{"POST", "/v1/sets/ball/retrieve", `{"anchor": [0, 0, 0], "collection": "db"}`, RoleRead},
	{"POST", "/v1/sets/ball/ood/monitor/reset", "", RoleAdmin},
	{"POST", "/v1/admin/reload", "", RoleAdmin},
	{"GET", "/healthz", "", RoleNone},
	{"GET", "/readyz", "", RoleNone},
	{"GET", "/metrics", "", RoleRead},
	{"GET", "/no/such/thing", "", RoleRead},
	{"DELETE", "/v1/sets", "", RoleRead}, // the token is checked before the method
	// and before the path is judged: no redirect to the clean path.
	{"POST", "/v1/sets/../admin/reload", "", RoleRead},
	{"GET", "//v1/sets", "", RoleRead},
}

// TestAuthMatrix calls every endpoint with no token, a malformed header, a
// wrong token, a read token and an admin token: 401 (with
// WWW-Authenticate) below what the endpoint needs without a valid token,
// 403 for a valid token of too low a role, the endpoint's own answer
// otherwise; every refusal counted by reason, and no answer shows a token.
func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	cfg := fixtureConfig(t)
	cfg.TokensFile = writeTokens(t, "reader:"+readToken+"\nops:"+adminToken+":admin\n")
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	callers := []struct {
		name, header string
		role         Role // what the caller holds; -1: an invalid credential
	}{
		{"none", "", -1},
		{"malformed", "Basic " + readToken, -1},
		{"wrong", "Bearer " + readToken + "x", -1},
		{"read", "Bearer " + readToken, RoleRead},
		{"admin", "bearer " + adminToken, RoleAdmin},
	}
	for _, q := range authRequests {
		for _, c := range callers {
			req := httptest.NewRequest(q.method, q.path, strings.NewReader(q.body))
			if c.header != "" {
				req.Header.Set("Authorization", c.header)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			want := 0 // the endpoint's own answer: anything but 401 and 403
			switch {
			case q.need == RoleNone:
			case c.role < 0:
				want = http.StatusUnauthorized
			case c.role < q.need:
				want = http.StatusForbidden
			}
			got := rec.Code
			if want != 0 && got != want || want == 0 && (got == http.StatusUnauthorized || got == http.StatusForbidden) {
				t.Errorf("%s %s as %s: %d, want %v\n%s", q.method, q.path, c.name, got, map[int]string{0: "the endpoint's answer"}[want]+http.StatusText(want), rec.Body)
			}
			if got == http.StatusUnauthorized && (rec.Header().Get("WWW-Authenticate") != `Bearer realm="ccs"` || rec.Header().Get("Connection") != "close") {
				t.Errorf("%s %s as %s: 401 without WWW-Authenticate or Connection: close", q.method, q.path, c.name)
			}
			if strings.Contains(rec.Body.String(), readToken) || strings.Contains(rec.Body.String(), adminToken) {
				t.Errorf("%s %s as %s: the answer shows a token", q.method, q.path, c.name)
			}
		}
	}
	// The refusals, by reason, on /metrics (read with the admin token).
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	n := 0
	for _, q := range authRequests {
		if q.need != RoleNone {
			n++
		}
	}
	for reason, count := range map[string]int{"missing": n, "malformed": n, "wrong": n, "role": 2} {
		line := `ccs_auth_denied_total{reason="` + reason + `"} ` + itoa(count)
		if !strings.Contains(rec.Body.String(), line+"\n") {
			t.Errorf("metrics lack %q", line)
		}
	}
	// The requests refused 401 add up to the denials without a token,
	// /metrics's own among them; 403s to the denials by role.
	for code, want := range map[string]int{"401": 3 * n, "403": 2} {
		got := 0
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if strings.HasPrefix(line, `ccs_requests_total{code="`+code+`",`) {
				v, _ := strconv.Atoi(line[strings.LastIndexByte(line, ' ')+1:])
				got += v
			}
		}
		if got != want {
			t.Errorf("ccs_requests_total of code %s: %d, want %d, the denials", code, got, want)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestMetricsAccess: /metrics needs a read token by default, is open with
// MetricsOpen and absent with MetricsOff (the catch-all then needs a token
// and answers 404).
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		access             MetricsAccess
		anonymous, withTok int
	}{{MetricsToken, 401, 200}, {MetricsOpen, 200, 200}, {MetricsOff, 401, 404}} {
		cfg := fixtureConfig(t)
		cfg.TokensFile = writeTokens(t, readToken+"\n")
		cfg.Metrics = c.access
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []struct {
			header string
			want   int
		}{{"", c.anonymous}, {"Bearer " + readToken, c.withTok}} {
			req := httptest.NewRequest("GET", "/metrics", nil)
			if h.header != "" {
				req.Header.Set("Authorization", h.header)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if rec.Code != h.want {
				t.Errorf("metrics %d, token %v: %d, want %d", c.access, h.header != "", rec.Code, h.want)
			}
		}
		// Another method than GET or HEAD: 405, as every endpoint
		// answers it (it answered POST and DELETE with the page).
		if c.access != MetricsOff {
			for _, m := range []string{"POST", "DELETE"} {
				req := httptest.NewRequest(m, "/metrics", nil)
				req.Header.Set("Authorization", "Bearer "+readToken)
				rec := httptest.NewRecorder()
				s.Handler().ServeHTTP(rec, req)
				if rec.Code != 405 || rec.Header().Get("Allow") != "GET, HEAD" {
					t.Errorf("metrics %d, %s: %d (Allow %q), want 405", c.access, m, rec.Code, rec.Header().Get("Allow"))
				}
			}
		}
	}
	if _, err := ParseMetricsAccess("public"); err == nil {
		t.Error("ParseMetricsAccess accepted public")
	}
}

// TestAdminReload reloads over HTTP: the generation advances; an invalid
// set file is refused with 422 naming the generation still served; a
// rotated tokens file takes effect on reload (the old token 401, the new
// one accepted), even when the sets fail to reload. Each reload is
// logged, naming the token and address that asked for it.
func TestAdminReload(t *testing.T) {
	t.Parallel()
	cfg := fixtureConfig(t)
	cfg.TokensFile = writeTokens(t, "ops:"+adminToken+":admin\n")
	var logged bytes.Buffer
	cfg.Logger = log.New(&logged, "", 0)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	call := func(tok, method, path string) (int, map[string]any) {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		var v map[string]any
		json.Unmarshal(rec.Body.Bytes(), &v)
		return rec.Code, v
	}
	if code, v := call(adminToken, "POST", "/v1/admin/reload"); code != 200 || v["generation"] != 2.0 {
		t.Fatalf("reload: %d %v, want generation 2", code, v)
	}
	if want := `reloaded (POST /v1/admin/reload from 192.0.2.1:1234, token "ops"): generation 2; OOD monitors kept for "ball" (set files unchanged)`; !strings.HasPrefix(logged.String(), want) {
		t.Errorf("logged %q, want %q", logged.String(), want)
	}
	if _, v := call(adminToken, "GET", "/v1/sets"); v["generation"] != 2.0 {
		t.Fatalf("sets after reload: generation %v", v["generation"])
	}
	good, _ := os.ReadFile(cfg.Sets["ball"])
	os.WriteFile(cfg.Sets["ball"], []byte(`{"format": "ccs-set", "version": 9}`), 0o644)
	code, v := call(adminToken, "POST", "/v1/admin/reload")
	if msg, _ := json.Marshal(v); code != 422 || !strings.Contains(string(msg), "serving generation 2") || !strings.Contains(string(msg), "version 9") {
		t.Fatalf("invalid reload: %d %s", code, msg)
	}
	if want := `reload failed (POST /v1/admin/reload from 192.0.2.1:1234, token "ops"; the parts that failed keep their previous version; serving generation 2): set "ball"`; !strings.Contains(logged.String(), want) {
		t.Errorf("logged %q, want a line %q…", logged.String(), want)
	}
	os.WriteFile(cfg.Sets["ball"], good, 0o644)
	newAdmin := "n3w-admin-0123456789abcdef"
	os.WriteFile(cfg.TokensFile, []byte("ops:"+newAdmin+":admin\n"), 0o600)
	if code, v := call(adminToken, "POST", "/v1/admin/reload"); code != 200 || v["generation"] != 3.0 {
		t.Fatalf("rotating reload: %d %v", code, v)
	}
	if code, _ := call(adminToken, "GET", "/v1/sets"); code != 401 {
		t.Errorf("the old token after rotation: %d, want 401", code)
	}
	if code, v := call(newAdmin, "GET", "/v1/sets"); code != 200 || v["generation"] != 3.0 {
		t.Errorf("the new token: %d %v", code, v)
	}
	// A revocation takes effect even when the sets fail to reload.
	os.WriteFile(cfg.Sets["ball"], []byte("{"), 0o644)
	third := "th1rd-admin-0123456789abcdef"
	os.WriteFile(cfg.TokensFile, []byte("ops:"+third+":admin\n"), 0o600)
	if code, _ := call(newAdmin, "POST", "/v1/admin/reload"); code != 422 {
		t.Errorf("a reload failing on a set: %d, want 422", code)
	}
	if code, v := call(third, "GET", "/v1/sets"); code != 200 || v["generation"] != 3.0 {
		t.Errorf("after a reload that revoked a token and failed on a set: %d %v, want 200 at generation 3", code, v)
	}
	if code, _ := call(newAdmin, "GET", "/v1/sets"); code != 401 {
		t.Errorf("the revoked token: %d, want 401", code)
	}
	// The tokens file failing, the sets reloading: the log says both.
	os.WriteFile(cfg.Sets["ball"], good, 0o644)
	os.WriteFile(cfg.TokensFile, []byte("short\n"), 0o600)
	if code, _ := call(third, "POST", "/v1/admin/reload"); code != 422 {
		t.Errorf("a reload failing on its tokens: %d, want 422", code)
	}
	if want := "serving generation 4; the sets and collections were reloaded, generation 4; OOD monitors kept for \"ball\" (set files unchanged)): tokens file"; !strings.Contains(logged.String(), want) {
		t.Errorf("logged %q, want a line with %q", logged.String(), want)
	}
}

// FuzzParseTokens: the tokens file parser never panics; a file it accepts
// has every token findable and nothing else; an error it gives shows no
// run of 8 characters of the file that could be part of a token.
func FuzzParseTokens(f *testing.F) {
	f.Add("# c\n" + readToken + "\nops:" + adminToken + ":admin\n")
	f.Add("a:" + readToken + ":root\n")
	f.Add("x:y:z:w\n" + readToken[:10])
	f.Fuzz(func(t *testing.T, text string) {
		tk, err := parseTokens(strings.NewReader(text))
		if err != nil {
			msg := err.Error()
			for _, line := range strings.Split(text, "\n") {
				for _, field := range strings.FieldsFunc(line, func(r rune) bool { return r == ':' }) {
					if len(field) >= 8 && strings.Contains(msg, field) && !strings.Contains("read admin", field) {
						t.Fatalf("the error %q shows %q of the file", msg, field)
					}
				}
			}
			return
		}
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Split(line, ":")
			secret := f[0]
			if len(f) > 1 {
				secret = f[1]
			}
			if _, ok := tk.lookup(secret); !ok {
				t.Fatalf("accepted token of line %q is not found", line)
			}
		}
		if _, ok := tk.lookup("not-a-token-in-this-file-at-all"); ok && !strings.Contains(text, "not-a-token-in-this-file-at-all") {
			t.Fatal("lookup accepted a stranger")
		}
	})
}

// TestTokensPathNotEchoed: a token given where the tokens file's path
// goes (16 characters or more, no directory, no extension) is not echoed
// in the error, which still says the file does not exist; a path is.
func TestTokensPathNotEchoed(t *testing.T) {
	_, err := ReadTokens("s3cr3tTOKENabcdef0123456789")
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "looks like a token itself (not echoed)") {
		t.Errorf("a token as the path: %v", err)
	}
	path := filepath.Join(t.TempDir(), "missing.tokens")
	if _, err := ReadTokens(path); err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want its path", err)
	}
}

// TestAuthTwoHeaders: two Authorization headers are refused whichever
// comes first, a valid token among them: a proxy that appends a header,
// and a log or server that reads the last, would disagree with one that
// reads the first.
func TestAuthTwoHeaders(t *testing.T) {
	t.Parallel()
	cfg := fixtureConfig(t)
	cfg.TokensFile = writeTokens(t, "reader:"+readToken+"\n")
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{readToken, readToken + "x"}, {readToken + "x", readToken}, {readToken, readToken}} {
		req := httptest.NewRequest("GET", "/v1/sets", nil)
		req.Header.Add("Authorization", "Bearer "+pair[0])
		req.Header.Add("Authorization", "Bearer "+pair[1])
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "more than one Authorization header") {
			t.Errorf("two headers: %d %s", rec.Code, rec.Body)
		}
	}
}
