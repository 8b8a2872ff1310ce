package textclip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMessage(t *testing.T) {
	long := strings.Repeat("A", 64<<20)
	utf := strings.Repeat("é", 300) // 600 bytes, each character 2
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"labels.txt:1: a short label \"x\"", "labels.txt:1: a short label \"x\""},
		{`labels.csv: class "` + long + `", 1 item`, `labels.csv: class "` + strings.Repeat("A", 63) + `… (67108867 bytes) 1 item`},
		{"a\n" + strings.Repeat("7", 300) + "\nb", "a\n" + strings.Repeat("7", 64) + "… (300 bytes)\nb"},
		{utf + " x", strings.Repeat("é", 32) + "… (600 bytes) x"},
		{strings.Repeat("w ", 500), strings.Repeat("w ", 500)}, // long, but of short words: whole
	} {
		got := Message(c.in)
		if got != c.want {
			t.Errorf("%.80q: got %.200q, want %.200q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("%.80q: not UTF-8", c.in)
		}
	}
}

// TestMessageTotal: a value with blanks in it, too long for a message,
// is cut in the message's middle, its start and end kept.
func TestMessageTotal(t *testing.T) {
	msg := "labels.txt:8: class \"" + strings.Repeat("ab ", 200000) + "\" has 1 item"
	got := Message(msg)
	if len(got) > Total+64 || !strings.HasPrefix(got, "labels.txt:8: class \"ab ab") || !strings.HasSuffix(got, "ab \" has 1 item") || !strings.Contains(got, " bytes left out) …") {
		t.Errorf("%d bytes: %.100q … %.100q", len(got), got, got[max(0, len(got)-100):])
	}
	if short := strings.Repeat("x ", Total/2-1); Message(short) != short {
		t.Error("a message of Total bytes was cut")
	}
}
