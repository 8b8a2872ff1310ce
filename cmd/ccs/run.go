package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ccsets/ccs/conformal"
)

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// command is one subcommand (cmd/go's shape, one level deep).
type command struct {
	name  string
	args  string // the usage line after the name
	short string
	// positional, if set, names one required argument that comes before
	// the flags (as in 'ccs reproduce sim -seeds 3').
	positional string
	// flags declares the command's flags on fs and returns the function
	// that runs it once they are parsed.
	flags func(fs *flag.FlagSet, out *output) func(args []string) error
}

// output carries the writers a command prints to.
type output struct {
	stdout, stderr io.Writer
}

// warn prints a warning no reader can miss.
func (o *output) warn(msg string) { fmt.Fprintf(o.stderr, "WARNING: %s\n", msg) }

// terminal reports whether stderr is a terminal, for progress display.
func (o *output) terminal() bool {
	f, ok := o.stderr.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

func run(stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		return usagef("no command given; run 'ccs help'")
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			return run(stdout, stderr, []string{args[1], "-h"})
		}
		printHelp(stdout)
		return nil
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		fs := flag.NewFlagSet("ccs "+c.name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		out := &output{stdout: stdout, stderr: stderr}
		runner := c.flags(fs, out)
		rest := args[1:]
		var pos []string
		if c.positional != "" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			pos, rest = rest[:1], rest[1:]
		}
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(stdout, "usage: ccs %s %s\n\n%s\n\nFlags:\n", c.name, c.args, c.short)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return nil
			}
			return usagef("%s: %v", c.name, err)
		}
		if fs.NArg() > 0 {
			return usagef("%s: unexpected argument %q", c.name, fs.Arg(0))
		}
		if c.positional != "" && len(pos) == 0 {
			return usagef("%s: missing %s; run 'ccs %s -h'", c.name, c.positional, c.name)
		}
		return runner(pos)
	}
	return usagef("unknown command %q; run 'ccs help'", name)
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "ccs builds and evaluates contrastive conformal sets: sets around an anchor's")
	fmt.Fprintln(w, "embedding that contain its positives with probability 1−α.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: ccs <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'ccs <command> -h' for a command's flags.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 failure (bad data, I/O), 2 usage error.")
}

// required reports a missing required flag as a usage error.
func required(cmd string, pairs ...string) error {
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return usagef("%s: flag -%s is required", cmd, pairs[i])
		}
	}
	return nil
}

// checkAlpha validates -alpha at the command-line boundary (usage error).
func checkAlpha(cmd string, alpha float64) error {
	if err := conformal.CheckAlpha(alpha); err != nil {
		return usagef("%s: -alpha %v: must lie strictly between 0 and 1", cmd, alpha)
	}
	return nil
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
