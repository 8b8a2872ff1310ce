package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// parseOptions decodes a call's keywords, a JSON object, into dst: only
// the fields dst names, each of its type.
func parseOptions(s string, dst any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// The keyword's own name: an embedded struct's fields are
			// reported under its Go name ("recipeOptions.T").
			field := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
			e := &keywordTypeError{field: field, got: te.Value, want: te.Type}
			if n, ok := strings.CutPrefix(te.Value, "number "); ok && !strings.ContainsAny(n, ".eE") {
				// An int out of the keyword's range (seed=-1, 2**64): the
				// right type, a wrong value — ValueError, as k=-1's — said
				// with the range the keyword takes.
				return fmt.Errorf("%s: got %s, want an int %s", field, n, intRange(te.Type))
			}
			return e
		}
		return fmt.Errorf("keywords: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return fmt.Errorf("keywords: more than one JSON object")
	}
	return nil
}

// keywordTypeError is a keyword given a value of the wrong type (k="20"):
// the Python side raises TypeError.
type keywordTypeError struct {
	field string       // the keyword, as the JSON names it ("k", "split")
	got   string       // the JSON value's kind: "string", "number 2.5", "array"
	want  reflect.Type // the Go field's type
}

func (e *keywordTypeError) Error() string {
	got := map[string]string{"string": "a str", "number": "a number", "bool": "a bool", "array": "a list", "object": "a dict"}[e.got]
	if got == "" {
		got = strings.TrimPrefix(e.got, "number ") // a fraction or an overflow: the number itself
	}
	return fmt.Sprintf("%s: got %s, want %s", e.field, got, typeName(e.want))
}

// intRange is the range of Go integer type t, in Python's words.
func intRange(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bits := t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("from 0 to 2**%d - 1", bits)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("from -2**%d to 2**%d - 1", bits-1, bits-1)
	}
	return "in " + t.String() + "'s range"
}

// typeName says what a keyword of Go type t takes, in Python's words.
func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an int"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an int ≥ 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a str"
	case reflect.Bool:
		return "a bool"
	case reflect.Slice, reflect.Array:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(typeName(t.Elem()), "an "), "a ") + "s"
	}
	return t.String()
}
