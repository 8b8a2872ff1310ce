package experiment

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// ClassesByName matches a test bundle's classes to a class-conditional
// set's by their names (conformal.Set.LabelsByName), names the test
// bundle's string labels (label i is names[i]; nil when it has none). It
// returns b itself, or a shallow copy whose labels are renumbered into the
// set's numbering, the names its per-class results are then to be read by
// (the set's, once renumbered), and a note saying what was renumbered ("",
// when nothing was). A named test class the set has no threshold for is an
// error.
func ClassesByName(set *conformal.Set, b *bundle.Bundle, names []string) (*bundle.Bundle, []string, string, error) {
	if b.Labels == nil {
		return b, names, "", nil
	}
	if names == nil && set.ClassConditional() && set.ClassNames() != nil {
		return b, names, "the set's classes have names and the test bundle's labels none (no manifest of ccs bundle beside it names them): they were matched by number, which is right only for a bundle numbered as the set's calibration bundle was (made from the same string labels, in one ccs bundle run)", nil
	}
	labels, renumbered, err := set.LabelsByName(b.Labels, names)
	if err != nil || !renumbered {
		return b, names, "", err
	}
	own := set.ClassNames()
	to := map[int64]int64{} // the test bundle's label → the set's, where they differ
	for i, l := range b.Labels {
		if labels[i] != l {
			to[l] = labels[i]
		}
	}
	var moved []string
	for _, l := range slices.Sorted(maps.Keys(to)) {
		if len(moved) == 3 {
			moved = append(moved, fmt.Sprintf("%d classes in all", len(to)))
			break
		}
		moved = append(moved, fmt.Sprintf("%q is %d there, %d in the set", names[l], l, to[l]))
	}
	c := *b
	c.Labels = labels
	note := "the test bundle numbers its classes otherwise than the set (a class more or fewer among its string labels): its classes were matched to the set's by name (" + strings.Join(moved, "; ") + ")"
	return &c, own, note, nil
}
