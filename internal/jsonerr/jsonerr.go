// Package jsonerr words encoding/json's errors for whoever wrote the file:
// a field as the file names it, the value it holds and what was wanted
// (`alpha: "0.1" is a string, want a number`), a syntax error's line and
// column, and what Python's json module writes that JSON lacks (NaN,
// Infinity), with no Go type or struct named.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
)

// Error is an encoding/json error reworded; it unwraps to the original.
type Error struct {
	msg string
	err error
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns encoding/json's error.
func (e *Error) Unwrap() error { return e.err }

// Explain rewords err where it is, or wraps, a *json.UnmarshalTypeError,
// a *json.SyntaxError or a json.Decoder's io.ErrUnexpectedEOF, keeping the
// rest of its text; any other error
// (nil included) is returned as it is. data, if not nil, is the document
// whose decoding failed from its first byte, which the errors' offsets
// count: it gives the value's text and the line and column.
func Explain(err error, data []byte) error {
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var inner, words string
	switch {
	case errors.As(err, &te):
		inner, words = te.Error(), typeError(te, data)
	case errors.As(err, &se):
		inner, words = se.Error(), syntaxError(se, data)
	case errors.Is(err, io.ErrUnexpectedEOF): // a json.Decoder's document cut short
		inner, words = io.ErrUnexpectedEOF.Error(), "the JSON ends before its value does: the file is cut short"
	default:
		return err
	}
	msg := err.Error()
	if i := strings.Index(msg, inner); i >= 0 {
		msg = msg[:i] + words + msg[i+len(inner):]
	} else {
		msg = words
	}
	return &Error{msg: msg, err: err}
}

// ExplainStream is Explain for an error of a json.Decoder reading data
// value by value (Token, or Decode after it), whose offsets do not count
// from data's start: a syntax error is found again by checking data whole,
// for its line and column; any other error is worded without a place.
func ExplainStream(err error, data []byte) error {
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
		var whole json.RawMessage
		if werr := json.Unmarshal(data, &whole); werr != nil {
			return Explain(werr, data)
		}
	}
	return Explain(err, nil)
}

// typeError words a value of the wrong type.
func typeError(te *json.UnmarshalTypeError, data []byte) string {
	// The path of JSON names, less an embedded struct's Go name
	// (capitalised, as the names in ccs's files never are).
	var path []string
	parts := strings.Split(te.Field, ".")
	for i, p := range parts {
		if p != "" && (i == len(parts)-1 || !unicode.IsUpper(rune(p[0]))) {
			path = append(path, p)
		}
	}
	field := ""
	if len(path) > 0 {
		field = strings.Join(path, ".") + ": "
	}
	t := te.Type
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	kind, text, _ := strings.Cut(te.Value, " ") // "number 0.0": the number's text
	if text == "" {
		text = literal(kind, data, te.Offset)
	}
	if kind == "number" && text != "" && t != nil {
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			switch {
			case strings.ContainsAny(text, ".eE"):
				return fmt.Sprintf("%s%s is not an integer", field, text)
			case strings.HasPrefix(text, "-"):
				return fmt.Sprintf("%s%s is negative, want %s", field, text, want(t))
			}
			return fmt.Sprintf("%s%s is too large for %s", field, text, want(t))
		case reflect.Float32, reflect.Float64:
			return fmt.Sprintf("%s%s is beyond the range of a %s", field, text, t.Kind())
		}
	}
	got := map[string]string{"string": "a string", "number": "a number", "bool": "a boolean",
		"array": "an array", "object": "an object"}[kind]
	if got == "" {
		got = te.Value
	}
	if text != "" {
		return fmt.Sprintf("%s%s is %s, want %s", field, text, got, want(t))
	}
	return fmt.Sprintf("%s%s, want %s", field, got, want(t))
}

// want says what a value of Go type t is in JSON's words.
func want(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer ≥ 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		if e := t.Elem(); e.Kind() != reflect.Interface {
			return "an array of " + plural(want(e))
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another type"
}

// plural is "numbers" for "a number", "integers ≥ 0" for "an integer ≥ 0".
func plural(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "a "), "an ")
	word, rest, _ := strings.Cut(s, " ")
	switch {
	case word == "true":
		return "booleans"
	case rest != "":
		return word + "s " + rest
	}
	return word + "s"
}

// literal is the text of the value of kind ("string", "number") that ends
// at data[offset-1], at most 40 bytes; "" when it cannot be found there.
func literal(kind string, data []byte, offset int64) string {
	if offset <= 0 || offset > int64(len(data)) {
		return ""
	}
	end := int(offset)
	switch kind {
	case "string":
		if data[end-1] != '"' {
			return ""
		}
		for i := end - 2; i >= 0; i-- {
			if data[i] != '"' {
				continue
			}
			slashes := 0
			for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
				slashes++
			}
			if slashes%2 == 0 {
				return clip(string(data[i:end]))
			}
		}
	case "number", "bool":
		i := end
		for i > 0 && bytes.IndexByte([]byte("0123456789+-.eEtrufalsTRUFALS"), data[i-1]) >= 0 {
			i--
		}
		if i < end {
			return clip(string(data[i:end]))
		}
	}
	return ""
}

// clip cuts s to 40 bytes, "…" marking the cut.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:37] + "…"
}

// syntaxError words a syntax error: where, and what Python writes for a
// float that JSON cannot hold.
func syntaxError(se *json.SyntaxError, data []byte) string {
	where := ""
	if data != nil && se.Offset > 0 && se.Offset <= int64(len(data)) {
		line := 1 + bytes.Count(data[:se.Offset-1], []byte("\n"))
		col := int(se.Offset) - bytes.LastIndexByte(data[:se.Offset-1], '\n') - 1
		where = fmt.Sprintf("line %d, column %d: ", line, col)
		if se.Offset == 1 && bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
			return "the file begins with a UTF-8 byte-order mark (as Windows editors save), which JSON does not allow: save it as UTF-8 without one"
		}
		at := data[se.Offset-1:]
		for _, w := range []string{"-Infinity", "NaN", "Infinity"} {
			if bytes.HasPrefix(at, []byte(w)) || w == "-Infinity" && se.Offset >= 2 && bytes.HasPrefix(data[se.Offset-2:], []byte(w)) {
				return where + w + " is not JSON (Python's json.dump writes it for a float " + map[string]string{"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}[w] + "; json.dump(..., allow_nan=False) refuses it)"
			}
		}
	}
	return where + se.Error()
}
