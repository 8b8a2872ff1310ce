package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInterrupt: SIGINT (Ctrl-C) to a reproduce run with a results
// directory stops it within a second with exit status 130, keeps every
// finished cell, leaves no temporary file, and a rerun reads the kept
// cells back and finishes.
func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	args := []string{"reproduce", "sim", "-rows", "learned", "-seeds", "2", "-k", "20", "-per-class", "400",
		"-epochs", "150", "-patience", "150", "-quiet", "-json", "-out", out}
	cells := filepath.Join(out, "cells")
	cmd, stderr := startUntilCell(t, cells, args...)
	sent := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(sent)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("after SIGINT: %v, want exit status 130\n%s", err, stderr.String())
	}
	if took > time.Second {
		t.Errorf("stopped %v after SIGINT, want within a second", took)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
	}
	kept := keptCells(t, cells)
	if bad, temps := partials(t, out); len(bad) > 0 || temps > 0 {
		t.Errorf("after SIGINT: %d partial files %v, %d temporary files", len(bad), bad, temps)
	}
	if kept == 0 || kept >= 12 {
		t.Fatalf("%d of 12 cells kept after SIGINT; want some, not all", kept)
	}
	stderr.Reset()
	rerun := ccsProcess(args...)
	rerun.Stderr = stderr
	if err := rerun.Run(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, stderr.String())
	}
	if want := "read back"; !strings.Contains(stderr.String(), want) || keptCells(t, cells) != 12 {
		t.Errorf("rerun: %d cells kept, stderr:\n%s", keptCells(t, cells), stderr.String())
	}
	t.Logf("SIGINT after the first cell: exit 130 in %v, %d cells kept; the rerun %s", took.Round(time.Millisecond), kept,
		strings.TrimSpace(stderr.String()))
}
