// Package serve is an HTTP service over fitted sets: membership and
// scores, CCS OOD scores, and certified retrieval from embedding
// collections. Everything it serves is read-only, validated when loaded, and
// replaced atomically on Reload (an invalid new file keeps the old state).
//
// API (JSON; errors are {"error": {"code", "message", "field"}}):
//
//	GET  /v1/sets                    the sets and their calibration facts
//	POST /v1/sets/{name}/score       {"anchor": [...], "points": [[...], ...]}
//	POST /v1/sets/{name}/ood         {"points": [[...], ...]}, ?alpha_ood=0.05&delta=0&fdr=Q
//	POST /v1/sets/{name}/ood/monitor/reset                                (admin)
//	POST /v1/sets/{name}/retrieve    {"anchor": [...], "collection": "db", "limit": 100}
//	POST /v1/admin/reload            read every file again                (admin)
//	GET  /healthz, /readyz           (open), /metrics (Prometheus text format)
//
// With tokens (Config.TokensFile), every endpoint but /healthz and /readyz
// needs "Authorization: Bearer TOKEN": 401 without a valid token, 403 for a
// read token on an admin endpoint; /metrics as Config.Metrics says. Every
// answer about sets names the generation of the files it used; a reload
// makes the next one.
//
// A request may carry its points as a .npy body (Content-Type
// application/x-npy, float32, C order): score takes (1+m, d) with the anchor
// first, ood (m, d), retrieve (d,) or (1, d) with ?collection=NAME&limit=N.
// A class-conditional set's score and retrieve take the anchor's class:
// "label" (its integer label or its class's name), ?label= with .npy.
//
// JSON bodies are read strictly: the endpoint's fields only, each once; a
// null coordinate or point is refused (422 naming it), a whole field null
// is absent; the number of points is checked while reading. A path that
// is not clean (/v1/sets/../admin/reload) is refused with 400 after the
// token check, never redirected. Config.MemoryBound is the bound on the
// server's memory that its limits imply.
package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/net/netutil"
	"golang.org/x/sync/semaphore"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/retrieve"
	_ "github.com/ccsets/ccs/table" // Parquet and Arrow collections (retrieve.RegisterTables)
)

// monitorCollector exports each served set's OOD drift monitor at scrape
// time: the martingale's value, whether it raised its alarm, the inputs
// it saw and whether it is full.
type monitorCollector struct{ s *Server }

var (
	monitorValue = prometheus.NewDesc("ccs_ood_martingale", "The OOD drift monitor's test martingale: under exchangeable in-distribution inputs it reaches 1/δ with probability at most δ.", []string{"set"}, nil)
	monitorAlarm = prometheus.NewDesc("ccs_ood_martingale_alarm", "1 once the OOD drift monitor reached 1/δ since its last reset.", []string{"set"}, nil)
	monitorSeen  = prometheus.NewDesc("ccs_ood_monitored_inputs", "Inputs the OOD drift monitor has seen since its last reset.", []string{"set"}, nil)
	monitorFull  = prometheus.NewDesc("ccs_ood_monitor_full", "1 once the OOD drift monitor has seen its limit of inputs (-monitor-limit) and observes no more until its reset.", []string{"set"}, nil)
)

func (c monitorCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- monitorValue
	ch <- monitorAlarm
	ch <- monitorSeen
	ch <- monitorFull
}

func (c monitorCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.state.Load()
	for _, name := range slices.Sorted(maps.Keys(st.ood)) {
		m := st.ood[name].monitor.State()
		alarm, full := 0.0, 0.0
		if m.Alarm {
			alarm = 1
		}
		if m.Full {
			full = 1
		}
		ch <- prometheus.MustNewConstMetric(monitorValue, prometheus.GaugeValue, m.Martingale, name)
		ch <- prometheus.MustNewConstMetric(monitorAlarm, prometheus.GaugeValue, alarm, name)
		ch <- prometheus.MustNewConstMetric(monitorSeen, prometheus.GaugeValue, float64(m.N), name)
		ch <- prometheus.MustNewConstMetric(monitorFull, prometheus.GaugeValue, full, name)
	}
}

