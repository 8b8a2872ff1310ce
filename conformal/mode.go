package conformal

import (
	"fmt"
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

// String returns "one-per-anchor", "pooled" or "pac".
func (m Mode) String() string {
	switch m {
	case OnePerAnchor:
		return "one-per-anchor"
	case Pooled:
		return "pooled"
	case PAC:
		return "pac"
	case Class:
		return "class"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// valid reports whether m is a known mode.
func (m Mode) valid() bool { return m == OnePerAnchor || m == Pooled || m == PAC || m == Class }

// MarshalText implements encoding.TextMarshaler.
func (m Mode) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("conformal: unknown calibration mode %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// ParseMode reads "one" (or "one-per-anchor"), "pooled" and "pac".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "one", "one-per-anchor":
		return OnePerAnchor, nil
	case "pooled":
		return Pooled, nil
	case "pac":
		return PAC, nil
	case "class":
		return Class, nil
	}
	return 0, fmt.Errorf("unknown calibration mode %q (want one, pooled, pac or class)", s)
}

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
