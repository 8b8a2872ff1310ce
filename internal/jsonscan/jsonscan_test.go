package jsonscan

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/ccsets/ccs/internal/fastfloat"
)

// floatCases are arrays Floats reads (ok) or leaves to encoding/json.
var floatCases = []struct {
	in string
	ok bool
}{
	{`[]`, true},
	{` [ ] `, true},
	{`[1]`, true},
	{"[1,\n -2.5e3 ,\t0.125E-2, 0, -0, 1e+2]", true},
	{`[0.1, 123456789012345678901234567890, 5e-324, 1e-400]`, true}, // underflow is 0, as encoding/json reads it
	{`[1e400]`, false},       // out of range
	{`[01]`, false},          // a leading zero
	{`[1.]`, false},          // no fraction digits
	{`[.5]`, false},          // no integer digits
	{`[+1]`, false},          // JSON has no plus sign
	{`[1e]`, false},          // no exponent digits
	{`[-]`, false},           //
	{`[Infinity]`, false},    //
	{`[NaN]`, false},         //
	{`[0x10]`, false},        // strconv reads it; JSON does not
	{`[1_000]`, false},       //
	{`[1,]`, false},          // a trailing comma
	{`[,1]`, false},          //
	{`[1 2]`, false},         //
	{`[1]]`, false},          // more after the array
	{`[1] x`, false},         //
	{`[1`, false},            // unterminated
	{`[null]`, false},        // encoding/json keeps 0 for a null; the caller decides
	{`["1"]`, false},         //
	{`[[1]]`, false},         //
	{`null`, false},          //
	{`{}`, false},            //
	{``, false},              //
	{`[1e38, 3.5e38]`, true}, // float64 reads both
}

func TestFloats(t *testing.T) {
	for _, c := range floatCases {
		got, ok := Floats[float64](nil, []byte(c.in))
		if ok != c.ok {
			t.Errorf("Floats(%q): ok %v, want %v", c.in, ok, c.ok)
			continue
		}
		var want []float64
		err := json.Unmarshal([]byte(c.in), &want)
		if ok && (err != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("Floats(%q) = %v; encoding/json: %v, %v", c.in, got, want, err)
		}
	}
	// float32: a value past its range is left to encoding/json, which
	// refuses it.
	if _, ok := Floats[float32](nil, []byte(`[3.5e38]`)); ok {
		t.Error("Floats[float32]([3.5e38]) read a value past float32's range")
	}
	got, ok := Floats[float32](nil, []byte(`[0.1, 1e38, 16777217]`))
	if want := []float32{0.1, 1e38, 16777216}; !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("Floats[float32] = %v, %v; want %v", got, ok, want)
	}
	// dst's storage is reused.
	dst := make([]float64, 0, 8)
	got2, _ := Floats(dst, []byte(`[1, 2]`))
	if &got2[0] != &dst[:1][0] {
		t.Error("Floats did not reuse dst")
	}
}

// TestFloatsRoundTrip: the numbers encoding/json writes, Floats reads back
// to the same bits.
func TestFloatsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 5000)
	for i := range x {
		x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	}
	x = append(x, 0, math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 1)
	b, _ := json.Marshal(x)
	got, ok := Floats[float64](nil, b)
	if !ok || !reflect.DeepEqual(got, x) {
		t.Fatalf("round trip: ok %v, equal %v", ok, reflect.DeepEqual(got, x))
	}
}

