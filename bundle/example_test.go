package bundle_test

import (
	"fmt"

	"github.com/ccsets/ccs/bundle"
)

// String labels from a pandas column whose missing values became "nan"
// (astype(str)): MissingStrings takes them out of the class names and
// labels their rows −1, which Make then refuses, drops or keeps as
// MakeConfig.MissingLabels says.
func ExampleMissingStrings() {
	codes, names := bundle.LabelCodes([]string{"coat", "nan", "boot", "coat", ""})
	codes, names, missing := bundle.MissingStrings(codes, names)
	fmt.Println(codes, names, missing)
	// Output: [1 -2 0 1 -1] [boot coat] map[-2:nan -1:]
}
