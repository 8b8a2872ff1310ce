package serve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/suggest"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/retrieve"
)

// lookupSet finds the set of the path's {name}.
func (s *Server) lookupSet(r *http.Request) (*state, string, *conformal.Set, error) {
	st := s.state.Load()
	name := r.PathValue("name")
	set, ok := st.sets[name]
	if !ok {
		have := slices.Sorted(maps.Keys(st.sets))
		return nil, "", nil, &apiError{status: http.StatusNotFound, code: "unknown_set",
			msg: fmt.Sprintf("no set %s (have %v)%s", quote(name), have, suggest.DidYouMean(name, have)), field: "name"}
	}
	return st, name, set, nil
}

// setInfo is one set in GET /v1/sets.
type setInfo struct {
	Name string `json:"name"`
	// Checksum names the set file served (conformal.Set.FileChecksum):
	// what every answer about the set carries beside its generation.
	Checksum string `json:"checksum"`
	Geometry string `json:"geometry"`
	Dim      int    `json:"dim"`
	Head     string `json:"head,omitempty"`
	// ShiftNorm is ‖c‖ for a set centred at anchor + c (geometry.Shifted).
	ShiftNorm   float64         `json:"shift_norm,omitempty"`
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
	Label int64 `json:"label"`
	// Name is the class's name when the set was calibrated on string
	// labels (the set file's): what a client maps to the label /score
	// takes.
	Name      string `json:"name,omitempty"`
	N         int    `json:"n"`
	Rank      int    `json:"rank"`
	Threshold number `json:"threshold"`
}

func classInfos(set *conformal.Set) []classInfo {
	var out []classInfo
	for _, c := range set.Classes {
		out = append(out, classInfo{c.Label, c.Name, c.N, c.Rank, number(c.Threshold)})
	}
	return out
}

// oodInfo is a set's per-input OOD test in GET /v1/sets.
type oodInfo struct {
	K           int          `json:"k"`
	Calibration int          `json:"calibration_n"`
	MinAlpha    float64      `json:"min_alpha_ood"`
	Monitor     monitorState `json:"monitor"`
	// Class is the class of a test of one class alone (calibrate
	// -ood-class), whose bound is over that class's inputs; absent for
	// a test over all in-distribution inputs.
	Class *conformal.OODClass `json:"class,omitempty"`
}

