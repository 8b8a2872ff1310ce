//go:build unix

package atomicfile

import (
	"errors"
	"syscall"
)

// running reports whether process pid exists (signal 0 checks without
// sending; EPERM means it exists under another user).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
