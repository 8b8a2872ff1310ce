//go:build !race

// Package race says whether the binary runs under the race detector
// (go test -race), as the Go tree's own internal/race does: a test whose
// work is numbers or rendering, with no concurrency of its own, takes a
// smaller share of its cases there, where it runs ten times slower and
// the race detector has nothing to find in the rest.
package race

// Enabled says whether the race detector is on.
const Enabled = false
