//go:build !amd64

package kernel

// detect: the assembly kernels are for amd64; elsewhere the portable ones.
func detect() level { return portable }

func setVector(level) {}
