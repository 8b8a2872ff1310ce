package serve

import (
	"strconv"
	"unsafe"
)

// request is the union of the request bodies' fields.
type request struct {
	Anchor     []float64   `json:"anchor"`
	Points     [][]float64 `json:"points"`
	Collection string      `json:"collection"`
	Limit      *int        `json:"limit"`
	Label      *int64      `json:"label"` // score: the anchor's class, for a class-conditional set
}

// fastDecode parses the common shape of a request body — one object whose
// keys are exactly "anchor", "points", "collection" or "limit" (no
// escapes), with number arrays, a plain string and an integer — without
// reflection. It reports false for anything else (including every
// malformed body), and the caller then decodes with encoding/json, whose
// result and errors are the reference: a body fastDecode accepts decodes to
// the same value there (FuzzFastDecode checks it).
func fastDecode(b []byte, allowed map[string]bool) (request, bool) {
	var r request
	p := &parser{b: b}
	if !p.byte('{') {
		return r, false
	}
	if p.peek() == '}' {
		p.i++
		return r, p.end()
	}
	for {
		key, ok := p.key()
		if !ok || !allowed[key] || !p.byte(':') {
			return r, false
		}
		switch key {
		case "anchor":
			if r.Anchor, ok = p.numbers(r.Anchor[:0]); !ok {
				return r, false
			}
		case "points":
			if r.Points, ok = p.rows(); !ok {
				return r, false
			}
		case "collection":
			if r.Collection, ok = p.key(); !ok {
				return r, false
			}
		case "limit":
			n, ok := p.integer()
			if !ok {
				return r, false
			}
			r.Limit = &n
		case "label":
			n, ok := p.integer()
			if !ok {
				return r, false
			}
			l := int64(n)
			r.Label = &l
		}
		switch p.next() {
		case ',':
		case '}':
			return r, p.end()
		default:
			return r, false
		}
	}
}

type parser struct {
	b []byte
	i int
}

func (p *parser) skip() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) peek() byte {
	p.skip()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *parser) next() byte {
	c := p.peek()
	if c != 0 {
		p.i++
	}
	return c
}

func (p *parser) byte(c byte) bool { return p.next() == c }

func (p *parser) end() bool { p.skip(); return p.i == len(p.b) }

// key reads a string without escapes or control characters.
func (p *parser) key() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		case c == '\\' || c < 0x20 || c >= 0x80: // escapes and non-ASCII: encoding/json's business
			return "", false
		}
		p.i++
	}
	return "", false
}

// number reads a JSON number (its strict grammar) as a float64.
func (p *parser) number() (float64, bool) {
	p.skip()
	start, b := p.i, p.b
	i := p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, false
		}
	}
	// ParseFloat keeps nothing of its argument: view the bytes in place.
	v, err := strconv.ParseFloat(unsafe.String(&b[start], i-start), 64)
	if err != nil {
		return 0, false
	}
	p.i = i
	return v, true
}

// integer reads a number that encoding/json would store in an int.
func (p *parser) integer() (int, bool) {
	p.skip()
	start := p.i
	if _, ok := p.number(); !ok {
		return 0, false
	}
	n, err := strconv.Atoi(string(p.b[start:p.i]))
	return n, err == nil
}

// numbers reads [n, n, …] (or null) appending to dst.
func (p *parser) numbers(dst []float64) ([]float64, bool) {
	if p.peek() == 'n' {
		return nil, false // null: rare, left to encoding/json
	}
	if !p.byte('[') {
		return nil, false
	}
	out := dst
	if out == nil {
		out = make([]float64, 0, 16)
	}
	if p.peek() == ']' {
		p.i++
		return out, true
	}
	for {
		v, ok := p.number()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		switch p.next() {
		case ',':
		case ']':
			return out, true
		default:
			return nil, false
		}
	}
}

// rows reads [[…], […], …].
func (p *parser) rows() ([][]float64, bool) {
	if !p.byte('[') {
		return nil, false
	}
	out := [][]float64{}
	if p.peek() == ']' {
		p.i++
		return out, true
	}
	for {
		row, ok := p.numbers(nil)
		if !ok {
			return nil, false
		}
		out = append(out, row)
		switch p.next() {
		case ',':
		case ']':
			return out, true
		default:
			return nil, false
		}
	}
}
