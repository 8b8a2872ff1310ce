package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
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
}

// Kinds are the documents' kinds.
var Kinds = []string{"sim", "pnorm", "fmnist", "ood", "sensitivity"}

// ReadDocument reads a document, checking its kind.
func ReadDocument(r io.Reader) (*Document, error) {
	var d Document
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return nil, err
	}
	for _, k := range Kinds {
		if d.Kind == k {
			return &d, nil
		}
	}
	return nil, fmt.Errorf("kind %q, want one of %v (a JSON result of ccs reproduce)", d.Kind, Kinds)
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
