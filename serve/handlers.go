package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/retrieve"
)

// apiError is an error answered as {"error": {"code", "message", "field"}}.
type apiError struct {
	status int
	code   string
	msg    string
	field  string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "bad_request", msg: fmt.Sprintf(format, args...), field: field}
}

func invalid(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, code: "invalid", msg: fmt.Sprintf(format, args...), field: field}
}

func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = &apiError{status: http.StatusInternalServerError, code: "internal", msg: err.Error()}
	}
	if e.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	type body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field,omitempty"`
	}
	writeJSON(w, e.status, map[string]body{"error": {e.code, e.msg, e.field}})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := w.Write(b.Bytes())
	return err
}

// number is a float64 that JSON-encodes ±Inf as the strings "+Inf"/"-Inf".
type number float64

func (n number) MarshalJSON() ([]byte, error) {
	switch f := float64(n); {
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	case math.IsNaN(f):
		return []byte(`null`), nil
	}
	return json.Marshal(float64(n))
}

func numbers(x []float64) []number {
	out := make([]number, len(x))
	for i, v := range x {
		out[i] = number(v)
	}
	return out
}

// lookupSet finds the set of the path's {name}.
func (s *Server) lookupSet(r *http.Request) (*state, string, *conformal.Set, error) {
	st := s.state.Load()
	name := r.PathValue("name")
	set, ok := st.sets[name]
	if !ok {
		return nil, "", nil, &apiError{status: http.StatusNotFound, code: "unknown_set",
			msg: fmt.Sprintf("no set %q (have %v)", name, slices.Sorted(maps.Keys(st.sets))), field: "name"}
	}
	return st, name, set, nil
}

// isNPY reports whether the request carries a .npy body; another content
// type than JSON or .npy is an error.
func isNPY(r *http.Request) (bool, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return false, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false, &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type", msg: fmt.Sprintf("Content-Type %q: %v", ct, err)}
	}
	switch mt {
	case "application/json":
		return false, nil
	case "application/x-npy":
		return true, nil
	}
	return false, &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
		msg: fmt.Sprintf("Content-Type %q: want application/json or application/x-npy", mt)}
}

// bodyError maps a body-reading error to its answer.
func bodyError(err error, what string) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "body_too_large",
			msg: fmt.Sprintf("the request body exceeds %d bytes", tooBig.Limit)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &apiError{status: http.StatusRequestTimeout, code: "timeout", msg: fmt.Sprintf("the %s did not arrive in time", what)}
	}
	return badRequest("", "malformed %s: %v", what, err)
}

// decodeJSON reads one JSON object into v: unknown fields and trailing
// data are errors.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("", "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("", "malformed JSON: data after the request object")
	}
	return nil
}

// The fields each kind of request body may have.
var (
	pointFields    = map[string]bool{"anchor": true, "points": true}
	scoreFields    = map[string]bool{"anchor": true, "points": true, "label": true}
	retrieveFields = map[string]bool{"anchor": true, "collection": true, "limit": true}
)

// readRequest reads a JSON body with the given fields: the fast decoder
// for the common shape, encoding/json (the reference, with its error
// messages) for anything else.
func readRequest(r *http.Request, fields map[string]bool) (request, error) {
	body, err := bodyOf(r)
	if err != nil {
		return request{}, err
	}
	if req, ok := fastDecode(body, fields); ok {
		return req, nil
	}
	return slowDecode(body, fields)
}

// bodyOf is the request's body: as endpoint read it within its limits, or
// read here for a handler reached otherwise.
func bodyOf(r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(bufferedBody); ok {
		return b.data, nil
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, bodyError(err, "request body")
	}
	return data, nil
}

// slowDecode decodes body with encoding/json into the struct that has
// exactly fields.
func slowDecode(body []byte, fields map[string]bool) (request, error) {
	var req request
	if fields["label"] {
		var v struct {
			Anchor []float64   `json:"anchor"`
			Points [][]float64 `json:"points"`
			Label  *int64      `json:"label"`
		}
		err := decodeJSON(body, &v)
		req.Anchor, req.Points, req.Label = v.Anchor, v.Points, v.Label
		return req, err
	}
	if fields["points"] {
		var v struct {
			Anchor []float64   `json:"anchor"`
			Points [][]float64 `json:"points"`
		}
		err := decodeJSON(body, &v)
		req.Anchor, req.Points = v.Anchor, v.Points
		return req, err
	}
	var v struct {
		Anchor     []float64 `json:"anchor"`
		Collection string    `json:"collection"`
		Limit      *int      `json:"limit"`
	}
	err := decodeJSON(body, &v)
	req.Anchor, req.Collection, req.Limit = v.Anchor, v.Collection, v.Limit
	return req, err
}

