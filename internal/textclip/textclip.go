// Package textclip shortens messages that quote what a file holds: a
// label, an id or a line of 64 MB quoted whole made a 64 MB error
// message, flooding a terminal and a log.
package textclip

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Long is the longest run of non-blank characters a message keeps whole;
// Keep is how much of a longer one it keeps.
const (
	Long = 256
	Keep = 64
)

// Message returns msg with every run of non-blank characters longer than
// Long bytes cut to its first Keep bytes (at a character's start) and
// "… (N bytes)": a message's words, numbers and paths stay whole, a value
// quoted from a file is cut; a message still longer than Total is cut in
// its middle. A message without either is returned as it is.
func Message(msg string) string {
	if len(msg) <= Long {
		return msg
	}

	var b strings.Builder
	cut := false
	start := -1 // the start of the current run of non-blanks
	flush := func(end int) {
		run := msg[start:end]
		if len(run) > Long {
			cut = true
			k := Keep
			for k > 0 && !utf8.RuneStart(run[k]) {
				k--
			}
			fmt.Fprintf(&b, "%s… (%d bytes)", run[:k], len(run))
		} else {
			b.WriteString(run)
		}
		start = -1
	}
	for i := 0; i < len(msg); {
		r, size := rune(msg[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(msg[i:])
		}
		if unicode.IsSpace(r) {
			if start >= 0 {
				flush(i)
			}
			b.WriteString(msg[i : i+size])
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		flush(len(msg))
	}
	out := msg
	if cut {
		out = b.String()
	}
	return total(out)
}

// Total is the longest message Message leaves whole: one whose long
// value holds blanks (a free-text field of 600 KB read as a label) is cut
// in its middle, keeping its start and end.
const Total = 8 << 10

// total cuts msg in its middle where it is longer than Total.
func total(msg string) string {
	if len(msg) <= Total {
		return msg
	}
	head, tail := Total*3/4, Total/8
	for head > 0 && !utf8.RuneStart(msg[head]) {
		head--
	}
	at := len(msg) - tail
	for at < len(msg) && !utf8.RuneStart(msg[at]) {
		at++
	}
	return fmt.Sprintf("%s… (%d bytes left out) …%s", msg[:head], at-head, msg[at:])
}
