"""run_secure_sum passes the job state to the masking round: progress rises through it to
1, a cancellation stops it between chunks of PRF work, and the result does not depend on
whether a state listens (the protocol in dpstudio/jobs.py)."""

import numpy as np
import pytest

from dpstudio.engine.distributed import run_secure_sum
from dpstudio.engine.rng import SimulationSource
from dpstudio.jobs import Cancelled, NullState

# 400 clients mask over the complete graph: 79,800 edges, two chunks of edge masks and one
# of self masks when each client holds one integer, so the round reports several times.
VALUES = np.random.default_rng(12).uniform(0.0, 100.0, 400)
VALUES[:4] = np.nan  # sent as the middle of the bounds
ARGS = ((0.0, 100.0), "skellam", 1.0, 1e-6)


class CancelAfter(NullState):
    """Records progress; says "cancelled" once ``reports`` progress reports arrived."""

    def __init__(self, reports: int) -> None:
        super().__init__()
        self.reports = reports

    def cancelled(self) -> bool:
        return len(self.fractions) >= self.reports


def _run(state=None):
    return run_secure_sum(VALUES, *ARGS, SimulationSource(21), dropouts=3, max_dropouts=5,
                          state=state)


def test_progress_rises_through_the_masking_round_and_the_result_is_unchanged():
    plain = _run()
    state = NullState()
    watched = _run(state)
    assert watched.to_dict() == plain.to_dict()
    f = np.asarray(state.fractions)
    assert np.all(np.diff(f) >= 0), f
    assert np.all((f >= 0) & (f <= 1)) and f[-1] == 1.0, f
    # Reports from inside the round: masking lands in (0.1, 0.55], unmasking above.
    masking = f[(f > 0.1) & (f <= 0.55)]
    assert masking.size >= 2, f
    assert np.any((f > 0.55) & (f < 1.0)), f


def test_cancelling_mid_masking_raises_the_cancel_error_before_the_sum():
    # The first report is "shares drawn" (0.1), the second the first chunk of edge masks:
    # cancelled then, the second chunk never runs and nothing is unmasked.
    state = CancelAfter(2)
    with pytest.raises(Cancelled):
        _run(state)
    assert len(state.fractions) == 2, state.fractions
    assert state.fractions[0] == pytest.approx(0.1)
    assert 0.1 < state.fractions[1] < 0.55, state.fractions


def test_cancelled_before_it_starts_draws_nothing():
    state = CancelAfter(0)
    with pytest.raises(Cancelled):
        _run(state)
    assert state.fractions == []

