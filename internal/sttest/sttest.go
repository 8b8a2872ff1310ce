// Package sttest writes .safetensors files for tests, as the format's
// writer lays them out.
package sttest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Tensor is one tensor of a file: its name, dtype ("F32", "I64", …),
// shape and little-endian bytes.
type Tensor struct {
	Name, Dtype string
	Shape       []int
	Data        []byte
}

// File lays tensors out as the format's writer does: an 8-byte
// little-endian header length, a JSON header of each tensor's dtype,
// shape and byte range, in order, padded with spaces to a multiple of 8,
// then the bytes.
func File(tensors ...Tensor) []byte {
	var header strings.Builder
	header.WriteString("{")
	at := 0
	var data []byte
	for i, t := range tensors {
		if i > 0 {
			header.WriteString(",")
		}
		name, _ := json.Marshal(t.Name)
		shape := []byte("[]")
		if len(t.Shape) > 0 {
			shape, _ = json.Marshal(t.Shape)
		}
		fmt.Fprintf(&header, `%s:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, t.Dtype, shape, at, at+len(t.Data))
		at += len(t.Data)
		data = append(data, t.Data...)
	}
	header.WriteString("}")
	h := header.String()
	for len(h)%8 != 0 {
		h += " "
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(out, h...), data...)
}

// Write writes File(tensors...) to path.
func Write(tb testing.TB, path string, tensors ...Tensor) {
	tb.Helper()
	if err := os.WriteFile(path, File(tensors...), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// LE is values' little-endian bytes.
func LE[T int64 | int32 | int16 | int8 | uint64 | uint32 | uint16 | uint8 | float32 | float64](x ...T) []byte {
	b, _ := binary.Append(nil, binary.LittleEndian, x)
	return b
}

// T is a Tensor.
func T(name, dtype string, shape []int, data []byte) Tensor {
	return Tensor{Name: name, Dtype: dtype, Shape: shape, Data: data}
}
