package serve

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestOODTieWarning: a set whose OOD calibration scores take a few values
// (binary features) lists the tie among its warnings, and /ood says it at
// the level asked, in "warning" (a statistician's review: at α_ood = 0.05
// such a test flagged 0.1% of in-distribution inputs, and nothing said
// so); untied scores say nothing.
func TestOODTieWarning(t *testing.T) {
	write := func(scores []float64) string {
		oc, err := conformal.NewOODCalibration(1, scores, "test")
		if err != nil {
			t.Fatal(err)
		}
		set := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 0.5, Alpha: 0.05,
			Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95},
			Reference:   &conformal.Reference{Source: "test", N: 2, Rows: []float32{1, 0, 0, 0, 1, 0}}, OOD: oc}
		path := filepath.Join(t.TempDir(), "set.json")
		if err := set.Save(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tied, untied := make([]float64, 199), make([]float64, 199)
	for i := range tied {
		tied[i], untied[i] = float64(min(4, i/40)), float64(i)
	}
	s, err := New(Config{Sets: map[string]string{"tied": write(tied), "untied": write(untied)}, MaxBody: 1 << 16, MaxPoints: 50, MaxResults: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	for _, c := range []struct{ set, query, want string }{
		{"tied", "", "at α_ood = 0.05 it flags only inputs scored above 4"},
		{"tied", "?alpha_ood=0.1", "at α_ood = 0.1 it flags only inputs scored above 4"},
		{"untied", "?alpha_ood=0.1", ""},
	} {
		rec := do(t, h, "POST", "/v1/sets/"+c.set+"/ood"+c.query, "application/json", `{"points": [[0, 0, 0.5]]}`)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s%s: %d %s", c.set, c.query, rec.Code, rec.Body)
		}
		var ans struct {
			Warning string `json:"warning"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
			t.Fatal(err)
		}
		if c.want == "" && ans.Warning != "" || !strings.Contains(ans.Warning, c.want) {
			t.Errorf("%s%s: warning %q, want %q", c.set, c.query, ans.Warning, c.want)
		}
	}
	rec := do(t, h, "GET", "/v1/sets", "", "")
	if !strings.Contains(rec.Body.String(), "calibration scores take 5 values") || strings.Count(rec.Body.String(), "calibration scores take") != 1 {
		t.Errorf("GET /v1/sets: the tied set's warning once, the untied none:\n%s", rec.Body)
	}
}
