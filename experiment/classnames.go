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

// OfSetClass is test's anchors of the class a set for one class's anchors
// is for (conformal.Info.Class: ccs calibrate -class), whose guarantee is
// for them, with a note that says so; matched by name where both name
// their classes (test's names), by label otherwise. A test bundle without
// labels is kept whole, with the warning that its coverage mixes the
// classes; one without anchors of the class is an error. Another set
// takes test as it is.
func OfSetClass(set *conformal.Set, test *bundle.Bundle, names []string) (*bundle.Bundle, string, string, error) {
	k := set.Calibration.Class
	if k == nil {
		return test, "", "", nil
	}
	if test.Labels == nil {
		return test, "", fmt.Sprintf("the set is for %v's anchors alone (ccs calibrate -class, label= in Python), and the test bundle has no labels to pick them by: its coverage below is over every class's anchors, which the guarantee is not about (bundle the test split with its labels, or -query-labels)", k), nil
	}
	label, by := k.Label, "label"
	if k.Name != "" && names != nil {
		i := slices.Index(names, k.Name)
		if i < 0 {
			return nil, "", "", fmt.Errorf("the set is for %v's anchors alone (ccs calibrate -class, label= in Python), and the test bundle has none of that class (its classes: %s)", k, strings.Join(names, ", "))
		}
		label, by = int64(i), "name"
	}
	var rows []int
	for i, l := range test.Labels {
		if l == label {
			rows = append(rows, i)
		}
	}
	if len(rows) == 0 {
		return nil, "", "", fmt.Errorf("the set is for %v's anchors alone (ccs calibrate -class, label= in Python), and the test bundle has no anchor of label %d", k, label)
	}
	return test.Subset(rows), fmt.Sprintf("the set is for %v's anchors alone (ccs calibrate -class, label= in Python): judged on the test bundle's %d anchors of that class (of %d, matched by %s)", k, len(rows), test.N, by), "", nil
}