// decodeNPY reads a float32 .npy body of at most maxRows rows of dimension
// d: shape (d,) is one row, (m, d) m rows.
func decodeNPY(r *http.Request, d, maxRows int) ([]float32, error) {
	body, err := bodyOf(r)
	if err != nil {
		return nil, err
	}
	// The body's length bounds what its header may announce.
	a, err := bundle.DecodeNPYBytes(body, "body", (maxRows+1)*d)
	if err != nil {
		return nil, badRequest("", "%v", err)
	}
	if a.F32 == nil {
		return nil, invalid("", ".npy body: dtype must be floating point (float32, or float64 or float16, converted)")
	}
	switch {
	case len(a.Shape) == 1 && a.Shape[0] == d:
	case len(a.Shape) == 2 && a.Shape[1] == d:
	default:
		return nil, invalid("", ".npy body: shape %v, want (%d,) or (m, %d): the set's dimension is %d", a.Shape, d, d, d)
	}
	for i, v := range a.F32 {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, invalid(fmt.Sprintf("body[%d][%d]", i/d, i%d), "coordinate is %v", v)
		}
	}
	return a.F32, nil
}

// vector converts a JSON vector of dimension d to float32, naming the
// field of a wrong length or a value that is not a finite float32.
func vector(dst []float32, field string, x []float64, d int) ([]float32, error) {
	if len(x) != d {
		return nil, invalid(field, "has %d coordinates, the set's dimension is %d", len(x), d)
	}
	for j, v := range x {
		f := float32(v)
		if math.IsNaN(v) || math.IsInf(float64(f), 0) {
			return nil, invalid(fmt.Sprintf("%s[%d]", field, j), "%v is not a finite float32", v)
		}
		dst = append(dst, f)
	}
	return dst, nil
}

func (s *Server) checkCount(m int) error {
	switch {
	case m == 0:
		return invalid("points", "no points")
	case m > s.cfg.MaxPoints:
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "too_many_points",
			msg: fmt.Sprintf("%d points, at most %d per request", m, s.cfg.MaxPoints), field: "points"}
	}
	return nil
}

// points reads the points of a request (and, with anchor, its anchor):
// JSON fields, or a .npy body whose first row is the anchor.
func (s *Server) points(r *http.Request, d int, anchor bool) (a, pts []float32, err error) {
	a, pts, _, err = s.pointsLabel(r, d, anchor, pointFields)
	return a, pts, err
}

// pointsLabel is points for a body that may also carry the anchor's
// label (fields with "label"; in an .npy request, the query's ?label=).
func (s *Server) pointsLabel(r *http.Request, d int, anchor bool, fields map[string]bool) (a, pts []float32, label *int64, err error) {
	npy, err := isNPY(r)
	if err != nil {
		return nil, nil, nil, err
	}
	if npy {
		if q := r.URL.Query().Get("label"); q != "" && fields["label"] {
			l, err := strconv.ParseInt(q, 10, 64)
			if err != nil {
				return nil, nil, nil, invalid("label", "%q is not an integer", q)
			}
			label = &l
		}
		rows, err := decodeNPY(r, d, s.cfg.MaxPoints+1)
		if err != nil {
			return nil, nil, nil, err
		}
		if anchor {
			if len(rows) < 2*d {
				return nil, nil, nil, invalid("", ".npy body: want the anchor then at least one point, (1+m, %d)", d)
			}
			a, rows = rows[:d], rows[d:]
		}
		if err := s.checkCount(len(rows) / d); err != nil {
			return nil, nil, nil, err
		}
		return a, rows, label, nil
	}
	req, err := readRequest(r, fields)
	if err != nil {
		return nil, nil, nil, err
	}
	label = req.Label
	if anchor {
		if req.Anchor == nil {
			return nil, nil, nil, invalid("anchor", "missing")
		}
		if a, err = vector(nil, "anchor", req.Anchor, d); err != nil {
			return nil, nil, nil, err
		}
	} else if req.Anchor != nil {
		return nil, nil, nil, badRequest("anchor", "this endpoint takes no anchor")
	}
	if err := s.checkCount(len(req.Points)); err != nil {
		return nil, nil, nil, err
	}
	pts = make([]float32, 0, len(req.Points)*d)
	for i, p := range req.Points {
		if pts, err = vector(pts, fmt.Sprintf("points[%d]", i), p, d); err != nil {
			return nil, nil, nil, err
		}
	}
	return a, pts, label, nil
}

