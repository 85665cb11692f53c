"""The dropout note is worded once: a secure sum run in one process and one summed from
partitions say the same sentence, byte for byte, about the same dropouts."""

from __future__ import annotations

import numpy as np

from dpstudio.engine.distributed.notes import dropout_note
from dpstudio.engine.distributed.partial import (
    add_sum_partials,
    finish_secure,
    plan_secure_partial,
    secure_partial,
    split_dropouts,
)
from dpstudio.engine.distributed.secure_sum import run_secure_sum
from dpstudio.engine.rng import SimulationSource

EXPECTED = "30 clients dropped out after masking (up to 40 planned); the sum is over the " \
           "970 survivors"


def test_both_paths_state_the_same_dropout_note():
    assert dropout_note(30, 40, 970) == EXPECTED
    x = (np.arange(1000) % 2).astype(np.float64)
    kw = dict(query="sum", max_dropouts=40)
    whole = run_secure_sum(x, (0, 1), "skellam", 1.0, 1e-6, SimulationSource(1),
                           dropouts=30, **kw)
    rows = [400, 600]
    plan = plan_secure_partial(1000, (0, 1), "skellam", 1.0, 1e-6, dropouts=30, **kw)
    drops = split_dropouts(rows, 30, SimulationSource(3))
    parts = [secure_partial(x[:400], plan, SimulationSource(20), drops[0]),
             secure_partial(x[400:], plan, SimulationSource(21), drops[1])]
    split = finish_secure(add_sum_partials(parts), plan, SimulationSource(0))
    ours = [n for n in whole.notes if "dropped out" in n]
    theirs = [n for n in split.notes if "dropped out" in n]
    assert ours == theirs == [EXPECTED]
