package bundle

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ccsets/ccs/internal/suggest"
)

// npyHead is what a .npy header says of its array.
type npyHead struct {
	descr   string // NumPy's dtype string: '<f4'
	fortran bool
	shape   []int // as written: a dimension may be negative, for decodeData to name
}

// npyKeys are the keys of a .npy header's dict, all three required.
var npyKeys = []string{"descr", "fortran_order", "shape"}

// readNPYHeader reads a .npy stream's preamble (magic, version, header
// length) and header from br, leaving br at the data. The header is read
// as NumPy reads it (numpy.lib.format, by ast.literal_eval): a Python dict
// literal with the keys descr, fortran_order and shape, in any order,
// quoted either way, spaced or not, with or without a trailing comma; the
// shape's integers as Python writes them (1_200, 0x4b0, and in format
// versions 1 and 2 Python 2's 1200L). Anything else is an error saying
// what is wrong. maxBytes, if positive, is the stream's length: a header
// longer than what follows the preamble is refused before it is read.
// What is allocated is the header alone, at most maxHeader bytes.
func readNPYHeader(br *bufio.Reader, maxBytes int64) (npyHead, error) {
	var pre [12]byte
	if n, _ := io.ReadFull(br, pre[:8]); n < 8 {
		return npyHead{}, fmt.Errorf("the file ends within its .npy preamble: %d bytes, where magic and version take 8", n)
	}
	major, minor := pre[6], pre[7]
	if major < 1 || major > 3 || minor != 0 {
		return npyHead{}, fmt.Errorf("unsupported .npy format version %d.%d: NumPy writes 1.0, 2.0 and 3.0", major, minor)
	}
	size := 2 // the header length's bytes: 2 in version 1, 4 in 2 and 3
	if major >= 2 {
		size = 4
	}
	if n, _ := io.ReadFull(br, pre[8:8+size]); n < size {
		return npyHead{}, fmt.Errorf("the file ends within its .npy preamble: the header length takes %d bytes, the file has %d", size, n)
	}
	hlen := int64(binary.LittleEndian.Uint16(pre[8:10]))
	if size == 4 {
		hlen = int64(binary.LittleEndian.Uint32(pre[8:12]))
	}
	if hlen > maxHeader {
		return npyHead{}, fmt.Errorf(".npy header of %d bytes, more than the %d allowed", hlen, maxHeader)
	}
	if rest := maxBytes - int64(8+size); maxBytes > 0 && hlen > rest {
		return npyHead{}, fmt.Errorf("the header claims %d bytes, the file has %d after its preamble", hlen, max(rest, 0))
	}
	raw := make([]byte, hlen)
	if n, err := io.ReadFull(br, raw); err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return npyHead{}, err
		}
		return npyHead{}, fmt.Errorf("the header claims %d bytes, the file has %d after its preamble", hlen, n)
	}
	var text string
	if major == 3 {
		if !utf8.Valid(raw) {
			return npyHead{}, fmt.Errorf("header: not UTF-8, which format version 3.0 headers are")
		}
		text = string(raw)
	} else { // Latin-1: each byte its code point
		var b strings.Builder
		for _, c := range raw {
			b.WriteRune(rune(c))
		}
		text = b.String()
	}
	h, err := parseNPYHeader(text, major < 3)
	if err != nil {
		return npyHead{}, fmt.Errorf("header: %w", err)
	}
	return h, nil
}

