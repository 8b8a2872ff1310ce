"""A reviewer's (h8) checks of the blocks round: each fails at ecad767 for
the reason its docstring gives."""

import numpy as np
import pytest

import ccs


def test_bundle_negative_blocks_refused():
    """ccs.bundle(blocks=) refuses a missing block id (-1, "", nan: "as one
    block, those rows would be split together as if one recording"), but
    ccs.Bundle(blocks=) takes an array of -1 as it stands: every anchor one
    block, which coverage_check then halves row by row, saying "blocks": 1
    and warning of nothing. Expected: refused, naming blocks."""
    rng = np.random.default_rng(0)
    n, d = 200, 4
    a = rng.normal(size=(n, d)).astype(np.float32)
    pos = (a[:, None, :] + 0.3 * rng.normal(size=(n, 2, d))).astype(np.float32)
    with pytest.raises(Exception, match="blocks"):
        ccs.Bundle(a, pos, blocks=np.full(n, -1))
