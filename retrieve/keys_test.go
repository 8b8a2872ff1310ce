package retrieve

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestStringIDs: a collection .npz whose "ids" NumPy wrote as strings (str
// or bytes) reads to Keys, its IDs the row numbers; every hit carries its
// row's key, in JSON as "key" (absent for integer ids); bad ids are
// refused naming the file, the array and the rows.
func TestStringIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := `
import sys, numpy as np
d = sys.argv[1]
e = np.array([[0, 0], [1, 0], [0, 3], [0.5, 0.5], [4, 4]], dtype=np.float32)
ids = np.array(["doc7", "doc3", "日本", "doc10", "+Inf"])
np.savez(d + "/u.npz", embeddings=e, ids=ids)
np.savez(d + "/s.npz", embeddings=e, ids=np.array([k.encode() for k in ids]))
np.savez(d + "/i.npz", embeddings=e, ids=np.arange(5) * 10)
np.savez(d + "/empty.npz", embeddings=e, ids=np.array(["a", "b", "", "c", "d"]))
np.savez(d + "/twice.npz", embeddings=e, ids=np.array(["a", "b", "c", "b", "d"]))
np.savez(d + "/float.npz", embeddings=e, ids=np.arange(5.0))
np.savez(d + "/short.npz", embeddings=e, ids=ids[:4])
np.savez(d + "/matrix.npz", embeddings=e, ids=ids.reshape(5, 1))
`
	if out, err := exec.Command("/usr/bin/python3", "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	keys := []string{"doc7", "doc3", "日本", "doc10", "+Inf"}
	s := &conformal.Set{Geometry: geometry.Ball{D: 2}, Threshold: 1.1, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
	for _, file := range []string{"u.npz", "s.npz", "i.npz"} {
		c, err := ReadCollection(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		hits, total, err := Search(context.Background(), s, []float32{0.2, 0}, c, 0)
		if err != nil || total != 3 || len(hits) != 3 {
			t.Fatalf("%s: %d of %d hits, %v", file, len(hits), total, err)
		}
		b, err := json.Marshal(hits)
		if err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		for i, h := range hits {
			if file == "i.npz" {
				if c.Keys != nil || h.Key != "" || h.ID != int64(10*h.Row) || got[i]["key"] != nil {
					t.Errorf("%s: hit %+v (JSON %v), keys %q: want id 10·row and no key", file, h, got[i], c.Keys)
				}
				continue
			}
			if h.Key != keys[h.Row] || h.ID != int64(h.Row) || got[i]["key"] != keys[h.Row] || got[i]["id"] != float64(h.Row) {
				t.Errorf("%s: hit %+v (JSON %v): want key %q, id its row", file, h, got[i], keys[h.Row])
			}
		}
		if rows := []int{hits[0].Row, hits[1].Row, hits[2].Row}; !slices.Equal(rows, []int{0, 3, 1}) {
			t.Errorf("%s: rows %v, want [0 3 1] (nearest first)", file, rows)
		}
	}

	for _, tc := range []struct{ file, want string }{
		{"empty.npz", `array "ids": retrieve: collection: the string id of row 2 is empty`},
		{"twice.npz", `array "ids": retrieve: collection: rows 1 and 3 have the same id "b"`},
		{"float.npz", `array "ids" must be int64 or strings (5,), got float64 (5,)`},
		{"short.npz", `array "ids": 4 ids for the 5 rows of the collection`},
		{"matrix.npz", `array "ids" must be int64 or strings (5,), got <U5 (5, 1)`},
	} {
		path := filepath.Join(dir, tc.file)
		_, err := ReadCollection(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%s: got %v, want an error naming %s and %q", tc.file, err, path, tc.want)
		}
	}

	c, _ := NewCollection(make([]float32, 6), 2, nil)
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{[]string{"a", "b"}, "2 string ids for 3 rows"},
		{[]string{"a", "b", "a"}, `rows 0 and 2 have the same id "a"`},
		{[]string{"", "b", "c"}, "the string id of row 0 is empty"},
	} {
		if err := c.SetKeys(tc.keys); err == nil || !strings.Contains(err.Error(), tc.want) || c.Keys != nil {
			t.Errorf("SetKeys(%q): %v (keys now %q), want %q and no keys", tc.keys, err, c.Keys, tc.want)
		}
	}
}