// parseNPYHeader reads a .npy header's text: the dict literal and its
// three keys. legacy (format versions 1 and 2) admits Python 2's long
// integers (1200L), as NumPy does for those versions.
func parseNPYHeader(text string, legacy bool) (npyHead, error) {
	if i := strings.IndexByte(text, 0); i >= 0 {
		return npyHead{}, fmt.Errorf("a NUL byte at byte %d: a Python literal holds none (NumPy refuses it too)", i)
	}
	p := pyParser{s: text, legacy: legacy}
	v, err := p.literal()
	if err != nil {
		return npyHead{}, fmt.Errorf("%w, in %s", err, quoteHeader(text))
	}
	if v.kind != pyDict {
		return npyHead{}, fmt.Errorf("%s is not a dict (NumPy writes {'descr': '<f4', 'fortran_order': False, 'shape': (n, d)})", clip(v.src))
	}
	var h npyHead
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.items); i += 2 {
		k, val := v.items[i], v.items[i+1]
		if k.kind != pyStr {
			return npyHead{}, fmt.Errorf("key %s is not a string: a .npy header's keys are descr, fortran_order and shape", clip(k.src))
		}
		switch {
		case k.s != "descr" && k.s != "fortran_order" && k.s != "shape":
			return npyHead{}, fmt.Errorf("key %q is not one of descr, fortran_order and shape, the three a .npy header holds%s", k.s, suggest.DidYouMean(k.s, npyKeys))
		case seen[k.s]:
			return npyHead{}, fmt.Errorf("key %q appears twice", k.s)
		}
		seen[k.s] = true
		switch k.s {
		case "descr":
			if val.kind != pyStr {
				hint := ""
				if val.kind == pyList {
					hint = " (a structured dtype's fields: not read)"
				}
				return npyHead{}, fmt.Errorf("key \"descr\": %s is not a dtype string such as '<f4'%s", clip(val.src), hint)
			}
			h.descr = val.s
		case "fortran_order":
			if val.kind != pyBool {
				return npyHead{}, fmt.Errorf("key \"fortran_order\": %s is not True or False", clip(val.src))
			}
			h.fortran = val.b
		case "shape":
			if val.kind != pyTuple {
				return npyHead{}, fmt.Errorf("key \"shape\": %s is not a tuple of integers", clip(val.src))
			}
			h.shape = make([]int, 0, len(val.items))
			for _, d := range val.items {
				switch {
				case d.kind != pyInt:
					return npyHead{}, fmt.Errorf("key \"shape\": %s is not a tuple of integers", clip(val.src))
				case d.big || int64(int(d.i)) != d.i:
					return npyHead{}, fmt.Errorf("key \"shape\": %s: %s is too large", clip(val.src), clip(d.src))
				}
				h.shape = append(h.shape, int(d.i))
			}
		}
	}
	for _, k := range npyKeys {
		if !seen[k] {
			return npyHead{}, fmt.Errorf("key %q is missing: a .npy header holds descr, fortran_order and shape", k)
		}
	}
	return h, nil
}

// nativeDescr is a dtype string written without its byte order ('f4', as
// np.dtype reads it: native), with it: '=f4' ('|b1' for 'b1').
func nativeDescr(descr string) string {
	switch {
	case descr == "b1" || descr == "?":
		return "|b1"
	case descr != "" && ('a' <= descr[0] && descr[0] <= 'z' || 'A' <= descr[0] && descr[0] <= 'Z'):
		return "=" + descr
	}
	return descr
}

// quoteHeader is a header's text for a message: without its padding, and
// at most 200 bytes.
func quoteHeader(text string) string {
	return strconv.Quote(clipN(strings.TrimRight(text, " \t\r\n\f"), 200))
}

// clip is a value's source text for a message, at most 80 bytes.
func clip(s string) string { return clipN(s, 80) }

// clipN is s cut to at most n bytes (at a rune's start), "…" marking a cut.
func clipN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// pyKind is the kind of a Python literal's value.
type pyKind int

const (
	pyStr   pyKind = iota
	pyBytes        // b'…'
	pyInt
	pyNumber // another number: a float or a complex
	pyBool
	pyNone
	pyTuple
	pyList
	pySet
	pyDict
)

// pyValue is a Python literal's value, as ast.literal_eval reads it.
type pyValue struct {
	kind  pyKind
	src   string // its source text, for messages
	s     string // pyStr, pyBytes
	i     int64  // pyInt, unless big
	big   bool   // pyInt beyond int64
	b     bool   // pyBool
	items []pyValue
	// signed: a number with its unary sign, which takes no other.
	signed bool
}

// maxPyDepth bounds a literal's nesting (Python's parser stops at 200).
const maxPyDepth = 100

// pyParser reads a Python literal (the subset ast.literal_eval takes:
// strings, numbers, True, False, None, tuples, lists, sets and dicts).
type pyParser struct {
	s      string
	pos    int
	depth  int
	legacy bool // Python 2's long integers, 1200L
}

// errorf is a syntax error at the parser's position.
func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("not a Python literal: "+format+" at byte %d", append(args, p.pos)...)
}

