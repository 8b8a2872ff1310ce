package conformal

import (
	"github.com/ccsets/ccs/internal/enum"
)

// Mode is how calibration anchors contribute scores.
type Mode int

const (
	// OnePerAnchor takes one positive per calibration anchor, chosen by a
	// seeded RNG: the paper's Lemma 1, the mode that carries the guarantee.
	OnePerAnchor Mode = iota + 1
	// Pooled takes all k positives of every anchor, as the paper's public
	// code does. The scores of one anchor's positives are not exchangeable
	// with a test anchor's single positive, so the guarantee is approximate.
	Pooled
	// PAC takes one positive per anchor, as OnePerAnchor, and the
	// training-conditional rank PACRank(n, α, δ): with probability ≥ 1 − δ
	// over the calibration draw, the set's coverage is at least 1 − α.
	PAC
	// Class is class-conditional (Mondrian) calibration: one positive per
	// anchor and one threshold per class from that class's anchors, so that
	// every class gets its 1 − α (marginally over the draw; with δ > 0,
	// PAC per class). It needs the calibration anchors' labels, and an
	// anchor's label to decide membership.
	Class
)

var modes = enum.Names[Mode]{What: "calibration mode", Names: []string{"one-per-anchor", "pooled", "pac", "class"},
	Alias: map[string]Mode{"one": OnePerAnchor}, Want: []string{"one", "pooled", "pac", "class"}}

// String returns "one-per-anchor", "pooled", "pac" or "class".
func (m Mode) String() string { return modes.String(m) }

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool { return modes.Valid(m) }

// MarshalText implements encoding.TextMarshaler.
func (m Mode) MarshalText() ([]byte, error) { return modes.Marshal(m) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Mode) UnmarshalText(b []byte) error { return modes.Unmarshal(m, b) }

// ParseMode reads "one" (or "one-per-anchor"), "pooled", "pac" and
// "class".
func ParseMode(s string) (Mode, error) { return modes.Parse(s) }

// guaranteeOf is a set file's guarantee field for a calibration mode:
// "exact" (marginal, one positive per anchor), "training-conditional"
// (PAC) or "approximate" (pooled).
func guaranteeOf(m Mode, delta float64) string {
	switch {
	case m == PAC:
		return "training-conditional"
	case m == Class && delta > 0:
		return "class-conditional, training-conditional"
	case m == Class:
		return "class-conditional"
	case m == Pooled:
		return "approximate"
	}
	return "exact"
}
