package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ccsets/ccs/internal/suggest"
)

// field is one of the fields a JSON request body may carry.
type field uint8

const (
	fieldAnchor field = 1 << iota
	fieldPoints
	fieldCollection
	fieldLimit
	fieldLabel
)

// fieldNames are the fields' names in a body, in the order docs list them.
var fieldNames = []struct {
	name string
	f    field
}{{"anchor", fieldAnchor}, {"points", fieldPoints}, {"collection", fieldCollection}, {"limit", fieldLimit}, {"label", fieldLabel}}

// names lists the fields of fs, for an error message.
func (fs field) names() string {
	var out []string
	for _, n := range fieldNames {
		if fs&n.f != 0 {
			out = append(out, strconv.Quote(n.name))
		}
	}
	return strings.Join(out, ", ")
}

// bodySpec is what a JSON request body may hold.
type bodySpec struct {
	fields    field // the fields it may have
	dim       int   // the coordinates of the anchor and of each point: the set's dimension
	maxPoints int   // the most points; the start of one more is refused at once (413)
}

// request is a decoded JSON request body. A field that is absent, or
// null, has its zero value.
type request struct {
	anchor     []float32 // dim coordinates; nil: absent
	points     []float32 // m × dim coordinates, one point after the other; nil: absent, empty: []
	collection string
	limit      *int
	label      *int64  // the anchor's class's integer label
	labelName  *string // or its name ("label" a string)
}

// decodeRequest reads a JSON request body: one object with only the
// fields of spec, each at most once (keys compared exactly, after their
// escapes are read), its anchor and points arrays of numbers of spec.dim
// coordinates, with nothing after it but white space.
//
// It reads the body once, from left to right, and answers the first
// problem it meets: a malformed body 400; a field of the wrong type 400
// naming it; a null coordinate (JavaScript's JSON.stringify writes NaN and
// ±Infinity as null), a vector of another length or a number beyond
// float32 422 naming it (points[i][j], anchor[j]); the start of a point
// beyond spec.maxPoints 413. A whole field null is absent, as in
// encoding/json.
//
// Its memory follows the numbers it read, not the body's shape: the
// anchor and the points are float32s appended to one slice each, sized
// from the commas left in the body (a bound on the numbers it holds) and
// the limits; a row is never allocated on its own; what strings may cost
// is bounded by maxKey and maxName. Numbers are parsed as float32
// directly (correctly rounded), not through float64.
func decodeRequest(body []byte, spec bodySpec) (request, error) {
	p := &reader{b: body, spec: spec}
	var r request
	if err := p.object(&r); err != nil {
		return request{}, err
	}
	return r, nil
}

// reader is decodeRequest's position in a body.
type reader struct {
	b    []byte
	i    int
	spec bodySpec
}

