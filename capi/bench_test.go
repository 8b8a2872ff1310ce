package main

import (
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

var sinkN int

// BenchmarkMembers1e6D128 times membership of 10⁶ points at d = 128 around
// one anchor, for the ℓ2 ball and the generalized ball (p = 1.5, as
// conformal's BenchmarkMembershipGenBallD128): "Set.Members" is the
// library's call on the anchor and the points; "contains" the path the
// Python package takes (ccs_set_contains: the differences made a
// block at a time on all cores), and "contains-float64" the same on
// float64 points (NumPy's default dtype, narrowed a block at a time). python/bench/bench.py times the same
// from Python; docs/python.md compares them.
func BenchmarkMembers1e6D128(b *testing.B) {
	const m, d = 1_000_000, 128
	anchor, points := normals(4, d, 1), normals(4, m*d, 1)
	info := conformal.Info{Mode: conformal.OnePerAnchor}
	for _, s := range []struct {
		name string
		set  *conformal.Set
	}{
		{"ball", &conformal.Set{Geometry: geometry.Ball{D: d}, Threshold: 16, Calibration: info}},
		{"genball", &conformal.Set{Geometry: geometry.UnitGenBall(d, 1.5), Threshold: 150, Calibration: info}},
	} {
		in := make([]bool, m)
		count := func() {
			for _, v := range in {
				if v {
					sinkN++
				}
			}
		}
		b.Run(s.name+"/Set.Members", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.set.Members(in, anchor, points, nil); err != nil {
					b.Fatal(err)
				}
			}
			count()
		})
		b.Run(s.name+"/contains", func(b *testing.B) {
			for b.Loop() {
				qr, err := newQuery(s.set, raw("anchor", anchor, d), raw("points", points, m, d))
				if err != nil {
					b.Fatal(err)
				}
				if err := contains(s.set, qr, nil, in); err != nil {
					b.Fatal(err)
				}
			}
			count()
		})
		b.Run(s.name+"/contains-float64", func(b *testing.B) {
			p64 := make([]float64, len(points))
			for i, v := range points {
				p64[i] = float64(v)
			}
			pts := rawArray{Name: "points", Data: bytesOf(p64), Dtype: "<f8", Shape: []int{m, d}}
			for b.Loop() {
				qr, err := newQuery(s.set, raw("anchor", anchor, d), pts)
				if err != nil {
					b.Fatal(err)
				}
				if err := contains(s.set, qr, nil, in); err != nil {
					b.Fatal(err)
				}
			}
			count()
		})
	}
}
