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
// quoted from a file is cut. A message without such a run is returned as
// it is.
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
	if !cut {
		return msg
	}
	return b.String()
}