func (p *reader) skip() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// eat consumes c, after white space, if it is next.
func (p *reader) eat(c byte) bool {
	p.skip()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// null consumes the literal null, after white space, if it is next.
func (p *reader) null() bool {
	p.skip()
	if bytes.HasPrefix(p.b[p.i:], []byte("null")) {
		p.i += 4
		return true
	}
	return false
}

// found shows what is at the reader's position, for an error message:
// a string whole (cut past 16 bytes), not the body's rest after it, and
// a number sent as a string said so.
func (p *reader) found() string {
	if p.i >= len(p.b) {
		return "the end of the body"
	}
	const show = 16
	if start := p.i; p.b[start] == '"' {
		tok, _, ok := p.str()
		p.i = start
		if ok {
			inner := string(tok[1 : len(tok)-1])
			if len(inner) > show {
				return "the string " + strconv.Quote(inner[:cutAt(inner, show)]) + fmt.Sprintf("… (%d bytes)", len(inner))
			}
			if _, err := strconv.ParseFloat(strings.TrimSpace(inner), 64); err == nil {
				return "the string " + strconv.Quote(inner) + ": a number in quotes; send it without them"
			}
			return "the string " + strconv.Quote(inner)
		}
	}
	if end, ok := p.numberEnd(); ok && end-p.i <= show {
		return "the number " + p.token(p.i, end)
	}
	s := string(p.b[p.i:min(len(p.b), p.i+show+1)])
	if len(s) > show {
		return strconv.Quote(s[:cutAt(s, show)]) + "…"
	}
	return strconv.Quote(s)
}

// syntax is the error of a malformed body at the reader's position.
func (p *reader) syntax(want string) error {
	hint := ""
	if p.i == 0 {
		// Bodies that are no JSON at all, by their first bytes.
		switch {
		case bytes.HasPrefix(p.b, []byte("\x93NUMPY")):
			hint = ": an .npy body, sent without its Content-Type: send it with Content-Type: application/x-npy"
		case bytes.HasPrefix(p.b, []byte{0x1f, 0x8b}):
			hint = ": a gzip-compressed body: send it uncompressed (the service reads no Content-Encoding)"
		}
	}
	return badRequest("", "malformed JSON at byte %d: want %s, found %s%s", p.i, want, p.found(), hint)
}

// object reads the body's one object into r.
func (p *reader) object(r *request) error {
	if !p.eat('{') {
		return p.syntax("a JSON object")
	}
	var seen field
	if !p.eat('}') {
		for {
			p.skip()
			tok, plain, ok := p.str()
			if !ok {
				return p.syntax("a field name in quotes")
			}
			name := tok[1 : len(tok)-1] // as sent; decoded if short
			if !plain && len(tok) <= maxKey {
				var s string
				if json.Unmarshal(tok, &s) != nil {
					p.i -= len(tok)
					return p.syntax("a field name in quotes")
				}
				name = []byte(s)
			}
			if !p.eat(':') {
				return p.syntax("':'")
			}
			f, key := field(0), ""
			for _, n := range fieldNames {
				if string(name) == n.name {
					f, key = n.f, n.name
				}
			}
			switch {
			case f == 0:
				return badRequest(clip(string(name)), "unknown field %s: this endpoint takes %s%s", quote(string(name)), p.spec.fields.names(), unknownFieldHint(string(name)))
			case p.spec.fields&f == 0:
				return badRequest(key, "this endpoint takes no %s (it takes %s)", key, p.spec.fields.names())
			case seen&f != 0:
				return badRequest(key, "%s appears twice", key)
			}
			seen |= f
			if err := p.value(f, r); err != nil {
				return err
			}
			if p.eat(',') {
				continue
			}
			if p.eat('}') {
				break
			}
			return p.syntax("',' or '}'")
		}
	}
	if p.skip(); p.i != len(p.b) {
		return p.syntax("the end of the body after the request object")
	}
	return nil
}

// value reads the value of field f into r; null leaves it absent.
func (p *reader) value(f field, r *request) error {
	if p.null() {
		return nil
	}
	var err error
	switch f {
	case fieldAnchor:
		r.anchor, err = p.vector(make([]float32, 0, p.guess(p.spec.dim)), -1)
	case fieldPoints:
		r.points, err = p.rows()
	case fieldCollection:
		r.collection, err = p.name("collection", "want a string")
	case fieldLimit:
		n, err := p.integer("limit", "want an integer", strconv.IntSize)
		if err != nil {
			return err
		}
		limit := int(n)
		r.limit = &limit
	case fieldLabel:
		if p.skip(); p.i < len(p.b) && p.b[p.i] == '"' { // the class's name
			name, err := p.name("label", "want an integer label or a class's name")
			if err != nil {
				return err
			}
			r.labelName = &name
			return nil
		}
		n, err := p.integer("label", "want an integer label or a class's name", 64)
		if err != nil {
			return err
		}
		r.label = &n
	}
	return err
}

// name reads a string of at most maxName bytes as sent for the field
// named field; want says what the field takes when it is not a string.
func (p *reader) name(field, want string) (string, error) {
	tok, plain, ok := p.str()
	var v string
	switch {
	case !ok:
		return "", badRequest(field, "%s, found %s", want, p.found())
	case len(tok)-2 > maxName:
		return "", badRequest(field, "a name of %d bytes: at most %d", len(tok)-2, maxName)
	case plain:
		v = string(tok[1 : len(tok)-1])
	case json.Unmarshal(tok, &v) != nil:
		p.i -= len(tok)
		return "", p.syntax("a string")
	}
	return v, nil
}

// guess is the capacity for up to n numbers from here: no more than
// the commas left in the body allow (each number but the last is
// followed by one), so that what is allocated follows what was sent.
func (p *reader) guess(n int) int {
	return min(n, bytes.Count(p.b[p.i:], []byte(","))+1)
}

// maxKey is the longest field name read (quotes included): a known
// name is at most 10 characters, 60 bytes even with every one escaped
// (\u0061); a longer one is unknown without being decoded.
const maxKey = 64

// maxName is the longest collection name read, in bytes as sent: its
// decoding (escapes, invalid UTF-8 made U+FFFD) takes a few times its
// length, and no collection has such a name.
const maxName = 1024

// str scans the JSON string at the reader's position: the token as sent,
// quotes included, and whether it is plain (no escapes, ASCII only: its
// bytes are its value); an other is decoded by the caller
// (encoding/json, for the escapes and invalid UTF-8 made U+FFFD). On
// failure the reader stays at the string's start.
func (p *reader) str() (tok []byte, plain, ok bool) {
	start := p.i
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false, false
	}
	p.i++
	plain = true
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.b[start:p.i], plain, true
		case c == '\\':
			plain = false
			p.i += 2 // the escaped byte cannot end the string
			continue
		case c < 0x20:
			p.i = start
			return nil, false, false
		case c >= 0x80:
			plain = false
		}
		p.i++
	}
	p.i = start
	return nil, false, false
}

