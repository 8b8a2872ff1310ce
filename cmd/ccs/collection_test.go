package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/chtest"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/table"
)

// TestCollectionClickHouse: ccs collection load writes a file into one
// table and over the test cluster; ccs retrieve prints the same hits from
// either table as from the file; loading again into an existing table is
// refused, and -append adds the rows.
func TestCollectionClickHouse(t *testing.T) {
	srv := chtest.Start(t, 2)
	dir := t.TempDir()
	ccs := func(args ...string) (string, error) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := run(&stdout, &stderr, args)
		return stdout.String(), err
	}
	if _, err := ccs("simulate", "-out", dir, "-per-class", "60", "-k", "2", "-seed", "4"); err != nil {
		t.Fatal(err)
	}
	cal, test := filepath.Join(dir, "cal.npz"), filepath.Join(dir, "test.npz")
	set := filepath.Join(dir, "ball.json")
	if _, err := ccs("calibrate", "-geometry", "ball", "-cal", cal, "-alpha", "0.1", "-out", set); err != nil {
		t.Fatal(err)
	}
	anchor := filepath.Join(dir, "anchor.npy")
	if err := bundle.WriteNPY(anchor, bundle.Float32([]float32{0.1, -0.2, 0.3}, 3)); err != nil {
		t.Fatal(err)
	}
	one := "clickhouse://" + srv.Addrs[0] + "/ccs.sim"
	two := "clickhouse://" + srv.Addrs[0] + "/ccs.sim2"
	for _, args := range [][]string{
		{"collection", "load", "-db", one, "-in", test, "-quiet"},
		{"collection", "load", "-db", two, "-in", test, "-cluster", chtest.Cluster, "-quiet"},
	} {
		if out, err := ccs(args...); err != nil || !strings.Contains(out, "wrote ") {
			t.Fatalf("%v: %q, %v", args, out, err)
		}
	}
	want, err := ccs("retrieve", "-set", set, "-db", test, "-anchor", anchor, "-json")
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{one, two} {
		got, err := ccs("retrieve", "-set", set, "-db", db, "-anchor", anchor, "-json")
		if err != nil {
			t.Fatal(err)
		}
		if g, w := withoutRows(t, got), withoutRows(t, want); !reflect.DeepEqual(g, w) || len(w["hits"].([]any)) == 0 {
			t.Errorf("%s:\n%v\nthe file:\n%v", db, g, w)
		}
	}
	// ccs evaluate -db counts the sets' sizes in a table as in the file.
	wantSizes, err := ccs("evaluate", "-set", set, "-test", test, "-db", test, "-size-anchors", "15", "-json")
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{one, two} {
		got, err := ccs("evaluate", "-set", set, "-test", test, "-db", db, "-size-anchors", "15", "-json")
		if err != nil {
			t.Fatal(err)
		}
		var g, w struct {
			Sizes map[string]any `json:"set_sizes"`
		}
		if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(wantSizes), &w) != nil || !reflect.DeepEqual(g.Sizes, w.Sizes) || w.Sizes["mean"].(float64) == 0 {
			t.Errorf("evaluate -db %s: set sizes %v, the file's %v", db, g.Sizes, w.Sizes)
		}
	}
	// String ids (a Parquet file's "id" column of strings): a key column,
	// and the same hits, keys included, as from the file.
	c, err := retrieve.ReadCollection(test)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, c.N)
	for i := range keys {
		keys[i] = fmt.Sprintf("passage %d", 5*i)
	}
	if err := c.SetKeys(keys); err != nil {
		t.Fatal(err)
	}
	keyed, keyedDB := filepath.Join(dir, "keyed.parquet"), "clickhouse://"+srv.Addrs[0]+"/ccs.keyed"
	if err := table.WriteParquet(keyed, c); err != nil {
		t.Fatal(err)
	}
	if _, err := ccs("collection", "load", "-db", keyedDB, "-in", keyed, "-cluster", chtest.Cluster, "-quiet"); err != nil {
		t.Fatal(err)
	}
	want, err = ccs("retrieve", "-set", set, "-db", keyed, "-anchor", anchor, "-json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ccs("retrieve", "-set", set, "-db", keyedDB, "-anchor", anchor, "-json")
	if g, w := withoutRows(t, got), withoutRows(t, want); err != nil || !reflect.DeepEqual(g, w) || !strings.Contains(got, `"key": "passage `) {
		t.Errorf("%s: %v\n%v\nthe file:\n%v", keyedDB, err, g, w)
	}
	if _, err := ccs("collection", "load", "-db", keyedDB, "-in", test, "-cluster", chtest.Cluster, "-append", "-quiet"); err == nil || !strings.Contains(err.Error(), "string ids") {
		t.Errorf("appending integer ids to a table of string ids: %v", err)
	}

	out, err := ccs("retrieve", "-set", set, "-db", test, "-anchor", anchor, "-limit", "1")
	if err != nil {
		t.Fatal(err)
	}
	var inside, n int
	if _, err := fmt.Sscanf(out, "%d of %d items", &inside, &n); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if _, err := ccs("collection", "load", "-db", one, "-in", test, "-quiet"); err == nil || !strings.Contains(err.Error(), "the table exists") {
		t.Errorf("loading into an existing table: %v", err)
	}
	// Appending the same file again would give each id two rows:
	// refused. The same rows under other ids are appended.
	if _, err := ccs("collection", "load", "-db", one, "-in", test, "-append", "-quiet"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the table holds %d of the file's ids already", n)) {
		t.Errorf("appending ids the table holds: %v", err)
	}
	shifted, err := retrieve.ReadCollection(test)
	if err != nil {
		t.Fatal(err)
	}
	for i := range shifted.IDs {
		shifted.IDs[i] += 1 << 20
	}
	other := filepath.Join(dir, "shifted.parquet")
	if err := table.WriteParquet(other, shifted); err != nil {
		t.Fatal(err)
	}
	if _, err := ccs("collection", "load", "-db", one, "-in", other, "-append", "-quiet"); err != nil {
		t.Fatal(err)
	}
	if out, err = ccs("retrieve", "-set", set, "-db", one, "-anchor", anchor, "-limit", "1"); err != nil || !strings.HasPrefix(out, fmt.Sprintf("%d of %d items", 2*inside, 2*n)) {
		t.Errorf("after -append: %q, %v", out, err)
	}
	if _, err := ccs("retrieve", "-set", set, "-db", one, "-anchor-index", "0"); !isUsage(err) {
		t.Errorf("-anchor-index on a database: %v, want a usage error", err)
	}
	// A shard down: an error (exit 1) within the URL's timeout, no hits.
	srv.Stop(1)
	start := time.Now()
	out, err = ccs("retrieve", "-set", set, "-db", two+"?timeout=10s", "-anchor", anchor)
	if err == nil || isUsage(err) || !errors.Is(err, retrieve.ErrUnavailable) || out != "" {
		t.Errorf("with a shard down: %q, %v", out, err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("with a shard down the error took %v", el)
	}
}

// withoutRows decodes retrieve's JSON and drops the hits' rows (a database
// has none).
func withoutRows(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	for _, h := range v["hits"].([]any) {
		delete(h.(map[string]any), "row")
	}
	return v
}
