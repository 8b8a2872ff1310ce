package main

// Found by a reader who ran docs/your-data.md block by block (a forty-
// ninth round's audit): §10's walk-through fitted a geometry for the
// default α and calibrated it at α = 0.1, which calibrate warns against.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsFitForTheCalibratedAlpha: every walk-through in the README and
// docs/ that fits a geometry (ccs fit … -out F) and then calibrates it
// (ccs calibrate -set F -alpha A) fits it for the same α: calibrate warns
// "the geometry was trained for α = 0.05 and is calibrated at α = 0.1 …
// train with -alpha 0.1" otherwise, contradicting the page copied.
func TestDocsFitForTheCalibratedAlpha(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	flag := func(line, name, def string) string {
		if m := regexp.MustCompile(`-` + name + ` (\S+)`).FindStringSubmatch(line); m != nil {
			return m[1]
		}
		return def
	}
	pairs := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fitted := map[string]string{} // a page's fitted file → the α it was trained for
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(line, "ccs fit "):
				fitted[flag(line, "out", "")] = flag(line, "alpha", "0.05")
			case strings.HasPrefix(line, "ccs calibrate ") && strings.Contains(line, "-set "):
				fa, ok := fitted[flag(line, "set", "")]
				if !ok {
					continue
				}
				pairs++
				if a := flag(line, "alpha", "0.05"); fa != a {
					t.Errorf("%s: %q calibrates at α = %s a geometry the page fitted for α = %s", filepath.Base(f), line, a, fa)
				}
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no fit-then-calibrate walk-through found: the test reads nothing")
	}
}
