// Package jsonindent lays out JSON as encoding/json's Indent does, but
// keeps each array of numbers, strings, booleans and nulls on one line.
//
// A set file's d×d matrix is d² numbers: one a line, as json.Indent puts
// them, it is half again as large and slower to write and to read, and no
// easier to look at than one line.
package jsonindent

import (
	"bytes"
	"encoding/json"
	"io"
)

// Indent appends to dst an indented form of the valid JSON src: objects
// and arrays that hold an object or an array open a line per element, each
// level indented by indent; an array of scalars stays on one line, its
// elements separated by ", ". src must be valid JSON, as json.Marshal and
// a json.Marshaler's output are; Indent checks it.
func Indent(dst *bytes.Buffer, src []byte, indent string) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, src); err != nil {
		return err
	}
	indentCompact(dst, compact.Bytes(), indent, 0)
	dst.WriteByte('\n')
	return nil
}

// indentCompact is Indent for compact, valid JSON (json.Marshal's), as
// the value of an element depth levels deep: its first line is not
// indented (the caller has written its key or its place), its closing
// line is indented depth levels, and no newline follows it.
func indentCompact(dst *bytes.Buffer, b []byte, indent string, depth int) {
	inline := 0 // the end of the array of scalars being written, if any
	newline := func() {
		dst.WriteByte('\n')
		for range depth {
			dst.WriteString(indent)
		}
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			j := stringEnd(b, i)
			dst.Write(b[i:j])
			i = j - 1
		case i < inline: // a run of the array up to its next comma or string, at once
			j := i + 1
			for j < inline && b[j] != ',' && b[j] != '"' {
				j++
			}
			if c == ',' {
				dst.WriteString(", ")
				i++
			}
			dst.Write(b[i:j])
			i = j - 1
		case c == '[' || c == '{':
			if c == '[' {
				if end, ok := scalarArray(b, i); ok {
					inline = end
					dst.WriteByte(c)
					continue
				}
			}
			dst.WriteByte(c)
			if b[i+1] == '}' { // empty: {} as Indent writes it
				dst.WriteByte(b[i+1])
				i++
				continue
			}
			depth++
			newline()
		case c == '}' || c == ']':
			depth--
			newline()
			dst.WriteByte(c)
		case c == ',':
			dst.WriteByte(c)
			newline()
		case c == ':':
			dst.WriteString(": ")
		default:
			dst.WriteByte(c)
		}
	}
}

// stringEnd is the index just past the string that starts at b[i] (a
// quote) in compact, valid JSON.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// scalarArray reports whether the array that opens at b[i] holds no
// object or array, and the index just past it.
func scalarArray(b []byte, i int) (end int, ok bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			j = stringEnd(b, j) - 1
		case '[', '{':
			return 0, false
		case ']':
			return j + 1, true
		}
	}
	return 0, false
}

// Encode writes v as a json.Encoder with SetIndent("", indent) writes it
// (HTML characters escaped, a newline at the end), but for its arrays of
// scalars, each on one line.
func Encode(w io.Writer, v any, indent string) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	out.Grow(len(raw) + len(raw)/4)
	indentCompact(&out, raw, indent, 0)
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// EncodeAt writes v as Encode lays it out when it is an element depth
// levels deep in a larger document: its first line unindented (the
// caller has written its key or its place), its last indented depth
// levels, no newline after it. A writer of a large document encodes it a
// part at a time, each part as the whole document's Encode would have
// written it.
func EncodeAt(w io.Writer, v any, indent string, depth int) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	out.Grow(len(raw) + len(raw)/4)
	indentCompact(&out, raw, indent, depth)
	_, err = w.Write(out.Bytes())
	return err
}
