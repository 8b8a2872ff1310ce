package bundle

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
)

// ManifestFormat names the file ccs bundle writes beside its bundles,
// manifest.json.
const ManifestFormat = "ccs-bundles"

// ManifestLabelNames are the names of b's string labels, from the manifest
// ccs bundle wrote beside path, b's file (label i is names[i]); nil when
// there is none, it has no names, or its entry for the file does not
// describe b (its anchors and their count per class), so that a file moved
// among other bundles is never labelled wrongly.
func ManifestLabelNames(path string, b *Bundle) []string {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(path), "manifest.json"))
	if err != nil || b.Labels == nil {
		return nil
	}
	var m struct {
		Format     string   `json:"format"`
		LabelNames []string `json:"label_names"`
		Files      []struct {
			File    string         `json:"file"`
			Anchors int            `json:"anchors"`
			Classes map[string]int `json:"classes"`
		} `json:"files"`
	}
	if json.Unmarshal(data, &m) != nil || m.Format != ManifestFormat || len(m.LabelNames) == 0 {
		return nil
	}
	counts := map[string]int{}
	for _, l := range b.Labels {
		if l < 0 || l >= int64(len(m.LabelNames)) {
			return nil
		}
		counts[strconv.FormatInt(l, 10)]++
	}
	for _, f := range m.Files {
		if f.File == filepath.Base(path) && f.Anchors == b.N && maps.Equal(f.Classes, counts) {
			return m.LabelNames
		}
	}
	return nil
}
