// Package clickhouse keeps a collection of embeddings in ClickHouse — one
// MergeTree table, or a Distributed table over a cluster's shards — and
// searches it exactly: the engine evaluates a filter that keeps a superset
// of the items inside the set (never fewer: see plan), and ccs rescores the
// survivors with the set's own scores, so the hits, scores, order and total
// are those of retrieve.Search over the same items.
//
// Importing the package registers the scheme "clickhouse" with
// retrieve.Open:
//
//	clickhouse://[user[:password]@]host:port/database.table[?timeout=60s]
//
// The table has columns (id UInt64, emb Array(Float32)), and key String
// where the items have string ids (Load). Any failure — a shard down, a
// timeout, a missing table, rows of another dimension, a non-finite
// coordinate — is an error, never a shorter hit list.
package clickhouse

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/retrieve"
)

func init() {
	retrieve.Register("clickhouse", func(ctx context.Context, u string) (retrieve.Store, error) {
		return Open(ctx, u)
	})
}

// Target is where a collection lives: a server, a database and a table.
type Target struct {
	Addr     string // host:port of the native protocol
	User     string
	Password string
	Database string
	Table    string
	// Timeout bounds every query (default 60 s).
	Timeout time.Duration
}

// ParseURL reads clickhouse://[user[:password]@]host:port/database.table
// [?timeout=DURATION].
func ParseURL(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", redact(raw), err)
	}
	bad := func(why string) (Target, error) {
		return Target{}, fmt.Errorf("%s: %s (want clickhouse://[user[:password]@]host:port/database.table[?timeout=60s])", redact(raw), why)
	}
	if u.Scheme != "clickhouse" {
		return bad("scheme is not clickhouse")
	}
	if u.Host == "" || u.Port() == "" {
		return bad("no host:port")
	}
	db, table, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"), ".")
	if !ok || !isName(db) || !isName(table) {
		return bad("the path is not database.table (letters, digits and _)")
	}
	t := Target{Addr: u.Host, Database: db, Table: table, Timeout: 60 * time.Second}
	if u.User != nil {
		t.User = u.User.Username()
		t.Password, _ = u.User.Password()
	}
	for k, v := range u.Query() {
		switch k {
		case "timeout":
			d, err := time.ParseDuration(v[0])
			if err != nil || d <= 0 {
				return bad(fmt.Sprintf("timeout %q is not a positive duration", v[0]))
			}
			t.Timeout = d
		default:
			return bad(fmt.Sprintf("unknown parameter %q", k))
		}
	}
	return t, nil
}

// String is the target's URL, without the password.
func (t Target) String() string {
	user := ""
	if t.User != "" {
		user = t.User + "@"
	}
	return fmt.Sprintf("clickhouse://%s%s/%s.%s", user, t.Addr, t.Database, t.Table)
}

// redact hides a URL's password.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxx")
			return u.String()
		}
	}
	return raw
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// dial connects to t's server.
func dial(t Target) (driver.Conn, error) {
	return ch.Open(&ch.Options{
		Addr: []string{t.Addr},
		// Names are qualified in every query: the database need not exist
		// to connect (Load creates it).
		Auth:        ch.Auth{Username: t.User, Password: t.Password},
		DialTimeout: min(t.Timeout, 10*time.Second),
		ReadTimeout: t.Timeout,
		Settings: ch.Settings{
			// A shard that cannot be reached fails the query: a partial
			// answer would break the recall guarantee.
			"skip_unavailable_shards": 0,
			"max_execution_time":      int(math.Ceil(t.Timeout.Seconds())),
		},
	})
}

// Store is a collection in a ClickHouse table.
type Store struct {
	t        Target
	conn     driver.Conn
	d        int
	prewhere bool // the engine takes PREWHERE (MergeTree, Distributed)
	keys     bool // the table has a key column: the items' string ids
	// hexOnly writes every constant as hexadecimal (the tests' second
	// path); fallbacks counts the searches whose decimals the engine read
	// differently.
	hexOnly   bool
	fallbacks atomic.Int64
}

