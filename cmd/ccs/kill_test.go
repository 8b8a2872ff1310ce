package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/chtest"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/retrieve/clickhouse"
)

// killRun starts ccs with args as a process of its own, kills it (SIGKILL)
// after delay, and waits for it; it reports whether it finished first.
func killRun(t *testing.T, delay time.Duration, args ...string) (finished bool) {
	t.Helper()
	cmd := ccsProcess(args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return true
	case <-time.After(delay):
		cmd.Process.Kill()
		<-done
		return false
	}
}

// timed runs ccs with args as a process to the end and returns how long it
// took.
func timed(t *testing.T, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	if !killRun(t, time.Hour, args...) {
		t.Fatal("unreachable")
	}
	return time.Since(start)
}

// partials lists the files under dir that are not whole: invalid JSON, or
// a set file that does not load; it also counts the temporary files of
// interrupted writes beside them.
func partials(t *testing.T, dir string) (bad []string, temps int) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if strings.Contains(d.Name(), ".ccs-tmp-") {
			temps++
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || !json.Valid(data) {
			bad = append(bad, path)
		} else if strings.Contains(path, string(filepath.Separator)+"sets"+string(filepath.Separator)) {
			if _, err := conformal.Load(path); err != nil {
				bad = append(bad, path)
			}
		}
		return nil
	})
	return bad, temps
}

// TestKill kills calibrate, fit, reproduce and collection load at random
// moments around their writes, 200 times in all, and checks every output
// after each kill: the old file or the whole new one (byte for byte what
// an uninterrupted run writes), a results directory of whole files only,
// a ClickHouse table absent or complete. A killed write leaves at most its
// temporary file beside the output (swept once stale: atomicfile).
func TestKill(t *testing.T) {
	if testing.Short() {
		t.Skip("200 processes killed")
	}
	dir := t.TempDir()
	if _, err := ccs("simulate", "-out", dir, "-per-class", "100", "-k", "5", "-seed", "2"); err != nil {
		t.Fatal(err)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(21, 9))
	totalKills := 0
	// kill runs args until n runs were killed, each after a delay drawn
	// from 0.05 to 1 times an uninterrupted run's duration (the median of
	// three), checking the outputs after every run, killed or finished.
	kill := func(name string, n int, args func(i int) []string, before func(i int), check func(i int, finished bool)) {
		t.Helper()
		var runs []time.Duration
		for range 3 {
			runs = append(runs, timed(t, args(-1)...))
		}
		slices.Sort(runs)
		full := runs[1]
		killed, finished := 0, 0
		for i := 0; killed < n; i++ {
			if i >= 4*n {
				t.Fatalf("%s: only %d of %d runs killed in %d tries", name, killed, n, i)
			}
			before(i)
			delay := time.Duration((0.05 + 0.95*rng.Float64()) * float64(full))
			f := killRun(t, delay, args(i)...)
			if f {
				finished++
			} else {
				killed++
			}
			check(i, f)
		}
		t.Logf("%s: %d killed, %d finished before their kill (an uninterrupted run: %v)", name, killed, finished, full.Round(time.Millisecond))
		totalKills += killed
	}
	// state says which of old (nil: no file) and new the file at path is,
	// failing the test if it is neither.
	state := func(what, path string, old, new []byte) string {
		t.Helper()
		got, err := os.ReadFile(path)
		switch {
		case err != nil && !os.IsNotExist(err):
			t.Fatal(err)
		case err != nil && old == nil:
			return "absent"
		case err == nil && old != nil && bytes.Equal(got, old):
			return "old"
		case err == nil && bytes.Equal(got, new):
			return "new"
		}
		t.Fatalf("%s: %s is neither the old file nor the new one (%d bytes, %v)", what, path, len(got), err)
		return ""
	}

	// calibrate and fit, over an old file (even i) or none.
	oldPath := in("old.json")
	if _, err := ccs("calibrate", "-geometry", "ball", "-cal", in("cal.npz"), "-alpha", "0.2", "-out", oldPath); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(oldPath)
	after := map[string]int{} // what killed runs left
	for _, c := range []struct {
		name string
		n    int
		args []string // the output's flag last
	}{
		{"calibrate", 60, []string{"calibrate", "-geometry", "ellipsoid", "-cal", in("cal.npz"), "-out"}},
		{"fit", 50, []string{"fit", "-geometry", "genball", "-objective", "neg", "-train", in("fit.npz"), "-val", in("val.npz"), "-epochs", "4", "-seed", "3", "-quiet", "-out"}},
	} {
		ref := in(c.name + "-ref.json")
		if _, err := ccs(append(c.args, ref)...); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(ref)
		out := in(c.name + ".json")
		kill(c.name, c.n, func(int) []string { return append(c.args, out) }, func(i int) {
			os.Remove(out)
			if i%2 == 0 {
				os.WriteFile(out, old, 0o644)
			}
		}, func(i int, finished bool) {
			prev := old
			if i%2 == 1 {
				prev = nil
			}
			if st := state(c.name, out, prev, want); !finished {
				after[c.name+": "+st]++
				if temps, _ := filepath.Glob(out[:len(out)-len(filepath.Base(out))] + "." + filepath.Base(out) + ".ccs-tmp-*"); len(temps) > 0 {
					after[c.name+": mid-write"]++
				}
			}
		})
	}

	t.Logf("outputs after the kills: %v", after)

	// reproduce into one results directory, resumed by each run: whole
	// files only, whatever moment the kills hit.
	results := in("results")
	kill("reproduce", 50, func(int) []string {
		return []string{"reproduce", "sim", "-rows", "baselines", "-seeds", "3", "-k", "20", "-per-class", "200", "-quiet", "-json", "-out", results}
	}, func(int) {}, func(i int, finished bool) {
		if bad, _ := partials(t, results); len(bad) > 0 {
			t.Fatalf("reproduce, kill %d: partial files %v", i, bad)
		}
		if finished {
			os.RemoveAll(results)
		}
	})
	_, temps := partials(t, results)
	t.Logf("reproduce: %d temporary files left by the kills", temps)

	// collection load: each kill into a table of its own, which is then
	// absent or holds every row.
	srv := chtest.Start(t, 1)
	test := in("test.npz")
	c, err := retrieve.ReadCollection(test)
	if err != nil {
		t.Fatal(err)
	}
	refs := 0
	table := func(i int) string {
		if i < 0 { // an uninterrupted run's
			refs++
			return fmt.Sprintf("clickhouse://%s/ccs.ref%d", srv.Addrs[0], refs)
		}
		return fmt.Sprintf("clickhouse://%s/ccs.kill%d", srv.Addrs[0], i)
	}
	ctx := context.Background()
	var complete, absent int
	kill("collection load", 40, func(i int) []string {
		return []string{"collection", "load", "-db", table(i), "-in", test, "-batch", "100", "-quiet"}
	}, func(int) {}, func(i int, _ bool) {
		st, err := clickhouse.Open(ctx, table(i))
		if err != nil {
			if !strings.Contains(err.Error(), "kill") {
				t.Fatalf("collection load, kill %d: %v", i, err)
			}
			absent++
			return
		}
		defer st.Close()
		n, err := st.Len(ctx)
		if err != nil || n != c.N {
			t.Fatalf("collection load, kill %d: the table holds %d rows (%v), want %d", i, n, err, c.N)
		}
		complete++
	})
	t.Logf("collection load: %d tables absent, %d complete; %d kills in all", absent, complete, totalKills)
}
