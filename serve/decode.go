package serve

import (
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// isNPY reports whether the request carries a .npy body; another content
// type than JSON or .npy is an error. curl's default for -d,
// application/x-www-form-urlencoded, is read as JSON: a command line that
// forgets -H 'Content-Type: application/json' still works (a body that is
// not JSON is then refused as malformed JSON).
func isNPY(r *http.Request) (bool, error) {
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return false, &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
			msg: fmt.Sprintf("Content-Encoding %s: the body must be sent uncompressed (no Content-Encoding)", quote(ce))}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return false, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false, &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type", msg: fmt.Sprintf("Content-Type %s: %v", quote(ct), err)}
	}
	switch mt {
	case "application/json", "application/x-www-form-urlencoded":
		return false, nil
	case "application/x-npy":
		return true, nil
	}
	return false, &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
		msg: fmt.Sprintf("Content-Type %s: want application/json or application/x-npy", quote(mt))}
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

// readJSON decodes r's JSON body (decodeRequest) with the given fields,
// for a set of dimension dim.
func (s *Server) readJSON(r *http.Request, fields field, dim int) (request, error) {
	body, err := bodyOf(r)
	if err != nil {
		return request{}, err
	}
	return decodeRequest(body, bodySpec{fields: fields, dim: dim, maxPoints: s.cfg.MaxPoints})
}

