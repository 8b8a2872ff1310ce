package jsonindent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestIndentExample: objects and arrays of containers open a line per
// element; arrays of scalars stay on one line; strings are copied as they
// are, brackets, commas and escaped quotes in them included.
func TestIndentExample(t *testing.T) {
	src := `{"kind":"ellipsoid","sigma":[1,-2.5e-7,3],"names":["a,b","[c]","d\"]{"],"empty":[],"none":{},"nested":[[1,2],{"x":[true,null]}]}`
	want := `{
  "kind": "ellipsoid",
  "sigma": [1, -2.5e-7, 3],
  "names": ["a,b", "[c]", "d\"]{"],
  "empty": [],
  "none": {},
  "nested": [
    [1, 2],
    {
      "x": [true, null]
    }
  ]
}
`
	var b bytes.Buffer
	if err := Indent(&b, []byte(src), "  "); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if err := Indent(&b, []byte(`{"a":[1,2}`), "  "); err == nil {
		t.Error("invalid JSON: no error")
	}
}

// TestIndentRandom: on seeded random documents, Indent's output is the
// same value, and where no array holds only scalars it is json.Indent's
// byte for byte; with such arrays, it is json.Indent's once each of them
// is joined onto one line.
func TestIndentRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var value func(depth int, scalars bool) any
	value = func(depth int, scalars bool) any {
		k := r.IntN(6)
		if depth > 3 || (scalars && k < 4) {
			k = 6 + r.IntN(4)
		}
		switch k {
		case 0, 1, 2:
			m := map[string]any{}
			for i := range r.IntN(4) {
				m[fmt.Sprintf("k%d,[\"%d", i, r.IntN(9))] = value(depth+1, scalars)
			}
			return m
		case 3, 4, 5:
			a := []any{}
			n := r.IntN(4)
			for range n {
				a = append(a, value(depth+1, scalars))
			}
			if !scalars && n > 0 {
				a = append(a, map[string]any{}) // never an array of scalars alone
			}
			return a
		case 6:
			return r.NormFloat64() * 1e-6
		case 7:
			return fmt.Sprintf("s]{%d,\\\"", r.IntN(100))
		case 8:
			return r.IntN(2) == 0
		}
		return nil
	}
	for i := range 2000 {
		scalars := i%2 == 0
		v := value(0, scalars)
		src, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := Indent(&got, src, "\t"); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		var back any
		if err := json.Unmarshal(got.Bytes(), &back); err != nil {
			t.Fatalf("%s: output %s is not JSON: %v", src, got.Bytes(), err)
		}
		var orig any
		json.Unmarshal(src, &orig)
		if !reflect.DeepEqual(back, orig) {
			t.Fatalf("%s: read back %v", src, back)
		}
		var ref bytes.Buffer
		json.Indent(&ref, src, "", "\t")
		ref.WriteByte('\n')
		if !scalars && !strings.Contains(string(src), "[]") && got.String() != ref.String() {
			t.Fatalf("%s: got\n%s\njson.Indent's\n%s", src, got.Bytes(), ref.Bytes())
		}
		if strings.Count(got.String(), "\n") > strings.Count(ref.String(), "\n") {
			t.Fatalf("%s: more lines than json.Indent's", src)
		}
	}
}

// TestEncode: Encode writes what a json.Encoder with SetIndent writes, HTML
// escaping included, but for the arrays of scalars.
func TestEncode(t *testing.T) {
	v := map[string]any{"a": "<b>&", "m": []float64{1, 2}, "o": map[string]int{"x": 1}}
	var got, ref bytes.Buffer
	if err := Encode(&got, v, "  "); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&ref)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	want := strings.Replace(ref.String(), "[\n    1,\n    2\n  ]", "[1, 2]", 1)
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want)
	}
	if err := Encode(&got, map[string]any{"f": func() {}}, "  "); err == nil {
		t.Error("a func: no error")
	}
}

// TestEncodeAt: a document written a part at a time with EncodeAt, as a
// streaming writer does, is Encode's of the whole, byte for byte.
func TestEncodeAt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		parts := make([]any, r.IntN(4))
		for i := range parts {
			parts[i] = map[string]any{"hits": []map[string]any{{"id": r.IntN(9), "score": r.Float64()}}, "n": []int{i, trial}, "<k>": "&"}
		}
		tail := map[string]any{"mean": r.Float64(), "empty": []any{}}
		var whole bytes.Buffer
		if err := Encode(&whole, map[string]any{"anchors": parts, "summary": tail}, "  "); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		got.WriteString("{\n  \"anchors\": [")
		for i, p := range parts {
			if i > 0 {
				got.WriteByte(',')
			}
			got.WriteString("\n    ")
			if err := EncodeAt(&got, p, "  ", 2); err != nil {
				t.Fatal(err)
			}
		}
		if len(parts) > 0 {
			got.WriteString("\n  ")
		}
		got.WriteString("],\n  \"summary\": ")
		if err := EncodeAt(&got, tail, "  ", 1); err != nil {
			t.Fatal(err)
		}
		got.WriteString("\n}\n")
		if got.String() != whole.String() {
			t.Fatalf("trial %d: got\n%s\nEncode's\n%s", trial, got.String(), whole.String())
		}
	}
	if err := EncodeAt(&bytes.Buffer{}, func() {}, "  ", 1); err == nil {
		t.Error("a func: no error")
	}
}
