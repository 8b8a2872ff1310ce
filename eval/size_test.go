package eval

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/retrieve"
)

// TestSetSizes: the sizes SetSizes summarizes are the counts of the
// collection's items each set holds by the set's own membership test, one
// anchor at a time, for a ball, an ellipsoid, a generalized ball and a
// single-norm, over the first n anchors.
func TestSetSizes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 50))
	const d, items = 3, 20000 // past the collection's compact copies' minimum
	cal, test := gaussBundle(rng, 300, 2, d), gaussBundle(rng, 60, 2, d)
	rows := make([]float32, items*d)
	for i := range rows {
		rows[i] = float32(1.5 * rng.NormFloat64())
	}
	c, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	el, _ := geometry.NewEllipsoid(d, []float64{2, 0.3, 0, 0.3, 1, 0.2, 0, 0.2, 0.5})
	gb, _ := geometry.NewGenBall([]float64{0.5, 2, 1}, []float64{1.2, 3, 2})
	sn, _ := geometry.NewNorm(d, []float64{1, 0.2, 0, -0.3, 0.8, 0.1, 0, 0.4, 1.3}, 1.5)
	// From n = retrieve.BatchTransformMin the ellipsoid's and the
	// single-norm's searches run on the transformed collection.
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, el, gb, sn} {
		set, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 25, 1000} {
			got, err := SetSizes(context.Background(), set, test, c, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			m := n
			if n <= 0 || n > test.N {
				m = test.N
			}
			sizes := make([]int, m)
			for i := range m {
				in, err := set.Members(nil, test.Anchors[i*d:(i+1)*d], rows, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, ok := range in {
					if ok {
						sizes[i]++
					}
				}
			}
			if want := summarizeSizes(sizes, items); !reflect.DeepEqual(got, want) {
				t.Errorf("%v, n=%d: %+v; counted one by one %+v", g.Kind(), n, got, want)
			}
			if got.Anchors != m || got.Mean == 0 {
				t.Errorf("%v, n=%d: %d anchors, mean %v", g.Kind(), n, got.Anchors, got.Mean)
			}
		}
	}
	// A class-conditional set has no one threshold for a retrieval.
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i % 2)
	}
	class, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.2, conformal.Options{Mode: conformal.Class})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetSizes(context.Background(), class, test, c, 5, nil); !errors.Is(err, conformal.ErrNoLabel) {
		t.Errorf("a class-conditional set: %v", err)
	}
	// A cancelled context stops it.
	set, _ := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SetSizes(ctx, set, test, c, 5, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v", err)
	}
	// Progress, one call at a time (the race detector's phase checks it),
	// reaches its total.
	var most, calls, total int
	if _, err := SetSizes(context.Background(), set, test, c, 3, func(done, all int) { most, total, calls = max(most, done), all, calls+1 }); err != nil || most != total || calls != total || total == 0 {
		t.Errorf("progress reached %d of %d in %d calls, %v", most, total, calls, err)
	}
}

// TestSummarizeSizes: nearest-rank percentiles, the mean, the largest and
// the empty sets, by hand.
func TestSummarizeSizes(t *testing.T) {
	t.Parallel()
	got := summarizeSizes([]int{7, 0, 3, 9, 1, 0, 4, 5, 2, 8}, 100)
	want := Sizes{Items: 100, Anchors: 10, Mean: 3.9, Median: 3, P10: 0, P90: 8, Max: 9, Empty: 2}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
	if got := summarizeSizes([]int{4}, 10); got.Median != 4 || got.P10 != 4 || got.P90 != 4 || got.Mean != 4 {
		t.Errorf("one anchor: %+v", got)
	}
	if _, err := SetSizes(context.Background(), nil, gaussBundle(rand.New(rand.NewPCG(1, 1)), 0, 1, 2), nil, 3, nil); err == nil || !strings.Contains(err.Error(), "no anchors") {
		t.Errorf("an empty test bundle: %v", err)
	}
}

// TestSizesByClass: each class's row summarizes its own anchors' sizes,
// in label order, with anchors beyond the sizes unmeasured.
func TestSizesByClass(t *testing.T) {
	t.Parallel()
	sizes := []int{5, 1, 0, 9, 3, 7}
	labels := []int64{2, 0, 2, 0, 2, 0, 1} // the last anchor not measured
	got, err := SizesByClass(sizes, labels, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []ClassSizes{
		{Label: 0, Sizes: Sizes{Items: 10, Anchors: 3, Mean: 17.0 / 3, Median: 7, P10: 1, P90: 9, Max: 9}},
		{Label: 2, Sizes: Sizes{Items: 10, Anchors: 3, Mean: 8.0 / 3, Median: 3, P10: 0, P90: 5, Max: 5, Empty: 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if _, err := SizesByClass(sizes, labels[:3], 10); err == nil || !strings.Contains(err.Error(), "3 labels for 6 anchors") {
		t.Errorf("too few labels: %v", err)
	}
}
