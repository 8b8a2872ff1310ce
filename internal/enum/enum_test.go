package enum

import (
	"strings"
	"testing"
)

type color int

var colors = Names[color]{What: "colour", Names: []string{"red", "green"}, Alias: map[string]color{"r": 1}}

func TestNames(t *testing.T) {
	if colors.String(2) != "green" || colors.String(3) != "enum.color(3)" {
		t.Errorf("String: %q, %q", colors.String(2), colors.String(3))
	}
	for s, want := range map[string]color{"red": 1, "green": 2, "r": 1} {
		if v, err := colors.Parse(s); err != nil || v != want {
			t.Errorf("Parse(%q) = %v, %v", s, v, err)
		}
	}
	if _, err := colors.Parse("blue"); err == nil || !strings.Contains(err.Error(), `unknown colour "blue" (want red or green)`) {
		t.Errorf("Parse(blue): %v", err)
	}
	// Off only by case: refused, the spelling named.
	for s, want := range map[string]string{"GREEN": `unknown colour "GREEN" (want red or green): did you mean "green"?`, "R": `: did you mean "r"?`} {
		if _, err := colors.Parse(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want %q", s, err, want)
		}
	}
	if _, err := colors.Parse("blue"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Parse(blue): %v, want no suggestion", err)
	}
	if b, err := colors.Marshal(1); err != nil || string(b) != "red" {
		t.Errorf("Marshal(1): %s, %v", b, err)
	}
	if _, err := colors.Marshal(0); err == nil {
		t.Error("Marshal(0) accepted")
	}
	var c color
	if err := colors.Unmarshal(&c, []byte("green")); err != nil || c != 2 {
		t.Errorf("Unmarshal: %v, %v", c, err)
	}
	if OrList([]string{"a", "b", "c"}) != "a, b or c" || OrList([]string{"a"}) != "a" {
		t.Error("OrList")
	}
}
