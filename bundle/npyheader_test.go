package bundle

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// npyWith is a .npy stream of format version major whose header is text
// (padded as NumPy pads it), followed by data.
func npyWith(major byte, text string, data []byte) []byte {
	pre := 10
	if major >= 2 {
		pre = 12
	}
	for (pre+len(text)+1)%64 != 0 {
		text += " "
	}
	text += "\n"
	b := []byte{0x93, 'N', 'U', 'M', 'P', 'Y', major, 0}
	if major >= 2 {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(text)))
	} else {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
	}
	return append(append(b, text...), data...)
}

// headerForms are .npy headers NumPy (np.load, numpy.lib.format by
// ast.literal_eval) reads, each of a (2, 3) float32 array unless said:
// the forms of other writers, Python 2's and hand-made files.
var headerForms = []struct {
	name    string
	major   byte
	text    string
	shape   []int
	fortran bool
}{
	{"numpy's own", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", []int{2, 3}, false},
	{"keys in another order", 1, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}", []int{2, 3}, false},
	{"double quotes", 1, `{"descr": "<f4", "fortran_order": False, "shape": (2, 3)}`, []int{2, 3}, false},
	{"no spaces", 1, "{'descr':'<f4','fortran_order':False,'shape':(2,3)}", []int{2, 3}, false},
	{"spaces everywhere", 1, "  { 'descr' :\t'<f4' ,\n 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }", []int{2, 3}, false},
	{"trailing comma in the shape", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3,), }", []int{2, 3}, false},
	{"underscores", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1_0,), }", []int{10}, false},
	{"hex, octal and binary", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0x2, 0o3), }", []int{2, 3}, false},
	{"binary", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0b10, 0X_3), }", []int{2, 3}, false},
	{"python 2's long", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", []int{2, 3}, false},
	{"python 2's long, version 2", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", []int{2, 3}, false},
	{"a plus sign", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (+2, 3), }", []int{2, 3}, false},
	{"a parenthesised dimension", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': ((2), 3), }", []int{2, 3}, false},
	{"one-element tuple", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", []int{6}, false},
	{"empty shape", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", []int{}, false},
	{"fortran order", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }", []int{3, 2}, true},
	{"version 2", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", []int{2, 3}, false},
	{"version 3", 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", []int{2, 3}, false},
	{"unicode prefix", 1, "{u'descr': u'<f4', u'fortran_order': False, u'shape': (2, 3)}", []int{2, 3}, false},
	{"escapes and concatenation", 1, `{'des' "cr": '\x3cf\u0034', 'fortran_order': False, 'shape': (2, 3)}`, []int{2, 3}, false},
	{"triple quotes", 1, `{'''descr''': """<f4""", 'fortran_order': False, 'shape': (2, 3)}`, []int{2, 3}, false},
	{"a comment", 1, "{'descr': '<f4', # float32\n'fortran_order': False, 'shape': (2, 3)}", []int{2, 3}, false},
	{"no byte order", 1, "{'descr': 'f4', 'fortran_order': False, 'shape': (2, 3), }", []int{2, 3}, false},
}

// TestNPYHeaderForms: every header form NumPy reads is read, as NumPy
// reads it, from a file, an .npz member and a request body.
func TestNPYHeaderForms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range headerForms {
		n := 1
		for _, d := range c.shape {
			n *= d
		}
		data := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(0x3f800000+i)) // ≈ 1
		}
		stream := npyWith(c.major, c.text, data)
		check := func(how string, a Array, err error) {
			t.Helper()
			switch {
			case err != nil:
				t.Errorf("%s (%s): %v", c.name, how, err)
			case !slices.Equal(a.Shape, c.shape) || len(a.F32) != n || a.F32[n-1] != math.Float32frombits(uint32(0x3f800000+n-1)):
				t.Errorf("%s (%s): shape %v with %d values, want %v", c.name, how, a.Shape, len(a.F32), c.shape)
			case c.fortran != strings.Contains(a.Converted, "Fortran"):
				t.Errorf("%s (%s): converted %q", c.name, how, a.Converted)
			}
		}
		a, err := DecodeNPYBytes(stream, "body", 0)
		check("body", a, err)
		path := filepath.Join(dir, "x.npy")
		if err := os.WriteFile(path, stream, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err = ReadNPY(path)
		check("file", a, err)
		z := npzOf(t, true, map[string][]byte{"x.npy": stream})
		arrays, err := readNPZ(bytes.NewReader(z), int64(len(z)))
		check(".npz member", arrays["x"], err)
	}
}

// TestNPYHeaderRefused: a header NumPy refuses, or one this reader does
// not take, is an error naming the array and what is wrong; never a
// panic, whatever the header claims.
func TestNPYHeaderRefused(t *testing.T) {
	t.Parallel()
	const tail = "'fortran_order': False, 'shape': (2, 3)}"
	data := make([]byte, 24)
	for _, c := range []struct {
		name   string
		stream []byte
		want   string
	}{
		{"a shape not a tuple of integers", npyWith(1, `{'descr': '<f4', 'fortran_order': False, 'shape': (1200, "x")}`, data),
			`array "x": header: key "shape": (1200, "x") is not a tuple of integers`},
		{"a list for the shape", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", data),
			`key "shape": [2, 3] is not a tuple of integers`},
		{"a float dimension", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0, 3)}", data),
			`key "shape": (2.0, 3) is not a tuple of integers`},
		{"a bool dimension", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (True, 3)}", data),
			`key "shape": (True, 3) is not a tuple of integers`},
		{"a huge dimension", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (123456789012345678901234567890, 3)}", data),
			`123456789012345678901234567890 is too large`},
		{"an expression", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2**40, 3)}", data),
			`not a Python literal: '*' where ',' or ')' should be at byte 52`},
		{"leading zeros", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (02, 3)}", data),
			`02 is not a Python number`},
		{"double underscore", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1__2, 3)}", data),
			`1__2 is not a Python number`},
		{"a lowercase long", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2l, 3)}", data),
			`2l is not a Python number`},
		{"python 2's long in version 3", npyWith(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3)}", data),
			`2L is not a Python number`},
		{"a double sign", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (--2, 3)}", data),
			`a sign before -2, which is not a number`},
		{"an integer for fortran_order", npyWith(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}", data),
			`key "fortran_order": 0 is not True or False`},
		{"a structured dtype", npyWith(1, "{'descr': [('a', '<f4')], "+tail, data),
			`key "descr": [('a', '<f4')] is not a dtype string such as '<f4' (a structured dtype's fields: not read)`},
		{"bytes for the dtype", npyWith(1, "{'descr': b'<f4', "+tail, data),
			`key "descr": b'<f4' is not a dtype string`},
		{"a key misspelt", npyWith(1, "{'descx': '<f4', "+tail, data),
			`key "descx" is not one of descr, fortran_order and shape, the three a .npy header holds: did you mean "descr"?`},
		{"an extra key", npyWith(1, "{'descr': '<f4', 'foo': 1, "+tail, data),
			`key "foo" is not one of descr, fortran_order and shape`},
		{"a key twice", npyWith(1, "{'descr': '<f4', 'shape': (10, 3), "+tail, data),
			`key "shape" appears twice`},
		{"a key missing", npyWith(1, "{'descr': '<f4', 'shape': (2, 3)}", data),
			`key "fortran_order" is missing`},
		{"a number for a key", npyWith(1, "{1: '<f4', "+tail, data),
			`key 1 is not a string`},
		{"a set", npyWith(1, "{'descr', 'shape'}", data),
			`{'descr', 'shape'} is not a dict`},
		{"a tuple", npyWith(1, "('<f4', False, (2, 3))", data),
			`('<f4', False, (2, 3)) is not a dict`},
		{"a name", npyWith(1, "{'descr': float32, "+tail, data),
			`the name float32, which is not a literal (True, False or None), at byte 10`},
		{"an f-string", npyWith(1, "{'descr': f'<f4', "+tail, data),
			`a string prefix f, which literal_eval does not read,`},
		{"an unterminated string", npyWith(1, "{'descr': '<f4", data),
			`a string that does not end on its line`},
		{"an unterminated triple-quoted string", npyWith(1, "{'descr': \"\"\"<f4", data),
			`a string that does not end at byte 10`},
		{"no closing brace", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", data),
			`the text ends before '}'`},
		{"something after the dict", npyWith(1, "{'descr': '<f4', "+tail+" x", data),
			`"x" after the value`},
		{"a NUL", npyWith(1, "{'descr': '<f4', "+tail+"\x00", data),
			`a NUL byte at byte 57`},
		{"deep nesting", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': "+strings.Repeat("(", 200)+"}", data),
			`nested more than 100 deep`},
		{"version 3 not UTF-8", npyWith(3, "{'descr': '<f4\xff', "+tail, data),
			`header: not UTF-8`},
		{"a Latin-1 dtype", npyWith(1, "{'descr': '<f4\xff', "+tail, data),
			`dtype "<f4ÿ" is not supported`},
		{"a negative dimension", npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3)}", data),
			`array "x": shape (-2, 3): dimension -2 is negative`},
		{"version 9", append([]byte("\x93NUMPY\x09\x00"), npyWith(1, "{'descr': '<f4', "+tail, data)[8:]...),
			`array "x": unsupported .npy format version 9.0: NumPy writes 1.0, 2.0 and 3.0`},
		{"version 1.1", append([]byte("\x93NUMPY\x01\x01"), npyWith(1, "{'descr': '<f4', "+tail, data)[8:]...),
			`unsupported .npy format version 1.1`},
		{"magic alone", []byte("\x93NUMPY"), `the file ends within its .npy preamble: 6 bytes, where magic and version take 8`},
		{"no header length", []byte("\x93NUMPY\x02\x00\x10"), `the header length takes 4 bytes, the file has 1`},
		{"a header past the end", append([]byte("\x93NUMPY\x01\x00\x60\xea"), "{'descr': '<f4'"...),
			`array "x": the header claims 60000 bytes, the file has 15 after its preamble`},
		{"a header past the end, version 2", append([]byte("\x93NUMPY\x02\x00\x60\xea\x00\x00"), "{'descr': '<f4'"...),
			`the header claims 60000 bytes, the file has 15 after its preamble`},
		{"a header too long", []byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f{}"), `.npy header of 2147483647 bytes, more than the 65536 allowed`},
	} {
		for _, how := range []string{"bytes", "stream"} {
			var err error
			if how == "bytes" {
				_, err = DecodeNPYBytes(c.stream, "x", 0)
			} else { // a pipe: the stream's length unknown
				_, err = decodeNPY(struct{ *bytes.Reader }{bytes.NewReader(c.stream)}, "x", 0, 0, true)
			}
			switch {
			case err == nil:
				t.Errorf("%s (%s): read", c.name, how)
			case !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), `array "x": `):
				t.Errorf("%s (%s):\n got %v\nwant %s", c.name, how, err, c.want)
			}
		}
	}
}