func TestMembers(t *testing.T) {
	for _, c := range []struct {
		in   string
		keys []string // nil: not read
	}{
		{`{}`, []string{}},
		{` {"a": 1, "b" :[1, {"c": [true, false, null]}], "d": "x\"}y\\u00e9", "e": {}} `, []string{"a", "b", "d", "e"}},
		{`{"a": -0.5e-3, "b": [], "c": ""}`, []string{"a", "b", "c"}},
		{`{"a": 1, "a": 2}`, nil},        // repeated: encoding/json keeps the last
		{`{"\u0061": 1}`, nil},           // an escaped key
		{`{"a": 1,}`, nil},               //
		{`{"a" 1}`, nil},                 //
		{`{"a": 01}`, nil},               //
		{`{"a": tru}`, nil},              //
		{`{"a": "x` + "\n" + `"}`, nil},  // a control character in a string
		{`{"a": "\x"}`, nil},             // a bad escape
		{`{"a": "\u12"}`, nil},           //
		{`{"a": [1, 2}`, nil},            //
		{`{"a": {"b" 1}}`, nil},          //
		{`{"a": 1} {}`, nil},             // more after the object
		{`[1]`, nil},                     //
		{`{"a": 1`, nil},                 //
		{`{1: 1}`, nil},                  //
		{`{"a": ` + deep(70) + `}`, nil}, // deeper than maxDepth
		{`{"a": ` + deep(20) + `}`, []string{"a"}},
	} {
		got, ok := Members([]byte(c.in))
		if ok != (c.keys != nil) {
			t.Errorf("Members(%.40q): ok %v", c.in, ok)
			continue
		}
		if !ok {
			continue
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.in), &want); err != nil {
			t.Errorf("Members(%.40q) read what encoding/json refuses: %v", c.in, err)
			continue
		}
		keys := []string{}
		for _, m := range got {
			keys = append(keys, m.Key)
			if !bytes.Equal(m.Value, want[m.Key]) {
				t.Errorf("Members(%.40q)[%q] = %s, want %s", c.in, m.Key, m.Value, want[m.Key])
			}
		}
		if !reflect.DeepEqual(keys, c.keys) || len(keys) != len(want) {
			t.Errorf("Members(%.40q) keys %v, want %v", c.in, keys, c.keys)
		}
	}
}

// deep is an array nested n deep.
func deep(n int) string {
	return string(bytes.Repeat([]byte("["), n)) + string(bytes.Repeat([]byte("]"), n))
}

// FuzzFloats: what Floats reads, encoding/json reads to the same values.
func FuzzFloats(f *testing.F) {
	for _, c := range floatCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := Floats[float64](nil, b)
		var want []float64
		err := json.Unmarshal(b, &want)
		if ok && (err != nil || !reflect.DeepEqual(got, want)) {
			t.Fatalf("Floats(%q) = %v; encoding/json: %v, %v", b, got, want, err)
		}
		got32, ok := Floats[float32](nil, b)
		var want32 []float32
		err = json.Unmarshal(b, &want32)
		if ok && (err != nil || !reflect.DeepEqual(got32, want32)) {
			t.Fatalf("Floats[float32](%q) = %v; encoding/json: %v, %v", b, got32, want32, err)
		}
		if near, ok := Near(nil, b); ok {
			var want64 []float64
			if err := json.Unmarshal(b, &want64); err != nil || len(near) != len(want64) {
				t.Fatalf("Near(%q) = %v; encoding/json: %v, %v", b, near, want64, err)
			}
			for k := range near {
				if float32(near[k]) != float32(want64[k]) || math.Abs(near[k]-want64[k]) > 2e-15*math.Abs(want64[k]) {
					t.Fatalf("Near(%q)[%d] = %v; encoding/json %v", b, k, near[k], want64[k])
				}
			}
		}
		// A well-formed array of numbers that fits is read.
		if err == nil && want32 != nil && !ok && bytes.Count(b, []byte("null")) == 0 {
			if _, ok := Floats[float64](nil, b); !ok {
				t.Fatalf("Floats(%q) left a plain array to encoding/json", b)
			}
		}
	})
}

