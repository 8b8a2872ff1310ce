package serve

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
)

// Role is what a token may do.
type Role int

const (
	// RoleNone marks the endpoints anyone may call: /healthz and /readyz.
	RoleNone Role = iota
	// RoleRead may list the sets and ask for scores, OOD answers and
	// retrievals (and read /metrics unless it is open or off).
	RoleRead
	// RoleAdmin may also reload the served files and reset a set's OOD
	// drift monitor.
	RoleAdmin
)

func (r Role) String() string {
	switch r {
	case RoleNone:
		return "none"
	case RoleRead:
		return "read"
	case RoleAdmin:
		return "admin"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// MinTokenLength is the shortest token a tokens file may hold: 16
// characters (`openssl rand -hex 32` makes 64).
const MinTokenLength = 16

// token is one caller's credential: its name (for errors and metrics,
// never the secret), its role and the SHA-256 of its secret.
type token struct {
	name string
	role Role
	hash [sha256.Size]byte
}

// Tokens are the credentials a server accepts.
type Tokens struct{ list []token }

// ReadTokens reads a tokens file: one token per line, as TOKEN, NAME:TOKEN
// or NAME:TOKEN:ROLE, ROLE being read (the default) or admin; blank lines
// and lines starting with # are skipped. Tokens are printable ASCII without
// spaces or colons, at least MinTokenLength long; names are letters,
// digits, '.', '_' and '-'; names and tokens are unique. Errors name the
// file and the line, and echo nothing of the line: a malformed line may
// hold a token.
func ReadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && looksLikeToken(path) {
			// A token given where its file goes: never echoed (it would
			// land in logs and tracebacks).
			return nil, fmt.Errorf("tokens file: no such file, and the value given looks like a token itself (not echoed): give the path of a file of NAME:TOKEN lines (docs/security.md): %w", fs.ErrNotExist)
		}
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("tokens file %s is a directory: want a file of tokens, one a line", path)
	}
	t, err := parseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	return t, nil
}

func parseTokens(r io.Reader) (*Tokens, error) {
	t := &Tokens{}
	names := map[string]bool{}
	hashes := map[[sha256.Size]byte]bool{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // a Windows editor's byte-order mark: no part of a name
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		// A comment after the entry, as docs/security.md writes them: a '#'
		// after a space or tab (a token may hold a '#', never a space).
		if i := strings.IndexFunc(text, func(r rune) bool { return r == ' ' || r == '\t' }); i >= 0 {
			if rest := strings.TrimLeft(text[i:], " \t"); strings.HasPrefix(rest, "#") {
				text = text[:i]
			}
		}
		f := strings.Split(text, ":")
		tk := token{name: fmt.Sprintf("line-%d", line), role: RoleRead}
		var secret string
		switch len(f) {
		case 1:
			secret = f[0]
		case 2, 3:
			tk.name, secret = f[0], f[1]
			if len(f) == 3 {
				switch f[2] {
				case "read":
				case "admin":
					tk.role = RoleAdmin
				default:
					return nil, fmt.Errorf("line %d: unknown role: want read or admin", line)
				}
			}
		default:
			return nil, fmt.Errorf("line %d: %d colon-separated fields, want TOKEN, NAME:TOKEN or NAME:TOKEN:ROLE", line, len(f))
		}
		if tk.name == "" || strings.ContainsFunc(tk.name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		}) {
			return nil, fmt.Errorf("line %d: a name is letters, digits, '.', '_' and '-'", line)
		}
		if len(secret) < MinTokenLength {
			return nil, fmt.Errorf("line %d: the token has %d characters, want at least %d", line, len(secret), MinTokenLength)
		}
		if strings.ContainsFunc(secret, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return nil, fmt.Errorf("line %d: the token must be printable ASCII without spaces", line)
		}
		if names[tk.name] {
			return nil, fmt.Errorf("line %d: the name appears on an earlier line", line)
		}
		tk.hash = sha256.Sum256([]byte(secret))
		if hashes[tk.hash] {
			return nil, fmt.Errorf("line %d: the same token as an earlier line", line)
		}
		names[tk.name], hashes[tk.hash] = true, true
		t.list = append(t.list, tk)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("line %d: longer than %d bytes", line+1, bufio.MaxScanTokenSize)
	} else if err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(t.list) == 0 {
		return nil, fmt.Errorf("no tokens")
	}
	return t, nil
}