// setInfo is one set in GET /v1/sets.
type setInfo struct {
	Name        string          `json:"name"`
	Geometry    string          `json:"geometry"`
	Dim         int             `json:"dim"`
	Head        string          `json:"head,omitempty"`
	Alpha       float64         `json:"alpha"`
	Threshold   number          `json:"threshold"`
	Guarantee   string          `json:"guarantee"`
	Calibration conformal.Info  `json:"calibration"`
	Classes     []classInfo     `json:"classes,omitempty"` // a class-conditional set's thresholds
	Reference   int             `json:"ood_reference_rows"`
	OOD         *oodInfo        `json:"ood,omitempty"`
	Transforms  []transformInfo `json:"transforms,omitempty"`
	Warnings    []string        `json:"warnings"`
}

// classInfo is one class's threshold in GET /v1/sets.
type classInfo struct {
	Label     int64  `json:"label"`
	N         int    `json:"n"`
	Rank      int    `json:"rank"`
	Threshold number `json:"threshold"`
}

func classInfos(set *conformal.Set) []classInfo {
	var out []classInfo
	for _, c := range set.Classes {
		out = append(out, classInfo{c.Label, c.N, c.Rank, number(c.Threshold)})
	}
	return out
}

// oodInfo is a set's per-input OOD test in GET /v1/sets.
type oodInfo struct {
	K           int              `json:"k"`
	Calibration int              `json:"calibration_n"`
	MinAlpha    float64          `json:"min_alpha_ood"`
	Monitor     ood.MonitorState `json:"monitor"`
}

func (s *Server) listSets(w http.ResponseWriter, r *http.Request) error {
	st := s.state.Load()
	var out []setInfo
	for _, name := range slices.Sorted(maps.Keys(st.sets)) {
		set := st.sets[name]
		info := setInfo{Name: name, Geometry: set.Geometry.Kind().String(), Dim: set.Geometry.Dim(), Alpha: set.Alpha,
			Threshold: number(set.Threshold), Guarantee: set.Guarantee(), Calibration: set.Calibration, Classes: classInfos(set), Warnings: set.Warnings()}
		if d := geometry.Describe(set.Geometry); d.Head() {
			info.Head = fmt.Sprintf("%d→%d", d.HeadIn, d.HeadOut)
		}
		if set.Reference != nil {
			info.Reference = set.Reference.N
		}
		if o := st.ood[name]; o != nil {
			info.OOD = &oodInfo{K: o.near.K(), Calibration: o.cal.N(), MinAlpha: ood.Test{}.MinAlpha(o.cal.N()), Monitor: o.monitor.State()}
		}
		info.Transforms = st.transforms[name]
		if info.Warnings == nil {
			info.Warnings = []string{}
		}
		out = append(out, info)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"generation": st.generation, "sets": out})
}

// chunk is the number of points scored between checks of the request's
// context.
const chunk = 1024

// score answers whether each point is inside the set around the anchor.
func (s *Server) score(w http.ResponseWriter, r *http.Request) error {
	st, name, set, err := s.lookupSet(r)
	if err != nil {
		return err
	}
	d := set.Geometry.Dim()
	anchor, pts, label, err := s.pointsLabel(r, d, true, scoreFields)
	if err != nil {
		return err
	}
	// A class-conditional set judges with the anchor's class's threshold;
	// another set has one threshold and takes no label.
	q := set.Threshold
	if !set.ClassConditional() && label != nil {
		return invalid("label", "set %q has one threshold: it takes no label", name)
	}
	if set.ClassConditional() {
		if label == nil {
			return invalid("label", "set %q is class-conditional: give the anchor's label (\"label\", or ?label= with an .npy body)", name)
		}
		if q, err = set.ThresholdFor(*label); err != nil {
			return invalid("label", "%v", err)
		}
	}
	m := len(pts) / d
	diffs := make([]float32, len(pts))
	for i := range m {
		for j := range d {
			diffs[i*d+j] = anchor[j] - pts[i*d+j]
		}
	}
	scores := make([]float64, m)
	for lo := 0; lo < m; lo += chunk {
		if err := r.Context().Err(); err != nil {
			return cancelled(err)
		}
		hi := min(m, lo+chunk)
		set.Geometry.Scores(scores[lo:hi], diffs[lo*d:hi*d])
	}
	inside := make([]bool, m)
	for i, v := range scores {
		inside[i] = v <= q
	}
	return writeJSON(w, http.StatusOK, struct {
		Set        string   `json:"set"`
		Generation uint64   `json:"generation"`
		Threshold  number   `json:"threshold"`
		Scores     []number `json:"scores"`
		Inside     []bool   `json:"inside"`
	}{name, st.generation, number(q), numbers(scores), inside})
}

