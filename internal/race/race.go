//go:build race

package race

// Enabled says whether the race detector is on.
const Enabled = true
