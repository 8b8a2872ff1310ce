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
