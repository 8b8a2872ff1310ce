package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

// Document is a reproduce command's result as -json prints it and as the
// results directory keeps it (KIND.json): what ran, on which build, and its
// tables. The figures (package figure) and the report are drawn from it.
type Document struct {
	Kind    string `json:"kind"` // sim, pnorm, fmnist, ood or sensitivity
	Command string `json:"command"`
	// Build is the binary's version information (ccs version -json).
	Build       json.RawMessage   `json:"build,omitempty"`
	Tables      []*Table          `json:"tables,omitempty"`
	Hull        []*HullTable      `json:"hull,omitempty"`
	OOD         []*OODTable       `json:"ood,omitempty"`
	PNorm       *PNormTable       `json:"pnorm,omitempty"`
	Sensitivity *SensitivityTable `json:"sensitivity,omitempty"`
	Compare     []*CompareTable   `json:"compare,omitempty"`
}

// Kinds are the documents' kinds.
var Kinds = []string{"sim", "pnorm", "fmnist", "ood", "sensitivity", "compare"}

// ReadDocument reads a document, checking its kind.
func ReadDocument(r io.Reader) (*Document, error) {
	var d Document
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return nil, err
	}
	if !slices.Contains(Kinds, d.Kind) {
		return nil, fmt.Errorf("kind %q, want one of %v (a JSON result of ccs reproduce)", d.Kind, Kinds)
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	return &d, nil
}

// Check is the validation ReadDocument does, for a document built in
// memory.
func (d *Document) Check() error { return d.validate() }

// validate refuses what the text, the figures and the report would index
// out of range: missing tables, and OOD rows whose figures do not match
// the table's OOD sets (a file edited by hand, or not ccs's).
func (d *Document) validate() error {
	for i, t := range d.Tables {
		if t == nil {
			return fmt.Errorf("tables[%d] is null", i)
		}
	}
	for i, t := range d.Hull {
		if t == nil {
			return fmt.Errorf("hull[%d] is null", i)
		}
	}
	for i, t := range d.OOD {
		if t == nil {
			return fmt.Errorf("ood[%d] is null", i)
		}
		n := len(t.Sets)
		for _, r := range t.Rows {
			if r.Unavailable != "" {
				continue
			}
			bad := len(r.AUROC) != n || len(r.FPR95) != n ||
				(r.FAR != nil && len(r.TAR) != n) ||
				((r.FDP != nil || r.Power != nil) && (len(r.FDP) != n || len(r.Power) != n)) ||
				(r.Curves != nil && len(r.Curves) != n)
			if bad {
				return fmt.Errorf("ood[%d], %s: %d AUROC, %d FPR95, %d TAR, %d FDP, %d power and %d curves for %d OOD sets",
					i, r.Method, len(r.AUROC), len(r.FPR95), len(r.TAR), len(r.FDP), len(r.Power), len(r.Curves), n)
			}
			for _, c := range r.Curves {
				if len(c.FPR) != len(c.TPR) || len(c.FPR) < 2 || len(c.ID) == 0 || len(c.Edges) != len(c.ID)+1 || len(c.OOD) != len(c.ID) {
					return fmt.Errorf("ood[%d], %s, %s: malformed curve (%d FPR, %d TPR, %d edges, %d and %d bins)",
						i, r.Method, c.Set, len(c.FPR), len(c.TPR), len(c.Edges), len(c.ID), len(c.OOD))
				}
			}
		}
	}
	return nil
}

// LoadDocument reads the document in a file.
func LoadDocument(path string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := ReadDocument(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}