func (s *Server) listSets(w http.ResponseWriter, r *http.Request) error {
	st := s.state.Load()
	var out []setInfo
	for _, name := range slices.Sorted(maps.Keys(st.sets)) {
		set := st.sets[name]
		info := setInfo{Name: name, Checksum: set.FileChecksum(), Geometry: set.Geometry.Kind().String(), Dim: set.Geometry.Dim(), Alpha: set.Alpha,
			Threshold: number(set.Threshold), Guarantee: set.Guarantee(), Calibration: set.Calibration, Classes: classInfos(set), Warnings: st.warnings[name]}
		if d := geometry.Describe(set.Geometry); d.Head() {
			info.Head = fmt.Sprintf("%d→%d", d.HeadIn, d.HeadOut)
		}
		if sh, ok := set.Geometry.(*geometry.Shifted); ok {
			info.ShiftNorm = sh.ShiftNorm()
		}
		if set.Reference != nil {
			info.Reference = set.Reference.N
		}
		if o := st.ood[name]; o != nil {
			n := o.test.Cal.N()
			info.OOD = &oodInfo{K: o.test.Score.K(), Calibration: n, MinAlpha: ood.Test{}.MinAlpha(n), Monitor: monitorOf(o.monitor), Class: set.OOD.Class}
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
	anchor, pts, ref, err := s.pointsLabel(r, d, true, fieldAnchor|fieldPoints|fieldLabel)
	if err != nil {
		return err
	}
	if err := checkNorms(set, name, anchor, pts); err != nil {
		return err
	}
	judged, err := anchorClass(set, name, ref)
	if err != nil {
		return err
	}
	q := judged.Threshold
	// The points are this request's own: their differences to the anchor
	// take their place.
	m := len(pts) / d
	diffs := pts
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
	// The class whose threshold judged, as /retrieve names it: the
	// label's, or that of a set calibrated on one class's anchors.
	keys, kv := []string{"set", "generation", "checksum"}, []any{"set", name, "generation", st.generation, "checksum", set.FileChecksum()}
	if label, class := judged.Calibration.Class.LabelAndName(); label != nil {
		keys, kv = append(keys, "label"), append(kv, "label", *label)
		if class != "" {
			keys, kv = append(keys, "class"), append(kv, "class", class)
		}
	}
	keys, kv = append(keys, "threshold"), append(kv, "threshold", number(q))
	head, err := fields(kv...)
	if err != nil {
		return err
	}
	out := newStream(w, http.StatusOK)
	for _, name := range keys {
		out.raw(name, head[name])
	}
	out.array("scores", m, func(b []byte, i int) []byte { return appendNumber(b, scores[i]) })
	out.array("inside", m, func(b []byte, i int) []byte { return strconv.AppendBool(b, scores[i] <= q) })
	warnings := wholeSpace(judged, "every point is inside it")
	if retrieve.AllZero(anchor) {
		warnings = append(warnings, retrieve.ZeroAnchor("the anchor is all zeros", "its set is judged like any other, centred on "+retrieve.ZeroCentre(set)))
	}
	if warnings != nil {
		warn, err := indented(warnings) // as encoding/json indents the whole answer
		if err != nil {
			return err
		}
		out.raw("warnings", warn)
	}
	return out.close()
}

// wholeSpace warns, where the set that judged (a class's, for a
// class-conditional set) has threshold +Inf, that it is the whole space,
// which an answer's "inside" or hits do not show; what says what that
// means for the answer. Nil for a finite threshold.
func wholeSpace(judged *conformal.Set, what string) []string {
	if !math.IsInf(judged.Threshold, 1) {
		return nil
	}
	who := "the set"
	if label, class := judged.Calibration.Class.LabelAndName(); label != nil {
		who = fmt.Sprintf("class %d's set", *label)
		if class != "" {
			who = fmt.Sprintf("class %q's set", class)
		}
	}
	return []string{fmt.Sprintf("%s is the whole space: %s, which says nothing of it: %s", who, what, judged.WholeSpaceReason())}
}

// checkNorms refuses an anchor or point that is not of unit norm for a
// set calibrated on unit-norm embeddings (conformal.Set.CheckNorms), and
// an anchor for a set calibrated around unit-norm anchors
// (CheckAnchorNorms), naming it.
func checkNorms(set *conformal.Set, name string, anchor, pts []float32) error {
	var ne *conformal.NormError
	if err := set.CheckAnchorNorms(anchor); errors.As(err, &ne) {
		return invalid("anchor", "set %q: anchor: %v", name, err)
	}
	if err := set.CheckNorms(pts); errors.As(err, &ne) {
		return invalid(vectorName(ne.Row), "set %q: %s: %v", name, vectorName(ne.Row), err)
	}
	return nil
}

// oneThreshold refuses a class-conditional set on the endpoints that judge
// without a label (/ood).
func oneThreshold(name string, set *conformal.Set) error {
	if err := set.OneThreshold(); err != nil {
		return &apiError{status: http.StatusUnprocessableEntity, code: "class_conditional",
			msg: fmt.Sprintf("set %q: %s, and this endpoint has none to give: %s, and serve it beside this one (/score and /retrieve take a \"label\")", name, strings.TrimPrefix(err.Error(), "conformal: "), conformal.OODOneThreshold), field: "name"}
	}
	return nil
}

// oodField is the request part a refused test's parameters blame: delta
// where δ is outside [0, conformal.MaxDelta), else alpha_ood.
func oodField(t ood.Test) string {
	if !(t.Delta >= 0 && t.Delta < conformal.MaxDelta) {
		return "delta"
	}
	return "alpha_ood"
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
	test, fdr, err := oodParams(r, o.test.Cal.N())
	if err != nil {
		return err
	}
	d := set.Geometry.Dim()
	_, pts, err := s.points(r, d, false)
	if err != nil {
		return err
	}
	m := len(pts) / d
	if err := checkNorms(set, name, nil, pts); err != nil { // points[i] named, as /score names it
		return err
	}
	c, err := o.test.With(test)
	if err != nil {
		return invalid(oodField(test), "%v", err)
	}
	// The scores, p-values and flags, and with fdr Benjamini–Hochberg on
	// the marginal p-values (whose positive dependence its guarantee rests
	// on): package ood's one pipeline.
	ans, err := c.Answer(r.Context(), pts, fdr)
	switch {
	case r.Context().Err() != nil:
		return cancelled(r.Context().Err())
	case err != nil:
		return invalid("points", "%v", err)
	}
	scores := make([]float64, m)
	for i, res := range ans.Results {
		scores[i] = res.Score
	}
	flagged := ans.Flagged
	// The monitor watches new inputs: a point that is a row of the pool
	// or an input the OOD test was calibrated on is answered, not
	// observed.
	var pooled, calibrated []int
	fresh := scores
	for i := range m {
		row := pts[i*d : (i+1)*d]
		switch {
		case o.pool.Has(row):
			pooled = append(pooled, i)
		case o.cal.Has(row):
			calibrated = append(calibrated, i)
		default:
			if len(pooled)+len(calibrated) > 0 {
				fresh = append(fresh, scores[i])
			}
			continue
		}
		if len(pooled)+len(calibrated) == 1 {
			fresh = append([]float64(nil), scores[:i]...)
		}
	}
	if err := r.Context().Err(); err != nil {
		return cancelled(err) // a client gone before its answer: its points not observed
	}
	if _, err := o.monitor.Observe(fresh); err != nil {
		return invalid("points", "%v", err)
	}
	guarantee, class := test.String(), set.OOD.Class
	if class != nil {
		// The test of one class: its bound is over that class's inputs.
		guarantee += fmt.Sprintf("; for inputs of class %s: this set's test is that class's alone, its pool and calibration of it (-ood-class), and says nothing of other classes' inputs", class)
	}
	head, err := fields("set", name, "generation", st.generation, "checksum", set.FileChecksum(), "threshold", number(set.Threshold), "reference_rows", set.Reference.N,
		"k", o.test.Score.K(), "alpha_ood", test.Alpha, "delta", test.Delta, "guarantee", guarantee, "class", class, "fdr", fdr, "monitor", monitorOf(o.monitor))
	if err != nil {
		return err
	}
	out := newStream(w, http.StatusOK)
	for _, name := range []string{"set", "generation", "checksum", "threshold", "reference_rows", "k", "alpha_ood", "delta", "guarantee", "class"} {
		if (name != "delta" || test.Delta != 0) && (name != "class" || class != nil) { // omitted when 0, or none
			out.raw(name, head[name])
		}
	}
	out.array("scores", m, func(b []byte, i int) []byte { return appendNumber(b, scores[i]) })
	out.array("results", m, func(b []byte, i int) []byte {
		b = append(b, "{\n      \"score\": "...)
		b = appendNumber(b, scores[i])
		b = append(b, ",\n      \"p_value\": "...)
		b = appendNumber(b, ans.Results[i].PValue)
		b = append(b, ",\n      \"ood\": "...)
		b = strconv.AppendBool(b, ans.Results[i].OOD)
		return append(b, "\n    }"...)
	})
	if fdr > 0 { // flagged is [] when BH flags none
		out.raw("fdr", head["fdr"])
		out.array("flagged", len(flagged), func(b []byte, i int) []byte { return strconv.AppendInt(b, int64(flagged[i]), 10) })
		if mp := ans.Marginal; mp != nil { // δ > 0: the p-values above are adjusted; BH ran on these
			out.array("fdr_p_values", m, func(b []byte, i int) []byte { return appendNumber(b, mp[i]) })
		}
	}
	out.raw("monitor", head["monitor"])
	msg := ood.KnownWarning(pooled, calibrated, m, true)
	if tie := o.tieWarning(test, set.OOD); tie != "" { // the set's scores tie where the test flags
		msg = strings.TrimPrefix(msg+"; "+tie, "; ")
	}
	if msg != "" {
		warn, err := fields("warning", msg)
		if err != nil {
			return err
		}
		out.raw("warning", warn["warning"])
	}
	return out.close()
}

// oodParams reads ?alpha_ood (default 0.05), ?delta (default 0) and ?fdr
// (default 0: none), refusing a level n calibration scores cannot reach.
func oodParams(r *http.Request, n int) (ood.Test, float64, error) {
	q, err := queryParams(r)
	if err != nil {
		return ood.Test{}, 0, err
	}
	get := func(name string, def float64) (float64, error) {
		if !q.Has(name) {
			return def, nil
		}
		v := q.Get(name)
		if v == "" { // ?alpha_ood=: a client's variable left unset, not the default
			return 0, badRequest(name, "empty: give a number, or leave the parameter out for %v", def)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || strings.ContainsAny(v, "_xX") { // Go's 0x1p-4 and 1_000, which no JSON or NumPy reads
			return 0, badRequest(name, "%s is not a number", quote(v))
		}
		return f, nil
	}
	alpha, err := get("alpha_ood", ood.DefaultAlpha)
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
		return ood.Test{}, 0, invalid(oodField(test), "%v", err)
	}
	if fdr != 0 && !(fdr > 0 && fdr < 1) {
		return ood.Test{}, 0, invalid("fdr", "FDR level %v, want 0 < q < 1 (or 0: none)", fdr)
	}
	return test, fdr, nil
}

// monitorState is an OOD drift monitor's state as answered. Under a long
// drift its martingale passes the largest float64: +Inf, written "+Inf"
// as thresholds are (encoding/json refuses it, and every /ood and GET
// /v1/sets answer was a 500 from then on).
type monitorState struct {
	N          int     `json:"n"`
	Martingale number  `json:"martingale"`
	Max        number  `json:"max"`
	Delta      float64 `json:"delta"`
	Alarm      bool    `json:"alarm"`
	AlarmAt    int     `json:"alarm_at,omitempty"`
	Limit      int     `json:"limit,omitempty"`
	Full       bool    `json:"full,omitempty"`
}

func monitorOf(m *ood.Monitor) monitorState {
	st := m.State()
	return monitorState{st.N, number(st.Martingale), number(st.Max), st.Delta, st.Alarm, st.AlarmAt, st.Limit, st.Full}
}

// resetMonitor starts a set's OOD drift monitor afresh.
func (s *Server) resetMonitor(w http.ResponseWriter, r *http.Request) error {
	st, name, set, err := s.lookupSet(r)
	if err != nil {
		return err
	}
	o := st.ood[name]
	if o == nil {
		return &apiError{status: http.StatusUnprocessableEntity, code: "no_ood_calibration",
			msg: fmt.Sprintf("set %q has no OOD calibration, so no monitor", name), field: "name"}
	}
	o.monitor.Reset()
	s.logf("set %q: OOD monitor reset (POST %s): it starts afresh, its false-alarm bound δ from now", name, r.URL.Path)
	return writeJSON(w, http.StatusOK, map[string]any{"set": name, "generation": st.generation, "checksum": set.FileChecksum(), "monitor": monitorOf(o.monitor)})
}

// retrieve answers the collection items inside the set around the anchor:
// for a class-conditional set, the set of the anchor's class's threshold
// ("label", as /score takes it).
func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) error {
	st, name, set, err := s.lookupSet(r)
	if err != nil {
		return err
	}
	d := set.Geometry.Dim()
	var req request
	var ref classRef
	npy, err := isNPY(r)
	if err != nil {
		return err
	}
	if npy {
		if ref, err = queryLabel(r); err != nil {
			return err
		}
		var rows int
		if req.anchor, rows, err = decodeNPY(r, d, 1); err != nil && !errors.Is(err, errTooManyRows) {
			return err
		}
		if rows != 1 {
			return invalid("body", ".npy body: %s, want one anchor: (%d,) or (1, %d), the set's dimension is %d", rowCount(rows), d, d, d)
		}
		q, err := queryParams(r)
		if err != nil {
			return err
		}
		req.collection = q.Get("collection")
		if l := q.Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil {
				return badRequest("limit", "limit %s is not an integer", quote(l))
			}
			req.limit = &n
		}
	} else {
		// The body first: an .npy sent as JSON is told of its
		// Content-Type, not of the query parameters that go with one.
		if req, err = s.readJSON(r, fieldAnchor|fieldCollection|fieldLimit|fieldLabel, d); err != nil {
			return err
		}
		if err := npyOnly(r, "collection", "limit", "label"); err != nil {
			return err
		}
		if req.anchor == nil {
			return invalid("anchor", "missing (or null)")
		}
		ref = classRef{label: req.label, name: req.labelName}
	}
	if err := checkNorms(set, name, req.anchor, nil); err != nil {
		return err
	}
	// The set searched with: a class-conditional set's class's, one
	// threshold (conformal.Set.ForClass).
	if set, err = anchorClass(set, name, ref); err != nil {
		return err
	}
	limit := s.cfg.MaxResults
	if req.limit != nil {
		if *req.limit < 1 || *req.limit > s.cfg.MaxResults {
			return invalid("limit", "limit %d: want 1 to %d", *req.limit, s.cfg.MaxResults)
		}
		limit = *req.limit
	}
	if req.collection == "" {
		return invalid("collection", "missing: name the collection to search, one of %v: \"collection\" in a JSON body, or ?collection=NAME with an .npy body", slices.Sorted(maps.Keys(st.colls)))
	}
	c, ok := st.colls[req.collection]
	if !ok {
		have := slices.Sorted(maps.Keys(st.colls))
		return &apiError{status: http.StatusNotFound, code: "unknown_collection",
			msg: fmt.Sprintf("no collection %s (have %v)%s", quote(req.collection), have, suggest.DidYouMean(req.collection, have)), field: "collection"}
	}
	if c.Dim() != d {
		return invalid("collection", "collection %q has dimension %d, set %q has %d", req.collection, c.Dim(), name, d)
	}
	hits, total, err := c.Search(r.Context(), set, req.anchor, limit)
	switch {
	case err == nil:
	case r.Context().Err() != nil:
		return cancelled(err)
	case errors.Is(err, retrieve.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded):
		// A database that failed: no answer rather than part of one.
		return &apiError{status: http.StatusBadGateway, code: "collection_unavailable",
			msg: fmt.Sprintf("collection %q: %v", req.collection, err), field: "collection"}
	default:
		return invalid("", "%v", err)
	}
	if hits == nil {
		hits = []retrieve.Hit{}
	}
	warnings := wholeSpace(set, "every item of the collection is in it")
	if retrieve.AllZero(req.anchor) {
		n, err := c.Len(r.Context())
		if err != nil {
			n = -1
		}
		warnings = append(warnings, retrieve.ZeroAnchor("the anchor is all zeros", fmt.Sprintf("its set is answered like any other, the items nearest %s (%d%s)", retrieve.ZeroCentre(set), total, itemsOf(n))))
	}
	// The class whose threshold the set is: the label's, or that of a set
	// calibrated on one class's anchors (ccs calibrate -class).
	label, class := set.Calibration.Class.LabelAndName()
	return writeJSON(w, http.StatusOK, struct {
		Set        string         `json:"set"`
		Generation uint64         `json:"generation"`
		Checksum   string         `json:"checksum"`
		Collection string         `json:"collection"`
		Label      *int64         `json:"label,omitempty"`
		Class      string         `json:"class,omitempty"`
		Threshold  number         `json:"threshold"`
		Total      int            `json:"total"`
		Truncated  bool           `json:"truncated"`
		Hits       []retrieve.Hit `json:"hits"`
		Warnings   []string       `json:"warnings,omitempty"`
	}{name, st.generation, set.FileChecksum(), req.collection, label, class, number(set.Threshold), total, total > len(hits), hits, warnings})
}

// itemsOf is " of the collection's n items", or "" where n < 0 (a
// database that did not say).
func itemsOf(n int) string {
	if n < 0 {
		return ""
	}
	return fmt.Sprintf(" of the collection's %d items", n)
}