// Config says what to serve and within which limits. Zero limits take the
// defaults.
type Config struct {
	Sets map[string]string // name → fitted set file (.json)
	// Collections maps a name to a collection file (.npz, .npy, .parquet)
	// or a database URL (clickhouse://…, once package retrieve/clickhouse
	// is imported). Files are read again on each Reload; a database is
	// opened once and kept (its table is live).
	Collections map[string]string
	MaxBody     int64 // bytes per request body; default 32 MiB
	MaxPoints   int   // points per request; default 100 000
	MaxResults  int   // retrieval hits returned at most; default 10 000
	// MonitorDelta is the alarm level of each set's OOD drift monitor: it
	// raises its alarm at 1/δ; default 0.01.
	MonitorDelta float64
	// MonitorLimit is the number of /ood points each set's monitor
	// observes (and keeps, 8 to 16 bytes each) before it is full and
	// observes no more until its reset; default 10⁶; negative: none.
	MonitorLimit int
	// MonitorSeed seeds the monitors' smoothing (ood.MonitorOptions.Seed):
	// each load's monitors take the next seed (the first load this one),
	// each reset the seed's next stream, so that no run repeats another's
	// draws. ccs serve draws it at start unless -monitor-seed gives it.
	MonitorSeed uint64
	// TransformBytes is the memory the single-norm, ellipsoid and head's
	// sets' transformed collections (retrieve.Collection.Transform: M·z of
	// every item, W·z behind a head, made at each load) may take in all; default 4 GiB; negative: none. A
	// transform that would not fit is refused, and GET /v1/sets says why;
	// that pair is then searched by the plain scan. During a reload the
	// old generation is served while the new one is built, so both
	// generations' transforms are held: up to twice this.
	TransformBytes int64
	// NoHalf keeps the in-memory collections from making their compact
	// copies (retrieve.Collection.NoHalf): the ℓ2 and generalized balls'
	// searches then scan the float32 rows alone, about twice as slow, and
	// the copies' memory (retrieve.HalfBytes, half again each
	// collection's, for the ℓ2 ball; retrieve.ByteBytes, a quarter, for
	// the generalized ball) is not taken. The transformed collections'
	// copies stay within TransformBytes.
	NoHalf bool

	// TokensFile, if set, is the tokens file (ReadTokens): every endpoint
	// but /healthz and /readyz then needs a token. It is read again on
	// each Reload.
	TokensFile string
	// Metrics is who may read /metrics when there are tokens.
	Metrics MetricsAccess
	// TLSCert and TLSKey, if set, are the PEM certificate chain and key
	// TLSConfig serves; read again on each Reload.
	TLSCert, TLSKey string
	// MaxConns caps the connections open at once (Listener); more wait
	// to be accepted. Default 1024.
	MaxConns int
	// MaxInflight is the number of requests handled at once (their bodies
	// decoded and scored); others wait for a turn. Default: 2 per CPU,
	// at least 4.
	MaxInflight int
	// BodyMemory is the memory all request bodies being read or handled
	// may hold; a body that would exceed it is refused with 503 rather
	// than queued. Default: 4 × MaxBody, at least 256 MiB. At least twice
	// MaxBody plus 128 KiB (a body's chunks and their joined copy).
	BodyMemory int64

	// Logger, if set, gets a line for each reload (what asked for it and
	// its outcome). Nil: nothing is logged.
	Logger *log.Logger
}

// MetricsAccess is who may read /metrics on a server with tokens.
type MetricsAccess int

const (
	// MetricsToken needs a read token (Prometheus: authorization.credentials_file).
	MetricsToken MetricsAccess = iota
	// MetricsOpen lets anyone who reaches the port read the metrics.
	MetricsOpen
	// MetricsOff does not serve /metrics.
	MetricsOff
)

// ParseMetricsAccess reads "token", "open" or "off".
func ParseMetricsAccess(s string) (MetricsAccess, error) {
	switch s {
	case "token":
		return MetricsToken, nil
	case "open":
		return MetricsOpen, nil
	case "off":
		return MetricsOff, nil
	}
	return 0, fmt.Errorf("metrics access %q: want token, open or off", s)
}

// withDefaults is c with its zero limits set to their defaults, or an
// error if a default would overflow.
func (c Config) withDefaults() (Config, error) {
	if c.MaxBody == 0 {
		c.MaxBody = 32 << 20
	}
	if c.MaxPoints == 0 {
		c.MaxPoints = 100_000
	}
	if c.MaxResults == 0 {
		c.MaxResults = 10_000
	}
	if c.MonitorDelta == 0 {
		c.MonitorDelta = 0.01
	}
	if c.MonitorLimit == 0 {
		c.MonitorLimit = 1_000_000
	}
	if c.TransformBytes == 0 {
		c.TransformBytes = 4 << 30
	}
	if c.MaxConns == 0 {
		c.MaxConns = 1024
	}
	if c.MaxInflight == 0 {
		c.MaxInflight = max(4, 2*runtime.GOMAXPROCS(0))
	}
	if c.BodyMemory == 0 && c.MaxBody > 0 {
		m, ok := mul64(4, c.MaxBody)
		if !ok {
			return c, fmt.Errorf("serve: -max-body %d: the default -body-memory, 4 × -max-body, overflows int64", c.MaxBody)
		}
		c.BodyMemory = max(256<<20, m)
	}
	return c, nil
}

