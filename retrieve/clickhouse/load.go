package clickhouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ccsets/ccs/retrieve"
)

// LoadOptions says how Load writes a collection.
type LoadOptions struct {
	// Cluster, when set, spreads the rows over the shards of this cluster
	// (as the server's remote_servers names it): a MergeTree table
	// TABLE_local on each shard (row to shard by id modulo the number of
	// shards) and the Distributed table TABLE over them on the server the
	// target names.
	Cluster string
	// Append adds the rows to an existing table of the same dimension;
	// without it an existing table is an error.
	Append bool
	// BatchRows is the rows per INSERT (default 50 000).
	BatchRows int
	// Progress, when set, is called after each batch with the rows written
	// and the total.
	Progress func(done, total int)
}

// stagingSuffix names the table a load writes before it renames it: an
// interrupted load leaves only TABLE__loading, which the next load drops;
// the collection's own table is never half-written.
const stagingSuffix = "__loading"

// Load writes c into the table t names (see LoadOptions). Each table is
// loaded into a staging table first and renamed (or, appending, attached
// to the existing table as a whole) only once every row is in.
//
// A collection with string ids (Collection.Keys) makes a table with a
// third column, key String; its ids are the row numbers, after the
// table's largest id when appending, so that they stay distinct. A table
// with keys takes only collections with keys, and one without, only
// collections without. Appending rows whose ids (keys) the table holds
// already is refused.
func Load(ctx context.Context, t Target, c *retrieve.Collection, opt LoadOptions) error {
	if opt.BatchRows <= 0 {
		opt.BatchRows = 50_000
	}
	for i, id := range c.IDs {
		if id < 0 {
			return fmt.Errorf("id %d of row %d is negative: the table's ids are UInt64", id, i)
		}
	}
	entry, err := dial(t)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	defer entry.Close()
	if err := entry.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+t.Database); err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	exists, err := tableExists(ctx, entry, t.Database, t.Table)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	if exists && !opt.Append {
		return fmt.Errorf("%s: the table exists (give -append to add rows, or drop it)", t)
	}
	if exists {
		if err := checkKeys(ctx, entry, t, c.Keys != nil); err != nil {
			return err
		}
		if err := checkNew(ctx, entry, t, c); err != nil {
			return err
		}
	}
	ids := c.IDs
	if c.Keys != nil {
		// The row numbers, after the table's largest id when appending.
		var next uint64
		if exists {
			if err := entry.QueryRow(ctx, "SELECT if(count() = 0, 0, max(id) + 1) FROM "+t.Database+"."+t.Table).Scan(&next); err != nil {
				return fmt.Errorf("%s: %w", t, err)
			}
		}
		ids = make([]int64, c.N)
		for i := range ids {
			ids[i] = int64(next) + int64(i)
		}
	}
	in := loadInput{c: c, ids: ids}
	if opt.Cluster == "" {
		return loadTable(ctx, entry, t, in, rowsOf(c.N), opt, 0, c.N)
	}
	shards, err := clusterShards(ctx, entry, opt.Cluster)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	// Appending, each shard checks its own rows' dimension (loadTable).
	parts := make([][]int, len(shards))
	for i, id := range ids {
		s := int(uint64(id) % uint64(len(shards)))
		parts[s] = append(parts[s], i)
	}
	done := 0
	for s, addr := range shards {
		st := t
		st.Addr, st.Table = addr, t.Table+"_local"
		conn, err := dial(st)
		if err != nil {
			return fmt.Errorf("shard %d: %s: %w", s+1, st, err)
		}
		if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+t.Database); err != nil {
			conn.Close()
			return fmt.Errorf("shard %d: %s: %w", s+1, st, err)
		}
		o := opt
		o.Append = exists
		err = loadTable(ctx, conn, st, in, parts[s], o, done, c.N)
		conn.Close()
		if err != nil {
			return fmt.Errorf("shard %d: %w", s+1, err)
		}
		done += len(parts[s])
	}
	if exists {
		return nil
	}
	// The Distributed table comes last: until every shard holds its rows,
	// the collection is absent, not short.
	ddl := fmt.Sprintf("CREATE TABLE %s.%s %s ENGINE = Distributed(%s, %s, %s, id)",
		t.Database, t.Table, columns(c), opt.Cluster, t.Database, t.Table+"_local")
	if err := entry.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	return nil
}

