package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// parseOptions decodes a call's keywords, a JSON object, into dst: only
// the fields dst names, each of its type.
func parseOptions(s string, dst any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("keywords: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return fmt.Errorf("keywords: more than one JSON object")
	}
	return nil
}
