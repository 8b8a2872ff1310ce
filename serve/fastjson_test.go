package serve

import (
	"bytes"
	"encoding/json"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// referenceDecode is decodeRequest's specification written with
// encoding/json: a valid JSON object; keys exactly the names of spec's
// fields, each at most once; a field null is absent; the anchor and each
// point an array of spec.dim numbers (no null), each a finite float32
// (strconv's float64, rounded to float32 as NumPy's astype does); at most spec.maxPoints points; the
// collection a string of at most maxName bytes as sent, the limit an int,
// the label an int64. It reports
// whether the body is accepted.
func referenceDecode(body []byte, spec bodySpec) (request, bool) {
	var r request
	if !json.Valid(body) || !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) {
		return r, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.Token() // {
	raws := map[field]json.RawMessage{}
	for dec.More() {
		tok, _ := dec.Token()
		var f field
		for _, n := range fieldNames {
			if n.name == tok.(string) {
				f = n.f
			}
		}
		if _, dup := raws[f]; f == 0 || spec.fields&f == 0 || dup {
			return r, false
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return r, false
		}
		raws[f] = raw
	}
	vector := func(raw json.RawMessage) ([]float32, bool) {
		var xs []json.RawMessage
		if json.Unmarshal(raw, &xs) != nil || xs == nil || len(xs) != spec.dim {
			return nil, false
		}
		out := []float32{}
		for _, x := range xs {
			if x[0] != '-' && (x[0] < '0' || x[0] > '9') { // null, a string, an array…
				return nil, false
			}
			v, err := strconv.ParseFloat(string(x), 64)
			if err != nil || math.IsInf(float64(float32(v)), 0) {
				return nil, false
			}
			if mant, _, _ := strings.Cut(strings.ToLower(string(x)), "e"); float32(v) == 0 && strings.Trim(mant, "-0.") != "" {
				return nil, false // underflows to 0 in float32
			}
			out = append(out, float32(v))
		}
		return out, true
	}
	for f, raw := range raws {
		if string(raw) == "null" {
			continue
		}
		ok := true
		switch f {
		case fieldAnchor:
			r.anchor, ok = vector(raw)
		case fieldPoints:
			var rows []json.RawMessage
			if json.Unmarshal(raw, &rows) != nil || len(rows) > spec.maxPoints {
				return r, false
			}
			r.points = []float32{}
			for _, row := range rows {
				v, ok := vector(row)
				if !ok {
					return r, false
				}
				r.points = append(r.points, v...)
			}
		case fieldCollection:
			ok = len(raw)-2 <= maxName && json.Unmarshal(raw, &r.collection) == nil
		case fieldLimit:
			var n int
			ok = json.Unmarshal(raw, &n) == nil
			r.limit = &n
		case fieldLabel:
			var n int64
			var name string
			switch {
			case json.Unmarshal(raw, &name) == nil:
				ok = len(raw)-2 <= maxName
				r.labelName = &name
			default:
				ok = json.Unmarshal(raw, &n) == nil
				r.label = &n
			}
		}
		if !ok {
			return r, false
		}
	}
	return r, true
}

// sameRequest reports whether two decoded requests are equal, coordinates
// compared bit for bit and an absent array told from an empty one.
func sameRequest(a, b request) bool {
	same := func(x, y []float32) bool {
		if (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	}
	eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	var al, bl *int64
	if a.limit != nil {
		al = new(int64(*a.limit))
	}
	if b.limit != nil {
		bl = new(int64(*b.limit))
	}
	return same(a.anchor, b.anchor) && same(a.points, b.points) && a.collection == b.collection && eq(al, bl) && eq(a.label, b.label) &&
		(a.labelName == nil) == (b.labelName == nil) && (a.labelName == nil || *a.labelName == *b.labelName)
}

// decodeSeeds are bodies for the decoder's tests and fuzzers.
var decodeSeeds = []string{
	`{"anchor": [0, -1.5e3, 2E-2], "points": [[1, 0, 0], [0, 0, 1]]}`, `{"anchor":[],"points":[]}`, `{}`,
	`{"anchor": [1, 2, 3], "collection": "db", "limit": 3}`, `{"limit": -0, "limit": 2}`, `{"points": [[1e400, 0, 0]]}`, `{"ANCHOR": [1, 2, 3]}`,
	`{"anchor": [01, 0, 0]}`, `{"collection": "d\u00e9"}`, `{"anchor": null}`, ` { "points" : [ [ 1 , 2 , 3 ] ] } `,
	`{"anchor": [1, 2, 3], "points": [[2, 2, 2]], "label": 3}`, `{"label": -7}`, `{"label": 1.5}`,
	`{"anchor": [0, 0, 0], "points": [[null, null, null], [9, 9, 9]]}`, `{"points": [[], [], null]}`, `{"points": [[[[1]]]]}`,
	`{"anch\u006fr": [1, 2, 3]}`, `{"points": [[1, 2, 3,]]}`, `{"points": [[1, 2, 3]],}`, `{"collection": "\ud800"}`,
	`{"points": [[3.4028235e38, -3.4028235e38, 1e-46]]}`, `{"points": [[3.40282357e38, 0, 0]]}`, `null`, `[]`, `{"limit": 9223372036854775808}`,
	`{"points": [[1, 2, 3]]} x`, `{"anchor": [0, 0, 0], "points": [[0, 0, 0], [1, 1, 1], [2, 2, 2]]}`, `{"label": 1e2}`, `{"collection": 5}`,
	`{"label": "coat"}`, `{"label": "\u00e9t\u00e9"}`, `{"label": true}`, `{"label": "a\tb"}`, `{"label": ""}`,
}

// FuzzDecode: the decoder accepts exactly the bodies the reference
// (referenceDecode, with encoding/json) accepts, with the same values, for
// any fields, dimension and cap; and however hostile the body, it
// allocates at most 6 × the body's length + 16 KiB.
func FuzzDecode(f *testing.F) {
	for _, seed := range decodeSeeds {
		f.Add(seed, uint8(2), uint8(4), uint8(fieldAnchor|fieldPoints|fieldLabel))
		f.Add(seed, uint8(2), uint8(1), uint8(fieldAnchor|fieldCollection|fieldLimit))
	}
	f.Fuzz(func(t *testing.T, body string, dim, maxPoints, fields uint8) {
		spec := bodySpec{fields: field(fields) & 31, dim: 1 + int(dim%4), maxPoints: 1 + int(maxPoints%8)}
		b := []byte(body)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := decodeRequest(b, spec)
		runtime.ReadMemStats(&after)
		if alloc, limit := after.TotalAlloc-before.TotalAlloc, 6*uint64(len(b))+16<<10; alloc > limit {
			t.Errorf("%d bytes allocated for a %d-byte body, over %d", alloc, len(b), limit)
		}
		want, ok := referenceDecode(b, spec)
		switch {
		case err == nil && !ok:
			t.Fatalf("%q %+v: accepted as %+v; the reference refuses it", body, spec, got)
		case err != nil && ok:
			t.Fatalf("%q %+v: refused (%v); the reference accepts it as %+v", body, spec, err, want)
		case err == nil && !sameRequest(got, want):
			t.Fatalf("%q %+v: %+v, the reference %+v", body, spec, got, want)
		}
		if err != nil {
			if e, _ := err.(*apiError); e == nil || e.status < 400 || e.status >= 500 || len(e.msg) > maxMessage || len(e.field) > 2*maxEcho {
				t.Fatalf("%q: error %#v: want a 4xx apiError of at most %d bytes", body, err, maxMessage)
			}
		}
	})
}

// TestDecodeErrors: what each problem is answered, and where.
func TestDecodeErrors(t *testing.T) {
	spec := bodySpec{fields: fieldAnchor | fieldPoints, dim: 3, maxPoints: 2}
	long := `{"collection": "` + strings.Repeat("x", maxName+1) + `"}`
	if _, err := decodeRequest([]byte(long), bodySpec{fields: fieldCollection}); err == nil || !strings.Contains(err.Error(), "at most 1024") {
		t.Errorf("a collection name of %d bytes: %v", maxName+1, err)
	}
	// A string is shown whole, not with the body's rest after it.
	for body, want := range map[string]string{
		`{"limit": "3", "collection": "db"}`:           `want an integer, found the string "3": a number in quotes; send it without them`,
		`{"limit": "all", "collection": "db"}`:         `want an integer, found the string "all"`,
		`{"limit": "` + strings.Repeat("9", 40) + `"}`: `found the string "9999999999999999"… (40 bytes)`,
		`{"limit": 3.0}`:                               `3.0 is a whole number written as a float: send 3`,
		`{"limit": 2.5}`:                               `2.5 is not an integer`,
		`{"collection": 7}`:                            `want a string, found the number 7`,
	} {
		_, err := decodeRequest([]byte(body), bodySpec{fields: fieldCollection | fieldLimit})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "db") || strings.Contains(err.Error(), "}") {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	for _, c := range []struct {
		body   string
		status int
		field  string
		msg    string
	}{
		{``, 400, "", "want a JSON object, found the end of the body"},
		{`[]`, 400, "", `byte 0: want a JSON object, found "[]"`},
		{`{"anchor": [0, 0, 0]} {}`, 400, "", "byte 22: want the end of the body"},
		{`{"points": [[1, 2, 3,]]}`, 400, "", "want a value"},
		{`{"points": [[1, 2, 3]],}`, 400, "", "want a field name"},
		{`{"points": [[1, 2, 3]] "anchor": []}`, 400, "", "want ',' or '}'"},
		{`{"points": [[1, 2 3]]}`, 400, "", "want ',' or ']'"},
		{`{"points": [[1, 2, 3] [4, 5, 6]]}`, 400, "", "want ',' or ']'"},
		{`{"points": [[1, 2, 3]], "label": 1}`, 400, "label", `this endpoint takes no label (it takes "anchor", "points")`},
		{`{"pts": []}`, 400, "pts", `unknown field "pts"`},
		{`{"point": []}`, 400, "point", `unknown field "point": this endpoint takes "anchor", "points": did you mean "points"?`},
		{`{"points": [[1, 2, 3]], "alpha_ood": 0.01}`, 400, "alpha_ood", `unknown field "alpha_ood": this endpoint takes "anchor", "points"; alpha_ood is a query parameter (?alpha_ood=…), not a field`},
		{`{"points": [[1, 2, 3]], "points": [[1, 2, 3]]}`, 400, "points", "points appears twice"},
		{`{"anchor": "origin"}`, 400, "anchor", `want an array of 3 numbers, found the string "origin"`},
		{`{"points": {}}`, 400, "points", "want an array of points"},
		{`{"points": [1, 2, 3]}`, 400, "points[0]", "want an array of 3 numbers, found"},
		{`{"points": [[1, "2", 3]]}`, 400, "points[0][1]", `want a number, found the string "2": a number in quotes; send it without them`},
		{`{"points": [[1, -, 3]]}`, 400, "points[0][1]", "want a number"},
		{`{"points": [[1, 2, 3], null]}`, 422, "points[1]", "null: want an array of 3 numbers"},
		{`{"points": [[1, NaN, 3]]}`, 422, "points[0][1]", "NaN is not a finite number (Python's json.dumps writes NaN and ±Infinity"},
		{`{"points": [[1, -Infinity, 3]]}`, 422, "points[0][1]", "-Infinity is not a finite number"},
		{`{"points": [[1, 1e-50, 3]]}`, 422, "points[0][1]", "1e-50 underflows to zero in float32"},
		{`{"points": [[1, null, 3]]}`, 422, "points[0][1]", "null is not a number"},
		{`{"anchor": [1, 2, null]}`, 422, "anchor[2]", "null is not a number"},
		{`{"points": [[1, 2]]}`, 422, "points[0]", "has 2 coordinates, the set's dimension is 3"},
		{`{"points": [[]]}`, 422, "points[0]", "has 0 coordinates"},
		{`{"points": [[1, 2, 3, 4, 5]]}`, 422, "points[0]", "has 5 coordinates, the set's dimension is 3"},
		{`{"points": [[1, 1e39, 3]]}`, 422, "points[0][1]", "1e39 is not a finite float32"},
		{`{"points": [[1, -1e999, 3]]}`, 422, "points[0][1]", "-1e999 is not a finite float32"},
		{`{"points": [[1, 2, 3], [1, 2, 3], [1, 2, 3]]}`, 413, "points", "more than 2 points"},
		{`{"points": [[1, 2, 3], [1, 2, 3], [`, 413, "points", "more than 2 points"},
		{`{"an\u0063hor": [1, 2]}`, 422, "anchor", "has 2 coordinates"},
		{`{"an\x": [1, 2]}`, 400, "", "byte 1: want a field name"},
		{`{"` + strings.Repeat("\u0061", 20) + `": 1}`, 400, strings.Repeat("a", 20), "unknown field"},
		{`{"` + strings.Repeat("\xff", 100) + `": 1}`, 400, strings.Repeat("\xff", 64) + "… (100 bytes)", "unknown field"},
	} {
		_, err := decodeRequest([]byte(c.body), spec)
		e, _ := err.(*apiError)
		if e == nil || e.status != c.status || e.field != c.field || !strings.Contains(e.msg, c.msg) {
			t.Errorf("%s: %#v, want %d %q %q", c.body, err, c.status, c.field, c.msg)
		}
	}
	// Whole fields null are absent; empty points are present.
	for body, want := range map[string]request{
		`{"anchor": null, "points": null}`: {},
		`{"points": []}`:                   {points: []float32{}},
		`{"anchor": [1, 2.5, -0]}`:         {anchor: []float32{1, 2.5, float32(math.Copysign(0, -1))}},
	} {
		got, err := decodeRequest([]byte(body), spec)
		if err != nil || !sameRequest(got, want) {
			t.Errorf("%s: %+v %v, want %+v", body, got, err, want)
		}
	}
}

// TestDecodeAllocates: the memory the decoder takes follows the numbers it
// keeps, not the body: a body of n points of d coordinates allocates about
// 4·n·d bytes in one slice (no slice per row), and a hostile body of
// empty or nested rows almost nothing.
func TestDecodeAllocates(t *testing.T) {
	const d, n = 8, 10_000
	row := "[" + strings.TrimSuffix(strings.Repeat("0.5,", d), ",") + "]"
	good := `{"anchor": ` + row + `, "points": [` + strings.TrimSuffix(strings.Repeat(row+",", n), ",") + `]}`
	spec := bodySpec{fields: fieldAnchor | fieldPoints, dim: d, maxPoints: 1 << 20}
	goodBytes := []byte(good)
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := decodeRequest(goodBytes, spec); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 4 {
		t.Errorf("%v allocations to decode %d points, want at most 4 (anchor, first point, the rest)", allocs, n)
	}
	for _, c := range []struct {
		name, body string
		most       uint64
	}{
		{"points", good, 4*(n+1)*d + 16<<10}, // large objects are whole pages
		{"empty rows", `{"points": [` + strings.Repeat("[],", 1<<20) + `[]]}`, 4096},
		{"deep arrays", `{"points": ` + strings.Repeat("[", 1<<20) + `}`, 4096},
	} {
		body := []byte(c.body)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		decodeRequest(body, spec)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > c.most {
			t.Errorf("%s: %d bytes allocated for a %d-byte body, want at most %d", c.name, alloc, len(c.body), c.most)
		}
	}
}

// BenchmarkDecode decodes a body of 1 000 points of dimension 128.
func BenchmarkDecode(b *testing.B) {
	const d, n = 128, 1000
	row := "[" + strings.TrimSuffix(strings.Repeat("0.123456,", d), ",") + "]"
	body := []byte(`{"anchor": ` + row + `, "points": [` + strings.TrimSuffix(strings.Repeat(row+",", n), ",") + `]}`)
	spec := bodySpec{fields: fieldAnchor | fieldPoints, dim: d, maxPoints: n}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := decodeRequest(body, spec); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNumberEnd: the end of a JSON number by its strict grammar, and no
// number where a fraction or an exponent has no digits.
func TestNumberEnd(t *testing.T) {
	for _, c := range []struct {
		in  string
		end int // -1: none
	}{
		{"0", 1}, {"-0", 2}, {"120,", 3}, {"01", 1}, {"1.25]", 4}, {"-3.5e+12}", 8}, {"2E-7", 4}, {"1e5.5", 3},
		{"", -1}, {"-", -1}, {".5", -1}, {"1.", -1}, {"1.e5", -1}, {"1e", -1}, {"1e+", -1}, {"1E-x", -1}, {"+1", -1},
	} {
		end, ok := (&reader{b: []byte(c.in)}).numberEnd()
		if !ok {
			end = -1
		}
		if end != c.end {
			t.Errorf("numberEnd(%q) = %d, want %d", c.in, end, c.end)
		}
	}
}

// TestDecodeRoundsAsNumPy: a coordinate is the float64 the client sent,
// rounded to float32 as NumPy's astype(np.float32) rounds it — not the
// decimal text rounded straight to float32, which differs where the
// float64 lies halfway between two float32s (the mean of two float32
// embeddings): the server's numbers are then ccs.Client's and Set.scores'.
func TestDecodeRoundsAsNumPy(t *testing.T) {
	// The first float32 above 0.1 whose midpoint with the next, written
	// as Python's repr writes the float64, reads as the other float32.
	var text string
	var want float32
	for a := float32(0.1); text == "" && a < 0.2; a = math.Nextafter32(a, 1) {
		mid := (float64(a) + float64(math.Nextafter32(a, 1))) / 2 // halfway: ties to even in float64 → float32
		s := strconv.FormatFloat(mid, 'g', -1, 64)
		if direct, _ := strconv.ParseFloat(s, 32); float32(direct) != float32(mid) {
			text, want = s, float32(mid)
		}
	}
	if text == "" {
		t.Fatal("no case: every text's own rounding is NumPy's")
	}
	body := []byte(`{"anchor": [` + text + `, 0], "points": [[` + text + `, -0]]}`)
	r, err := decodeRequest(body, bodySpec{fields: fieldAnchor | fieldPoints, dim: 2, maxPoints: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.anchor[0] != want || r.points[0] != want || r.points[1] != 0 {
		t.Errorf("decoded %v, %v, want %v (float32 of the float64), and -0 as 0", r.anchor, r.points, want)
	}
	for _, big := range []string{"3.4028236e38", "1e39", "1e999"} {
		if _, err := decodeRequest([]byte(`{"anchor": [`+big+`, 0], "points": []}`), bodySpec{fields: fieldAnchor | fieldPoints, dim: 2, maxPoints: 4}); err == nil {
			t.Errorf("%s: accepted", big)
		}
	}
}