// Check reports whether c's limits, with their defaults, are valid: each
// positive, the body memory at least 2 × MaxBody + 128 KiB, and every
// byte budget they imply (MemoryBound included) within an int64. It reads
// no file; New makes the same checks first. Its errors name the ccs serve
// flags.
func (c Config) Check() error {
	for _, m := range []struct {
		what  string
		names map[string]string
	}{{"set", c.Sets}, {"collection", c.Collections}} {
		for name := range m.names {
			if !ValidName(name) {
				return fmt.Errorf("serve: %s name %q: want a name that is one segment of a URL path: not empty, not . or .., without '/', '?', '#', '%%' or spaces", m.what, name)
			}
		}
	}
	_, err := c.MemoryBound()
	return err
}

// ValidName says whether name can name a set or a collection: it is one
// segment of the endpoints' paths (/v1/sets/NAME/score) as it is written,
// so not empty, not "." or ".." (a path's dot segments, which a client
// and the server's router resolve away), and without '/', '?', '#', '%'
// or white space.
func ValidName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/?#% \t\n\r\v\f")
}

// The constants of the memory bound (MemoryBound): the process's own
// memory (runtime, metrics, buffers; not the files loaded), and the
// working memory of a request being handled, per byte of MaxBody (its
// numbers decoded, in a margin: at most 2 bytes of float32 per byte of
// JSON) and per point of MaxPoints (scores, p-values, Benjamini–Hochberg's
// order, the monitor's p-values: about 60 bytes live on /ood, the
// heaviest).
const (
	processMemory = 64 << 20
	workPerBody   = 8
	workPerPoint  = 128
)

// MemoryBound is the bound on the server's resident memory stated in
// docs/security.md (and measured under hostile bodies):
//
//	64 MiB + 2 × (BodyMemory + MaxInflight × (8 × MaxBody + 128 × MaxPoints))
//
// with c's defaults — the process, plus twice (Go's collector lets the heap
// grow to twice what is live) the request bodies held and the working
// memory of each request being handled. It does not count the sets,
// collections and transforms loaded (their size is that of their files,
// half again for a collection an ℓ2 ball searches — its half-precision
// copy, retrieve.HalfBytes — and a quarter again for one a generalized
// ball searches — its 8-bit copy, retrieve.ByteBytes — unless NoHalf, and
// TransformBytes), nor the
// scores each OOD drift monitor keeps (8 to 16 bytes per point /ood has
// answered since the monitor's last reset, up to MonitorLimit points). An
// error says which limit is invalid or overflows.
func (c Config) MemoryBound() (int64, error) {
	c, err := c.withDefaults()
	if err != nil {
		return 0, err
	}
	switch {
	case c.MaxBody < 1 || c.MaxPoints < 1 || c.MaxResults < 1:
		return 0, fmt.Errorf("serve: limits must be positive (body %d, points %d, results %d)", c.MaxBody, c.MaxPoints, c.MaxResults)
	case !(c.MonitorDelta > 0 && c.MonitorDelta < 1):
		return 0, fmt.Errorf("serve: monitor δ = %v, want 0 < δ < 1", c.MonitorDelta)
	case c.MaxConns < 1 || c.MaxInflight < 1 || c.BodyMemory < 1:
		return 0, fmt.Errorf("serve: %d connections, %d requests at once, %d bytes of body memory: want at least 1 of each", c.MaxConns, c.MaxInflight, c.BodyMemory)
	}
	twice, ok := mul64(2, c.MaxBody)
	least, ok2 := add64(twice, 2*bodyChunk)
	if !ok || !ok2 {
		return 0, fmt.Errorf("serve: -max-body %d: 2 × -max-body + 128 KiB, the least -body-memory, overflows int64", c.MaxBody)
	}
	if c.BodyMemory < least {
		return 0, fmt.Errorf("serve: -body-memory %d: want at least 2 × -max-body + 128 KiB = %d (a body's chunks and their joined copy)", c.BodyMemory, least)
	}
	// Each step checked: v is the last result, ok whether all fitted.
	v, ok := int64(0), true
	step := func(r int64, fits bool) { v, ok = r, ok && fits }
	step(mul64(workPerBody, c.MaxBody))
	perBody := v
	step(mul64(workPerPoint, int64(c.MaxPoints)))
	step(add64(perBody, v))              // one request's working memory
	step(mul64(v, int64(c.MaxInflight))) // all requests'
	step(add64(v, c.BodyMemory))         // and the bodies
	step(mul64(2, v))                    // the collector's slack
	step(add64(v, processMemory))
	bound := v
	if !ok {
		return 0, fmt.Errorf("serve: the memory bound 64 MiB + 2 × (-body-memory + -max-inflight × (8 × -max-body + 128 × -max-points)) overflows int64 (-max-body %d, -max-points %d, -body-memory %d, -max-inflight %d)",
			c.MaxBody, c.MaxPoints, c.BodyMemory, c.MaxInflight)
	}
	return bound, nil
}

