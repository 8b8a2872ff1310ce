package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
)

// stream writes a JSON object answer field by field, byte for byte as
// writeJSON would write it (indented by two spaces), through a small
// buffer: an answer of millions of scores is never held whole, so its
// memory does not grow with the request (docs/security.md's bound). The
// status is sent at once: everything that may fail is done before.
type stream struct {
	w     *bufio.Writer // its first error is kept, and returned by close
	elem  []byte        // an element being formatted
	first bool
}

// streams are the streams not in use: a request of one point does not
// allocate a buffer of 32 KiB.
var streams = sync.Pool{New: func() any { return &stream{w: bufio.NewWriterSize(nil, 32<<10)} }}

func newStream(w http.ResponseWriter, status int) *stream {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	s := streams.Get().(*stream)
	s.w.Reset(w)
	s.first = true
	s.w.WriteByte('{')
	return s
}

func (s *stream) key(name string) {
	if !s.first {
		s.w.WriteByte(',')
	}
	s.first = false
	s.w.WriteString("\n  ")
	s.w.WriteString(strconv.Quote(name)) // plain ASCII names
	s.w.WriteString(": ")
}

// raw writes a field whose value is already JSON, indented for a field's
// depth (indented).
func (s *stream) raw(name string, v []byte) {
	s.key(name)
	s.w.Write(v)
}

// array writes a field of n elements; elem appends element i's JSON,
// indented for an element's depth, to b.
func (s *stream) array(name string, n int, elem func(b []byte, i int) []byte) {
	s.key(name)
	if n == 0 {
		s.w.WriteString("[]")
		return
	}
	s.w.WriteByte('[')
	for i := range n {
		if i > 0 {
			s.w.WriteByte(',')
		}
		s.w.WriteString("\n    ")
		s.elem = elem(s.elem[:0], i)
		s.w.Write(s.elem)
	}
	s.w.WriteString("\n  ]")
}

// close ends the object and sends what is left; its error is the first
// write's that failed (the client went away).
func (s *stream) close() error {
	s.w.WriteString("\n}\n")
	err := s.w.Flush()
	s.w.Reset(nil) // keeps nothing of the request
	streams.Put(s)
	return err
}

// indented is v as JSON for a field of a stream, as encoding/json would
// indent it there.
func indented(v any) ([]byte, error) {
	return json.MarshalIndent(v, "  ", "  ")
}

// fields marshals the small fields of an answer, given as name, value
// pairs, before the answer starts (so that an error is still an error
// answer), for stream.raw.
func fields(kv ...any) (map[string][]byte, error) {
	out := make(map[string][]byte, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		b, err := indented(kv[i+1])
		if err != nil {
			return nil, fmt.Errorf("answer field %v: %w", kv[i], err)
		}
		out[kv[i].(string)] = b
	}
	return out, nil
}

// appendNumber appends f as encoding/json writes a number: the shortest
// decimal that reads back to f, in exponent form below 1e-6 or from 1e21;
// ±Inf as the strings "+Inf" and "-Inf", NaN as null.
func appendNumber(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	case math.IsNaN(f):
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 → e-9, as encoding/json
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