// literal reads the whole text as one value.
func (p *pyParser) literal() (pyValue, error) {
	v, err := p.value()
	if err != nil {
		return v, err
	}
	if p.space(); p.pos < len(p.s) {
		return v, p.errorf("%q after the value", clipN(strings.TrimRight(p.s[p.pos:], " \t\r\n\f"), 20))
	}
	return v, nil
}

// space skips whitespace, comments and line continuations.
func (p *pyParser) space() {
	for p.pos < len(p.s) {
		switch c := p.s[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			p.pos++
		case c == '#':
			for p.pos < len(p.s) && p.s[p.pos] != '\n' {
				p.pos++
			}
		case c == '\\' && p.pos+1 < len(p.s) && p.s[p.pos+1] == '\n':
			p.pos += 2
		default:
			return
		}
	}
}

// value reads one value after optional space.
func (p *pyParser) value() (pyValue, error) {
	if p.space(); p.pos >= len(p.s) {
		return pyValue{}, p.errorf("the text ends where a value should be")
	}
	if p.depth++; p.depth > maxPyDepth {
		return pyValue{}, p.errorf("nested more than %d deep", maxPyDepth)
	}
	defer func() { p.depth-- }()
	start := p.pos
	var v pyValue
	var err error
	switch c := p.s[p.pos]; {
	case c == '(':
		v, err = p.sequence(')', pyTuple)
	case c == '[':
		v, err = p.sequence(']', pyList)
	case c == '{':
		v, err = p.braces()
	case c == '+' || c == '-':
		p.pos++
		if v, err = p.value(); err != nil {
			return v, err
		}
		if (v.kind != pyInt && v.kind != pyNumber) || v.signed {
			return v, fmt.Errorf("not a Python literal: a sign before %s, which is not a number", clip(v.src))
		}
		v.signed = true
		if c == '-' && v.kind == pyInt {
			v.i = -v.i
		}
	case isDigit(c) || c == '.' && p.pos+1 < len(p.s) && isDigit(p.s[p.pos+1]):
		v, err = p.number()
	case c == '\'' || c == '"' || isNameStart(c):
		v, err = p.stringOrName()
	default:
		r, _ := utf8.DecodeRuneInString(p.s[p.pos:])
		return v, p.errorf("%q, which begins no value,", r)
	}
	if err != nil {
		return v, err
	}
	v.src = p.s[start:p.pos]
	return v, nil
}

// sequence reads a tuple (or a parenthesised value) or a list, from its
// opening bracket to close.
func (p *pyParser) sequence(close byte, kind pyKind) (pyValue, error) {
	p.pos++ // the opening bracket
	v := pyValue{kind: kind}
	for {
		if p.space(); p.pos < len(p.s) && p.s[p.pos] == close {
			p.pos++
			return v, nil
		}
		item, err := p.value()
		if err != nil {
			return v, err
		}
		v.items = append(v.items, item)
		switch p.space(); {
		case p.pos >= len(p.s):
			return v, p.errorf("the text ends before %q", close)
		case p.s[p.pos] == ',':
			p.pos++
		case p.s[p.pos] == close && kind == pyTuple && len(v.items) == 1:
			p.pos++
			return item, nil // (x): x itself, as (x,) is the tuple
		case p.s[p.pos] == close:
			p.pos++
			return v, nil
		default:
			return v, p.errorf("%q where ',' or %q should be", p.s[p.pos], close)
		}
	}
}

// braces reads a dict, or a set, from its '{'. A dict's items alternate
// keys and values.
func (p *pyParser) braces() (pyValue, error) {
	p.pos++
	v := pyValue{kind: pyDict}
	for {
		if p.space(); p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		key, err := p.value()
		if err != nil {
			return v, err
		}
		p.space()
		if len(v.items) == 0 && p.pos < len(p.s) && (p.s[p.pos] == ',' || p.s[p.pos] == '}') {
			v.kind = pySet
		}
		v.items = append(v.items, key)
		if v.kind == pyDict {
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return v, p.errorf("no ':' after the key %s", clip(key.src))
			}
			p.pos++
			val, err := p.value()
			if err != nil {
				return v, err
			}
			v.items = append(v.items, val)
			p.space()
		}
		switch {
		case p.pos >= len(p.s):
			return v, p.errorf("the text ends before '}'")
		case p.s[p.pos] == ',':
			p.pos++
		case p.s[p.pos] == '}':
			p.pos++
			return v, nil
		default:
			return v, p.errorf("%q where ',' or '}' should be", p.s[p.pos])
		}
	}
}