// state is one consistent generation of what is served.
type state struct {
	sets  map[string]*conformal.Set
	ood   map[string]*oodState // the sets with an OOD calibration
	colls map[string]retrieve.Store
	// transforms lists, by set, the collections transformed for it (or
	// why not).
	transforms map[string][]transformInfo
	// warnings holds each set's Warnings, made at load: a PAC set's
	// classes can take a quarter second to describe.
	warnings   map[string][]string
	loaded     time.Time
	generation uint64 // 1 for the first load, one more for each reload
}

// transformInfo is one single-norm set's transform of one collection, in
// GET /v1/sets.
type transformInfo struct {
	Collection string  `json:"collection"`
	Bytes      int64   `json:"bytes,omitempty"`
	Seconds    float64 `json:"seconds,omitempty"`
	Refused    string  `json:"refused,omitempty"`
}

// oodState is a set's per-input OOD test, prepared once per generation,
// and its drift monitor.
type oodState struct {
	test    *ood.Conformal // its level is each request's (With)
	monitor *ood.Monitor
	// pool indexes the reference pool's rows, exactly (the set file holds
	// them); cal is the filter of the OOD calibration's inputs the file
	// keeps (a Bloom filter: a new input matches it about once in 2 000);
	// nil for a set file without them. Points that are such rows are no
	// new inputs, and the monitor does not observe them (a pool row
	// scores 0, p-value 1).
	pool *bundle.RowIndex
	cal  *bundle.RowFilter
	// ties holds the test's TieWarning a level (ood.Test → string),
	// computed once: every answer at that level repeats it; at most
	// maxTieLevels levels are kept (clients choose them).
	ties  sync.Map
	nTies atomic.Int32
}

// maxTieLevels is how many levels' tie warnings a set's OOD test keeps.
const maxTieLevels = 64

// tieWarning is the set's TieWarning at test (cal, the set's OOD
// calibration), computed once a level, for the first maxTieLevels.
func (o *oodState) tieWarning(test ood.Test, cal *conformal.OODCalibration) string {
	if w, ok := o.ties.Load(test); ok {
		return w.(string)
	}
	w := test.TieWarning(cal)
	if o.nTies.Add(1) <= maxTieLevels {
		o.ties.Store(test, w)
	}
	return w
}

// Server serves fitted sets. Its handler is safe for concurrent use.
type Server struct {
	cfg      Config
	state    atomic.Pointer[state]
	draining atomic.Bool
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	reloads  *prometheus.CounterVec
	denied   *prometheus.CounterVec
	conns    prometheus.Gauge
	mux      *http.ServeMux
	handler  http.Handler // mux behind the check of the path (routes)

	tokens   atomic.Pointer[Tokens]          // nil: no tokens, everything open
	cert     atomic.Pointer[tls.Certificate] // nil: no TLS
	reloadMu sync.Mutex                      // one reload at a time
	releases atomic.Int64                    // loads whose garbage was returned to the system (tests)
	loads    atomic.Uint64                   // loads attempted: each load's monitors take the next seed
	inflight chan struct{}                   // a slot per request being handled
	bodies   *semaphore.Weighted             // request bodies' memory, in bytes

	dbMu sync.Mutex
	dbs  map[string]retrieve.Store // database collections by URL, kept over reloads
}

// openCollection reads a collection file, or returns the store of a
// database URL, opened on first use and kept: a reload re-reads files, but
// a database table is live and its connection stays.
func (s *Server) openCollection(spec string) (retrieve.Store, error) {
	if !retrieve.IsURL(spec) {
		return retrieve.ReadCollection(spec)
	}
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if db, ok := s.dbs[spec]; ok {
		return db, nil
	}
	db, err := retrieve.Open(context.Background(), spec)
	if err != nil {
		return nil, err
	}
	if s.dbs == nil {
		s.dbs = map[string]retrieve.Store{}
	}
	s.dbs[spec] = db
	return db, nil
}

// Close closes the database collections' connections.
func (s *Server) Close() error {
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	var errs []error
	for _, db := range s.dbs {
		errs = append(errs, db.Close())
	}
	s.dbs = nil
	return errors.Join(errs...)
}

