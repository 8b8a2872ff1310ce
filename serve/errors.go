package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/ccsets/ccs/internal/jsonfloat"
)

// apiError is an error answered as {"error": {"code", "message", "field"}}.
type apiError struct {
	status int
	code   string
	msg    string
	field  string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "bad_request", msg: fmt.Sprintf(format, args...), field: field}
}

func invalid(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, code: "invalid", msg: fmt.Sprintf(format, args...), field: field}
}

func cancelled(err error) error {
	return &apiError{status: 499, code: "cancelled", msg: "request cancelled: " + err.Error()}
}

// maxEcho is the most bytes of a request's own input that an error
// message repeats: a 100 kB number or name is not sent back whole.
const maxEcho = 64

// maxMessage caps a whole error message (the list of a server's sets, an
// error of a library quoting what it read), as a last guard.
const maxMessage = 1024

// clip is s for an error message: whole up to maxEcho bytes, else its
// first maxEcho bytes (cut at a character's start) and how long it was.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return s[:cutAt(s, maxEcho)] + fmt.Sprintf("… (%d bytes)", len(s))
}

// quote is s quoted for an error message, cut as clip cuts it.
func quote(s string) string {
	if len(s) <= maxEcho {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:cutAt(s, maxEcho)]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// cutAt is the largest n ≤ max at which s can be cut without splitting a
// UTF-8 character.
func cutAt(s string, max int) int {
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = &apiError{status: http.StatusInternalServerError, code: "internal", msg: err.Error()}
	}
	if e.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	msg, field := e.msg, e.field
	if len(msg) > maxMessage {
		msg = msg[:cutAt(msg, maxMessage)] + "… (cut)"
	}
	if len(field) > maxMessage {
		field = field[:cutAt(field, maxMessage)] + "…"
	}
	type body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field,omitempty"`
	}
	writeJSON(w, e.status, map[string]body{"error": {e.code, msg, field}})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := w.Write(b.Bytes())
	return err
}

// number is a float64 that JSON-encodes ±Inf as the strings "+Inf"/"-Inf"
// (and NaN as null), as every ccs JSON file does.
type number = jsonfloat.Float
