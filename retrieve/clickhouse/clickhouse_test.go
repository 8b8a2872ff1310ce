package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/chtest"
	"github.com/ccsets/ccs/internal/race"
	"github.com/ccsets/ccs/retrieve"
)

// testData draws n clustered rows of dimension d with distinct, shuffled
// ids, and copies some rows onto others (ties).
func testData(t *testing.T, rng *rand.Rand, n, d int) *retrieve.Collection {
	t.Helper()
	centres := make([]float64, 20*d)
	for i := range centres {
		centres[i] = 2 * rng.NormFloat64()
	}
	rows := make([]float32, n*d)
	for i := range n {
		c := rng.IntN(20)
		for j := range d {
			rows[i*d+j] = float32(centres[c*d+j] + 0.5*rng.NormFloat64())
		}
	}
	for range n / 50 { // exact duplicates under other ids
		a, b := rng.IntN(n), rng.IntN(n)
		copy(rows[b*d:(b+1)*d], rows[a*d:(a+1)*d])
	}
	ids := make([]int64, n)
	for i, p := range rng.Perm(n) {
		ids[i] = int64(p)*3 + 7
	}
	c, err := retrieve.NewCollection(rows, d, ids)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testGeometries returns one geometry of every push-down: the ℓ2 ball and
// the generalized ball (the engine sums the terms), the ellipsoid, the
// single-norm at p = 2, 1.5 and 0.7, and a square head over a generalized
// ball (boxes).
func testGeometries(t *testing.T, rng *rand.Rand, d int) map[string]geometry.Geometry {
	t.Helper()
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j] = math.Exp(0.5 * rng.NormFloat64())
		p[j] = 0.3 + 3.7*rng.Float64()
	}
	gb, err := geometry.NewGenBall(m, p)
	if err != nil {
		t.Fatal(err)
	}
	a := make([]float64, d*d) // Σ = A·Aᵀ + I
	for i := range a {
		a[i] = 0.3 * rng.NormFloat64()
	}
	sigma := make([]float64, d*d)
	for i := range d {
		for j := range d {
			for k := range d {
				sigma[i*d+j] += a[i*d+k] * a[j*d+k]
			}
		}
		sigma[i*d+i]++
	}
	el, err := geometry.NewEllipsoid(d, sigma)
	if err != nil {
		t.Fatal(err)
	}
	mm := make([]float64, d*d)
	for i := range mm {
		mm[i] = 0.2 * rng.NormFloat64()
	}
	for i := range d {
		mm[i*d+i] += 1
	}
	g := map[string]geometry.Geometry{"ball": geometry.Ball{D: d}, "genball": gb, "ellipsoid": el}
	for _, pn := range []float64{2, 1.5, 0.7} {
		nm, err := geometry.NewNorm(d, mm, pn)
		if err != nil {
			t.Fatal(err)
		}
		g[fmt.Sprintf("norm p=%v", pn)] = nm
	}
	h := head.Identity(d, d)
	for i := range h.W {
		h.W[i] += 0.1 * rng.NormFloat64()
	}
	pr, err := head.NewProjected(h, gb)
	if err != nil {
		t.Fatal(err)
	}
	g["head genball"] = pr
	return g
}

func calibrated(g geometry.Geometry, q float64) *conformal.Set {
	return &conformal.Set{Geometry: g, Threshold: q, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 19, Rank: 18}}
}

// scores is every item's exact ccs score around anchor.
func scores(g geometry.Geometry, c *retrieve.Collection, anchor []float32) []float64 {
	d := c.D
	diffs := make([]float32, len(c.Rows))
	for i, v := range c.Rows {
		diffs[i] = anchor[i%d] - v
	}
	return g.Scores(nil, diffs)
}

// loaded starts two servers and loads c as one table on the first
// (ccs.one) and over both as shards (ccs.two).
func loaded(t *testing.T, c *retrieve.Collection) (*chtest.Servers, *Store, *Store) {
	t.Helper()
	srv := chtest.Start(t, 2)
	ctx := context.Background()
	one := Target{Addr: srv.Addrs[0], Database: "ccs", Table: "one", Timeout: 20 * time.Second}
	two := one
	two.Table = "two"
	if err := Load(ctx, one, c, LoadOptions{BatchRows: 7000}); err != nil {
		t.Fatal(err)
	}
	if err := Load(ctx, two, c, LoadOptions{Cluster: chtest.Cluster}); err != nil {
		t.Fatal(err)
	}
	s1, err := OpenTarget(ctx, one)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := OpenTarget(ctx, two)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s1.Close(); s2.Close() })
	return srv, s1, s2
}