// New loads every file of cfg (an error names the first bad one) and
// returns a server ready to serve them.
func New(cfg Config) (*Server, error) {
	if len(cfg.Sets) == 0 {
		return nil, errors.New("serve: no sets to serve")
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg, _ = cfg.withDefaults() // checked
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, errors.New("serve: give both a TLS certificate and its key, or neither")
	}
	s := &Server{cfg: cfg, reg: prometheus.NewRegistry(), inflight: make(chan struct{}, cfg.MaxInflight), bodies: semaphore.NewWeighted(cfg.BodyMemory)}
	if _, _, err := s.reload(); err != nil {
		s.Close() // the database connections opened so far
		return nil, err
	}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ccs_requests_total",
		Help: "Requests served, by endpoint and HTTP status code."}, []string{"endpoint", "code"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ccs_request_duration_seconds",
		Help:    "Request latency by endpoint.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16)}, []string{"endpoint"})
	s.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ccs_reloads_total",
		Help: "Reloads of the served files, by result."}, []string{"result"})
	s.denied = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ccs_auth_denied_total",
		Help: "Requests refused for their token, by reason: missing, malformed, wrong (401), role (403)."}, []string{"reason"})
	s.conns = prometheus.NewGauge(prometheus.GaugeOpts{Name: "ccs_open_connections",
		Help: "Connections open now (at most -max-conns)."})
	s.reg.MustRegister(s.requests, s.latency, s.reloads, s.denied, s.conns, monitorCollector{s},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.routes()
	return s, nil
}

// load reads and validates every file of cfg; open opens a collection. A
// set whose file is old's (the same FileChecksum under the same name)
// takes old's OOD state, its monitor going on (nil old: the first load).
func load(cfg Config, open func(spec string) (retrieve.Store, error), monitorSeed uint64, old *state) (*state, error) {
	st := &state{sets: map[string]*conformal.Set{}, ood: map[string]*oodState{}, colls: map[string]retrieve.Store{},
		warnings: map[string][]string{}, loaded: time.Now()}
	for _, name := range slices.Sorted(maps.Keys(cfg.Sets)) {
		set, err := conformal.Load(cfg.Sets[name])
		if err != nil {
			return nil, fmt.Errorf("set %q: %w", name, err)
		}
		if !set.Calibrated() {
			return nil, fmt.Errorf("set %q (%s): %w", name, cfg.Sets[name], conformal.ErrNotCalibrated)
		}
		st.sets[name] = set
		st.warnings[name] = set.Warnings()
		if o := old.oodOf(name, set); o != nil {
			st.ood[name] = o // the same file: its test and monitor as they are
		} else if set.OOD != nil {
			o, err := newOODState(set, cfg.MonitorDelta, cfg.MonitorLimit, monitorSeed)
			if err != nil {
				return nil, fmt.Errorf("set %q (%s): %w", name, cfg.Sets[name], err)
			}
			st.ood[name] = o
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Collections)) {
		c, err := open(cfg.Collections[name])
		if err != nil {
			return nil, fmt.Errorf("collection %q: %w", name, err)
		}
		if c, ok := c.(*retrieve.Collection); ok && cfg.NoHalf {
			c.NoHalf = true
		}
		st.colls[name] = c
	}
	transformAll(st, cfg.TransformBytes)
	prepareHalf(st) // nothing for a collection with NoHalf set above
	return st, nil
}

// prepareHalf makes the compact copies (retrieve.Collection.PrepareHalf,
// PrepareBytes) of each in-memory collection that a set screening it (an
// ℓ2 or generalized ball of its dimension) may search, at load rather
// than at its second query.
func prepareHalf(st *state) {
	for _, cn := range slices.Sorted(maps.Keys(st.colls)) {
		c, ok := st.colls[cn].(retrieve.HalfPreparer)
		if !ok {
			continue
		}
		// Each copy is made once, however many sets ask for it (a
		// class-conditional set's too: it retrieves with a class's
		// threshold).
		for _, set := range st.sets {
			if set.Geometry.Dim() != c.Dim() {
				continue
			}
			switch g, _ := geometry.Unshift(set.Geometry); g.(type) {
			case geometry.ByteScreener:
				c.PrepareBytes()
			case geometry.HalfScreener:
				c.PrepareHalf()
			}
		}
	}
}

// transformAll transforms each in-memory collection for each single-norm,
// ellipsoid or head's set of its dimension (retrieve.Transformable,
// retrieve.Collection.Transform), in name order, within budget bytes in
// all.
func transformAll(st *state, budget int64) {
	st.transforms = map[string][]transformInfo{}
	for _, sn := range slices.Sorted(maps.Keys(st.sets)) {
		set := st.sets[sn]
		// A shifted set's search moves its anchor (retrieve.Centred) and
		// scans its inner geometry's transform; a class-conditional set
		// retrieves with a class's set, made for each request
		// (conformal.Set.ForClass), which shares the set's geometry and
		// so the one transform made for it (kept by geometry: no copy per
		// class; a reload's sets have geometries of their own).
		if !retrieve.Transformable(set.Geometry) {
			continue
		}
		for _, cn := range slices.Sorted(maps.Keys(st.colls)) {
			c, ok := st.colls[cn].(retrieve.Transformer)
			if !ok || c.Dim() != set.Geometry.Dim() {
				continue
			}
			info := transformInfo{Collection: cn}
			n, err := c.Len(context.Background()) // a collection in memory: no query
			if err != nil {
				continue
			}
			need := retrieve.TransformBytesOf(set.Geometry, n)
			start := time.Now()
			switch {
			case budget < need:
				info.Refused = fmt.Sprintf("transform: needs %d MiB, %d MiB left of the limit (-transform-memory)", need>>20, max(budget, 0)>>20)
			default:
				if err := c.Transform(set, 0); err != nil {
					info.Refused = err.Error()
				} else {
					info.Bytes, info.Seconds = need, time.Since(start).Seconds()
					budget -= need
				}
			}
			st.transforms[sn] = append(st.transforms[sn], info)
		}
	}
}

