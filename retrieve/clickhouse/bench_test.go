package clickhouse

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/chtest"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/table"
)

var (
	scaleRows = flag.Int("scale-rows", 1_000_000, "rows of BenchmarkScale's collection (d = 128)")
	scaleHits = flag.Int("scale-hits", 1000, "hits of BenchmarkScale's set: many make the rows read back, not the filter, the cost")
)

// BenchmarkScale: a collection of -scale-rows × 128 clustered embeddings
// and a generalized ball whose threshold leaves -scale-hits hits: the query on
// one table, on two shards (loopback) and by retrieve.Search in memory,
// side by side; the load throughput from .npz-sized memory and from a
// Parquet file is logged.
//
//	go test -run NONE -bench Scale -benchtime 10x ./retrieve/clickhouse
func BenchmarkScale(b *testing.B) {
	const d = 128
	n, hits := *scaleRows, *scaleHits
	rng := rand.New(rand.NewPCG(8, 1))
	centres := make([]float64, 100*d)
	for i := range centres {
		centres[i] = rng.NormFloat64()
	}
	rows := make([]float32, n*d)
	for i := range n {
		c := rng.IntN(100)
		for j := range d {
			rows[i*d+j] = float32(centres[c*d+j] + 0.3*rng.NormFloat64())
		}
	}
	c, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		b.Fatal(err)
	}
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j] = math.Exp(0.3 * rng.NormFloat64())
		p[j] = 1 + 2*rng.Float64()
	}
	g, err := geometry.NewGenBall(m, p)
	if err != nil {
		b.Fatal(err)
	}
	anchor := slices.Clone(rows[:d])
	sc := scores(g, c, anchor)
	slices.Sort(sc)
	set := calibrated(g, sc[hits-1])

	srv := chtest.Start(b, 2)
	ctx := context.Background()
	one := Target{Addr: srv.Addrs[0], Database: "ccs", Table: "one", Timeout: 5 * time.Minute}
	two, pq := one, one
	two.Table, pq.Table = "two", "pq"
	// Load from each file format: read the file, then write the table.
	dir := b.TempDir()
	npz, pqt := filepath.Join(dir, "c.npz"), filepath.Join(dir, "c.parquet")
	if err := bundle.WriteNPZ(npz, map[string]bundle.Array{"embeddings": bundle.Float32(rows, n, d)}); err != nil {
		b.Fatal(err)
	}
	if err := table.WriteParquet(pqt, c); err != nil {
		b.Fatal(err)
	}
	for _, l := range []struct {
		what, file string
		t          Target
		opt        LoadOptions
	}{
		{"one table from .npz", npz, one, LoadOptions{}},
		{"two shards from .npz", npz, two, LoadOptions{Cluster: chtest.Cluster}},
		{"one table from Parquet", pqt, pq, LoadOptions{}},
	} {
		start := time.Now()
		fc, err := retrieve.ReadCollection(l.file)
		if err != nil {
			b.Fatal(err)
		}
		read := time.Since(start)
		if err := Load(ctx, l.t, fc, l.opt); err != nil {
			b.Fatal(err)
		}
		el := time.Since(start)
		b.Logf("load, %s: %d rows, read %v, total %v: %.0f rows/s", l.what, n, read.Round(time.Millisecond), el.Round(time.Millisecond), float64(n)/el.Seconds())
	}

	s1, err := OpenTarget(ctx, one)
	if err != nil {
		b.Fatal(err)
	}
	defer s1.Close()
	s2, err := OpenTarget(ctx, two)
	if err != nil {
		b.Fatal(err)
	}
	defer s2.Close()
	for _, st := range []struct {
		name string
		s    retrieve.Store
	}{{"memory", c}, {"one-table", s1}, {"two-shards", s2}} {
		b.Run(st.name, func(b *testing.B) {
			for b.Loop() {
				got, total, err := st.s.Search(ctx, set, anchor, 0)
				if err != nil {
					b.Fatal(err)
				}
				if total != len(got) || total < hits {
					b.Fatalf("%d hits of %d", len(got), total)
				}
			}
		})
	}
}
