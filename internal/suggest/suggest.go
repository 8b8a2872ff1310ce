// Package suggest finds the name a mistyped one most likely meant, for
// the "did you mean" of an error message.
package suggest

import "strings"

// Nearest returns the candidate closest to name: the one equal to it but
// for case, or else the one within the fewest single-character edits
// (insertions, deletions, substitutions), at most a quarter of name's
// length (at least one). It reports false when none is that close, or
// when two are equally close.
func Nearest(name string, candidates []string) (string, bool) {
	for _, c := range candidates {
		if c != name && strings.EqualFold(c, name) {
			return c, true
		}
	}
	r := []rune(name)
	limit := max(1, len(r)/4)
	best, bestD, tie := "", limit+1, false
	for _, c := range candidates {
		if c == name {
			continue
		}
		switch d := distance(r, []rune(c), limit); {
		case d < bestD:
			best, bestD, tie = c, d, false
		case d == bestD:
			tie = true
		}
	}
	if bestD > limit || tie {
		return "", false
	}
	return best, true
}

// distance is the Levenshtein distance of a and b, or limit + 1 when it
// is larger.
func distance(a, b []rune, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			low = min(low, cur[j])
		}
		if low > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