// FuzzMembers: what Members reads, encoding/json reads as the same
// members; MembersNear reads what Members does, its member "e" as Near
// reads that value; and MembersSkim reads what Members does, and where
// Members refuses, reads its kept members' values as well-formed JSON.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"a": 1, "b": [1, {"c": [true, false, null]}], "d": "x\"y"}`))
	f.Add([]byte(`{"format": "ccs-set", "geometry": {"kind": "ball", "dim": 3}}`))
	f.Add([]byte(`{"id": 3, "e": [0.25, -1e-3, 7], "label": "cat"}`))
	f.Add([]byte(`{"e": [0.25, "x"], "f": [1]}`))
	f.Add([]byte(`{"e": [], "e": [1]}`))
	f.Add([]byte(`{"e": [1e999], "x": 2} `))
	f.Add([]byte(`{"label": "cat", "emb": [1, 2, x], "a": [3]}`))
	f.Add([]byte(`{"label": ["a", 1], "emb": [0.5, -1e3]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := Members(b)
		mn, near, okNear := MembersNear(b, "e", []float64{9, 9})
		if okNear != ok || !slices.EqualFunc(mn, got, func(x, y Member) bool { return x.Key == y.Key && bytes.Equal(x.Value, y.Value) }) {
			t.Fatalf("MembersNear(%q) = %q, %v; Members %q, %v", b, mn, okNear, got, ok)
		}
		skim, okSkim := MembersSkim(b, []string{"a", "label"})
		if !ok {
			for _, m := range skim { // lax only where it passes over: keep's values well formed
				if okSkim && (m.Key == "a" || m.Key == "label") && !json.Valid(m.Value) {
					t.Fatalf("MembersSkim(%q)[%q] = %q, not JSON", b, m.Key, m.Value)
				}
			}
			return
		}
		if !okSkim || !slices.EqualFunc(skim, got, func(x, y Member) bool { return x.Key == y.Key && bytes.Equal(x.Value, y.Value) }) {
			t.Fatalf("MembersSkim(%q) = %q, %v; Members %q", b, skim, okSkim, got)
		}
		var e []byte
		for _, x := range got {
			if x.Key == "e" {
				e = x.Value
			}
		}
		nearWant, nearOK := Near(nil, e)
		if nearOK != (near != nil) || !slices.Equal(near, nearWant) {
			t.Fatalf("MembersNear(%q)'s e: %v (read: %v); Near's %v (%v)", b, near, near != nil, nearWant, nearOK)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("Members(%q) read what encoding/json refuses: %v", b, err)
		}
		if len(got) != len(want) {
			t.Fatalf("Members(%q): %d members, encoding/json %d", b, len(got), len(want))
		}
		for _, m := range got {
			if w, in := want[m.Key]; !in || !bytes.Equal(m.Value, w) {
				t.Fatalf("Members(%q)[%q] = %s, encoding/json %s", b, m.Key, m.Value, w)
			}
		}
	})
}

// TestNear: the float64s Near reads round to the float32s of the numbers'
// own float64s, the numbers written as Python writes a float32 array's
// .tolist() (17 digits), and as Go writes float64s; and Near reads every
// one of them without strconv but a few.
func TestNear(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	x := make([]float64, 20000)
	for i := range x {
		x[i] = r.NormFloat64()
		if i%2 == 0 {
			x[i] = float64(float32(x[i])) // a float32 as a Python float
		}
	}
	data, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := Near(nil, data)
	if !ok || len(got) != len(x) {
		t.Fatalf("Near: ok %v, %d numbers of %d", ok, len(got), len(x))
	}
	fast := 0
	for i, v := range got {
		if float32(v) != float32(x[i]) {
			t.Fatalf("Near[%d] = %v, float32 %v; the number's %v", i, v, float32(v), float32(x[i]))
		}
		s := strconv.FormatFloat(x[i], 'g', -1, 64)
		if _, _, ok := fastfloat.Narrow(s); ok {
			fast++
		}
	}
	if fast < len(x)*99/100 {
		t.Errorf("%d of %d read without strconv", fast, len(x))
	}
}

// BenchmarkFloats reads a d = 512 matrix as a set file writes it.
func BenchmarkFloats(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, 512*512)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	data, _ := json.Marshal(x)
	b.SetBytes(int64(len(data)))
	b.Run("jsonscan", func(b *testing.B) {
		for b.Loop() {
			if _, ok := Floats[float64](nil, data); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var v []float64
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
