"""A shuffle preview of a large column is drawn from the plan (issue 12, review).

Before, switching to Shuffle on a 1M-row column ran the cloak protocol on every row for
each preview (≈40 s). Above :data:`~dpstudio.analysis.dispatch.QUICK_MESSAGES` messages
(rows × the plan's messages per person) the preview is drawn from the planned error, as
secure aggregation's is, and says so; below it the protocol still runs."""

from __future__ import annotations

import numpy as np
import pytest

from dpstudio.analysis import dispatch
from dpstudio.analysis.choices import Choices
from dpstudio.analysis.dispatch import QUICK_MESSAGES, plan, quick_to_simulate
from dpstudio.analysis.preview import preview
from dpstudio.analysis.utility import sum_analysis
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.shuffle import run_shuffle_sum

BOUNDS = (0.0, 100.0)
AGES = np.random.default_rng(3).uniform(0.0, 120.0, 3_000)
PLANNED = "preview drawn from the protocol's planned error"


def _shuffle(mechanism: str = "cloak") -> Choices:
    return Choices(column="age", column_type="numeric", value_types=("numeric",),
                   trust_model="shuffle", query="mean", mechanism=mechanism, epsilon=1.0,
                   delta=1e-6, bounds=BOUNDS, confidence=0.95)


def test_the_threshold_counts_messages():
    assert quick_to_simulate("shuffle") and quick_to_simulate("shuffle", 10_000, 100)
    assert not quick_to_simulate("shuffle", 1_000_000, 136)  # the 40-second preview
    assert quick_to_simulate("shuffle", 1_000_000, 1)  # one message each: still quick
    assert not quick_to_simulate("distributed", 10)
    assert quick_to_simulate("central", 10**9) and quick_to_simulate("local", 10**9)
    assert QUICK_MESSAGES >= 1_000_000


def test_a_large_shuffle_preview_is_drawn_from_the_plan(monkeypatch):
    s = _shuffle()
    small = preview(s, AGES, seed=4)
    assert not any(PLANNED in n for n in small.notes)  # 3,000 × ~110: the protocol runs
    monkeypatch.setattr(dispatch, "QUICK_MESSAGES", 1_000)  # as if the column were huge
    p = preview(s, AGES, seed=4)
    planned = plan(sum_analysis(s, 1.0), AGES.size)
    sent = np.clip(AGES, *BOUNDS)
    words = SimulationSource(4).uint64(4)
    noise = np.random.Generator(np.random.PCG64([int(w) for w in words])).normal(
        0.0, planned.stderr)
    assert p.value[0] == sent.mean() + noise
    assert p.ci_high[0] - p.value[0] == pytest.approx(planned.error_bound, rel=1e-12)
    assert (p.epsilon, p.delta, p.n) == (planned.epsilon, planned.delta, AGES.size)
    assert p.truth[0] == pytest.approx(AGES.mean())  # the truth is unclamped, as always
    notes = " | ".join(p.notes)
    assert PLANNED in notes and "shuffle of" in notes and "shuffled multiset" in notes
    assert "mask" not in notes  # not secure aggregation's words


def test_a_large_column_is_not_shuffled_row_by_row(monkeypatch):
    """A million rows: the preview never calls the protocol's runner."""
    from dpstudio.engine import shuffle

    def refuse(*a, **k):
        raise AssertionError("the shuffle protocol ran on every row")

    monkeypatch.setattr(shuffle, "run_shuffle_sum", refuse)
    x = np.random.default_rng(5).uniform(0.0, 100.0, 1_000_000)
    p = preview(_shuffle(), x, seed=1)
    assert p.n == 1_000_000 and any(PLANNED in n for n in p.notes)
    assert abs(p.value[0] - x.mean()) < 0.05
    # One message per person (blanket): a million rows run the protocol itself.
    blanket = run_shuffle_sum  # the real one, for comparison
    monkeypatch.undo()
    q = preview(_shuffle("blanket"), x, seed=1)
    res = blanket(np.clip(x, *BOUNDS), BOUNDS, "blanket", 1.0, 1e-6, SimulationSource(1),
                  query="mean", confidence=0.95)
    assert q.value[0] == res.value and not any(PLANNED in n for n in q.notes)