// Open connects to the table u names, checks its columns and reads its
// dimension.
func Open(ctx context.Context, u string) (*Store, error) {
	t, err := ParseURL(u)
	if err != nil {
		return nil, err
	}
	return OpenTarget(ctx, t)
}

// OpenTarget is Open on a parsed target.
func OpenTarget(ctx context.Context, t Target) (*Store, error) {
	conn, err := dial(t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", t, retrieve.ErrUnavailable, err)
	}
	s := &Store{t: t, conn: conn}
	if err := s.inspect(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: %w: %w", t, retrieve.ErrUnavailable, err)
	}
	return s, nil
}

// inspect checks the table's engine and columns and reads the dimension
// from its first row.
func (s *Store) inspect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.t.Timeout)
	defer cancel()
	var engine string
	if err := s.conn.QueryRow(ctx, "SELECT engine FROM system.tables WHERE database = ? AND name = ?", s.t.Database, s.t.Table).Scan(&engine); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return errors.New("no such table")
		}
		return err
	}
	s.prewhere = strings.HasSuffix(engine, "MergeTree") || engine == "Distributed"
	rows, err := s.conn.Query(ctx, "SELECT name, type FROM system.columns WHERE database = ? AND table = ?", s.t.Database, s.t.Table)
	if err != nil {
		return err
	}
	cols := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return err
		}
		cols[name] = typ
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if cols["id"] != "UInt64" || cols["emb"] != "Array(Float32)" {
		return fmt.Errorf("want columns id UInt64 and emb Array(Float32), the table has %v", cols)
	}
	switch typ, ok := cols["key"]; {
	case ok && typ != "String":
		return fmt.Errorf("column key is %s, want String (the items' string ids)", typ)
	case ok:
		s.keys = true
	}
	var d uint64
	if err := s.conn.QueryRow(ctx, "SELECT length(emb) FROM "+s.name()+" LIMIT 1").Scan(&d); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return errors.New("the table has no rows")
		}
		return err
	}
	if d < 1 {
		return errors.New("the table's first embedding is empty")
	}
	s.d = int(d)
	return nil
}

func (s *Store) name() string { return s.t.Database + "." + s.t.Table }

// Dim is the embeddings' dimension (that of the table's first row; a row
// of another dimension makes searches fail).
func (s *Store) Dim() int { return s.d }

// Len counts the rows.
func (s *Store) Len(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.t.Timeout)
	defer cancel()
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.name()).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w: %w", s.t, retrieve.ErrUnavailable, err)
	}
	return int(n), nil
}

// Close closes the connection.
func (s *Store) Close() error { return s.conn.Close() }

