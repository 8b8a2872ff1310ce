// Package atomicfile writes files so that a reader sees the old file or the
// whole new one, never a half-written one.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Write calls write with a buffered temporary file in path's directory and
// renames it over path only when write, the flush, the sync and the close all
// succeeded; otherwise the temporary file is removed and path is untouched.
// The directory is synced after the rename, so that the new name survives a
// crash of the machine too.
//
// A process killed while writing leaves its temporary file
// (.NAME.ccs-tmp-PID-RANDOM) beside path, never at it. The first Write into a
// directory in a process removes the directory's temporaries that are at
// least StaleAge old and whose writer is no longer running (by its PID:
// the age guards against a writer in another PID namespace sharing the
// directory).
//
// Its errors name path, not the temporary file: "out/x.json: no such file
// or directory" for a missing directory, "out: is a directory" for a path
// that names one.
func Write(path string, write func(io.Writer) error) error {
	s, err := Stage(path, write)
	if err != nil {
		return err
	}
	if err := s.Commit(); err != nil {
		s.Abort()
		return err
	}
	return nil
}

// Staged is a file that Stage wrote, whole and synced, under its temporary
// name beside its path: Commit renames it over the path, Abort removes it.
// Several files staged, then committed together, replace a set of files
// (a directory of bundles and their manifest) such that an error or an
// interruption before the commits leaves the old set whole.
type Staged struct{ path, tmp string }

// Stage is Write without the rename: the file is written, flushed, synced
// and closed under its temporary name, which Commit or Abort then ends.
func Stage(path string, write func(io.Writer) error) (_ *Staged, err error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return nil, fmt.Errorf("%s: is a directory: give a file's path", path)
	}
	sweep(dir)
	f, err := os.CreateTemp(dir, "."+base+tmpMark+strconv.Itoa(os.Getpid())+"-*")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &noDir{path: path, dir: dir}
	}
	if err != nil {
		return nil, named(path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = write(bw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return nil, named(path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return nil, named(path, err)
	}
	if err = f.Sync(); err != nil {
		return nil, named(path, err)
	}
	if err = f.Close(); err != nil {
		return nil, named(path, err)
	}
	return &Staged{path: path, tmp: f.Name()}, nil
}

// Commit renames the staged file over its path and syncs the directory.
func (s *Staged) Commit() error {
	if err := os.Rename(s.tmp, s.path); err != nil {
		return named(s.path, err)
	}
	if d, err := os.Open(filepath.Dir(s.path)); err == nil { // best effort: not every system syncs directories
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort removes the staged file if it was not committed.
func (s *Staged) Abort() { os.Remove(s.tmp) }

// named is err about path: the operating system's reason, without the
// temporary file's name that an *os.PathError or *os.LinkError carries.
// noDir is the error of a path whose directory does not exist: it is an
// fs.ErrNotExist (errors.Is), worded for the directory.
type noDir struct{ path, dir string }

func (e *noDir) Error() string {
	return fmt.Sprintf("%s: no such directory %s (create it first)", e.path, e.dir)
}

func (e *noDir) Unwrap() error { return fs.ErrNotExist }

func named(path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%s: %w", path, pe.Err)
	case errors.As(err, &le):
		return fmt.Errorf("%s: %w", path, le.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// tmpMark marks a temporary file's name: .NAME.ccs-tmp-PID-RANDOM, RANDOM
// being os.CreateTemp's digits.
const tmpMark = ".ccs-tmp-"

// digits reports whether s is one or more decimal digits.
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// StaleAge is how old a dead writer's temporary file must be before a
// Write sweeps it.
var StaleAge = time.Minute

// swept lists the directories this process has swept.
var swept sync.Map

// sweep removes dir's stale temporary files (once per directory per
// process): those StaleAge old whose writing process has ended. A live
// writer's file, and every other file, is left alone.
func sweep(dir string) {
	if _, done := swept.LoadOrStore(dir, true); done {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		i := strings.LastIndex(name, tmpMark)
		if !strings.HasPrefix(name, ".") || i < 0 || !e.Type().IsRegular() {
			continue
		}
		pidText, random, ok := strings.Cut(name[i+len(tmpMark):], "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || !digits(random) || pid <= 0 || pid == os.Getpid() || running(pid) {
			continue
		}
		if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < StaleAge {
			continue
		}
		os.Remove(filepath.Join(dir, name))
	}
}