// oneThreshold refuses a class-conditional set on the endpoints that judge
// without a label.
func oneThreshold(name string, set *conformal.Set) error {
	if set.ClassConditional() {
		return &apiError{status: http.StatusUnprocessableEntity, code: "class_conditional",
			msg: fmt.Sprintf("set %q is class-conditional: this endpoint has no label to choose its threshold (use /score with \"label\")", name), field: "name"}
	}
	return nil
}

func cancelled(err error) error {
	return &apiError{status: 499, code: "cancelled", msg: "request cancelled: " + err.Error()}
}

// ood answers the per-input OOD test of the points: each point's score
// (the K-th nearest pool anchor under the set's score, over q̂), its
// conformal p-value and whether the test flags it at α_ood; with ?fdr=Q,
// the points Benjamini–Hochberg flags as one batch. A set without an OOD
// calibration is refused: its per-input answers would carry no guarantee.
func (s *Server) ood(w http.ResponseWriter, r *http.Request) error {
	st, name, set, err := s.lookupSet(r)
	if err != nil {
		return err
	}
	if err := oneThreshold(name, set); err != nil {
		return err
	}
	o := st.ood[name]
	if o == nil {
		return &apiError{status: http.StatusUnprocessableEntity, code: "no_ood_calibration",
			msg: fmt.Sprintf("set %q has no OOD calibration, so its per-input OOD answers would carry no guarantee: calibrate it with -reference N (or -reference-db FILE) and -ood-cal FILE", name), field: "name"}
	}
	test, fdr, err := oodParams(r, o.cal.N())
	if err != nil {
		return err
	}
	d := set.Geometry.Dim()
	_, pts, err := s.points(r, d, false)
	if err != nil {
		return err
	}
	m := len(pts) / d
	scores := make([]float64, 0, m)
	for lo := 0; lo < m; lo += chunk {
		if err := r.Context().Err(); err != nil {
			return cancelled(err)
		}
		sc, err := o.near.Scores(pts[lo*d : min(m, lo+chunk)*d])
		if err != nil {
			return invalid("points", "%v", err)
		}
		scores = append(scores, sc...)
	}
	p := test.PValues(o.cal, scores)
	type result struct {
		Score  number  `json:"score"`
		PValue float64 `json:"p_value"`
		OOD    bool    `json:"ood"`
	}
	results := make([]result, m)
	for i := range m {
		results[i] = result{number(scores[i]), p[i], p[i] <= test.Alpha}
	}
	resp := struct {
		Set        string            `json:"set"`
		Generation uint64            `json:"generation"`
		Threshold  number            `json:"threshold"`
		Reference  int               `json:"reference_rows"`
		K          int               `json:"k"`
		AlphaOOD   float64           `json:"alpha_ood"`
		Delta      float64           `json:"delta,omitempty"`
		Guarantee  string            `json:"guarantee"`
		Scores     []number          `json:"scores"`
		Results    []result          `json:"results"`
		FDR        float64           `json:"fdr,omitempty"`
		Flagged    []int             `json:"flagged,omitempty"`
		Monitor    *ood.MonitorState `json:"monitor"`
	}{Set: name, Generation: st.generation, Threshold: number(set.Threshold), Reference: set.Reference.N, K: o.near.K(), AlphaOOD: test.Alpha, Delta: test.Delta,
		Guarantee: test.String(), Scores: numbers(scores), Results: results}
	if fdr > 0 {
		resp.FDR = fdr
		// BH on the marginal p-values: their positive dependence (PRDS) is
		// what its guarantee rests on.
		if resp.Flagged, err = ood.BenjaminiHochberg(o.cal.PValues(scores), fdr); err != nil {
			return invalid("fdr", "%v", err)
		}
		if resp.Flagged == nil {
			resp.Flagged = []int{}
		}
	}
	if _, err := o.monitor.Observe(scores); err != nil {
		return invalid("points", "%v", err)
	}
	ms := o.monitor.State()
	resp.Monitor = &ms
	return writeJSON(w, http.StatusOK, resp)
}