func rowsOf(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// columns are the table's columns for c: with string ids, a key.
func columns(c *retrieve.Collection) string {
	if c.Keys != nil {
		return "(id UInt64, emb Array(Float32), key String)"
	}
	return "(id UInt64, emb Array(Float32))"
}

// loadInput is what a load writes: c's rows and keys under ids.
type loadInput struct {
	c   *retrieve.Collection
	ids []int64
}

// loadTable writes rows of the input into t's table through a staging
// table.
func loadTable(ctx context.Context, conn driver.Conn, t Target, in loadInput, rows []int, opt LoadOptions, done0, total int) error {
	c := in.c
	exists, err := tableExists(ctx, conn, t.Database, t.Table)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	switch {
	case exists && !opt.Append:
		return fmt.Errorf("%s: the table exists (give -append to add rows, or drop it)", t)
	case exists:
		if err := checkDim(ctx, conn, t, c.D); err != nil {
			return err
		}
		if err := checkKeys(ctx, conn, t, c.Keys != nil); err != nil {
			return err
		}
	}
	staging := t.Database + "." + t.Table + stagingSuffix
	final := t.Database + "." + t.Table
	insert := "INSERT INTO " + staging + " (id, emb)"
	if c.Keys != nil {
		insert = "INSERT INTO " + staging + " (id, emb, key)"
	}
	for _, q := range []string{
		"DROP TABLE IF EXISTS " + staging,
		"CREATE TABLE " + staging + " " + columns(c) + " ENGINE = MergeTree ORDER BY id",
	} {
		if err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	d := c.D
	for lo := 0; lo < len(rows); lo += opt.BatchRows {
		hi := min(len(rows), lo+opt.BatchRows)
		batch, err := conn.PrepareBatch(ctx, insert)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		for _, r := range rows[lo:hi] {
			vals := []any{uint64(in.ids[r]), c.Rows[r*d : (r+1)*d]}
			if c.Keys != nil {
				vals = append(vals, c.Keys[r])
			}
			if err := batch.Append(vals...); err != nil {
				batch.Abort()
				return fmt.Errorf("%s: row %d: %w", t, r, err)
			}
		}
		if err := batch.Send(); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		if opt.Progress != nil {
			opt.Progress(done0+hi, total)
		}
	}
	if !exists {
		if err := conn.Exec(ctx, "RENAME TABLE "+staging+" TO "+final); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		return nil
	}
	if err := conn.Exec(ctx, "ALTER TABLE "+final+" ATTACH PARTITION tuple() FROM "+staging); err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	if err := conn.Exec(ctx, "DROP TABLE "+staging); err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	return nil
}

func tableExists(ctx context.Context, conn driver.Conn, db, table string) (bool, error) {
	var n uint64
	err := conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = ? AND name = ?", db, table).Scan(&n)
	return n > 0, err
}

// checkDim refuses rows of a dimension other than that of the table's
// first row (an empty table takes any).
func checkDim(ctx context.Context, conn driver.Conn, t Target, d int) error {
	var have uint64
	err := conn.QueryRow(ctx, "SELECT length(emb) FROM "+t.Database+"."+t.Table+" LIMIT 1").Scan(&have)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", t, err)
	case int(have) != d:
		return fmt.Errorf("%s: the table's rows have dimension %d, the file's %d", t, have, d)
	}
	return nil
}

// checkKeys refuses to mix collections with string ids and without in one
// table: keyed says whether the rows to add have them.
func checkKeys(ctx context.Context, conn driver.Conn, t Target, keyed bool) error {
	var n uint64
	err := conn.QueryRow(ctx, "SELECT count() FROM system.columns WHERE database = ? AND table = ? AND name = 'key'", t.Database, t.Table).Scan(&n)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", t, err)
	case n > 0 && !keyed:
		return fmt.Errorf("%s: the table's items have string ids (a key column) and the file's none: give the file's ids as strings", t)
	case n == 0 && keyed:
		return fmt.Errorf("%s: the file's items have string ids and the table's none (no key column): load them into a table of their own", t)
	}
	return nil
}

// checkNew refuses, when appending, rows whose ids the table holds
// already: their string ids (keys), or their integer ids for a table
// without keys. ClickHouse enforces no uniqueness, so the table would
// hold two items under one id, and a hit's id would name either. The
// file's ids go to the server as a temporary table with the query (on a
// cluster, to every shard).
func checkNew(ctx context.Context, conn driver.Conn, t Target, c *retrieve.Collection) error {
	col, typ := "id", "UInt64"
	if c.Keys != nil {
		col, typ = "key", "String"
	}
	tbl, err := ext.NewTable("ccs_new_ids", ext.Column(col, column.Type(typ)))
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	for i := range c.N {
		var v any = uint64(c.IDs[i])
		if c.Keys != nil {
			v = c.Keys[i]
		}
		if err := tbl.Append(v); err != nil {
			return fmt.Errorf("%s: row %d: %w", t, i, err)
		}
	}
	q := fmt.Sprintf("SELECT count(), toString(any(%s)) FROM %s.%s WHERE %s IN ccs_new_ids", col, t.Database, t.Table, col)
	var n uint64
	var first string
	if err := conn.QueryRow(ch.Context(ctx, ch.WithExternalTable(tbl)), q).Scan(&n, &first); err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	if n == 0 {
		return nil
	}
	row := slices.Index(c.Keys, first)
	what := fmt.Sprintf("%q", first)
	if c.Keys == nil {
		what = first
		row = slices.IndexFunc(c.IDs, func(id int64) bool { return strconv.FormatInt(id, 10) == first })
	}
	return fmt.Errorf("%s: the table holds %d of the file's ids already (the first: %s, the file's row %d): appended, each would name two items; give those rows other ids, or load them into a table of their own", t, n, what, row)
}

// clusterShards lists the native address of each shard's first replica.
func clusterShards(ctx context.Context, conn driver.Conn, cluster string) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT host_address, port FROM system.clusters WHERE cluster = ? AND replica_num = 1 ORDER BY shard_num", cluster)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var addrs []string
	for rows.Next() {
		var host string
		var port uint16
		if err := rows.Scan(&host, &port); err != nil {
			return nil, err
		}
		addrs = append(addrs, fmt.Sprintf("%s:%d", host, port))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("the server has no cluster %q in its remote_servers", cluster)
	}
	return addrs, nil
}
