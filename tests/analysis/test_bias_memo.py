"""The bias and the truth are measured once per (column, bounds, missing treatment).

A lines job asks for them a dozen times (each line, each compared model, the clamping
report); each is a pass over every row. For the session's read-only column they are
remembered: running the view's jobs again costs no pass; changing the bounds costs one
round of passes; a writeable array is never remembered.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpstudio.analysis import bias
from dpstudio.analysis.choices import VIEW_TRUST_MODELS, Choices
from dpstudio.analysis.utility import PLANNED_MODELS, utility


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list:
    seen: list = []
    real = bias.true_value

    def spy(values, spec, *args, **kwargs):
        seen.append(spec.query)
        return real(values, spec, *args, **kwargs)

    monkeypatch.setattr(bias, "true_value", spy)
    return seen


def _column() -> np.ndarray:
    rng = np.random.default_rng(8)
    values = rng.integers(18, 91, 20_000).astype(float)
    values[::50] = np.nan
    values.flags.writeable = False  # as the session holds it
    return values


def _jobs(s: Choices, values: np.ndarray) -> list:
    """The view's three utility jobs, as ui/analysis_jobs.py submits them."""
    fast = tuple(m for m in VIEW_TRUST_MODELS if m not in PLANNED_MODELS)
    lines = utility(s, values, simulate=False, compare=fast)
    compared = utility(s, values, simulate=False, analytic=False, compare=PLANNED_MODELS)
    points = utility(s, values, analytic=False, compare=False, reps=20)
    return [lines, compared, points]


def _errors(results: list) -> list:
    return [(c.name, np.nan_to_num(c.error, nan=-1.0).round(12).tolist(), c.bias)
            for r in results for c in r.curves]


@pytest.mark.parametrize("trust_model,mechanism", [("central", "laplace"),
                                                   ("local", "local_laplace")])
def test_bias_is_measured_once_per_bounds(passes: list, trust_model: str,
                                          mechanism: str) -> None:
    values = _column()
    s = Choices(column="age", column_type="numeric", value_types=("integer", "numeric"),
                trust_model=trust_model, query="mean", mechanism=mechanism,
                bounds=(18.0, 60.0), relation="replace")
    first = _jobs(s, values)
    once = len(passes)
    assert once > 0
    again = _jobs(s, values)  # the same choices again (e.g. back to this column)
    assert len(passes) == once
    assert _errors(again) == _errors(first)
    assert _errors(_jobs(s, values.copy())) == _errors(first)  # as measured afresh
    del passes[once:]
    assert first[0].clamping == again[0].clamping and first[0].clamping is not None

    wider = replace(s, bounds=(18.0, 90.0))
    _jobs(wider, values)
    after_change = len(passes) - once
    assert 0 < after_change <= once
    _jobs(wider, values)
    assert len(passes) == once + after_change


def test_remembered_results_equal_fresh_ones() -> None:
    values = _column()
    s = Choices(column="age", column_type="numeric", value_types=("integer", "numeric"),
                trust_model="central", query="mean", mechanism="laplace",
                bounds=(18.0, 60.0), relation="replace", missing="impute")
    fresh = values.copy()  # writeable: never remembered
    for choice in (s, replace(s, trust_model="shuffle", mechanism="cloak"),
                   replace(s, trust_model="local", mechanism="local_laplace")):
        for _ in range(2):
            assert bias.analyst_bias(choice, values) == bias.analyst_bias(choice, fresh)
            assert bias.bias_parts(choice, values) == bias.bias_parts(choice, fresh)
            np.testing.assert_array_equal(bias.estimand(choice, values),
                                          bias.estimand(choice, fresh))
    assert bias.imputation_shift(s, values) == bias.imputation_shift(s, fresh)


def test_a_writeable_array_is_never_remembered() -> None:
    values = np.array([10.0, 20.0, 200.0, 30.0])
    s = Choices(column="x", column_type="numeric", value_types=("numeric",),
                trust_model="central", query="mean", mechanism="laplace",
                bounds=(0.0, 100.0))
    before = bias.analyst_bias(s, values)
    values[2] = 40.0  # changed in place: the bias must follow
    assert before != 0.0
    assert bias.analyst_bias(s, values) == 0.0