// TestMatchesSearch: on one table and on two shards, for every geometry,
// random anchors and thresholds — among them an item's exact score, so
// that the item lies on the boundary, and scores shared by duplicated
// rows — the ClickHouse path returns exactly the ids, scores, order, total
// and truncation of retrieve.Search over the same rows.
func TestMatchesSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	const n, d = 20000, 16
	c := testData(t, rng, n, d)
	srv, one, two := loaded(t, c)
	ctx := context.Background()
	oneHex, err := OpenTarget(ctx, one.t)
	if err != nil {
		t.Fatal(err)
	}
	defer oneHex.Close()
	oneHex.hexOnly = true
	for _, s := range []*Store{one, two} {
		if got, err := s.Len(ctx); err != nil || got != n {
			t.Fatalf("%s: Len = %d, %v; want %d", s.t, got, err, n)
		}
	}
	queries := 0
	geoms := testGeometries(t, rng, d)
	for _, name := range slices.Sorted(maps.Keys(geoms)) {
		g := geoms[name]
		anchors := 4
		switch {
		case race.Enabled:
			// One anchor's queries (every threshold, +Inf too) for the Go
			// side's concurrency; the rest are numbers and SQL, checked in
			// the suite's other phases (100 s under the race detector, most
			// of it clickhouse-go scanning arrays by reflection).
			anchors = 1
		case testing.Short():
			anchors = 2
		}
		for a := range anchors {
			anchor := slices.Clone(c.Rows[rng.IntN(n)*d:][:d])
			if a%2 == 1 {
				for j := range anchor {
					anchor[j] += float32(0.3 * rng.NormFloat64())
				}
			}
			sc := scores(g, c, anchor)
			sorted := slices.Sorted(slices.Values(sc))
			// Thresholds: an item's exact score (the 1st, 50th, 400th
			// nearest), the float just below one, and +Inf.
			qs := []float64{sorted[0], sorted[49], sorted[399], math.Nextafter(sorted[49], 0)}
			if a == 0 {
				qs = append(qs, math.Inf(1))
			}
			for _, q := range qs {
				set := calibrated(g, q)
				for _, limit := range []int{0, 25} {
					want, wantTotal, err := retrieve.Search(ctx, set, anchor, c, limit)
					if err != nil {
						t.Fatal(err)
					}
					for _, s := range []*Store{one, two, oneHex} {
						got, total, err := s.Search(ctx, set, anchor, limit)
						if err != nil {
							t.Fatalf("%s, %s, q=%v: %v", name, s.t, q, err)
						}
						queries++
						if total != wantTotal || len(got) != len(want) {
							t.Fatalf("%s, %s, q=%v, limit %d: %d hits of %d, want %d of %d", name, s.t, q, limit, len(got), total, len(want), wantTotal)
						}
						for i := range want {
							if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
								t.Fatalf("%s, %s, q=%v: hit %d is %+v, want %+v", name, s.t, q, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d queries, 0 differences", queries)
	if n := one.fallbacks.Load() + two.fallbacks.Load(); n > 0 {
		t.Errorf("the engine read the decimal constants of %d searches differently", n)
	}
	testStringIDs(t, srv, rng)
}

// testStringIDs: a collection with string ids loads with them, as one
// table and over two shards; appended, its rows take ids after the
// table's; the hits carry the keys, exactly as retrieve.Search's on the
// same items in memory; a table does not mix rows with and without keys.
func testStringIDs(t *testing.T, srv *chtest.Servers, rng *rand.Rand) {
	ctx := context.Background()
	const d = 8
	keyed := func(n int, prefix string) *retrieve.Collection {
		c := testData(t, rng, n, d)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("%s-%d", prefix, rng.Uint64())
		}
		if err := c.SetKeys(keys); err != nil {
			t.Fatal(err)
		}
		return c
	}
	first, second := keyed(2000, "doc"), keyed(300, "extra")
	all, err := retrieve.NewCollection(append(slices.Clone(first.Rows), second.Rows...), d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := all.SetKeys(append(slices.Clone(first.Keys), second.Keys...)); err != nil {
		t.Fatal(err)
	}
	plain := testData(t, rng, 10, d)
	g := testGeometries(t, rng, d)
	for _, cluster := range []string{"", chtest.Cluster} {
		tg := Target{Addr: srv.Addrs[0], Database: "ccs", Table: "keyed" + map[string]string{"": "_one", chtest.Cluster: "_two"}[cluster], Timeout: 20 * time.Second}
		if err := Load(ctx, tg, first, LoadOptions{Cluster: cluster}); err != nil {
			t.Fatal(err)
		}
		if err := Load(ctx, tg, second, LoadOptions{Cluster: cluster, Append: true}); err != nil {
			t.Fatal(err)
		}
		if err := Load(ctx, tg, plain, LoadOptions{Cluster: cluster, Append: true}); err == nil || !strings.Contains(err.Error(), "the table's items have string ids (a key column) and the file's none") {
			t.Errorf("%s: appending integer ids to string ids: %v", tg, err)
		}
		// Keys the table holds already, on whichever shard: refused,
		// the table unchanged (the hits below are of first and second).
		again := keyed(5, "new")
		again.Keys[3] = first.Keys[1234]
		if err := Load(ctx, tg, again, LoadOptions{Cluster: cluster, Append: true}); err == nil ||
			!strings.Contains(err.Error(), fmt.Sprintf("the table holds 1 of the file's ids already (the first: %q, the file's row 3)", first.Keys[1234])) {
			t.Errorf("%s: appending a key the table holds: %v", tg, err)
		}
		if err := Load(ctx, tg, second, LoadOptions{Cluster: cluster, Append: true}); err == nil || !strings.Contains(err.Error(), "the table holds 300 of the file's ids already") {
			t.Errorf("%s: appending a file twice: %v", tg, err)
		}
		s, err := OpenTarget(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, name := range []string{"ball", "genball", "norm p=1.5"} {
			anchor := slices.Clone(all.Rows[rng.IntN(all.N)*d:][:d])
			sorted := slices.Sorted(slices.Values(scores(g[name], all, anchor)))
			set := calibrated(g[name], sorted[60])
			want, wantTotal, err := retrieve.Search(ctx, set, anchor, all, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, total, err := s.Search(ctx, set, anchor, 0)
			if err != nil {
				t.Fatal(err)
			}
			if total != wantTotal || len(got) != len(want) || total < 61 {
				t.Fatalf("%s, %s: %d hits of %d, want %d of %d", tg, name, len(got), total, len(want), wantTotal)
			}
			for i := range want {
				if got[i].ID != want[i].ID || got[i].Key != want[i].Key || got[i].Score != want[i].Score {
					t.Fatalf("%s, %s: hit %d is %+v, want %+v", tg, name, i, got[i], want[i])
				}
			}
		}
	}
	tg := Target{Addr: srv.Addrs[0], Database: "ccs", Table: "plain", Timeout: 20 * time.Second}
	if err := Load(ctx, tg, plain, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Load(ctx, tg, second, LoadOptions{Append: true}); err == nil || !strings.Contains(err.Error(), "the file's items have string ids and the table's none") {
		t.Errorf("appending string ids to integer ids: %v", err)
	}
	// Integer ids: the same ids again are refused (a second .npy's row
	// numbers), other ids appended.
	if err := Load(ctx, tg, plain, LoadOptions{Append: true}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the table holds %d of the file's ids already (the first: ", plain.N)) {
		t.Errorf("appending integer ids the table holds: %v", err)
	}
	more := testData(t, rng, 4, d)
	for i := range more.IDs {
		more.IDs[i] = int64(1000 + i)
	}
	if err := Load(ctx, tg, more, LoadOptions{Append: true}); err != nil {
		t.Errorf("appending other ids: %v", err)
	}
}

// TestFaults: what goes wrong is an error, never a shorter list.
func TestFaults(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, d = 3000, 8
	c := testData(t, rng, n, d)
	srv, one, two := loaded(t, c)
	ctx := context.Background()
	set := calibrated(geometry.Ball{D: d}, 3)
	anchor := c.Rows[:d]

	t.Run("projecting head", func(t *testing.T) {
		h := head.Identity(d, d/2)
		pr, err := head.NewProjected(h, geometry.Ball{D: d / 2})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = one.Search(ctx, calibrated(pr, 1), anchor, 0)
		if err == nil || !strings.Contains(err.Error(), "null space") {
			t.Fatalf("got %v, want the projecting head refused", err)
		}
	})
	t.Run("missing table", func(t *testing.T) {
		_, err := Open(ctx, "clickhouse://"+srv.Addrs[0]+"/ccs.nothing")
		if err == nil || !strings.Contains(err.Error(), "no such table") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, _, err := one.Search(cctx, set, anchor, 0)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})
	t.Run("cancelled while running", func(t *testing.T) {
		// A filter that sleeps 1 ms a row over blocks of 100 rows (3 s for
		// the table; the engine checks for a cancel between blocks):
		// cancelled after 200 ms, the search returns at once and the server
		// stops the query (it leaves system.processes well before the 3 s).
		cctx, cancel := context.WithCancel(ch.Context(ctx, ch.WithSettings(ch.Settings{"max_block_size": 100})))
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		_, err := one.candidates(cctx, filter{where: "sleepEachRow(0.001) = 0"})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("the cancelled search returned after %v", el)
		}
		conn, err := ch.Open(&ch.Options{Addr: []string{srv.Addrs[0]}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for {
			var n uint64
			if err := conn.QueryRow(ctx, "SELECT count() FROM system.processes WHERE query LIKE '%sleepEachRow%' AND query NOT LIKE '%system.processes%'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Logf("the server dropped the query %v after the search began", time.Since(start).Round(time.Millisecond))
				break
			}
			if time.Since(start) > 2500*time.Millisecond {
				t.Fatal("the server still runs the cancelled query")
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	exec := func(t *testing.T, q string) {
		t.Helper()
		conn, err := ch.Open(&ch.Options{Addr: []string{srv.Addrs[0]}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// withRow copies ccs.one into ccs.NAME with one more row, and opens it.
	withRow := func(t *testing.T, name, emb string) *Store {
		t.Helper()
		exec(t, "CREATE TABLE ccs."+name+" AS ccs.one")
		exec(t, "INSERT INTO ccs."+name+" (id, emb) SELECT id, emb FROM ccs.one")
		exec(t, "INSERT INTO ccs."+name+" (id, emb) SELECT toUInt64(999999), CAST("+emb+" AS Array(Float32))")
		s, err := Open(ctx, "clickhouse://"+srv.Addrs[0]+"/ccs."+name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("non-finite row", func(t *testing.T) {
		// Far from the anchor in every coordinate but one, which is NaN.
		s := withRow(t, "nan", "[1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, nan]")
		_, _, err := s.Search(ctx, set, anchor, 0)
		if err == nil || !strings.Contains(err.Error(), "row id 999999, coordinate 7 is NaN") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("other dimension", func(t *testing.T) {
		s := withRow(t, "mixed", "[1, 2, 3]")
		if _, _, err := s.Search(ctx, set, anchor, 0); err == nil {
			t.Fatal("a row of dimension 3 in a table of 8 gave no error")
		}
		// A whole-space set filters nothing in SQL: the rescoring
		// refuses the row (its coordinates past 3 read as 0 otherwise).
		_, _, err := s.Search(ctx, calibrated(geometry.Ball{D: d}, math.Inf(1)), anchor, 0)
		if err == nil || !strings.Contains(err.Error(), "row id 999999 has dimension 3, the table 8") {
			t.Fatalf("a whole-space set over a row of dimension 3: got %v", err)
		}
		err = Load(ctx, Target{Addr: srv.Addrs[0], Database: "ccs", Table: "one", Timeout: 5 * time.Second}, &retrieve.Collection{N: 1, D: 3, IDs: []int64{1}, Rows: []float32{1, 2, 3}}, LoadOptions{Append: true})
		if err == nil || !strings.Contains(err.Error(), "dimension 8, the file's 3") {
			t.Fatalf("appending rows of dimension 3: got %v", err)
		}
	})
	t.Run("shard down", func(t *testing.T) {
		if _, _, err := two.Search(ctx, set, anchor, 0); err != nil {
			t.Fatal(err)
		}
		srv.Stop(1)
		start := time.Now()
		hits, total, err := two.Search(ctx, set, anchor, 0)
		if err == nil {
			t.Fatalf("a stopped shard gave %d hits of %d and no error", len(hits), total)
		}
		t.Logf("stopped shard: error after %v: %v", time.Since(start).Round(time.Millisecond), err)
		if _, _, err := one.Search(ctx, set, anchor, 0); err != nil {
			t.Fatalf("the one-table store on the live server: %v", err)
		}
		srv.Restart(1)
		if _, _, err := two.Search(ctx, set, anchor, 0); err != nil {
			t.Fatalf("after the restart: %v", err)
		}
	})
}
