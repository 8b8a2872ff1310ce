// Package jsonscan reads the two shapes that make a set file large — an
// object's members and an array of numbers — in one pass over the bytes,
// for documents that are well formed. encoding/json validates a document,
// then scans each value again as it descends into it, and stores each
// number through reflection: a d = 1536 ellipsoid's Σ (2.4 million numbers,
// 52 MB) took it 1.6 s to read. Here a value's bytes are looked at once.
//
// Each function reports ok = false, and nothing else, for anything it does
// not read exactly as encoding/json would: the caller then decodes with
// encoding/json, whose error names what is wrong. So ok = true promises the
// same values encoding/json gives, never a different reading.
package jsonscan

import (
	"bytes"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/ccsets/ccs/internal/fastfloat"
)

// Member is one member of an object: its key, and its value's bytes (a
// subslice of the object's).
type Member struct {
	Key   string
	Value []byte
}

// maxDepth bounds the nesting Members' values may have (encoding/json
// allows 10 000; a set file has a few levels).
const maxDepth = 64

// Members returns the members of the JSON object b, in order. ok is false
// unless b is an object (whitespace around it allowed) whose every value is
// well-formed JSON and whose keys are distinct UTF-8 strings without escapes: a
// key that differs only in case from another (which encoding/json matches
// to the same field) is the caller's to refuse.
func Members(b []byte) ([]Member, bool) {
	m, _, ok := members(b, "", false, nil, nil)
	return m, ok
}

// MembersSkim is Members for a reader of the members keep alone, of a
// document another reader checks whole: the value of any other member
// that is an array holding no string, object or array (an embedding) is
// passed over to its closing bracket, its numbers not checked. ok = true
// then promises keep's values alone, as Members would give them.
func MembersSkim(b []byte, keep []string) ([]Member, bool) {
	m, _, ok := members(b, "", false, keep, nil)
	return m, ok
}

// MembersNear is Members, the member key's value — where it is an array
// of numbers — read as Near reads one, into dst[:0], in the same pass
// over its bytes (a JSON line's embedding: its numbers looked at once,
// not once to find the value's end and again to parse it). near is nil
// where the object has no member key, or its value is not an array Near
// reads; ok is Members'.
func MembersNear(b []byte, key string, dst []float64) (m []Member, near []float64, ok bool) {
	return members(b, key, true, nil, dst)
}

// members reads the object b's members; where parse, the value of the
// member key with Near's parse; where keep, the flat arrays of other
// members passed over (MembersSkim).
func members(b []byte, key string, parse bool, keep []string, dst []float64) (out []Member, near []float64, ok bool) {
	i := space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, nil, false
	}
	i = space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, nil, space(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, nil, false
		}
		end, plain := stringEnd(b, i)
		if end < 0 || !plain {
			return nil, nil, false
		}
		k := string(b[i+1 : end-1])
		if !utf8.ValidString(k) { // encoding/json reads its bad bytes as U+FFFD
			return nil, nil, false
		}
		for _, m := range out {
			if m.Key == k {
				return nil, nil, false
			}
		}
		i = space(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, nil, false
		}
		i = space(b, i+1)
		end = -1
		if parse && key == k && i < len(b) && b[i] == '[' {
			var at int
			if near, at, ok = floatsAt(dst, b, i, nearNumber); ok {
				end = at
			} else {
				near = nil
			}
		}
		if end < 0 && keep != nil && i < len(b) && b[i] == '[' && !slices.Contains(keep, k) {
			end = flatEnd(b, i)
		}
		if end < 0 {
			end = valueEnd(b, i, 0)
		}
		if end < 0 {
			return nil, nil, false
		}
		out = append(out, Member{Key: k, Value: b[i:end]})
		next, done, ok := after(b, end, '}')
		switch {
		case !ok:
			return nil, nil, false
		case done:
			if space(b, next) != len(b) {
				return nil, nil, false
			}
			return out, near, true
		}
		i = next
	}
}

// Floats parses b, a JSON array of numbers, into dst[:0] as
// strconv.ParseFloat does with F's size (as encoding/json stores a number in
// a float32 or a float64). ok is false for anything else — null, a string,
// a number out of F's range — and for b that is not exactly one array
// (whitespace around it allowed). An empty array gives an empty, non-nil
// slice, as encoding/json's does.
func Floats[F float32 | float64](dst []F, b []byte) ([]F, bool) {
	bits := int(unsafe.Sizeof(F(0))) * 8
	return floats(dst, b, func(s string) (F, bool) {
		var v F
		var ok bool
		if bits == 32 {
			var x float32
			x, ok = fastfloat.Float32(s)
			v = F(x)
		} else {
			var x float64
			x, ok = fastfloat.Float64(s)
			v = F(x)
		}
		if !ok {
			x, err := strconv.ParseFloat(s, bits)
			v, ok = F(x), err == nil
		}
		return v, ok
	})
}

