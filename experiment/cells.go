package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/ccsets/ccs/internal/atomicfile"
)

// Cells keeps each finished cell of a table (one row on one seed) as a file
// of its own, so that a long run that is stopped loses at most the cells in
// progress, and a rerun computes only the cells that are missing.
//
// A cell is kept with Key, which the caller makes from everything that
// changes its numbers: the configuration and the code version (ccs
// reproduce hashes its flags and the binary). A cell kept under another key
// is stale: it is computed again and replaced. Cells of different tables,
// rows and seeds never share a file, so runs with different row sets or
// numbers of seeds reuse each other's cells.
type Cells struct {
	dir, key string
	// untrained, if not empty, keys the rows that train nothing (a
	// comparison's baselines), whose cells no training recipe changes.
	untrained string
	// heads, if not empty, keys the rows of headRows (a comparison's
	// InfoNCE rows), whose cells the heads' outputs change too; the other
	// trained rows keep the key without them.
	heads                   string
	headRows                map[string]bool
	reused, computed, stale atomic.Int64
	// code, where set (SetCode), is the code version the key was made
	// with, kept in each cell beside it: a stale cell's says whether the
	// code or the configuration changed (StaleBy).
	code                   string
	staleCode, staleConfig atomic.Int64
}

// SetCode records the code version c's key was made with (ccs reproduce:
// the build's revision or its executable's hash), kept in every cell c
// writes, so that StaleBy tells why a kept cell was stale.
func (c *Cells) SetCode(code string) { c.code = code }

// StaleBy splits the stale cells (Counts) by what changed: the code
// version, the configuration alone (flags, input files; the same code),
// or, for cells kept before the code version was, unknown.
func (c *Cells) StaleBy() (code, config, unknown int) {
	code, config = int(c.staleCode.Load()), int(c.staleConfig.Load())
	return code, config, int(c.stale.Load()) - code - config
}

// NewCells keeps cells under dir/cells with key, creating the directory.
func NewCells(dir, key string) (*Cells, error) {
	if key == "" {
		return nil, fmt.Errorf("experiment: cells in %s: empty key", dir)
	}
	d := filepath.Join(dir, "cells")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("cells: %w", err)
	}
	return &Cells{dir: d, key: key}, nil
}

// Dir is where the cells are kept.
func (c *Cells) Dir() string { return c.dir }

// Counts reports how many cells were read back, computed, and, among the
// computed, found kept under another key.
func (c *Cells) Counts() (reused, computed, stale int) {
	return int(c.reused.Load()), int(c.computed.Load()), int(c.stale.Load())
}

// keptCell is a cell's file.
type keptCell[T any] struct {
	Key   string `json:"key"`
	Table string `json:"table"`
	Row   string `json:"row"`
	Seed  uint64 `json:"seed"`
	Value T      `json:"value"`
	Code  string `json:"code,omitempty"` // Cells.SetCode's
}

// slug makes a name safe as a file name: letters, digits, '.', '_' and '-'
// are kept, every other rune becomes '-'.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '-'
	}, s)
}

func (c *Cells) path(table, row string, seed uint64) string {
	return filepath.Join(c.dir, slug(table), slug(row), fmt.Sprintf("seed-%d.json", seed))
}

// Has reports whether c keeps a cell for (table, row, seed) under its key
// (the key without the recipe for a row that trains nothing).
func (c *Cells) Has(table, row string, seed uint64, trains bool) bool {
	_, ok, _ := kept[json.RawMessage](c, table, row, seed, trains)
	return ok
}

// keyFor is the key a row's cells are kept under.
func (c *Cells) keyFor(row string, trains bool) string {
	switch {
	case !trains && c.untrained != "":
		return c.untrained
	case c.heads != "" && c.headRows[row]:
		return c.heads
	}
	return c.key
}

// kept is the value c keeps for (table, row, seed) under its key, if it
// keeps one; found says a file was there (kept under another key, or not
// one of ours: computed again, like a stale one).
func kept[T any](c *Cells, table, row string, seed uint64, trains bool) (v T, ok, found bool) {
	v, ok, found, _ = keptCode[T](c, table, row, seed, trains)
	return v, ok, found
}

// keptCode is kept, saying also the code version the file was kept under
// ("" where it says none, or is not one of ours).
func keptCode[T any](c *Cells, table, row string, seed uint64, trains bool) (v T, ok, found bool, code string) {
	b, err := os.ReadFile(c.path(table, row, seed))
	if err != nil {
		return v, false, false, ""
	}
	var k keptCell[T]
	// A file that does not parse (a foreign file: the writes are atomic)
	// is computed again, like a stale one.
	if json.Unmarshal(b, &k) != nil {
		return v, false, true, ""
	}
	if k.Key == c.keyFor(row, trains) && k.Table == table && k.Row == row && k.Seed == seed {
		return k.Value, true, true, k.Code
	}
	return v, false, true, k.Code
}

// cell returns the value kept for (table, row, seed) under c's key, or
// computes it with compute and keeps it. A nil c computes.
func cell[T any](c *Cells, table, row string, seed uint64, trains bool, compute func() (T, error)) (T, error) {
	if c == nil {
		return compute()
	}
	if v, ok, found, code := keptCode[T](c, table, row, seed, trains); ok {
		c.reused.Add(1)
		return v, nil
	} else if found {
		c.stale.Add(1)
		switch {
		case code == "" || c.code == "":
		case code != c.code:
			c.staleCode.Add(1)
		default:
			c.staleConfig.Add(1)
		}
	}
	key, path := c.keyFor(row, trains), c.path(table, row, seed)
	v, err := compute()
	if err != nil {
		return v, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return v, fmt.Errorf("keeping a cell: %w", err)
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(keptCell[T]{Key: key, Table: table, Row: row, Seed: seed, Value: v, Code: c.code})
	})
	if err != nil {
		return v, fmt.Errorf("keeping a cell: %w", err)
	}
	c.computed.Add(1)
	return v, nil
}
