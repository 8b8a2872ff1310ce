package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/ccsets/ccs/internal/textclip"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/jsonindent"
	"github.com/ccsets/ccs/internal/suggest"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/serve"
)

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// A command is one subcommand (cmd/go's shape, one level deep, and
// restic's: an options struct per command, filled by its flags, and a
// runX(ctx, opts, out) function that does the work and that tests can call
// directly).
type command struct {
	name  string
	args  string // the usage line after the name
	short string
	// flags declares the command's flags on fs, each filling a field of the
	// command's options, and returns the function that runs the command once
	// they are parsed.
	flags func(fs *flag.FlagSet) runner
	// sub, for reproduce, are the commands the first argument chooses
	// (the tables); subName names that argument in messages.
	sub     []*command
	subName string
	// positional commands take arguments (ccs plot's and ccs report's
	// files) among their flags, before or after them; "--" ends the flags.
	positional bool
}

// runner runs a command whose flags are parsed.
type runner func(ctx context.Context, out *output) error

// newCommand makes the command name whose options are an O: declare
// declares its flags on fs, each filling a field of o, and may return a
// function that completes o once they are parsed (nil when there is
// nothing to complete); run does the command's work with the options.
func newCommand[O any](name, args, short string, declare func(fs *flag.FlagSet, o *O) func() error,
	run func(context.Context, O, *output) error) *command {
	return &command{name: name, args: args, short: short, flags: func(fs *flag.FlagSet) runner {
		o := new(O)
		finish := declare(fs, o)
		return func(ctx context.Context, out *output) error {
			if finish != nil {
				if err := finish(); err != nil {
					return err
				}
			}
			return run(ctx, *o, out)
		}
	}}
}

// commands are ccs's subcommands, in the order 'ccs help' lists them.
func commands() []*command {
	return []*command{
		bundleCommand(),
		calibrateCommand(),
		embedCommand(),
		evaluateCommand(),
		coverageCheckCommand(),
		compareCommand(),
		fitCommand(),
		oodCommand(),
		reproduceCommand(),
		plotCommand(),
		reportCommand(),
		serveCommand(),
		retrieveCommand(),
		collectionCommand(),
		loadtestCommand(),
		simulateCommand(),
		versionCommand(),
	}
}

// output carries the writers a command prints to.
type output struct {
	stdout, stderr io.Writer
	// command is the command line as parsed ("ccs reproduce sim -seeds
	// 2"), and config every flag that may change a number (all but
	// unkeyedFlags), one name=value per line: a results directory's cells
	// are keyed on it.
	command, config string
}

// unkeyedFlags change what a command shows or where it keeps it, or which
// cells it computes, never a cell's numbers. (-hull-anchors changes the
// convex hull's coverage, which is computed on every run, never kept.)
var unkeyedFlags = map[string]bool{"json": true, "quiet": true, "out": true, "plots": true, "seeds": true, "rows": true, "cache": true, "hull": true, "hull-anchors": true, "sweeps": true}

// warn prints a warning no reader can miss.
func (o *output) warn(msg string) { fmt.Fprintf(o.stderr, "WARNING: %s\n", textclip.Message(msg)) }

// terminal reports whether stderr is a terminal, for progress display.
func (o *output) terminal() bool {
	f, ok := o.stderr.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

// run is ccs with its arguments: it parses the command line and runs the
// command it names.
func run(stdout, stderr io.Writer, args []string) error {
	return runContext(context.Background(), stdout, stderr, args)
}

// runContext is run under ctx, which the command's long work checks.
func runContext(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		return usagef("no command given; run 'ccs help'")
	}
	name := args[0]
	if isHelp(name) {
		if len(args) > 1 {
			return runContext(ctx, stdout, stderr, append(args[1:], "-h"))
		}
		printHelp(stdout, commands())
		return nil
	}
	out := &output{stdout: stdout, stderr: stderr}
	names := []string{"help"} // "ccs hlep" is near it too
	for _, c := range commands() {
		if c.name == name {
			return missingFlagFile(c.run(ctx, out, c.name, args[1:]), args[1:])
		}
		names = append(names, c.name)
	}
	return usagef("unknown command %q%s (run 'ccs help' for the commands)", name, didYouMean(name, names, ""))
}

