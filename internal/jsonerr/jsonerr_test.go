package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestExplain: encoding/json's errors in a file's words: the field as the
// file names it, its value and what was wanted, a syntax error's line and
// column, NaN and a byte-order mark named; no Go type or struct.
func TestExplain(t *testing.T) {
	t.Parallel()
	type inner struct {
		N    int     `json:"n"`
		Rows []int64 `json:"rows"`
	}
	type Embedded struct {
		Coverage float64 `json:"coverage"`
	}
	type file struct {
		Embedded
		Alpha   *float64  `json:"alpha"`
		Offsets []int64   `json:"data_offsets"`
		Dim     uint      `json:"dim"`
		Name    string    `json:"name"`
		Ok      bool      `json:"ok"`
		Scale   []float64 `json:"scale"`
		Cal     inner     `json:"calibration"`
	}
	for _, c := range []struct{ name, doc, want string }{
		{"a string for a number", `{"alpha": "0.1"}`, `alpha: "0.1" is a string, want a number`},
		{"a fraction for an integer", `{"data_offsets": [0.0, 24]}`, `data_offsets: 0.0 is not an integer`},
		{"an exponent for an integer", `{"data_offsets": [1e3, 24]}`, `data_offsets: 1e3 is not an integer`},
		{"a negative for an unsigned", `{"dim": -5}`, `dim: -5 is negative, want an integer ≥ 0`},
		{"too large", `{"dim": 123456789012345678901234567890}`, `dim: 123456789012345678901234567890 is too large for an integer ≥ 0`},
		{"beyond float64", `{"alpha": 1e999}`, `alpha: 1e999 is beyond the range of a float64`},
		{"a number for a string", `{"name": 5}`, `name: 5 is a number, want a string`},
		{"a string with quotes", `{"name": "a", "ok": "say \"yes\""}`, `ok: "say \"yes\"" is a string, want true or false`},
		{"an object for an array", `{"scale": {}}`, `scale: an object, want an array of numbers`},
		{"nested", `{"calibration": {"n": "7"}}`, `calibration.n: "7" is a string, want an integer`},
		{"an embedded struct's field", `{"coverage": "high"}`, `coverage: "high" is a string, want a number`},
		{"nested array", `{"calibration": {"rows": [1, "2"]}}`, `calibration.rows: "2" is a string, want an integer`},
		{"NaN", "{\n  \"alpha\": NaN\n}", `line 2, column 12: NaN is not JSON (Python's json.dump writes it for a float nan`},
		{"Infinity", `{"scale": [1, Infinity]}`, `line 1, column 15: Infinity is not JSON`},
		{"-Infinity", `{"scale": [1, -Infinity]}`, `line 1, column 16: -Infinity is not JSON (Python's json.dump writes it for a float -inf`},
		{"a byte-order mark", "\xef\xbb\xbf{}", `the file begins with a UTF-8 byte-order mark`},
		{"other syntax", "{\"alpha\": 0.1,\n}", `line 2, column 1: invalid character '}' looking for beginning of object key string`},
	} {
		var f file
		err := Explain(json.Unmarshal([]byte(c.doc), &f), []byte(c.doc))
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case err.Error() != c.want && !strings.HasPrefix(err.Error(), c.want):
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		case strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "json: "):
			t.Errorf("%s: Go in %v", c.name, err)
		}
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		if !errors.As(err, &te) && !errors.As(err, &se) {
			t.Errorf("%s: %v does not unwrap to encoding/json's error", c.name, err)
		}
	}
	// Wrapped, the rest of the text stays; without the document, no
	// value or place; another error is returned as it is.
	var x float64
	err := fmt.Errorf("want a number: %w", json.Unmarshal([]byte(`"1"`), &x))
	if got := Explain(err, nil).Error(); got != "want a number: a string, want a number" {
		t.Errorf("wrapped: %s", got)
	}
	var f struct{}
	err = json.NewDecoder(strings.NewReader(`{"kind": "x", `)).Decode(&f)
	if got := Explain(fmt.Errorf("not a set: %w", err), nil).Error(); got != "not a set: the JSON ends before its value does: the file is cut short" {
		t.Errorf("cut short: %s", got)
	}
	// A token stream's error, placed in the whole document.
	doc := "{\"a\": [1, 2],\n \"b\": NaN}"
	dec := json.NewDecoder(strings.NewReader(doc))
	for err == nil || !strings.Contains(err.Error(), "invalid") {
		_, err = dec.Token()
	}
	if got := ExplainStream(err, []byte(doc)).Error(); !strings.HasPrefix(got, "line 2, column 7: NaN is not JSON") {
		t.Errorf("a stream's NaN: %s", got)
	}
	other := errors.New("other")
	if Explain(other, nil) != other || Explain(nil, nil) != nil {
		t.Error("another error changed")
	}
}
