package bundle

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/ccsets/ccs/internal/jsonerr"
)

// Safetensors is an open .safetensors file: Hugging Face's format for
// named tensors (safetensors' save_file, from NumPy or PyTorch), which
// holds no code, unlike a PyTorch pickle. The layout: an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype,
// shape and byte range, then the tensors' bytes, little-endian, in C
// order. Open checks the header; Read decodes one tensor at a time, so
// memory is that tensor's.
type Safetensors struct {
	f       *os.File
	path    string
	start   int64 // the data buffer's offset in the file
	tensors map[string]safeTensor
	names   []string // in the file's order
}

type safeTensor struct {
	Dtype   string  `json:"dtype"`
	Shape   []int64 `json:"shape"`
	Offsets []int64 `json:"data_offsets"`
}

// maxSafetensorsHeader bounds the JSON header, as the format's reference
// implementation does (100 MB).
const maxSafetensorsHeader = 100_000_000

// safeDtypes are the dtypes read, as NumPy's descr strings (BF16 is
// widened by hand: NumPy has none).
var safeDtypes = map[string]string{
	"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "bf16",
	"I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "|i1",
	"U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "|u1",
}

// OpenSafetensors opens a .safetensors file and checks its header: valid
// JSON of known dtypes and non-negative shapes whose byte ranges match
// them, and tile the rest of the file exactly, with no gap, overlap or
// byte after (the format's rules). Errors name the file and the tensor.
func OpenSafetensors(path string) (*Safetensors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := openSafetensors(f, path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func openSafetensors(f *os.File, path string) (*Safetensors, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	var head [8]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return nil, fmt.Errorf("not a .safetensors file: %d bytes, shorter than its 8-byte header length", size)
	}
	n := binary.LittleEndian.Uint64(head[:])
	if n > maxSafetensorsHeader {
		return nil, fmt.Errorf("not a .safetensors file: a header of %d bytes, more than the %d allowed", n, maxSafetensorsHeader)
	}
	if int64(n) > size-8 {
		return nil, fmt.Errorf("a header of %d bytes in a file of %d: truncated", n, size)
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(f, raw); err != nil {
		return nil, err
	}
	s := &Safetensors{f: f, path: path, start: 8 + int64(n), tensors: map[string]safeTensor{}}
	if err := s.parseHeader(raw, size-s.start); err != nil {
		return nil, err
	}
	return s, nil
}

// parseHeader reads the JSON header and checks it against the data
// buffer's length.
func (s *Safetensors) parseHeader(raw []byte, buffer int64) error {
	raw = bytes.TrimRight(raw, " ") // the writer pads the header with spaces
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not a .safetensors file: the header is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("header: %w", jsonerr.ExplainStream(err, raw))
		}
		name := tok.(string) // an object's keys are strings
		// Each member's value on its own, so that an error's offset is
		// within it (jsonerr quotes the value).
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			what := fmt.Sprintf("tensor %q", name)
			if name == "__metadata__" {
				what = name
			}
			return fmt.Errorf("header: %s: %w", what, jsonerr.ExplainStream(err, raw))
		}
		if name == "__metadata__" {
			var meta map[string]string
			if err := json.Unmarshal(value, &meta); err != nil {
				return fmt.Errorf("header: __metadata__: want an object of strings: %w", jsonerr.Explain(err, value))
			}
			continue
		}
		if _, dup := s.tensors[name]; dup {
			return fmt.Errorf("header: tensor %q twice", name)
		}
		var t safeTensor
		if err := json.Unmarshal(value, &t); err != nil {
			return fmt.Errorf("header: tensor %q: %w", name, jsonerr.Explain(err, value))
		}
		s.tensors[name] = t
		s.names = append(s.names, name)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("header: %w", jsonerr.ExplainStream(err, raw))
	}
	if dec.More() || dec.InputOffset() != int64(len(raw)) {
		return errors.New("header: bytes after its JSON object")
	}
	// Every tensor's range matches its shape, and the ranges tile the
	// buffer in order.
	type span struct {
		name       string
		begin, end int64
	}
	spans := make([]span, 0, len(s.names))
	for _, name := range s.names {
		t := s.tensors[name]
		descr, ok := safeDtypes[t.Dtype]
		if !ok {
			return fmt.Errorf("tensor %q: dtype %q is not read: want F64, F32, F16, BF16 or an integer type (I64 … U8)", name, t.Dtype)
		}
		size := int64(2)
		if descr != "bf16" {
			size, _ = strconv.ParseInt(descr[2:], 10, 64)
		}
		elems := int64(1)
		for _, d := range t.Shape {
			if d < 0 || d > math.MaxInt32 || (d > 0 && elems > math.MaxInt64/16/d) {
				return fmt.Errorf("tensor %q: shape %v is not a shape", name, t.Shape)
			}
			elems *= d
		}
		if len(t.Offsets) != 2 || t.Offsets[0] < 0 || t.Offsets[1] < t.Offsets[0] {
			return fmt.Errorf("tensor %q: data_offsets %v: want [begin, end], 0 ≤ begin ≤ end", name, t.Offsets)
		}
		if got := t.Offsets[1] - t.Offsets[0]; got != elems*size {
			return fmt.Errorf("tensor %q: data_offsets %v hold %d bytes; shape %v of %s needs %d", name, t.Offsets, got, t.Shape, t.Dtype, elems*size)
		}
		spans = append(spans, span{name, t.Offsets[0], t.Offsets[1]})
	}
	slices.SortStableFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.end, b.end))
	})
	at := int64(0)
	for _, sp := range spans {
		if sp.begin != at {
			what := "a gap before it"
			if sp.begin < at {
				what = "it overlaps the tensor before"
			}
			return fmt.Errorf("tensor %q: data_offsets start at %d, the tensors before end at %d: %s", sp.name, sp.begin, at, what)
		}
		at = sp.end
	}
	if at != buffer {
		return fmt.Errorf("the tensors hold %d bytes; the file has %d after its header", at, buffer)
	}
	return nil
}