// missingFlagFile names the flag whose file does not exist, where err
// says only "open FILE: no such file or directory" and one of args gives
// FILE (as -flag FILE or -flag=FILE, FILE:ARRAY, NAME=FILE or FILE?ids=…):
// "-labels: open labels.csv: no such file or directory".
func missingFlagFile(err error, args []string) error {
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path == "" {
		return err
	}
	gives := func(v string) bool {
		if _, after, ok := strings.Cut(v, "="); ok && !strings.HasPrefix(v, pe.Path) {
			v = after // NAME=FILE
		}
		return v == pe.Path || strings.HasPrefix(v, pe.Path+":") || strings.HasPrefix(v, pe.Path+"?")
	}
	for i, a := range args {
		name, value, inline := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") && len(a) == 2 {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				continue
			}
			value = args[i+1]
		}
		if gives(value) && !strings.Contains(err.Error(), name) {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return err
}

// didYouMean is ": did you mean "NAME"?" for the name nearest a mistyped
// one (suggest.Near), NAME written with prefix ("-" for a flag), or the
// two equally near (": did you mean "-set" or "-test"?"); "" when none is
// near, or more than two.
func didYouMean(name string, names []string, prefix string) string {
	switch near := suggest.Near(name, names); len(near) {
	case 1:
		return fmt.Sprintf(": did you mean %q?", prefix+near[0])
	case 2:
		return fmt.Sprintf(": did you mean %q or %q?", prefix+near[0], prefix+near[1])
	}
	return ""
}

// flagHint is ": did you mean "-NAME"?" for a flag fs does not define,
// where err is flag's error for it and one of fs's flags is near.
func flagHint(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	name = strings.TrimPrefix(name, "-")
	if fs.Lookup(name) == nil && threadFlags[strings.ToLower(name)] {
		return ": the threads are the GOMAXPROCS environment variable's (GOMAXPROCS=2 ccs …; by default every CPU this process may use)"
	}
	if to, ok := flagAliases[strings.TrimPrefix(fs.Name(), "ccs ")][name]; ok && fs.Lookup(to) != nil {
		_, usage := flag.UnquoteUsage(fs.Lookup(to))
		return fmt.Sprintf(": did you mean -%s? (%s)", to, usage)
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if hint := didYouMean(name, names, "-"); hint != "" {
		return hint
	}
	return otherCommands(name, fs.Name())
}

// flagAliases are the flags a command's users reach for under another
// name, by command (the flag set's name): ccs fit's training bundle is
// -train, where its splits are named fit and val.
var flagAliases = map[string]map[string]string{
	"fit": {"fit": "train", "data": "train", "training": "train", "valid": "val", "validation": "val"},
}

// otherCommands is ": -NAME is a flag of ccs fit" (or of several
// commands) for a flag another command defines, or "": compare -head-dim
// was a bare "not defined" to a user who had fitted heads of 64.
func otherCommands(name, self string) string {
	var have []string
	for _, c := range commands() {
		for _, sub := range append([]*command{c}, c.sub...) {
			if sub.flags == nil || strings.HasSuffix(self, " "+sub.name) { // self: "ccs fit", "ccs reproduce sim"
				continue
			}
			fs := flag.NewFlagSet(sub.name, flag.ContinueOnError)
			sub.flags(fs)
			if fs.Lookup(name) != nil && !slices.Contains(have, "ccs "+sub.name) {
				have = append(have, "ccs "+sub.name)
			}
		}
	}
	switch {
	case len(have) == 0:
		return ""
	case len(have) > 3:
		return fmt.Sprintf(": -%s is a flag of %s and others, not of %s", name, strings.Join(have[:3], ", "), self)
	}
	return fmt.Sprintf(": -%s is a flag of %s, not of %s", name, strings.Join(have, " and "), self)
}

// threadFlags are the flags other tools take for their threads (make -j,
// scikit-learn's n_jobs, PyTorch's threads), which ccs leaves to
// GOMAXPROCS.
var threadFlags = map[string]bool{"threads": true, "j": true, "jobs": true, "n_jobs": true, "n-jobs": true, "workers": true, "cores": true, "nthreads": true, "num_threads": true}

// run parses c's flags from args and runs it; path is the command line's
// words up to c ("reproduce sim").
func (c *command) run(ctx context.Context, out *output, path string, args []string) error {
	if c.sub != nil {
		return c.runSub(ctx, out, path, args)
	}
	fs := flag.NewFlagSet("ccs "+path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	r := c.flags(fs)
	if err := c.parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help(out.stdout, path)
			return nil
		}
		return usagef("%s: %v%s", path, err, flagHint(fs, err))
	}
	if fs.NArg() > 0 && !c.positional {
		return usagef("%s: unexpected argument %q", path, fs.Arg(0))
	}
	kv := []string{"command=" + path}
	fs.VisitAll(func(f *flag.Flag) {
		if !unkeyedFlags[f.Name] {
			kv = append(kv, f.Name+"="+f.Value.String())
		}
	})
	out.command = strings.TrimSpace("ccs " + path + " " + strings.Join(args, " "))
	out.config = strings.Join(kv, "\n")
	return r(ctx, out)
}

