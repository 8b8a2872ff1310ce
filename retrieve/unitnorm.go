package retrieve

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ccsets/ccs/conformal"
)

// offUnit is a collection's rows whose norm conformal refuses beside a set
// of unit-norm embeddings (conformal.NormRefused): how many, and the
// first's row and norm.
type offUnit struct {
	once      sync.Once
	off       int
	first     int
	firstNorm float64
}

// OffUnit counts the rows of c whose norm is more than
// conformal.NormRefusal from 1 (an encoder's output stored without its
// normalisation, an all-zero row of a failed input), with the first's row
// and norm (−1 and 0 where there is none): counted once, on the first
// call.
func (c *Collection) OffUnit() (off, first int, firstNorm float64) {
	u := &c.offUnit
	u.once.Do(func() { // its own once: searches need not wait on c.mu for the count
		u.first = -1
		for i := range c.N {
			if n := conformal.RowNorm(c.Rows[i*c.D : (i+1)*c.D]); conformal.NormRefused(n) {
				if u.off++; u.first < 0 {
					u.first, u.firstNorm = i, n
				}
			}
		}
	})
	return u.off, u.first, u.firstNorm
}

// UnitNormWarning warns, where a set calibrated on unit-norm embeddings
// (conformal.Info.UnitNorm) searches c (named what), that rows of c are
// not of unit norm: retrieval answers them as the embeddings they are,
// which no calibration positive resembled, and the guarantee does not
// speak of them. sets name the sets (none: "the set"). "" where every row
// is of unit norm. ccs serve says it when it loads a collection, ccs
// retrieve and Python's retrieve when they search one.
func UnitNormWarning(what string, c *Collection, sets ...string) string {
	who := "the set was"
	switch {
	case len(sets) == 1:
		who = "set " + sets[0] + " was"
	case len(sets) > 1:
		who = "sets " + strings.Join(sets, ", ") + " were"
	}
	return UnitNormWarningOf(what, c, who)
}

// UnitNormWarningOf is UnitNormWarning with the sets said by who ("the
// rows' sets were", as ccs compare says it).
func UnitNormWarningOf(what string, c *Collection, who string) string {
	off, first, norm := c.OffUnit()
	if off == 0 {
		return ""
	}
	are := "rows are"
	if off == 1 {
		are = "rows is"
	}
	return fmt.Sprintf("%s: %d of its %d %s not of unit norm (the first: row %d, norm %.4g), and %s calibrated on unit-norm embeddings: retrieval treats such rows as the embeddings they are, which no calibration positive resembled, and the guarantee does not speak of them; normalise them (x / ‖x‖) as the calibration's embeddings were",
		what, off, c.N, are, first, norm, who)
}
