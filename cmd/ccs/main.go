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
//	calibrate       calibrate a baseline set, or a fitted geometry, on a calibration bundle
//	embed           embed images with an ONNX encoder into a bundle
//	evaluate        measure a set's coverage, exclusion and LogVol/d on a test bundle
//	coverage-check  the distribution of coverage over calibration/test resplits of a bundle
//	fit             learn a set geometry on a training split, the checkpoint chosen on a validation split
//	ood             score in-distribution and OOD bundles with a set's OOD score and the baselines
//	reproduce       reproduce a table of the paper: sim, sim-draws, sim-threshold, pnorm, sensitivity, fmnist, ood
//	plot            draw the figures of results (any command's -json) as PNG and SVG
//	report          write one self-contained HTML page of a results directory or result files
//	serve           serve fitted sets over HTTP
//	retrieve        list the collection items inside a set around an anchor
//	collection      load a collection file into ClickHouse (one table or a cluster)
//	loadtest        drive a server with one request, bounded in time and count
//	simulate        write the paper's 3-D simulation as fit, validation, calibration and test bundles
//	version         print the module version and the build's kernels
//
// Run 'ccs help' for the list and 'ccs <command> -h' for a command's flags.
//
// EXIT STATUS: 0 on success, 1 when the work failed (bad data, a file that
// cannot be read or written), 2 for a usage error.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	err := run(os.Stdout, os.Stderr, os.Args[1:])
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "ccs: %s\n", err)
	os.Exit(exitCode(err))
}

// exitCode is the exit status of a failed command: 2 for a usage error,
// 1 for any other.
func exitCode(err error) int {
	var u *usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}