// Search returns exactly what retrieve.Search returns on the table's items:
// the engine filters with the set's push-down (plan), ccs rescores.
func (s *Store) Search(ctx context.Context, set *conformal.Set, anchor []float32, limit int) ([]retrieve.Hit, int, error) {
	if err := retrieve.CheckQuery(set, anchor, s.d); err != nil {
		return nil, 0, err
	}
	set, anchor = retrieve.Centred(set, anchor) // the push-down of a shifted set's inner geometry
	f, err := s.filter(ctx, set, anchor)
	if err != nil {
		return nil, 0, err
	}
	cand, err := s.candidates(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	hits, total, err := retrieve.Search(ctx, set, anchor, cand, limit)
	if err != nil {
		return nil, 0, err
	}
	for i := range hits {
		hits[i].Row = -1
	}
	return hits, total, nil
}

// filter plans the search's filter with decimal constants and checks that
// the engine reads them exactly; if it does not, with hexadecimal ones.
func (s *Store) filter(ctx context.Context, set *conformal.Set, anchor []float32) (filter, error) {
	lit := &consts{hex: s.hexOnly}
	f, err := plan(set.Geometry, set.Threshold, anchor, lit)
	if err != nil {
		return filter{}, fmt.Errorf("%s: %w", s.t, err)
	}
	if len(lit.exprs) == 0 {
		return f, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.t.Timeout)
	defer cancel()
	got := make([][]string, len(lit.exprs))
	dest := make([]any, len(got))
	for i := range got {
		dest[i] = &got[i]
	}
	if err := s.conn.QueryRow(ctx, lit.checkQuery()).Scan(dest...); err != nil {
		return filter{}, fmt.Errorf("%s: %w: %w", s.t, retrieve.ErrUnavailable, wrapCtx(ctx, err))
	}
	for i := range got {
		if !slices.Equal(got[i], lit.want[i]) {
			s.fallbacks.Add(1)
			return plan(set.Geometry, set.Threshold, anchor, &consts{hex: true})
		}
	}
	return f, nil
}

func (s *Store) sql(f filter) string {
	// Rows with a non-finite coordinate pass, for the rescoring to refuse.
	const bad = "NOT arrayAll(x -> isFinite(x), emb)"
	// The coordinates come as d Float32 columns, not as the Array: the
	// driver scans an array by reflection, an element at a time (half
	// the CPU of a search of 20 000 candidates), a Float32 column by a
	// type switch. The array's length comes too: emb[j] past its end is
	// 0, not an error.
	var q strings.Builder
	q.WriteString("SELECT id, length(emb)")
	for j := range s.d {
		fmt.Fprintf(&q, ", emb[%d]", j+1)
	}
	if s.keys {
		q.WriteString(", key")
	}
	q.WriteString(" FROM " + s.name())
	if f.pre != "" && s.prewhere {
		q.WriteString(" PREWHERE (" + f.pre + ") OR " + bad)
	}
	q.WriteString(" WHERE (" + f.where + ") OR " + bad)
	return q.String()
}

// candidates runs the filter and returns the rows it keeps, ordered by id,
// as a collection; a non-finite or wrong-length row is an error.
func (s *Store) candidates(ctx context.Context, f filter) (*retrieve.Collection, error) {
	ctx, cancel := context.WithTimeout(ctx, s.t.Timeout)
	defer cancel()
	rows, err := s.conn.Query(ctx, s.sql(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", s.t, retrieve.ErrUnavailable, wrapCtx(ctx, err))
	}
	defer rows.Close()
	type item struct {
		id  uint64
		row int // its coordinates: emb[row*d:][:d]
		key string
	}
	var (
		items []item
		emb   []float32
		n     uint64
	)
	// dst scans a row's id, length and coordinates (into coord, then
	// appended to emb) and key.
	coord := make([]float32, s.d)
	dst := make([]any, 0, s.d+3)
	var it item
	dst = append(dst, &it.id, &n)
	for j := range coord {
		dst = append(dst, &coord[j])
	}
	if s.keys {
		dst = append(dst, &it.key)
	}
	for rows.Next() {
		it = item{}
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", s.t, retrieve.ErrUnavailable, err)
		}
		if n != uint64(s.d) {
			return nil, fmt.Errorf("%s: %w: row id %d has dimension %d, the table %d", s.t, retrieve.ErrUnavailable, it.id, n, s.d)
		}
		if it.id > math.MaxInt64 {
			return nil, fmt.Errorf("%s: %w: row id %d is above 2^63−1", s.t, retrieve.ErrUnavailable, it.id)
		}
		for j, v := range coord {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%s: %w: row id %d, coordinate %d is %v", s.t, retrieve.ErrUnavailable, it.id, j, v)
			}
		}
		it.row = len(items)
		emb = append(emb, coord...)
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", s.t, retrieve.ErrUnavailable, wrapCtx(ctx, err))
	}
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.id, b.id) })
	c := &retrieve.Collection{N: len(items), D: s.d, IDs: make([]int64, len(items)), Rows: make([]float32, 0, len(items)*s.d)}
	if s.keys {
		c.Keys = make([]string, len(items))
	}
	for i, it := range items {
		c.IDs[i] = int64(it.id)
		c.Rows = append(c.Rows, emb[it.row*s.d:][:s.d]...)
		if s.keys {
			c.Keys[i] = it.key
		}
	}
	return c, nil
}

// wrapCtx says so when the query ended because its context did.
func wrapCtx(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w (%w)", ctxErr, err)
	}
	return err
}