// Near is Floats[float64] for a reader that keeps float32s of the numbers'
// float64s (as a float64 array is narrowed): a number of more digits than
// float64 reads exactly may be read as a float64 within 2·10^-15 of its
// own (relatively) that rounds to the same float32 (fastfloat.Narrow's),
// which is several times faster.
func Near(dst []float64, b []byte) ([]float64, bool) {
	return floats(dst, b, nearNumber)
}

// nearNumber is Near's parse of a number.
func nearNumber(s string) (float64, bool) {
	if v, _, ok := fastfloat.Narrow(s); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// floats reads the array b of numbers with parse.
func floats[F float32 | float64](dst []F, b []byte, parse func(string) (F, bool)) ([]F, bool) {
	out, end, ok := floatsAt(dst, b, space(b, 0), parse)
	if !ok || space(b, end) != len(b) {
		return nil, false
	}
	return out, true
}

// floatsAt reads the array of numbers that starts at b[i] with parse,
// into dst[:0]; end is the index after its closing bracket.
func floatsAt[F float32 | float64](dst []F, b []byte, i int, parse func(string) (F, bool)) (out []F, end int, ok bool) {
	out = dst[:0]
	if out == nil { // sized by the commas, as many as its values less one
		out = make([]F, 0, bytes.Count(b[i:], []byte{','})+1)
	}
	if i >= len(b) || b[i] != '[' {
		return nil, 0, false
	}
	i = space(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, i + 1, true
	}
	for {
		end := numberEnd(b, i)
		if end < 0 {
			return nil, 0, false
		}
		v, ok := parse(unsafe.String(&b[i], end-i))
		if !ok {
			return nil, 0, false
		}
		out = append(out, v)
		next, done, ok := after(b, end, ']')
		switch {
		case !ok:
			return nil, 0, false
		case done:
			return out, next, true
		}
		i = next
	}
}

// flatEnd is the end of the array starting at b[i] (the index after its
// closing bracket) where it holds no string, object or array — its
// values not checked —, or -1.
func flatEnd(b []byte, i int) int {
	j := bytes.IndexByte(b[i+1:], ']')
	if j < 0 {
		return -1
	}
	in := b[i+1 : i+1+j]
	if bytes.IndexByte(in, '"') >= 0 || bytes.IndexByte(in, '[') >= 0 || bytes.IndexByte(in, '{') >= 0 {
		return -1
	}
	return i + j + 2
}

// after reads what follows an object's member or an array's element that
// ends at b[i]: a comma (next is the following one's start), the closer
// (done: next is the container's end), or else ok is false.
func after(b []byte, i int, closer byte) (next int, done, ok bool) {
	i = space(b, i)
	switch {
	case i >= len(b):
		return 0, false, false
	case b[i] == ',':
		return space(b, i+1), false, true
	case b[i] == closer:
		return i + 1, true, true
	}
	return 0, false, false
}

// space is the index of the first byte at or after i that is not JSON
// whitespace.
func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// numberEnd is the end of the JSON number starting at b[i], or -1 where no
// number starts there: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func numberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := i + 1
		for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		}
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		}
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// stringEnd is the end of the JSON string starting at b[i] (its closing
// quote's index + 1), or -1 where it is not well formed; plain says it has
// no escapes. Its bytes are not checked to be UTF-8: encoding/json replaces
// invalid bytes, so a caller that keeps a string decodes it there.
func stringEnd(b []byte, i int) (end int, plain bool) {
	plain = true
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, plain
		case c < 0x20:
			return -1, false
		case c == '\\':
			plain = false
			if i+1 >= len(b) {
				return -1, false
			}
			i++
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1, false
					}
				}
				i += 4
			default:
				return -1, false
			}
		}
	}
	return -1, false
}

// valueEnd is the end of the well-formed JSON value starting at b[i], or
// -1 where none does.
func valueEnd(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	literal := func(word string) int {
		if len(b)-i >= len(word) && string(b[i:i+len(word)]) == word {
			return i + len(word)
		}
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		end, _ := stringEnd(b, i)
		return end
	case c == 't':
		return literal("true")
	case c == 'f':
		return literal("false")
	case c == 'n':
		return literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return numberEnd(b, i)
	case c == '[' || c == '{':
		if depth >= maxDepth {
			return -1
		}
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		i = space(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return -1
				}
				end, _ := stringEnd(b, i)
				if end < 0 {
					return -1
				}
				i = space(b, end)
				if i >= len(b) || b[i] != ':' {
					return -1
				}
				i = space(b, i+1)
			}
			end := valueEnd(b, i, depth+1)
			if end < 0 {
				return -1
			}
			next, done, ok := after(b, end, closer)
			switch {
			case !ok:
				return -1
			case done:
				return next
			}
			i = next
		}
	}
	return -1
}