// Names are the file's tensors, in its header's order.
func (s *Safetensors) Names() []string { return slices.Clone(s.names) }

// Read decodes tensor name as the .npy reader decodes an array
// (DecodeNPY): floating point to float32 (a float64 that float32 cannot
// hold is an error naming the element; BF16 widened), integers to int64.
func (s *Safetensors) Read(name string) (Array, error) {
	t, ok := s.tensors[name]
	if !ok {
		return Array{}, fmt.Errorf("%s: no tensor %q (have %v)", s.path, name, s.names)
	}
	shape := make([]int, len(t.Shape))
	for i, d := range t.Shape {
		shape[i] = int(d)
	}
	length := t.Offsets[1] - t.Offsets[0]
	r := io.NewSectionReader(s.f, s.start+t.Offsets[0], length)
	var a Array
	var err error
	if descr := safeDtypes[t.Dtype]; descr == "bf16" {
		if a, err = readBF16(r, shape, length/2); err != nil {
			err = fmt.Errorf("tensor %q: %w", name, err)
		}
	} else {
		a, err = decodeData(bufio.NewReaderSize(r, 1<<16), fmt.Sprintf("tensor %q", name), descr, shape, false, 0, max(length, 1), false)
	}
	if err != nil {
		return Array{}, fmt.Errorf("%s: %w", s.path, err)
	}
	return a, nil
}

// readBF16 widens n bfloat16 values (a float32's upper half) to float32.
func readBF16(r io.Reader, shape []int, n int64) (Array, error) {
	out := make([]float32, n)
	buf := make([]byte, 1<<16)
	for done := int64(0); done < n; {
		m := min(int64(len(buf)/2), n-done)
		if _, err := io.ReadFull(r, buf[:2*m]); err != nil {
			return Array{}, err
		}
		for e := range m {
			out[done+e] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(buf[2*e:])) << 16)
		}
		done += m
	}
	return Array{Shape: shape, F32: out, Dtype: "bfloat16", Converted: "bfloat16 → float32"}, nil
}

// Close closes the file.
func (s *Safetensors) Close() error { return s.f.Close() }
