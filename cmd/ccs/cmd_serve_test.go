package main

import (
	"strings"
	"testing"
)

// TestServeLimitFlags: limits whose byte budgets would wrap around int64
// are usage errors that say why, before anything is read or bound.
func TestServeLimitFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-max-body", "4611686018427387904"}, "-max-body"},                                       // 2^62: 4 × it is the default body memory
		{[]string{"-max-body", "1099511627776", "-max-inflight", "1073741824"}, "-max-inflight"},          // the memory bound overflows
		{[]string{"-max-body", "1048576", "-body-memory", "9223372036854775807"}, "-body-memory"},         // so does this one
		{[]string{"-max-body", "9223372036854775807"}, "-max-body"},                                       // 2 × max-body + 128 KiB
		{[]string{"-max-body", "1048576", "-body-memory", "1048576"}, "at least 2 × -max-body + 128 KiB"}, // not an overflow, the same check
		{[]string{"-monitor-limit", "-1"}, "-monitor-limit"},
		{[]string{"-monitor-delta", "0"}, "-monitor-delta"},
		{[]string{"-monitor-delta", "1"}, "-monitor-delta"},
		{[]string{"-half-copy=maybe"}, "-half-copy"},
		{[]string{"-drain-delay", "-1s"}, "-drain-delay -1s: want 0 or more"},
		{[]string{"-shutdown-grace", "0s"}, "-shutdown-grace 0s: want a positive value"},
	} {
		_, err := ccs(append([]string{"serve", "-set", "a=missing.json"}, c.args...)...)
		if !isUsage(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error naming %s", c.args, err, c.want)
		}
	}
}