// Len is the number of tokens.
func (t *Tokens) Len() int { return len(t.list) }

// lookup finds the token whose secret is the one presented. It compares
// SHA-256 digests (equal lengths, whatever was presented) in constant time
// against every token, without stopping at a match, so that its time says
// nothing about which token or how much of one matched.
func (t *Tokens) lookup(secret string) (token, bool) {
	h := sha256.Sum256([]byte(secret))
	found := -1
	for i := range t.list {
		if subtle.ConstantTimeCompare(h[:], t.list[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return token{}, false
	}
	return t.list[found], true
}

// caller is the name of the token r carries, "" if none is valid (or the
// server has no tokens).
func (s *Server) caller(r *http.Request) string {
	t := s.tokens.Load()
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if t == nil || !ok || !strings.EqualFold(scheme, "Bearer") || len(r.Header.Values("Authorization")) > 1 {
		return ""
	}
	tk, _ := t.lookup(strings.TrimSpace(secret))
	return tk.name
}

// authorize checks a request's bearer token against need: nil when the
// server has no tokens or the token's role suffices; else the 401 or 403
// to answer, and the reason counted in ccs_auth_denied_total.
func (s *Server) authorize(r *http.Request, need Role) (*apiError, string) {
	t := s.tokens.Load()
	if need == RoleNone || t == nil {
		return nil, ""
	}
	if len(r.Header.Values("Authorization")) > 1 {
		// Which copy counts differs from one proxy, log or server to the
		// next, as a JSON body's repeated field does: ambiguous, refused.
		return &apiError{status: http.StatusUnauthorized, code: "unauthorized", msg: "more than one Authorization header: send one, Authorization: Bearer TOKEN"}, "malformed"
	}
	h := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(h, " ")
	if h == "" {
		return &apiError{status: http.StatusUnauthorized, code: "unauthorized", msg: "this endpoint needs a token: Authorization: Bearer TOKEN"}, "missing"
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return &apiError{status: http.StatusUnauthorized, code: "unauthorized", msg: "the Authorization header must be: Bearer TOKEN"}, "malformed"
	}
	tk, ok := t.lookup(strings.TrimSpace(secret))
	if !ok {
		return &apiError{status: http.StatusUnauthorized, code: "unauthorized", msg: "the token is not valid"}, "wrong"
	}
	if tk.role < need {
		return &apiError{status: http.StatusForbidden, code: "forbidden",
			msg: fmt.Sprintf("token %q has role %v; this endpoint needs %v", tk.name, tk.role, need)}, "role"
	}
	return nil, ""
}

// looksLikeToken reports whether a tokens file's path that does not exist
// looks like a token instead: 16 characters or more with no directory
// separator and no extension.
func looksLikeToken(path string) bool {
	return len(path) >= 16 && !strings.ContainsAny(path, "/\\.")
}

// TokensFileWarnings are what an operator must hear of the tokens file at
// path before serving: that it is readable by others (its tokens are
// every caller's keys), and, beyond this machine (loopback false) without
// TLS, that tokens travel in clear text — without cert, the certificate
// as the caller takes it ("-tls-cert"). ccs serve prints them, ccs.serve
// (Python) warns them.
func TokensFileWarnings(path string, tls, loopback bool, cert string) []string {
	if path == "" {
		return nil
	}
	var w []string
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		w = append(w, fmt.Sprintf("%s is readable by others (mode %v); chmod 600 it", path, fi.Mode().Perm()))
	}
	if !tls && !loopback {
		w = append(w, "tokens travel in clear text without "+cert+"; serve TLS, or put a TLS proxy in front on this machine")
	}
	return w
}
