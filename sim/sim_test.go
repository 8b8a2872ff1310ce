package sim

import (
	"math"
	"slices"
	"testing"
)

func TestMixedShapeAndDeterminism(t *testing.T) {
	t.Parallel()
	d := Mixed(3, 400)
	if d.N != 2000 || len(d.Points) != 2000*Dim || len(d.Labels) != 2000 {
		t.Fatalf("N=%d, %d points, %d labels", d.N, len(d.Points), len(d.Labels))
	}
	count := map[int64]int{}
	for _, l := range d.Labels {
		count[l]++
	}
	for c := range int64(Classes) {
		if count[c] != 400 {
			t.Errorf("class %d has %d points, want 400", c, count[c])
		}
	}
	if !slices.Equal(d.Points, Mixed(3, 400).Points) {
		t.Error("same seed, different points")
	}
	if slices.Equal(d.Points, Mixed(4, 400).Points) {
		t.Error("different seeds, same points")
	}
	if slices.Equal(d.Labels[:50], slices.Sorted(slices.Values(d.Labels[:50]))) {
		t.Error("points are not shuffled")
	}
}

// TestMixedGeometry checks the generator's constants: the Gaussian classes
// are centred on c_i; a banana's mean lies 1.5·(2/π) ≈ 0.955 from c_i (the
// mean of r·(cosθ, sinθ) over θ ~ U(0,π)), and its points lie about 1.5
// from c_i.
func TestMixedGeometry(t *testing.T) {
	t.Parallel()
	d := Mixed(0, PerClass)
	for c := range Classes {
		a := 2 * math.Pi * float64(c) / Classes
		centre := [Dim]float64{4 * math.Cos(a), 4 * math.Sin(a), 1.2 * math.Sin(4*math.Pi*float64(c)/5)}
		var mean [Dim]float64
		var radius float64
		n := 0
		for i, l := range d.Labels {
			if l != int64(c) {
				continue
			}
			var r2 float64
			for j := range Dim {
				v := float64(d.Points[i*Dim+j])
				mean[j] += v
				r2 += (v - centre[j]) * (v - centre[j])
			}
			radius += math.Sqrt(r2)
			n++
		}
		var off float64
		for j := range Dim {
			mean[j] /= float64(n)
			off += (mean[j] - centre[j]) * (mean[j] - centre[j])
		}
		off = math.Sqrt(off)
		radius /= float64(n)
		if c < 2 {
			if off > 0.2 {
				t.Errorf("Gaussian class %d: mean %.3f away from its centre", c, off)
			}
			continue
		}
		if math.Abs(off-1.5*2/math.Pi) > 0.05 {
			t.Errorf("banana class %d: mean %.3f from its centre, want ≈ 0.955", c, off)
		}
		if math.Abs(radius-1.6) > 0.15 {
			t.Errorf("banana class %d: mean distance to centre %.3f, want ≈ 1.5–1.6", c, radius)
		}
	}
}

func TestSplitAndPairs(t *testing.T) {
	t.Parallel()
	d := Mixed(0, PerClass)
	s := d.Split(7)
	if len(s.Fit) != 12500 || len(s.Val) != 2500 || len(s.Cal) != 5000 || len(s.Test) != 5000 {
		t.Fatalf("split sizes %d/%d/%d/%d, want 12500/2500/5000/5000", len(s.Fit), len(s.Val), len(s.Cal), len(s.Test))
	}
	all := slices.Concat(s.Fit, s.Val, s.Cal, s.Test)
	slices.Sort(all)
	for i, v := range all {
		if v != i {
			t.Fatal("splits are not a disjoint cover of the points")
		}
	}
	val, err := d.Pairs(s.Val, 500, 7, "val")
	if err != nil {
		t.Fatal(err)
	}
	if val.K >= 500 || val.K < 400 {
		t.Errorf("validation k = %d: want it capped below 500 by the smallest class", val.K)
	}
	cal, err := d.Pairs(s.Cal, 500, 7, "cal")
	if err != nil || cal.K != 500 || cal.N != 5000 {
		t.Fatalf("cal pairs: K=%d N=%d err=%v", cal.K, cal.N, err)
	}
	cal2, _ := d.Pairs(s.Cal, 500, 7, "cal")
	if !slices.Equal(cal.Positives, cal2.Positives) || !slices.Equal(cal.NegativeIndex, cal2.NegativeIndex) {
		t.Error("pairs are not deterministic")
	}
}
