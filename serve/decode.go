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
)

// isNPY reports whether the request carries a .npy body; another content
// type than JSON or .npy is an error. curl's default for -d,
// application/x-www-form-urlencoded, is read as JSON: a command line that
// forgets -H 'Content-Type: application/json' still works (a body that is
// not JSON is then refused as malformed JSON).
func isNPY(r *http.Request) (bool, error) {
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

// decodeNPY reads a float32 .npy body of at most maxRows rows of dimension
// d: shape (d,) is one row, (m, d) m rows. It returns the values and the
// number of rows.
func decodeNPY(r *http.Request, d, maxRows int) ([]float32, int, error) {
	body, err := bodyOf(r)
	if err != nil {
		return nil, 0, err
	}
	// The body's length bounds what its header may announce.
	a, err := bundle.DecodeNPYBytes(body, "body", mulCap(addCap(maxRows, 1), d))
	if err != nil {
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
		return nil, 0, invalid("body", ".npy body: shape %s, want (%d,) or (m, %d): the set's dimension is %d", shapeString(a.Shape), d, d, d)
	}
	for i, v := range a.F32 {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, 0, invalid(fmt.Sprintf("body[%d][%d]", i/d, i%d), "coordinate is %v", v)
		}
	}
	return a.F32, rows, nil
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
	fields := fieldPoints
	if anchor {
		fields |= fieldAnchor
	}
	a, pts, _, err = s.pointsLabel(r, d, anchor, fields)
	return a, pts, err
}

// pointsLabel is points for a body that may also carry the anchor's
// label (fields with fieldLabel; in an .npy request, the query's ?label=).
// npyOnly refuses, for a JSON body, the query parameters that go with an
// .npy body alone (a JSON body carries them as fields): a JSON body's
// ?limit=1 or ?collection=zzz was answered as if not given.
func npyOnly(r *http.Request, names ...string) error {
	q := r.URL.Query()
	for _, name := range names {
		if q.Has(name) {
			return badRequest(name, "query parameter %s goes with an .npy body; a JSON body gives it as the field %s", quote(name), quote(name))
		}
	}
	return nil
}

func (s *Server) pointsLabel(r *http.Request, d int, anchor bool, fields field) (a, pts []float32, label *int64, err error) {
	npy, err := isNPY(r)
	if err != nil {
		return nil, nil, nil, err
	}
	if npy {
		if q := r.URL.Query().Get("label"); q != "" && fields&fieldLabel != 0 {
			l, err := strconv.ParseInt(q, 10, 64)
			if err != nil {
				return nil, nil, nil, invalid("label", "%s is not an integer", quote(q))
			}
			label = &l
		}
		rows, m, err := decodeNPY(r, d, addCap(s.cfg.MaxPoints, 1))
		if err != nil {
			return nil, nil, nil, err
		}
		if anchor {
			if m < 2 {
				return nil, nil, nil, invalid("body", ".npy body: %d rows: want the anchor then at least one point, (1+m, %d)", m, d)
			}
			a, rows, m = rows[:d], rows[d:], m-1
		}
		if err := s.checkCount(m); err != nil {
			return nil, nil, nil, err
		}
		return a, rows, label, nil
	}
	if err := npyOnly(r, "label"); err != nil {
		return nil, nil, nil, err
	}
	req, err := s.readJSON(r, fields, d)
	if err != nil {
		return nil, nil, nil, err
	}
	if anchor && req.anchor == nil {
		return nil, nil, nil, invalid("anchor", "missing (or null)")
	}
	if req.points == nil {
		return nil, nil, nil, invalid("points", "missing (or null)")
	}
	if err := s.checkCount(len(req.points) / d); err != nil {
		return nil, nil, nil, err
	}
	return req.anchor, req.points, req.label, nil
}