// shapeString writes a .npy shape as NumPy does: (3,), (2, 4).
func shapeString(shape []int) string {
	if len(shape) == 1 {
		return fmt.Sprintf("(%d,)", shape[0])
	}
	s := make([]string, len(shape))
	for i, n := range shape {
		s[i] = strconv.Itoa(n)
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// errTooManyRows is decodeNPY's refusal of a body of more rows than the
// caller takes, before any is read; the rows it returns are the header's.
var errTooManyRows = errors.New("serve: too many rows")

// decodeNPY reads a float32 .npy body of at most maxRows rows of dimension
// d: shape (d,) is one row, (m, d) m rows. It returns the values and the
// number of rows (errTooManyRows beyond maxRows).
func decodeNPY(r *http.Request, d, maxRows int) ([]float32, int, error) {
	body, err := bodyOf(r)
	if err != nil {
		return nil, 0, err
	}
	want := fmt.Sprintf("(%d,) or (m, %d)", d, d)
	if maxRows == 1 {
		want = fmt.Sprintf("one anchor, (%d,) or (1, %d)", d, d)
	}
	// The body's length bounds what its header may announce.
	a, err := bundle.DecodeNPYBytes(body, "body", mulCap(addCap(maxRows, 1), d))
	var large *bundle.TooLargeError
	var dtype *bundle.DtypeError
	var elem *bundle.ElementError
	switch {
	case errors.As(err, &large) && len(large.Shape) == 2 && large.Shape[1] == d:
		// Rows of the set's dimension, more than a request takes: the
		// caller answers as for as many JSON points (413).
		return nil, large.Shape[0], errTooManyRows
	case errors.As(err, &large):
		return nil, 0, invalid("body", ".npy body: shape %s, want %s: the set's dimension is %d", shapeString(large.Shape), want, d)
	case errors.As(err, &dtype):
		// A well-formed array of a type no embedding is (complex, objects):
		// as an integer one, 422 in the service's words, not the file
		// reader's list, which offers integers.
		return nil, 0, invalid("body", ".npy body: dtype %q: must be floating point (float32, or float64 or float16, converted)", dtype.Descr)
	case errors.As(err, &elem):
		// A float64 body's value float32 cannot hold: as a JSON body's
		// 1e39, 422 naming the element.
		return nil, 0, invalid("body"+elem.Index, ".npy body: coordinate %g %v", elem.Value, elem.Err)
	case err != nil:
		return nil, 0, badRequest("body", "%v", err)
	}
	if a.F32 == nil {
		return nil, 0, invalid("body", ".npy body: dtype must be floating point (float32, or float64 or float16, converted)")
	}
	rows := 0
	switch {
	case len(a.Shape) == 1 && a.Shape[0] == d:
		rows = 1
	case len(a.Shape) == 2 && a.Shape[1] == d:
		rows = a.Shape[0]
	default:
		return nil, 0, invalid("body", ".npy body: shape %s, want %s: the set's dimension is %d", shapeString(a.Shape), want, d)
	}
	for i, v := range a.F32 {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, 0, invalid(fmt.Sprintf("body[%d][%d]", i/d, i%d), "coordinate is %v", v)
		}
	}
	return a.F32, rows, nil
}

// checkCount refuses no points, or more than a request takes, naming the
// points (an .npy body's rows after its anchor as a JSON body's field).
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

// rowCount is "1 row" or "n rows".
func rowCount(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

// points reads the points of a request (and, with anchor, its anchor):
// JSON fields, or a .npy body whose first row is the anchor.
func (s *Server) points(r *http.Request, d int, anchor bool) (a, pts []float32, err error) {
	fields := fieldPoints
	if anchor {
		fields |= fieldAnchor
	}
	a, pts, _, err = s.pointsLabel(r, d, anchor, fields)
	return a, pts, err
}

// classRef is the anchor's class as a request gives it: its integer label
// or its class's name ("label" a number or a string), or neither. A
// ?label= (query) is a label when it reads as an integer, a name
// otherwise: name holds it either way.
type classRef struct {
	label *int64
	name  *string
	query bool
}

// of is the label the request names for set: the integer given, or the
// label of the class of the name given (422 naming the set's classes when
// it has none of that name). A ?label= that reads as an integer but is
// another class's name is refused as ambiguous.
func (c classRef) of(set *conformal.Set, setName string) (*int64, error) {
	switch {
	case !set.ClassConditional() && (c.label != nil || c.name != nil):
		return nil, invalid("label", "set %q: %s", setName, strings.TrimPrefix(conformal.ErrLabel.Error(), "conformal: "))
	case c.name == nil:
		return c.label, nil
	case c.label != nil && c.query:
		if l, err := set.LabelNamed(*c.name); err == nil && l != *c.label {
			return nil, invalid("label", "set %q: ?label=%s reads as label %s and names class %d: give it in a JSON body, where \"label\": %s is the label and \"label\": \"%s\" the name", setName, *c.name, *c.name, l, *c.name, *c.name)
		}
		return c.label, nil
	}
	l, err := set.LabelNamed(*c.name)
	if err != nil {
		return nil, invalid("label", "set %q: %s", setName, strings.TrimPrefix(err.Error(), "conformal: "))
	}
	return &l, nil
}

// pointsLabel is points for a body that may also carry the anchor's
// label (fields with fieldLabel; in an .npy request, the query's ?label=).
// npyOnly refuses, for a JSON body, the query parameters that go with an
// .npy body alone (a JSON body carries them as fields): a JSON body's
// ?limit=1 or ?collection=zzz was answered as if not given.
func npyOnly(r *http.Request, names ...string) error {
	q, err := queryParams(r)
	if err != nil {
		return err
	}
	for _, name := range names {
		if q.Has(name) {
			return badRequest(name, "query parameter %s goes with an .npy body; a JSON body gives it as the field %s", quote(name), quote(name))
		}
	}
	return nil
}

// queryLabel is the anchor's class an .npy request gives as ?label=, or
// none.
func queryLabel(r *http.Request) (classRef, error) {
	var label classRef
	params, err := queryParams(r)
	if err != nil {
		return label, err
	}
	q := params.Get("label")
	if q == "" {
		return label, nil
	}
	if l, err := strconv.ParseInt(q, 10, 64); err == nil {
		label.label = &l
	} else if len(q) > maxName {
		return label, invalid("label", "a name of %d bytes: at most %d", len(q), maxName)
	}
	label.name, label.query = &q, true
	return label, nil
}

// anchorClass is the set the anchor is judged with, for the class the
// request gives (ref): a class-conditional set's class's set of one
// threshold (conformal.Set.ForClass), which needs the label; set itself
// for a set of one threshold, which takes none. Its refusals are 422s of
// field "label", naming the set (and its classes).
func anchorClass(set *conformal.Set, name string, ref classRef) (*conformal.Set, error) {
	label, err := ref.of(set, name)
	if err != nil {
		return nil, err
	}
	// A class-conditional set judges with the anchor's class's threshold;
	// another set has one threshold and takes no label (conformal's rule).
	judged := set
	if label != nil {
		judged, err = set.ForClass(*label)
	} else {
		_, err = set.ThresholdOf(nil)
	}
	switch {
	case errors.Is(err, conformal.ErrNoLabel):
		return nil, invalid("label", "set %q: %s: give the anchor's label (\"label\": its integer label or its class's name; ?label= with an .npy body)", name, strings.TrimPrefix(err.Error(), "conformal: "))
	case err != nil:
		return nil, invalid("label", "set %q: %s", name, strings.TrimPrefix(err.Error(), "conformal: "))
	}
	return judged, nil
}

func (s *Server) pointsLabel(r *http.Request, d int, anchor bool, fields field) (a, pts []float32, label classRef, err error) {
	npy, err := isNPY(r)
	if err != nil {
		return nil, nil, label, err
	}
	if npy {
		if fields&fieldLabel != 0 {
			if label, err = queryLabel(r); err != nil {
				return nil, nil, label, err
			}
		}
		rows, m, err := decodeNPY(r, d, addCap(s.cfg.MaxPoints, 1))
		if errors.Is(err, errTooManyRows) && anchor {
			m-- // the first row is the anchor
		}
		if errors.Is(err, errTooManyRows) {
			return nil, nil, label, s.checkCount(m)
		}
		if err != nil {
			return nil, nil, label, err
		}
		if anchor {
			if m < 2 {
				return nil, nil, label, invalid("body", ".npy body: %s: want the anchor then at least one point, (1+m, %d)", rowCount(m), d)
			}
			a, rows, m = rows[:d], rows[d:], m-1
		}
		if err := s.checkCount(m); err != nil {
			return nil, nil, label, err
		}
		return a, rows, label, nil
	}
	req, err := s.readJSON(r, fields, d) // the body first, as retrieve's
	if err != nil {
		return nil, nil, label, err
	}
	if err := npyOnly(r, "label"); err != nil {
		return nil, nil, label, err
	}
	if anchor && req.anchor == nil {
		return nil, nil, label, invalid("anchor", "missing (or null)")
	}
	if req.points == nil {
		return nil, nil, label, invalid("points", "missing (or null)")
	}
	if err := s.checkCount(len(req.points) / d); err != nil {
		return nil, nil, label, err
	}
	return req.anchor, req.points, classRef{label: req.label, name: req.labelName}, nil
}
