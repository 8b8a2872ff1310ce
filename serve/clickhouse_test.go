package serve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/internal/chtest"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/retrieve/clickhouse"
)

// TestRetrieveClickHouse: the fixture's collection served from two
// ClickHouse shards answers as the file does; with a shard stopped, the
// answer is 502 collection_unavailable, not a shorter list; after the
// restart (and a reload, which keeps the connection) it answers again.
func TestRetrieveClickHouse(t *testing.T) {
	srv := chtest.Start(t, 2)
	_, paths := fixture(t)
	file, err := retrieve.ReadCollection(strings.TrimSuffix(paths["ball"], "ball.json") + "db.npz")
	if err != nil {
		t.Fatal(err)
	}
	target := clickhouse.Target{Addr: srv.Addrs[0], Database: "ccs", Table: "db", Timeout: 10 * time.Second}
	if err := clickhouse.Load(context.Background(), target, file, clickhouse.LoadOptions{Cluster: chtest.Cluster}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Sets: paths, Collections: map[string]string{"file": strings.TrimSuffix(paths["ball"], "ball.json") + "db.npz",
		"ch": "clickhouse://" + srv.Addrs[0] + "/ccs.db?timeout=5s"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	answer := func(coll string) (int, map[string]any) {
		rec := do(t, h, "POST", "/v1/sets/gen/retrieve", "application/json", `{"anchor": [0, 0, 0], "collection": "`+coll+`", "limit": 3}`)
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v: %s", coll, err, rec.Body)
		}
		return rec.Code, v
	}
	ids := func(v map[string]any) []any {
		var out []any
		for _, h := range v["hits"].([]any) {
			hit := h.(map[string]any)
			out = append(out, hit["id"], hit["score"])
		}
		return append(out, v["total"], v["truncated"])
	}
	code, want := answer("file")
	if code != 200 {
		t.Fatalf("file: %d %v", code, want)
	}
	check := func() {
		t.Helper()
		code, got := answer("ch")
		if code != 200 {
			t.Fatalf("clickhouse: %d %v", code, got)
		}
		if a, b := ids(got), ids(want); len(a) != len(b) || len(a) < 4 {
			t.Fatalf("clickhouse %v, file %v", a, b)
		} else {
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("clickhouse %v, file %v", a, b)
				}
			}
		}
	}
	check()
	srv.Stop(1)
	code, got := answer("ch")
	if e, _ := got["error"].(map[string]any); code != 502 || e["code"] != "collection_unavailable" {
		t.Fatalf("with a shard down: %d %v", code, got)
	}
	srv.Restart(1)
	if err := s.Reload("test"); err != nil {
		t.Fatal(err)
	}
	check()
}