// oodParams reads ?alpha_ood (default 0.05), ?delta (default 0) and ?fdr
// (default 0: none), refusing a level n calibration scores cannot reach.
func oodParams(r *http.Request, n int) (ood.Test, float64, error) {
	q := r.URL.Query()
	get := func(name string, def float64) (float64, error) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, badRequest(name, "%q is not a number", v)
		}
		return f, nil
	}
	alpha, err := get("alpha_ood", 0.05)
	if err != nil {
		return ood.Test{}, 0, err
	}
	delta, err := get("delta", 0)
	if err != nil {
		return ood.Test{}, 0, err
	}
	fdr, err := get("fdr", 0)
	if err != nil {
		return ood.Test{}, 0, err
	}
	test := ood.Test{Alpha: alpha, Delta: delta}
	if err := test.Check(n); err != nil {
		field := "alpha_ood"
		if !(delta >= 0 && delta < 1) {
			field = "delta"
		}
		return ood.Test{}, 0, invalid(field, "%v", err)
	}
	if fdr != 0 && !(fdr > 0 && fdr < 1) {
		return ood.Test{}, 0, invalid("fdr", "FDR level %v, want 0 < q < 1", fdr)
	}
	return test, fdr, nil
}

// resetMonitor starts a set's OOD drift monitor afresh.
func (s *Server) resetMonitor(w http.ResponseWriter, r *http.Request) error {
	st, name, _, err := s.lookupSet(r)
	if err != nil {
		return err
	}
	o := st.ood[name]
	if o == nil {
		return &apiError{status: http.StatusUnprocessableEntity, code: "no_ood_calibration",
			msg: fmt.Sprintf("set %q has no OOD calibration, so no monitor", name), field: "name"}
	}
	o.monitor.Reset()
	return writeJSON(w, http.StatusOK, map[string]any{"set": name, "generation": st.generation, "monitor": o.monitor.State()})
}

// retrieve answers the collection items inside the set around the anchor.
func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) error {
	st, name, set, err := s.lookupSet(r)
	if err != nil {
		return err
	}
	if err := oneThreshold(name, set); err != nil {
		return err
	}
	d := set.Geometry.Dim()
	var req request
	var anchor []float32
	npy, err := isNPY(r)
	if err != nil {
		return err
	}
	if npy {
		if anchor, err = decodeNPY(r, d, 1); err != nil {
			return err
		}
		if len(anchor) != d {
			return invalid("", ".npy body: one anchor of dimension %d, got %d values", d, len(anchor))
		}
		req.Collection = r.URL.Query().Get("collection")
		if l := r.URL.Query().Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil {
				return badRequest("limit", "limit %q is not an integer", l)
			}
			req.Limit = &n
		}
	} else {
		if req, err = readRequest(r, retrieveFields); err != nil {
			return err
		}
		if req.Anchor == nil {
			return invalid("anchor", "missing")
		}
		if anchor, err = vector(nil, "anchor", req.Anchor, d); err != nil {
			return err
		}
	}
	limit := s.cfg.MaxResults
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > s.cfg.MaxResults {
			return invalid("limit", "limit %d: want 1 to %d", *req.Limit, s.cfg.MaxResults)
		}
		limit = *req.Limit
	}
	if req.Collection == "" {
		return invalid("collection", "missing")
	}
	c, ok := st.colls[req.Collection]
	if !ok {
		return &apiError{status: http.StatusNotFound, code: "unknown_collection",
			msg: fmt.Sprintf("no collection %q (have %v)", req.Collection, slices.Sorted(maps.Keys(st.colls))), field: "collection"}
	}
	if c.Dim() != d {
		return invalid("collection", "collection %q has dimension %d, set %q has %d", req.Collection, c.Dim(), name, d)
	}
	hits, total, err := c.Search(r.Context(), set, anchor, limit)
	switch {
	case err == nil:
	case r.Context().Err() != nil:
		return cancelled(err)
	case errors.Is(err, retrieve.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded):
		// A database that failed: no answer rather than part of one.
		return &apiError{status: http.StatusBadGateway, code: "collection_unavailable",
			msg: fmt.Sprintf("collection %q: %v", req.Collection, err), field: "collection"}
	default:
		return invalid("", "%v", err)
	}
	if hits == nil {
		hits = []retrieve.Hit{}
	}
	return writeJSON(w, http.StatusOK, struct {
		Set        string         `json:"set"`
		Generation uint64         `json:"generation"`
		Collection string         `json:"collection"`
		Threshold  number         `json:"threshold"`
		Total      int            `json:"total"`
		Truncated  bool           `json:"truncated"`
		Hits       []retrieve.Hit `json:"hits"`
	}{name, st.generation, req.Collection, number(set.Threshold), total, total > len(hits), hits})
}