// flagGroups are the flags several commands share, which a usage line names
// as a group ("[training flags]") and -h lists apart from the command's own.
var flagGroups = []struct {
	name    string // "training": the usage line's "[training flags]"
	title   string // -h's heading
	declare func(fs *flag.FlagSet)
}{
	{"training", "Training flags", func(fs *flag.FlagSet) { addRecipeFlags(fs, "sim") }},
	{"encoder", "Encoder flags", func(fs *flag.FlagSet) { addEncoderFlags(fs) }},
	{"augmentation", "Augmentation flags", func(fs *flag.FlagSet) { addAugmentFlags(fs) }},
}

// groupOf maps each flag of a group c's usage line names to that group's
// name.
func (c *command) groupOf() map[string]string {
	group := map[string]string{}
	for _, g := range flagGroups {
		if !strings.Contains(c.args, "["+g.name+" flags]") {
			continue
		}
		fs := flag.NewFlagSet(g.name, flag.ContinueOnError)
		g.declare(fs)
		fs.VisitAll(func(f *flag.Flag) { group[f.Name] = g.name })
	}
	return group
}

// help writes c's usage line, what it does, and its flags with their
// defaults: its own, then each group its usage line names.
func (c *command) help(w io.Writer, path string) {
	fmt.Fprintf(w, "usage: ccs %s %s\n\n%s\n", path, c.args, c.short)
	all := flag.NewFlagSet(path, flag.ContinueOnError)
	c.flags(all)
	group := c.groupOf()
	section := func(title, name string) {
		fs := flag.NewFlagSet(path, flag.ContinueOnError)
		n := 0
		all.VisitAll(func(f *flag.Flag) {
			if group[f.Name] == name {
				fs.Var(f.Value, f.Name, f.Usage)
				n++
			}
		})
		if n == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	section("Flags", "")
	for _, g := range flagGroups {
		section(g.title, g.name)
	}
}

// parse parses args into fs. A positional command's flags may also
// follow its arguments, as its usage line writes them (ccs report
// RESULT.json… -out report.html): fs.Args() are then the arguments alone,
// in their order; after "--" every word is an argument.
func (c *command) parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil || !c.positional {
		return err
	}
	var words []string
	for rest := fs.Args(); len(rest) > 0; rest = fs.Args() {
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			words = append(words, rest...)
			break
		}
		words = append(words, rest[0])
		args = rest[1:]
		if err := fs.Parse(args); err != nil {
			return err
		}
	}
	return fs.Parse(append([]string{"--"}, words...))
}

// runSub runs the subcommand args[0] names (reproduce's tables).
func (c *command) runSub(ctx context.Context, out *output, path string, args []string) error {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintf(out.stdout, "usage: ccs %s %s\n\n%s\n\n%ss:\n", path, c.args, c.short, c.subName)
		for _, s := range c.sub {
			fmt.Fprintf(out.stdout, "  %-14s %s\n", s.name, s.short)
		}
		fmt.Fprintf(out.stdout, "\nRun 'ccs %s %s -h' for its flags.\n", path, c.subName)
		return nil
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("%s: missing %s; run 'ccs %s -h'", path, c.subName, path)
	}
	var names []string
	for _, s := range c.sub {
		if s.name == args[0] {
			return s.run(ctx, out, path+" "+s.name, args[1:])
		}
		names = append(names, s.name)
	}
	return usagef("%s: unknown %s %q%s (want %s or %s)", path, strings.ToLower(c.subName), args[0], didYouMean(args[0], names, ""),
		strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

func printHelp(w io.Writer, cmds []*command) {
	fmt.Fprintln(w, "ccs builds and evaluates contrastive conformal sets: sets around an anchor's")
	fmt.Fprintln(w, "embedding that contain its positives with probability 1−α.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: ccs <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'ccs <command> -h' for a command's flags.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 failure (bad data, I/O), 2 usage error, 130 interrupted.")
}

// required reports the missing required flags (name, value pairs; a
// flag is missing when its value is empty) as one usage error.
func required(cmd string, pairs ...string) error {
	var missing []string
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			missing = append(missing, "-"+pairs[i])
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return usagef("%s: flag %s is required", cmd, missing[0])
	}
	return usagef("%s: flags %s are required", cmd, strings.Join(missing[:len(missing)-1], ", ")+" and "+missing[len(missing)-1])
}

