package retrieve

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestAnchorDimError: an anchor of another dimension than the set's, a
// shape known, matches conformal.ErrDimension and reads as a
// *conformal.DimError of its shape and the set's dimension, as docs/go.md
// says (trial 31, finding 5), in Search and CheckQuery alike.
func TestAnchorDimError(t *testing.T) {
	t.Parallel()
	s := &conformal.Set{Geometry: geometry.Ball{D: 2}, Alpha: 0.1, Threshold: 0.5,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
	c, err := NewCollection([]float32{0.6, 0.8, 1, 0}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range [][]float32{{1}, {1, 0, 0}} {
		for _, e := range []struct {
			name string
			err  error
		}{
			{"Search", third(Search(context.Background(), s, a, c, 0))},
			{"CheckQuery", CheckQuery(s, a, 2)},
		} {
			var de *conformal.DimError
			if !errors.Is(e.err, conformal.ErrDimension) || !errors.As(e.err, &de) || !slices.Equal(de.Shape, []int{len(a)}) || de.Dim != 2 {
				t.Errorf("%s, an anchor of %d values: %v (%+v), want ErrDimension and a *DimError of shape (%d), dimension 2", e.name, len(a), e.err, de, len(a))
			}
		}
	}
}
