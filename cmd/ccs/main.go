// Command ccs builds and evaluates contrastive conformal sets.
//
// Usage:
//
//	ccs <command> [flags]
//
// The commands, in the order 'ccs help' lists them, each in its own file
// (cmd_NAME.go) with an options struct and a runNAME(ctx, opts, out)
// function; reproduce chooses among the tables, each a command of its own
// (cmd_reproduce_TABLE.go):
//
//	bundle         make bundles of your own embeddings: split them into DIR/{fit,val,cal,test}.npz with positives and negatives by index, and DIR/manifest.json
//	calibrate      calibrate a baseline set, or a fitted geometry, on a calibration bundle and save it
//	embed          embed images with an ONNX encoder into a bundle: anchors, k augmented views as positives, other anchors as negatives
//	evaluate       measure a fitted set's coverage, exclusion and LogVol/d on a test bundle, or its misses and false acceptances on a speaker-verification trial list
//	coverage-check resplit a bundle into calibration and test many times, recalibrate the set's geometry on each (its α, mode, δ) and print the distribution of coverage: the guarantee, draw by draw
//	compare        compare the set families on your own bundles (ccs bundle's directory): the paper's Table 1 for your data, over seeds, with the worst class, resplits and the OOD test
//	fit            learn a set geometry on a training split, choosing the checkpoint on a validation split
//	ood            score in-distribution and OOD inputs with a set's OOD scores (and, given training features, the eight baselines): AUROC, FPR95 and the conformal tests' alarm rates
//	reproduce      reproduce a table of the paper (sim: the 3-D simulation, Table 1; sim-draws: the survey of point clouds behind -data-seed; sim-threshold: the threshold-mode comparison; pnorm: the isotropic p-ball at fixed coverage and fixed volume; sensitivity: the sensitivity analysis; fmnist: Fashion-MNIST with the project's encoders, Table 2's layout; ood: OOD detection, Fashion-MNIST against MNIST digits and noise)
//	plot           draw the figures of result documents (the -json or -out of ccs reproduce, compare, evaluate, coverage-check and ood; a results directory's TABLE.json) as PNG and SVG
//	report         write one self-contained HTML page (tables, figures as inline SVG, the paper's numbers beside ours, the build) from a results directory of ccs reproduce -out, or result files; or their tables as Markdown (.md) or LaTeX (.tex)
//	serve          serve fitted sets over HTTP: membership, OOD scores, certified retrieval (SIGHUP reloads, SIGTERM drains and stops)
//	retrieve       list the collection items inside a fitted set around an anchor, or around each of m anchors (retrieval with expected recall ≥ 1−α)
//	collection     manage collections in a database (load: write an .npz/.npy/.parquet collection into ClickHouse)
//	loadtest       send one request repeatedly to a server, bounded in time and count, and report throughput and latency percentiles
//	simulate       write the paper's 3-D mixed simulation as DIR/{fit,val,cal,test}.npz
//	version        print the module version, the Go toolchain, the kernels in use (portable, AVX2 or AVX-512), BLAS and the threads
//
// Run 'ccs help' for the list and 'ccs <command> -h' for a command's flags.
//
// EXIT STATUS: 0 on success, 1 when the work failed (bad data, a file that
// cannot be read or written), 2 for a usage error, 130 when interrupted
// (SIGINT or SIGTERM: the finished result cells are kept).
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/ccsets/ccs/internal/textclip"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/KimMachineGun/automemlimit/memlimit"

	// The program chooses its drivers (as database/sql's do): clickhouse://
	// collections for retrieve, serve and collection load.
	_ "github.com/ccsets/ccs/retrieve/clickhouse"
)

func main() {
	memoryLimit(memlimit.FromCgroup)
	set, notes := threadNotes(os.Getenv("GOMAXPROCS"), runtime.GOMAXPROCS(0), runtime.NumCPU())
	if set > 0 {
		runtime.GOMAXPROCS(set)
	}
	if n := kernelNote(); n != "" {
		notes = append(notes, n)
	}
	for _, n := range notes {
		fmt.Fprintf(os.Stderr, "note: %s\n", n)
	}
	// Ctrl-C (SIGINT) and SIGTERM cancel the command's context: a long run
	// stops within a second, keeps its finished result cells and leaves no
	// temporary file (ccs serve drains, as on its own signals).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runContext(ctx, os.Stdout, os.Stderr, os.Args[1:])
	interrupted := ctx.Err() != nil
	stop()
	if err == nil {
		return
	}
	if interrupted && errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "ccs: interrupted\n")
		os.Exit(130)
	}
	// A value quoted from a file (a label of 64 MB) cut, not printed whole.
	fmt.Fprintf(os.Stderr, "ccs: %s\n", textclip.Message(err.Error()))
	os.Exit(exitCode(err))
}

// exitCode is the exit status of a failed command: 2 for a usage error,
// 130 (as a shell reports SIGINT) for a command its context stopped, 1
// for any other.
func exitCode(err error) int {
	var u *usageError
	switch {
	case errors.As(err, &u):
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	}
	return 1
}

// memoryLimit sets the Go heap's soft limit to 90% of the memory limit
// provider gives (a container's: its cgroup's), unless GOMEMLIMIT is set
// or AUTOMEMLIMIT=off, and returns it (0: none set). The Go runtime knows
// no container's limit: with a collection held whole — 1.2 GB for
// 400 000 × 512 from a float16 file, and its half copy — the heap would
// grow to twice what it holds before a collection, past a limit a
// container is killed at. Its arrays hold no pointers, so a collection
// nearer the limit costs little.
func memoryLimit(provider memlimit.Provider) int64 {
	before := debug.SetMemoryLimit(-1)
	limit, err := memlimit.Set(memlimit.WithRatio(0.9), memlimit.WithProvider(provider))
	if err != nil || limit == before || limit == math.MaxInt64 {
		return 0 // no limit to follow (not in a container), none readable, or GOMEMLIMIT's
	}
	return limit
}
