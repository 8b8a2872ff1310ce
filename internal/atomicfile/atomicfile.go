// Package atomicfile writes files so that a reader sees the old file or the
// whole new one, never a half-written one.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Write calls write with a buffered temporary file in path's directory and
// renames it over path only when write, the flush, the sync and the close all
// succeeded; otherwise the temporary file is removed and path is untouched.
// The directory is synced after the rename, so that the new name survives a
// crash of the machine too.
//
// A process killed while writing leaves its temporary file
// (.NAME.tmp-PID-RANDOM) beside path, never at it; the next Write of path
// removes the temporaries of writers that are no longer running.
func Write(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	sweep(dir, base)
	f, err := os.CreateTemp(dir, "."+base+".tmp-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = write(bw); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil { // best effort: not every system syncs directories
		d.Sync()
		d.Close()
	}
	return nil
}

// sweep removes dir's temporary files for base whose writing process has
// ended (killed mid-write); a live writer's file is left alone.
func sweep(dir, base string) {
	names, _ := filepath.Glob(filepath.Join(dir, "."+escape(base)+".tmp-*-*"))
	for _, name := range names {
		rest := strings.TrimPrefix(filepath.Base(name), "."+base+".tmp-")
		pid, err := strconv.Atoi(rest[:max(0, strings.IndexByte(rest, '-'))])
		if err != nil || pid == os.Getpid() || running(pid) {
			continue
		}
		os.Remove(name)
	}
}

// escape quotes base's glob metacharacters.
func escape(base string) string {
	var b strings.Builder
	for _, r := range base {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