// number reads an integer (decimal, 0x, 0o or 0b, with single underscores
// between digits) or another number, whose value is not needed.
func (p *pyParser) number() (pyValue, error) {
	start := p.pos
	hex := strings.HasPrefix(strings.ToLower(p.s[p.pos:]), "0x")
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		exp := p.pos > start && (p.s[p.pos-1] == 'e' || p.s[p.pos-1] == 'E') && !hex
		if isDigit(c) || isNameStart(c) || c == '.' || (c == '+' || c == '-') && exp {
			p.pos++
			continue
		}
		break
	}
	tok := p.s[start:p.pos]
	if p.legacy && strings.HasSuffix(tok, "L") && len(tok) > 1 {
		tok = tok[:len(tok)-1] // Python 2's long integer, as NumPy filters it
	}
	if pyIntSyntax(tok) {
		i, err := strconv.ParseInt(strings.ReplaceAll(tok, "_", ""), 0, 64)
		return pyValue{kind: pyInt, i: i, big: err != nil}, nil
	}
	f := strings.TrimRight(strings.ReplaceAll(tok, "_", ""), "jJ")
	if strings.Trim(tok, "0123456789_") == "" {
		f = "" // digits alone, yet not an integer: 02, 1__2
	}
	if _, err := strconv.ParseFloat(f, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if !strings.ContainsAny(f, "xXpP") && !strings.HasPrefix(strings.ToLower(f), "0x") {
			return pyValue{kind: pyNumber}, nil
		}
	}
	p.pos = start
	return pyValue{}, p.errorf("%s is not a Python number", tok)
}

// pyIntSyntax says whether tok is a Python 3 integer literal: decimal
// without leading zeros (but 0, 00), or 0x, 0o, 0b, with single
// underscores between digits or after the prefix.
func pyIntSyntax(tok string) bool {
	digits := func(s string, ok func(byte) bool) bool {
		if s == "" || s[len(s)-1] == '_' {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] == '_' {
				if i+1 < len(s) && s[i+1] == '_' {
					return false
				}
				continue
			}
			if !ok(s[i]) {
				return false
			}
		}
		return true
	}
	if len(tok) > 2 && tok[0] == '0' {
		rest := strings.TrimPrefix(tok[2:], "_")
		switch tok[1] {
		case 'x', 'X':
			return digits(rest, func(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' })
		case 'o', 'O':
			return digits(rest, func(c byte) bool { return '0' <= c && c <= '7' })
		case 'b', 'B':
			return digits(rest, func(c byte) bool { return c == '0' || c == '1' })
		}
	}
	if tok != "" && tok[0] == '0' {
		return digits(tok, func(c byte) bool { return c == '0' })
	}
	return tok != "" && tok[0] != '_' && digits(tok, isDigit)
}

// stringOrName reads a string literal (with its prefix, and the literals
// adjacent to it, concatenated as Python does) or True, False or None.
func (p *pyParser) stringOrName() (pyValue, error) {
	start := p.pos
	for p.pos < len(p.s) && (isNameStart(p.s[p.pos]) || isDigit(p.s[p.pos])) {
		p.pos++
	}
	name := p.s[start:p.pos]
	if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		switch name {
		case "True", "False":
			return pyValue{kind: pyBool, b: name == "True"}, nil
		case "None":
			return pyValue{kind: pyNone}, nil
		}
		if p.pos < len(p.s) && p.s[p.pos] >= utf8.RuneSelf {
			r, _ := utf8.DecodeRuneInString(p.s[p.pos:])
			return pyValue{}, p.errorf("%q, which begins no value,", r)
		}
		p.pos = start
		return pyValue{}, p.errorf("the name %s, which is not a literal (True, False or None),", name)
	}
	p.pos = start
	var v pyValue
	for first := true; ; first = false {
		s, bytes, err := p.stringLiteral()
		if err != nil {
			return v, err
		}
		kind := pyStr
		if bytes {
			kind = pyBytes
		}
		if !first && kind != v.kind {
			return v, p.errorf("bytes and str literals together")
		}
		v.kind, v.s = kind, v.s+s
		// Adjacent literals: 'a' 'b' is 'ab'.
		save := p.pos
		p.space()
		q := p.pos
		for q < len(p.s) && q-p.pos < 3 && isNameStart(p.s[q]) {
			q++
		}
		if q >= len(p.s) || (p.s[q] != '\'' && p.s[q] != '"') || !stringPrefix(p.s[p.pos:q]) {
			p.pos = save
			return v, nil
		}
	}
}

