package eval

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
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
	rows, c := gaussItems(t, rng, items, d, 1.5)
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
	// A class-conditional set on a test bundle without labels has no
	// threshold for an anchor (TestClassSetSizes counts with labels).
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

// hiddenStore is a store that is not a *retrieve.Collection: its sets'
// sizes are counted a search an anchor.
type hiddenStore struct{ retrieve.Store }

// TestClassSetSizes: a class-conditional set's sizes are, anchor by
// anchor, the collection's items inside the set at the threshold of the
// anchor's class (its membership test with the anchor's label), in one
// pass of an in-memory collection (transformed for an ellipsoid from
// retrieve.BatchTransformMin anchors) and a search an anchor of another
// store; the classes' thresholds differ, one +Inf (every item). A test
// anchor of a class the set has none for is named.
func TestClassSetSizes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 70))
	const d, items = 3, 5000
	cal, test := gaussBundle(rng, 300, 2, d), gaussBundle(rng, 40, 2, d)
	cal.Labels, test.Labels = make([]int64, cal.N), make([]int64, test.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i % 3)
	}
	for i := range test.Labels {
		test.Labels[i] = int64(i*7%3) + 4 // classes 4, 5, 6: not in row order
	}
	for i := range cal.Labels {
		cal.Labels[i] += 4
	}
	rows, c := gaussItems(t, rng, items, d, 1.5)
	el, _ := geometry.NewEllipsoid(d, []float64{2, 0.3, 0, 0.3, 1, 0.2, 0, 0.2, 0.5})
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, el} {
		set, err := conformal.Calibrate(g, cal, 0.2, conformal.Options{Mode: conformal.Class})
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Classes) != 3 {
			t.Fatalf("%v: %d classes", g.Kind(), len(set.Classes))
		}
		// Thresholds far apart, so that a set at another class's would
		// count otherwise; the set over all classes' as well.
		set.Classes[0].Threshold *= 0.5
		set.Classes[1].Threshold *= 2
		set.Classes[2].Threshold = math.Inf(1)
		for _, n := range []int{1, 5, 40} {
			want := make([]int, n)
			for i := range n {
				in, err := set.Members(nil, test.Anchors[i*d:(i+1)*d], rows, &test.Labels[i])
				if err != nil {
					t.Fatal(err)
				}
				for _, ok := range in {
					if ok {
						want[i]++
					}
				}
			}
			for _, store := range []retrieve.Store{c, hiddenStore{c}} {
				got, all, err := AnchorSizes(context.Background(), set, test, store, n, nil)
				if err != nil {
					t.Fatalf("%v, n=%d, %T: %v", g.Kind(), n, store, err)
				}
				if all != items || !slices.Equal(got, want) {
					t.Errorf("%v, n=%d, %T: %v of %d items; counted one by one %v", g.Kind(), n, store, got, all, want)
				}
			}
			if n < 40 {
				continue
			}
			if inf := want[slices.Index(test.Labels, 6)]; inf != items {
				t.Errorf("%v: an anchor of the +Inf class holds %d of %d items", g.Kind(), inf, items)
			}
		}
		odd := *test
		odd.Labels = slices.Clone(test.Labels)
		odd.Labels[2] = 9
		if _, _, err := AnchorSizes(context.Background(), set, &odd, c, 5, nil); err == nil || !strings.Contains(err.Error(), "test anchor 2") || !strings.Contains(err.Error(), "class 9") {
			t.Errorf("%v: a class the set has no threshold for: %v", g.Kind(), err)
		}
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

// gaussItems is a collection of items rows of dimension d, each
// coordinate a normal draw times scale, and its rows.
func gaussItems(t testing.TB, rng *rand.Rand, items, d int, scale float64) ([]float32, *retrieve.Collection) {
	t.Helper()
	rows := make([]float32, items*d)
	for i := range rows {
		rows[i] = float32(scale * rng.NormFloat64())
	}
	c, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rows, c
}