// newOODState prepares a set's per-input OOD test (its pool mapped once)
// and starts its monitor.
func newOODState(set *conformal.Set, delta float64, limit int, seed uint64) (*oodState, error) {
	test, err := ood.NewConformal(set, ood.Test{})
	if err != nil {
		return nil, err
	}
	mon, err := ood.NewMonitor(test.Cal, ood.MonitorOptions{Delta: delta, Limit: max(limit, 0), Seed: seed})
	if err != nil {
		return nil, err
	}
	return &oodState{test: test, monitor: mon, pool: bundle.RowIndexOf(set.Reference.Rows, set.Geometry.Dim()), cal: set.OOD.Rows}, nil
}

// Reload reads every file again, in three parts each taken on its own: the
// tokens file, the TLS certificate, and the sets with their collections,
// which if all valid are served as the next generation. A part that fails
// keeps its previous version, and Reload returns every failure. In the new
// generation a set whose file is unchanged (its FileChecksum) keeps its OOD
// drift monitor — a reload that rotates tokens or renews a certificate
// neither wipes a raised alarm nor restarts the count — and a set whose
// file changed starts a monitor afresh (its calibration may have changed),
// a raised alarm so discarded logged with its value. Reloads are
// serialized. Trigger says what asked for the reload ("SIGHUP", …); it is
// logged with the outcome (Config.Logger).
func (s *Server) Reload(trigger string) error {
	prev := s.state.Load().generation
	gen, mon, err := s.reload()
	for _, line := range mon.dropped {
		s.logf("%s", line)
	}
	if err != nil {
		s.reloads.WithLabelValues("failed").Inc()
		sets := ""
		if gen != prev { // the sets' part went through: a new generation
			sets = fmt.Sprintf("; the sets and collections were reloaded, generation %d%s", gen, mon.summary())
		}
		s.logf("reload failed (%s; the parts that failed keep their previous version; serving generation %d%s): %v", trigger, gen, sets, err)
		return err
	}
	s.reloads.WithLabelValues("ok").Inc()
	s.logf("reloaded (%s): generation %d%s", trigger, gen, mon.summary())
	// What start-up warns of, a reload does too: a collection replaced by
	// one of another dimension.
	for _, w := range s.Warnings() {
		s.logf("warning: %s", w)
	}
	return nil
}

// monitorsKept says what a reload did with the OOD drift monitors: the
// sets that kept theirs (the same file), those started afresh, and a log
// line for each raised alarm discarded.
type monitorsKept struct {
	kept, fresh []string
	dropped     []string
}

// oodOf is the OOD state of the set named name in st, where its file is
// set's (the same FileChecksum) and it has one; nil otherwise (nil st
// included).
func (st *state) oodOf(name string, set *conformal.Set) *oodState {
	if st == nil || st.ood[name] == nil || st.sets[name] == nil {
		return nil
	}
	if sum := set.FileChecksum(); sum == "" || st.sets[name].FileChecksum() != sum {
		return nil
	}
	return st.ood[name]
}