// stringPrefix says whether a literal's prefix is one literal_eval reads
// (f-strings are not literals).
func stringPrefix(prefix string) bool {
	switch strings.ToLower(prefix) {
	case "", "u", "r", "b", "br", "rb":
		return true
	}
	return false
}

// stringLiteral reads one string literal at the parser's position, with
// its prefix: its value, and whether it is bytes.
func (p *pyParser) stringLiteral() (string, bool, error) {
	start := p.pos
	for p.pos < len(p.s) && isNameStart(p.s[p.pos]) {
		p.pos++
	}
	prefix := strings.ToLower(p.s[start:p.pos])
	if !stringPrefix(prefix) {
		written := p.s[start:p.pos]
		p.pos = start
		return "", false, p.errorf("a string prefix %s, which literal_eval does not read,", written)
	}
	raw, bytes := strings.Contains(prefix, "r"), strings.Contains(prefix, "b")
	quote := p.s[p.pos : p.pos+1]
	if strings.HasPrefix(p.s[p.pos:], quote+quote+quote) {
		quote += quote + quote
	}
	p.pos += len(quote)
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			p.pos = start
			return "", false, p.errorf("a string that does not end")
		}
		c := p.s[p.pos]
		switch {
		case strings.HasPrefix(p.s[p.pos:], quote):
			p.pos += len(quote)
			return b.String(), bytes, nil
		case c == '\n' && len(quote) == 1:
			p.pos = start
			return "", false, p.errorf("a string that does not end on its line")
		case c == '\\' && raw:
			// A raw string keeps its backslashes; one still escapes a quote.
			b.WriteString(p.s[p.pos:min(p.pos+2, len(p.s))])
			p.pos = min(p.pos+2, len(p.s))
		case c == '\\':
			if err := p.escape(&b, bytes); err != nil {
				return "", false, err
			}
		default:
			r, n := utf8.DecodeRuneInString(p.s[p.pos:])
			if bytes && r >= utf8.RuneSelf {
				return "", false, p.errorf("a bytes literal holding %q, which is not ASCII,", r)
			}
			b.WriteRune(r)
			p.pos += n
		}
	}
}

// escape reads one backslash escape of a string literal into b.
func (p *pyParser) escape(b *strings.Builder, bytes bool) error {
	if p.pos+1 >= len(p.s) {
		return p.errorf("a string that does not end")
	}
	c := p.s[p.pos+1]
	p.pos += 2
	hexRune := func(n int) error {
		if p.pos+n > len(p.s) {
			return p.errorf("a \\%c escape without its %d hex digits", c, n)
		}
		v, err := strconv.ParseUint(p.s[p.pos:p.pos+n], 16, 32)
		if err != nil || strings.ContainsAny(p.s[p.pos:p.pos+n], "+-_") {
			return p.errorf("a \\%c escape without its %d hex digits", c, n)
		}
		p.pos += n
		if v > utf8.MaxRune {
			return p.errorf("a \\%c escape beyond Unicode", c)
		}
		b.WriteRune(rune(v))
		return nil
	}
	switch c {
	case '\n':
	case '\\', '\'', '"':
		b.WriteByte(c)
	case 'a':
		b.WriteByte('\a')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'v':
		b.WriteByte('\v')
	case 'x':
		return hexRune(2)
	case 'u', 'U', 'N':
		switch {
		case bytes: // not an escape in bytes
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == 'u':
			return hexRune(4)
		case c == 'U':
			return hexRune(8)
		default:
			return p.errorf("a named escape (\\N{…}), which is not read,")
		}
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v := int(c - '0')
		for k := 0; k < 2 && p.pos < len(p.s) && '0' <= p.s[p.pos] && p.s[p.pos] <= '7'; k++ {
			v = 8*v + int(p.s[p.pos]-'0')
			p.pos++
		}
		b.WriteRune(rune(v))
	default: // Python keeps an unknown escape as written
		b.WriteByte('\\')
		p.pos--
	}
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