// numberEnd is the end of the JSON number (its strict grammar) at the
// reader's position, and whether there is one.
func (p *reader) numberEnd() (int, bool) {
	b, i := p.b, p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		d := i + 1
		if i = digitsEnd(b, d); i == d {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = digitsEnd(b, d); i == d {
			return 0, false
		}
	}
	return i, true
}

// digitsEnd is the end of the run of decimal digits at b[i:] (i where
// there is none).
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// token is b[start:end] as a string without a copy: strconv keeps
// nothing of its argument.
func (p *reader) token(start, end int) string {
	return unsafe.String(&p.b[start], end-start)
}

// integer reads a number that is an integer of the given bits, as
// encoding/json would store it in an int of that size, for the field
// named name; want says what the field takes when it is not a number.
func (p *reader) integer(name, want string, bits int) (int64, error) {
	p.skip()
	start := p.i
	end, ok := p.numberEnd()
	if !ok {
		return 0, badRequest(name, "%s, found %s", want, p.found())
	}
	n, err := strconv.ParseInt(p.token(start, end), 10, bits)
	if err != nil {
		tok := p.token(start, end)
		f, ferr := strconv.ParseFloat(tok, 64)
		switch {
		case ferr == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53:
			return 0, badRequest(name, "%s is a whole number written as a float: send %d", clip(tok), int64(f))
		case ferr == nil && f != math.Trunc(f):
			return 0, badRequest(name, "%s is not an integer", clip(tok))
		}
		return 0, badRequest(name, "%s is not an integer of %d bits", clip(tok), bits)
	}
	p.i = end
	return n, nil
}

// vectorName is the field name of the anchor (row -1) or of a point.
func vectorName(row int) string {
	if row < 0 {
		return "anchor"
	}
	return fmt.Sprintf("points[%d]", row)
}

// vector reads an array of exactly dim numbers, appending them to dst;
// row is the point's index, -1 for the anchor (to name it in errors).
func (p *reader) vector(dst []float32, row int) ([]float32, error) {
	dim := p.spec.dim
	if !p.eat('[') {
		if p.null() {
			return nil, invalid(vectorName(row), "null: want an array of %d numbers", dim)
		}
		return nil, badRequest(vectorName(row), "want an array of %d numbers, found %s", dim, p.found())
	}
	if p.eat(']') {
		return nil, invalid(vectorName(row), "has 0 coordinates, the set's dimension is %d", dim)
	}
	for n := 0; ; n++ {
		if n == dim {
			if p.skip(); p.i == len(p.b) || p.b[p.i] == ']' { // [1, 2, 3,]
				return nil, p.syntax("a value")
			}
			// Count the rest without keeping it, to say how many there are.
			for {
				p.skip()
				end, ok := p.numberEnd()
				if !ok && !p.null() {
					return nil, p.syntax("a number")
				}
				if ok {
					p.i = end
				}
				n++
				if p.eat(',') {
					continue
				}
				if p.eat(']') {
					return nil, invalid(vectorName(row), "has %d coordinates, the set's dimension is %d", n, dim)
				}
				return nil, p.syntax("',' or ']'")
			}
		}
		v, err := p.coordinate(row, n)
		if err != nil {
			return nil, err
		}
		dst = append(dst, v)
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			if n+1 != dim {
				return nil, invalid(vectorName(row), "has %d coordinates, the set's dimension is %d", n+1, dim)
			}
			return dst, nil
		}
		return nil, p.syntax("',' or ']'")
	}
}

