package bundle

import (
	"fmt"
	"slices"
	"strconv"
)

// LabelCodes numbers string labels (or group ids) 0, 1, … in the sorted
// order of their distinct values: row i's label is codes[i], and its
// string names[codes[i]]. Labels from a NumPy string array and from a
// Parquet string column get the same codes.
func LabelCodes(labels []string) (codes []int64, names []string) {
	names = slices.Compact(slices.Sorted(slices.Values(labels)))
	codes = make([]int64, len(labels))
	for i, s := range labels {
		j, _ := slices.BinarySearch(names, s)
		codes[i] = int64(j)
	}
	return codes, names
}

// ClassesNamed resolves held-out classes as a user names them (ccs bundle's
// -ood-classes): with names (string labels, LabelCodes), each must be one
// of them, and becomes its code; without, each must be an integer.
func ClassesNamed(classes []string, names []string) ([]int64, error) {
	out := make([]int64, 0, len(classes))
	for _, c := range classes {
		if names == nil {
			v, err := strconv.ParseInt(c, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer label", c)
			}
			out = append(out, v)
			continue
		}
		j, ok := slices.BinarySearch(names, c)
		if !ok {
			return nil, fmt.Errorf("%q is not among the labels (%s)", c, labelList(seq64(len(names)), MakeConfig{LabelNames: names}))
		}
		out = append(out, int64(j))
	}
	return out, nil
}

// seq64 is 0, 1, … n−1.
func seq64(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i)
	}
	return s
}