// checkAlpha validates -alpha at the command-line boundary (usage error).
func checkAlpha(cmd string, alpha float64) error {
	if err := conformal.CheckAlpha(alpha); err != nil {
		if a, ok := conformal.PercentAlpha(alpha); ok {
			return usagef("%s: -alpha %v: want 0 < α < 1, the share of positives a set may miss (a percentage? -alpha %v)", cmd, alpha, a)
		}
		return usagef("%s: -alpha %v: want 0 < α < 1", cmd, alpha)
	}
	return nil
}

// defaultAlpha is every command's default miscoverage level: the paper's.
var defaultAlpha = objective.PaperConfig.Alpha

// writeJSON writes v as indented JSON, each array of numbers (a
// resplit's coverages, a curve) on one line.
func writeJSON(w io.Writer, v any) error {
	return jsonindent.Encode(w, v, "  ")
}

// namedFiles is a repeatable NAME=FILE flag.
type namedFiles map[string]string

func (m namedFiles) String() string { return fmt.Sprint(map[string]string(m)) }
func (m namedFiles) Set(v string) error {
	name, file, ok := strings.Cut(v, "=")
	if !ok || file == "" || !serve.ValidName(name) {
		return fmt.Errorf("%q: want NAME=FILE (a name without '/', '?', '#', '%%' or spaces, and not . or ..)", v)
	}
	if _, dup := m[name]; dup {
		return fmt.Errorf("name %q given twice", name)
	}
	m[name] = file
	return nil
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// readBundle reads a bundle, saying on stderr once which of its arrays
// were converted on reading (float64, float16, int32, Fortran order).
func readBundle(out *output, path string) (*bundle.Bundle, error) {
	b, err := bundle.Read(path)
	if err == nil {
		noteConverted(out, path, b)
	}
	return b, err
}

// readFeatures is readBundle for bundle.ReadFeatures.
func readFeatures(out *output, path string) (*bundle.Bundle, error) {
	b, err := bundle.ReadFeatures(path)
	if err == nil {
		noteConverted(out, path, b)
	}
	return b, err
}

// readBundleFor is readBundle for a file scored with set: its embeddings
// must have the set's dimension (conformal.CheckDim, the one place where
// embeddings meet a set).
func readBundleFor(out *output, path string, set *conformal.Set) (*bundle.Bundle, error) {
	b, err := readBundle(out, path)
	if err != nil {
		return nil, err
	}
	return b, checkDim(path, b, set)
}

// warnOwnSplit warns when the test file is a split the set has seen
// (conformal.Set.OwnSplitWarning): -test calibration.npz is an easy slip.
func warnOwnSplit(out *output, path string, set *conformal.Set, b *bundle.Bundle, recalibrated bool) {
	if w := set.OwnSplitWarning(b, recalibrated); w != "" {
		out.warn(path + ": " + w)
	}
}

// readFeaturesFor is readFeatures for a file scored with set.
func readFeaturesFor(out *output, path string, set *conformal.Set) (*bundle.Bundle, error) {
	b, err := readFeatures(out, path)
	if err != nil {
		return nil, err
	}
	return b, checkDim(path, b, set)
}

// checkDim refuses a file whose embeddings are not of the set's dimension,
// naming the file, its array, the shape found and the dimension wanted.
func checkDim(path string, b *bundle.Bundle, set *conformal.Set) error {
	return set.CheckDim(fmt.Sprintf("%s: array %q", path, b.AnchorsArray()), b.N, b.D)
}

func noteConverted(out *output, path string, b *bundle.Bundle) {
	if len(b.Converted) > 0 {
		fmt.Fprintf(out.stderr, "note: %s: converted on reading: %s\n", path, strings.Join(b.Converted, "; "))
	}
	if w := b.PairingWarning(); w != "" {
		out.warn(path + ": " + w)
	}
	if w := bundle.ManifestWarning(path, b); w != "" {
		out.warn(w)
	}
}
