// Command ccs builds and evaluates contrastive conformal sets.
//
// Usage:
//
//	ccs <command> [flags]
//
// Commands: simulate, calibrate, evaluate, reproduce. Run 'ccs help' for the
// list and 'ccs <command> -h' for a command's flags.
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
	var u *usageError
	if errors.As(err, &u) {
		os.Exit(2)
	}
	os.Exit(1)
}
