"""Shuffle and secure-aggregation sums: every row is a client that sends a message.

Before, a missing value's client sent nothing, so the public n (the shuffler's message
count, the server's list of clients) told apart a dataset where one user's value is
missing from its replace-neighbour where it is present: an infinite privacy loss.
"""

import numpy as np
import pytest

from dpstudio.engine.distributed import run_secure_sum
from dpstudio.engine.distributed.encoding import MISSING_NOTE, unit_values
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.shuffle import run_shuffle_sum

BOUNDS = (17.0, 42.0)


def _pair():
    rng = np.random.default_rng(5)
    present = rng.uniform(17, 42, size=400)
    missing = present.copy()
    missing[0] = np.nan
    return missing, present


def _old_unit_values(values, bounds):
    """Today's rule before the fix, kept to show the audit's power: drop missing values."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    lo, hi = bounds
    return (np.clip(v, lo, hi) - lo) / (hi - lo)


def test_missing_values_are_sent_as_the_middle_of_the_bounds():
    u, lo, hi, clamped, missing = unit_values(np.array([17.0, np.nan, np.inf, -np.inf, 42.0]),
                                              BOUNDS)
    assert u.tolist() == [0.0, 0.5, 0.5, 0.5, 1.0]
    assert (clamped, missing) == (0, 3)


@pytest.mark.parametrize("run, mechanism", [
    (run_shuffle_sum, "cloak"), (run_shuffle_sum, "blanket"),
    (run_secure_sum, "skellam"), (run_secure_sum, "secagg_gaussian"),
])
def test_n_is_the_number_of_rows_on_both_neighbours(run, mechanism):
    missing, present = _pair()
    outs = [run(v, BOUNDS, mechanism, 1.0, 1e-6, SimulationSource(1)) for v in (missing,
                                                                               present)]
    # What every party sees about participation is the same on both neighbours.
    assert outs[0].n == outs[1].n == missing.size
    assert MISSING_NOTE in outs[0].notes and MISSING_NOTE in outs[1].notes
    assert (outs[0].missing_count, outs[1].missing_count) == (1, 0)  # analyst-only


def test_participation_audit_detects_the_old_rule_and_passes_the_new_one():
    """The observable 'how many clients sent messages' on the missing/present pair: the old
    rule separates the pair with certainty (ε = ∞), the new rule never does."""
    missing, present = _pair()
    old = {_old_unit_values(missing, BOUNDS).size, _old_unit_values(present, BOUNDS).size}
    new = {unit_values(missing, BOUNDS)[0].size, unit_values(present, BOUNDS)[0].size}
    assert len(old) == 2  # power: the old rule's n differs on the pair
    assert len(new) == 1