// coordinate reads coordinate j of the anchor (row -1) or of a point: a
// number that is a finite float32.
func (p *reader) coordinate(row, j int) (float32, error) {
	p.skip()
	start := p.i
	end, ok := p.numberEnd()
	if !ok {
		name := fmt.Sprintf("%s[%d]", vectorName(row), j)
		if p.null() {
			return 0, invalid(name, "null is not a number (JavaScript's JSON.stringify writes NaN and ±Infinity as null)")
		}
		for _, word := range []string{"NaN", "Infinity", "-Infinity"} {
			if bytes.HasPrefix(p.b[p.i:], []byte(word)) {
				// Python's json.dumps writes them (allow_nan=True): no
				// JSON, and no embedding's coordinate.
				return 0, invalid(name, "%s is not a finite number (Python's json.dumps writes NaN and ±Infinity, which JSON has not): leave out the rows that hold one", word)
			}
		}
		return 0, badRequest(name, "want a number, found %s", p.found())
	}
	// Parsed as a float64, then rounded to float32: what NumPy's
	// astype(np.float32) of the client's float64 gives, and so ccs.Client's
	// and Set.scores' numbers (rounding the text straight to float32 differs
	// in the last bit where the float64 lies halfway between two float32s,
	// as the mean of two float32 embeddings can).
	v, err := strconv.ParseFloat(p.token(start, end), 64)
	f := float32(v)
	if err != nil || math.IsInf(float64(f), 0) { // beyond float32
		return 0, invalid(fmt.Sprintf("%s[%d]", vectorName(row), j), "%s is not a finite float32", clip(p.token(start, end)))
	}
	if f == 0 && nonzeroMantissa(p.b[start:end]) { // 1e-50, 1e-400: no silent 0, as every other reader
		return 0, invalid(fmt.Sprintf("%s[%d]", vectorName(row), j), "%s underflows to zero in float32 (smallest %g): round such values to 0 before sending, if that is what you mean", clip(p.token(start, end)), math.SmallestNonzeroFloat32)
	}
	p.i = end
	return f, nil
}

// nonzeroMantissa says whether a JSON number's digits before its
// exponent hold one that is not 0: a number that is not zero, whatever
// it rounds to.
func nonzeroMantissa(b []byte) bool {
	for _, c := range b {
		switch {
		case c == 'e' || c == 'E':
			return false
		case c >= '1' && c <= '9':
			return true
		}
	}
	return false
}

// rows reads the points: an array of at most maxPoints arrays of dim
// numbers, into one slice.
func (p *reader) rows() ([]float32, error) {
	dim := p.spec.dim
	if !p.eat('[') {
		return nil, badRequest("points", "want an array of points (arrays of %d numbers), found %s", dim, p.found())
	}
	if p.eat(']') {
		return []float32{}, nil
	}
	// The first point gets its own dim; from the second on, the numbers
	// the body may still hold (its commas), within the cap.
	left := p.guess(math.MaxInt)
	out := make([]float32, 0, min(dim, left))
	for m := 0; ; m++ {
		if m == p.spec.maxPoints {
			return nil, &apiError{status: 413, code: "too_many_points",
				msg: fmt.Sprintf("more than %d points: at most %d per request", m, p.spec.maxPoints), field: "points"}
		}
		if m == 1 {
			out = growTo(out, min(left, mulCap(p.spec.maxPoints, dim)))
		}
		var err error
		if out, err = p.vector(out, m); err != nil {
			return nil, err
		}
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return out, nil
		}
		return nil, p.syntax("',' or ']'")
	}
}

// growTo is s with a capacity of at least n.
func growTo(s []float32, n int) []float32 {
	if n <= cap(s) {
		return s
	}
	out := make([]float32, len(s), n)
	copy(out, s)
	return out
}

// queryOnly are the parameters that go in a request's query string, never
// its body (/ood's test: ?alpha_ood=0.01&delta=0.1&fdr=0.1).
var queryOnly = []string{"alpha_ood", "delta", "fdr"}

// unknownFieldHint says where an unknown body field belongs: the query
// string, for a query parameter, or the field it is one edit from.
func unknownFieldHint(name string) string {
	if slices.Contains(queryOnly, name) {
		return fmt.Sprintf("; %s is a query parameter (?%s=…), not a field", name, name)
	}
	names := make([]string, len(fieldNames))
	for i, n := range fieldNames {
		names[i] = n.name
	}
	return suggest.DidYouMean(name, names)
}
