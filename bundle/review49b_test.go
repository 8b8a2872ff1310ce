package bundle

import (
	"strings"
	"testing"
)

// TestReview49bNegativeBlocksRefused: ccs bundle refuses a negative block id (it
// marks a missing value: "as one block, such rows would be split together
// as one recording"), but a bundle file's (or ccs.Bundle(blocks=)'s)
// "blocks" array of negative ids is read as it stands: every -1 row one
// block, which the resplits then halve row by row (the straddling block
// is all of them), with "blocks": 1 in the JSON and no warning. Expected:
// refused, naming the array, as ccs bundle refuses the ids.
func TestReview49bNegativeBlocksRefused(t *testing.T) {
	b := &Bundle{N: 4, D: 1, K: 1, Anchors: []float32{0, 1, 2, 3}, Positives: []float32{0, 1, 2, 3}}
	arrays := b.Arrays()
	arrays["blocks"] = Int64([]int64{-1, -1, 3, -1}, 4)
	got, err := FromArrays(arrays)
	if err == nil || !strings.Contains(err.Error(), `"blocks"`) {
		t.Errorf("negative block ids: read as blocks %v (err %v); want them refused naming \"blocks\"", got.Blocks, err)
	}
}