// keepMonitors says what the load of next did with old's OOD monitors
// (load keeps those of unchanged files): the sets that kept theirs, those
// started afresh, and a log line for each raised alarm discarded.
func keepMonitors(old, next *state) monitorsKept {
	var mk monitorsKept
	for _, name := range slices.Sorted(maps.Keys(next.ood)) {
		if o := old.ood[name]; o != nil && next.ood[name] == o {
			mk.kept = append(mk.kept, strconv.Quote(name))
		} else {
			mk.fresh = append(mk.fresh, strconv.Quote(name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(old.ood)) {
		if o := old.ood[name]; next.ood[name] != o {
			if m := o.monitor.State(); m.Alarm {
				why := "its set file changed"
				if next.sets[name] == nil {
					why = "the set is no longer served"
				} else if next.ood[name] == nil {
					why = "its new set file has no OOD calibration"
				}
				mk.dropped = append(mk.dropped, fmt.Sprintf("set %q: its OOD drift monitor was in alarm (martingale %.3g reached 1/δ = %g at input %d; %d inputs seen) and is discarded: %s",
					name, m.Max, 1/m.Delta, m.AlarmAt, m.N, why))
			}
		}
	}
	return mk
}

// summary is the reload's log line's part about the monitors.
func (mk monitorsKept) summary() string {
	var parts []string
	if len(mk.kept) > 0 {
		parts = append(parts, fmt.Sprintf("OOD monitors kept for %s (set files unchanged)", strings.Join(mk.kept, ", ")))
	}
	if len(mk.fresh) > 0 {
		parts = append(parts, fmt.Sprintf("started afresh for %s (new set files: the false-alarm bound δ holds from each start)", strings.Join(mk.fresh, ", ")))
	}
	if parts == nil {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// logf logs a line through Config.Logger, if there is one.
func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logger != nil {
		s.cfg.Logger.Printf(format, args...)
	}
}

// reload is Reload without its count and log line; it returns the
// generation served when it is done, and which OOD monitors it kept.
func (s *Server) reload() (uint64, monitorsKept, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	// Each part is read and committed on its own: a revoked token takes
	// effect even while a set file is being rewritten, and a certificate
	// caught mid-renewal does not hold back new sets.
	var errs []error
	if s.cfg.TokensFile != "" {
		if t, err := ReadTokens(s.cfg.TokensFile); err != nil {
			errs = append(errs, err)
		} else {
			s.tokens.Store(t)
		}
	}
	if s.cfg.TLSCert != "" {
		if c, err := tls.LoadX509KeyPair(s.cfg.TLSCert, s.cfg.TLSKey); err != nil {
			errs = append(errs, fmt.Errorf("TLS certificate %s, key %s: %w", s.cfg.TLSCert, s.cfg.TLSKey, err))
		} else {
			s.cert.Store(&c)
		}
	}
	var mon monitorsKept
	old := s.state.Load()
	if st, err := load(s.cfg, s.openCollection, s.cfg.MonitorSeed+s.loads.Add(1)-1, old); err != nil {
		errs = append(errs, err)
	} else {
		st.generation = 1
		if old != nil {
			st.generation = old.generation + 1
			mon = keepMonitors(old, st)
		}
		s.state.Store(st)
	}
	var gen uint64
	if st := s.state.Load(); st != nil {
		gen = st.generation
	}
	// A load leaves garbage as large as what it read (a Parquet file's
	// pages, the previous generation), which the runtime would otherwise
	// keep mapped until the heap grows into it: 200 000 × 384 passages
	// from Parquet held 1.86 GB resident for 0.46 GB of rows and copy.
	debug.FreeOSMemory()
	s.releases.Add(1)
	return gen, mon, errors.Join(errs...)
}

// Monitors is the number of sets served with an OOD drift monitor (those
// with an OOD calibration).
func (s *Server) Monitors() int { return len(s.state.Load().ood) }

// Generation is the number of the files' generation being served: 1 after
// New, one more after each successful Reload.
func (s *Server) Generation() uint64 { return s.state.Load().generation }

// Warnings says what the served files leave unusable or unchecked: a
// collection of a dimension no set has, whose every retrieval would be
// refused (422), and a set file without its checksum.
func (s *Server) Warnings() []string {
	st := s.state.Load()
	dims := map[int][]string{}
	for name, set := range st.sets {
		d := set.Geometry.Dim()
		dims[d] = append(dims[d], name)
	}
	have := make([]string, 0, len(dims))
	for _, d := range slices.Sorted(maps.Keys(dims)) {
		have = append(have, fmt.Sprintf("%d (%s)", d, strings.Join(slices.Sorted(slices.Values(dims[d])), ", ")))
	}
	var w []string
	for _, name := range slices.Sorted(maps.Keys(st.sets)) {
		// A file whose threshold nothing checks: an operator must hear of
		// it where the service starts, not only in GET /v1/sets.
		if slices.Contains(st.sets[name].Warnings(), conformal.UncheckedWarning) {
			w = append(w, fmt.Sprintf("set %q: %s", name, conformal.UncheckedWarning))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(st.colls)) {
		if d := st.colls[name].Dim(); d > 0 && dims[d] == nil {
			hint := ""
			if c, ok := st.colls[name].(*retrieve.Collection); ok && dims[c.N] != nil {
				hint = fmt.Sprintf(" (its %d rows are a set's dimension: %s)", c.N, bundle.Transposed)
			}
			w = append(w, fmt.Sprintf("collection %q has dimension %d, and no set has: the sets' dimensions are %s, so every retrieval from it would be refused%s", name, d, strings.Join(have, "; "), hint))
		}
	}
	// A collection file whose rows are not of unit norm, beside a set
	// calibrated on unit-norm embeddings of its dimension: its items lie
	// where no calibration positive did (an encoder's output stored
	// without its normalisation, or all-zero rows of failed inputs).
	for _, name := range slices.Sorted(maps.Keys(st.colls)) {
		c, ok := st.colls[name].(*retrieve.Collection)
		if !ok || c.D == 0 {
			continue
		}
		var unit []string
		for _, set := range slices.Sorted(maps.Keys(st.sets)) {
			if s := st.sets[set]; s.Calibration.UnitNorm && s.Geometry.Dim() == c.D {
				unit = append(unit, set)
			}
		}
		if len(unit) == 0 {
			continue
		}
		if msg := retrieve.UnitNormWarning(fmt.Sprintf("collection %q", name), c, unit...); msg != "" {
			w = append(w, msg)
		}
	}
	return w
}

// TLSConfig is the TLS configuration serving the certificate of
// Config.TLSCert (Go's defaults, TLS 1.2 at least; the certificate as last
// loaded, so that a Reload renews it for new connections), or nil without
// one.
func (s *Server) TLSConfig() *tls.Config {
	if s.cfg.TLSCert == "" {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		return s.cert.Load(), nil
	}}
}

// Drain marks the server as stopping: /readyz answers 503 so that a load
// balancer stops sending requests, while in-flight and new requests are
// still served until the listener closes.
func (s *Server) Drain() { s.draining.Store(true) }

// StopOptions says how Stop drains the server.
type StopOptions struct {
	// Delay is how long the server goes on accepting and serving, /readyz
	// answering 503, before it stops accepting connections: a load
	// balancer's time to see the 503 and send no more. 0: none.
	Delay time.Duration
	// Grace is how long the requests in flight then have to finish.
	Grace time.Duration
	// Force, when it delivers (a second signal), ends either wait at
	// once, closing every connection.
	Force <-chan os.Signal
}

// ErrCut reports requests in flight that a Stop cut: they outlasted the
// grace, or a second signal came.
var ErrCut = errors.New("requests in flight were cut")

// errForced is the cause of a Stop cut short by StopOptions.Force.
var errForced = errors.New("a second signal")

// Stop drains s (Drain), serves on for opt.Delay, then shuts hs down,
// letting the requests in flight finish within opt.Grace; served is where
// hs.Serve's error arrives. Requests still running at the end of the grace,
// or at a second signal, are cut (their connections closed) and reported
// as ErrCut. It returns hs.Serve's error unless it is
// http.ErrServerClosed, the stop asked for: what ccs serve does on
// SIGTERM, and ccs.serve's close.
func (s *Server) Stop(hs *http.Server, served <-chan error, opt StopOptions) error {
	s.Drain()
	if opt.Delay > 0 {
		t := time.NewTimer(opt.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case err := <-served: // it failed meanwhile
			return err
		case <-opt.Force:
			hs.Close()
			<-served
			return fmt.Errorf("stopped at a second signal during the drain delay: %w", ErrCut)
		}
	}
	base, cancelBase := context.WithCancelCause(context.Background())
	defer cancelBase(nil)
	ctx, cancel := context.WithTimeout(base, opt.Grace)
	defer cancel()
	go func() {
		select {
		case <-opt.Force:
			cancelBase(errForced)
		case <-ctx.Done():
		}
	}()
	if err := hs.Shutdown(ctx); err != nil {
		// Shutdown leaves the connections still active open: close them.
		hs.Close()
		<-served
		if errors.Is(context.Cause(base), errForced) {
			return fmt.Errorf("stopped at a second signal: %w", ErrCut)
		}
		return fmt.Errorf("requests still running after the grace of %v: %w", opt.Grace, ErrCut)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// HTTPServer wraps the handler in an http.Server with read, write and idle
// timeouts: a client has 5 s to send its headers and 30 s for the whole
// request; an idle keep-alive connection is closed after 60 s. It counts
// the open connections (ccs_open_connections).
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{Addr: addr, Handler: s.handler,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 60 * time.Second,
		MaxHeaderBytes: 64 << 10,
		ConnState: func(_ net.Conn, cs http.ConnState) {
			switch cs {
			case http.StateNew:
				s.conns.Inc()
			case http.StateClosed, http.StateHijacked:
				s.conns.Dec()
			}
		}}
}

// Listener wraps ln: at most MaxConns connections are open at once (the
// next is accepted when one closes), and with a TLS certificate each is
// TLS. It returns the scheme to name, http or https.
func (s *Server) Listener(ln net.Listener) (net.Listener, string) {
	ln = netutil.LimitListener(ln, s.cfg.MaxConns)
	if tc := s.TLSConfig(); tc != nil {
		return tls.NewListener(ln, tc), "https"
	}
	return ln, "http"
}
