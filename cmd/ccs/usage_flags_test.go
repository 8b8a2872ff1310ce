package main

import (
	"bytes"
	"flag"
	"regexp"
	"strings"
	"testing"
)

// TestUsageLinesNameFlags checks that every command's usage line names each
// flag it declares, but those of a group it names ("[training flags]"), and
// no flag it does not declare; and that -h lists each flag once, a group's
// under the group's heading.
func TestUsageLinesNameFlags(t *testing.T) {
	named := regexp.MustCompile(`(?:^|[ \[|(])-([A-Za-z][A-Za-z0-9-]*)`)
	var check func(prefix string, c *command)
	check = func(prefix string, c *command) {
		path := strings.TrimSpace(prefix + " " + c.name)
		for _, s := range c.sub {
			check(path, s)
		}
		if c.flags == nil {
			return
		}
		fs := flag.NewFlagSet(path, flag.ContinueOnError)
		c.flags(fs)
		group := c.groupOf()
		inLine := map[string]bool{}
		for _, m := range named.FindAllStringSubmatch(c.args, -1) {
			inLine[m[1]] = true
			if fs.Lookup(m[1]) == nil {
				t.Errorf("ccs %s: the usage line names -%s, which the command does not take", path, m[1])
			}
		}
		fs.VisitAll(func(f *flag.Flag) {
			if group[f.Name] == "" && !inLine[f.Name] {
				t.Errorf("ccs %s: the usage line does not name -%s:\n%s", path, f.Name, c.args)
			}
		})
		var help bytes.Buffer
		c.help(&help, path)
		sections := strings.Split(help.String(), "\n\n")
		fs.VisitAll(func(f *flag.Flag) {
			want := "Flags:"
			for _, g := range flagGroups {
				if g.name == group[f.Name] {
					want = g.title + ":"
				}
			}
			found := 0
			for _, s := range sections {
				if regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(s) {
					found++
					if !strings.HasPrefix(s, want) {
						t.Errorf("ccs %s -h: -%s is listed under %q, want %q", path, f.Name, strings.SplitN(s, "\n", 2)[0], want)
					}
				}
			}
			if found != 1 {
				t.Errorf("ccs %s -h: -%s listed %d times, want once", path, f.Name, found)
			}
		})
	}
	for _, c := range commands() {
		check("", c)
	}
}
