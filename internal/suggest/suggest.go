// Package suggest finds the name a mistyped one most likely meant, for
// the "did you mean" of an error message.
package suggest

import (
	"fmt"
	"strings"
)

// Nearest returns the candidate closest to name: the one equal to it but
// for case, or else the one within the fewest single-character edits
// (insertions, deletions, substitutions, and swaps of two adjacent
// characters: "greif" is one edit from "grief"), at most a quarter of
// name's length (at least one). It reports false when none is that
// close, or when two are equally close.
func Nearest(name string, candidates []string) (string, bool) {
	near := Near(name, candidates)
	if len(near) != 1 {
		return "", false
	}
	return near[0], true
}

// DidYouMean is ": did you mean "NAME"?" for the candidate Nearest finds
// for name, or "" when it finds none: the end of an error message.
func DidYouMean(name string, candidates []string) string {
	if near, ok := Nearest(name, candidates); ok {
		return fmt.Sprintf(": did you mean %q?", near)
	}
	return ""
}

// Near returns the candidates Nearest chooses among: the one equal to
// name but for case, or else every one within the fewest edits (at most a
// quarter of name's length, at least one), in candidates' order; none
// when none is that close. More than one is a tie ("tset" is one edit
// from "set" and from "test"), which a message can name both of.
func Near(name string, candidates []string) []string {
	for _, c := range candidates {
		if c != name && strings.EqualFold(c, name) {
			return []string{c}
		}
	}
	r := []rune(name)
	limit := max(1, len(r)/4)
	var best []string
	bestD := limit + 1
	for _, c := range candidates {
		if c == name {
			continue
		}
		switch d := distance(r, []rune(c), limit); {
		case d < bestD:
			best, bestD = []string{c}, d
		case d == bestD && d <= limit:
			best = append(best, c)
		}
	}
	return best
}

// distance is the optimal-string-alignment distance of a and b (the
// Levenshtein distance, with a swap of two adjacent characters one edit,
// no substring edited twice), or some value above limit when it is
// larger (limit + 1 or more: callers compare with limit alone).
func distance(a, b []rune, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	// Rows i−2, i−1 and i of the table: d[i][j] is the distance of a[:i]
	// and b[:j].
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	prevLow := 0 // the least value of row i−1
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			low = min(low, cur[j])
		}
		// A row's least value never falls in the rows after it, but for a
		// swap, which reaches back two rows: stop when both exceed limit.
		if low > limit && prevLow > limit {
			return limit + 1
		}
		prevLow = low
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
