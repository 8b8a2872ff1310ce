package ccs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDoc: the module's doc (doc.go) lists every package of the module,
// internal ones and commands included, and nothing that is not one
// (benchstat's TestDoc keeps its doc true the same way).
func TestDoc(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\t([a-z0-9/]+)\s{2,}`).FindAllStringSubmatch(f.Doc.Text(), -1) {
		listed = append(listed, m[1])
	}
	var pkgs []string
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || path == "." {
			return nil
		}
		if dir := filepath.Dir(path); dir != "." && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") && !slices.Contains(pkgs, dir) {
			pkgs = append(pkgs, filepath.ToSlash(dir))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	slices.Sort(pkgs)
	if !slices.Equal(listed, pkgs) {
		t.Errorf("doc.go lists the packages\n%v\nthe module has\n%v", listed, pkgs)
	}
	if _, err := os.Stat("go.mod"); err != nil {
		t.Fatal(err)
	}
}
