"""The engine's one range check (:func:`dpstudio.engine.checks.number`) and its users.

First the check itself: its messages for each kind of range, exact comparison of decimals
(a float would round a tiny negative amount to -0.0 and let it through), and integers too
large for a float. Then the validators routed through it (shuffle amplification, the
privacy blanket, budget amounts, trade-off curves, the exact samplers): each refuses a
value with the very sentence :func:`number` writes for that name and range, so a private
copy of a range check with its own wording fails here. Last, the shown range of a
parameter (what a slider offers), which stays within the valid range.
"""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal

import pytest

from dpstudio.engine import sampling
from dpstudio.engine.accounting.budget import exact
from dpstudio.engine.checks import number, positive
from dpstudio.engine.entry import DELTA, EPSILON, Param
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.shuffle import blanket
from dpstudio.engine.shuffle.amplification import largest_local_epsilon, shuffle_epsilon
from dpstudio.engine.tradeoff.curves import discrete_laplace_tradeoff, krr_tradeoff


def _message(call) -> str:
    with pytest.raises(ParameterError) as err:
        call()
    text = str(err.value)
    assert "\n" not in text
    return text


# ------------------------------------------------------------------------ the check itself


@pytest.mark.parametrize(("value", "limits", "message"), [
    (0.0, dict(low=0.0, low_open=True), "x must be a finite number greater than 0, got 0.0"),
    (-1, dict(low=0.0), "x must be a finite number ≥ 0, got -1"),
    (3, dict(low=5), "x must be a finite number ≥ 5, got 3"),
    (2.0, dict(high=1.0), "x must be a finite number ≤ 1, got 2.0"),
    (1.0, dict(high=1.0, high_open=True), "x must be a finite number less than 1, got 1.0"),
    (1.0, dict(low=0.0, low_open=True, high=1.0, high_open=True),
     "x must be a finite number in (0, 1), got 1.0"),
    (101, dict(low=0.0, low_open=True, high=100.0),
     "x must be a finite number in (0, 100], got 101"),
    (math.inf, {}, "x must be a finite number, got inf"),
    ("nan", dict(low=0.0), "x must be a finite number ≥ 0, got 'nan'"),
    ("abc", dict(low=0.0), "x must be a number, got 'abc'"),
    (None, {}, "x must be a number, got None"),
    # A whole limit that :g would round is written in full.
    (2**20 + 1, dict(low=1, high=2**20, what="an integer"),
     "x must be an integer in [1, 1048576], got 1048577"),
])
def test_messages(value, limits, message):
    assert _message(lambda: number("x", value, **limits)) == message


def test_limits_are_inclusive_unless_open():
    assert number("x", 0.0, low=0.0) == 0.0
    assert number("x", 1.0, high=1.0) == 1.0
    assert number("x", "0.25", low=0.0, high=1.0) == 0.25  # text from a flag or a form
    with pytest.raises(ParameterError):
        number("x", 0.0, low=0.0, low_open=True)
    with pytest.raises(ParameterError):
        number("x", 1.0, high=1.0, high_open=True)
    # Just inside an open end is inside.
    assert number("x", math.nextafter(0.0, 1.0), low=0.0, low_open=True) > 0.0


def test_decimals_are_compared_exactly():
    tiny = Decimal("-1e-500")
    assert float(tiny) == 0.0  # what a float-based check would have compared
    assert (_message(lambda: number("a", tiny, low=0))
            == "a must be a finite number ≥ 0, got -1E-500")
    assert number("a", Decimal("1e500"), low=0) == math.inf  # finite as typed, ≥ 0
    with pytest.raises(ParameterError, match="got NaN"):
        number("a", Decimal("NaN"), low=0)


def test_an_int_beyond_the_floats_is_refused_as_out_of_range():
    assert _message(lambda: number("n", 10**400, high=1e9)).startswith(
        "n must be a finite number ≤ 1e+09, got 1000")
    assert _message(lambda: number("n", -(10**400), low=0)).startswith(
        "n must be a finite number ≥ 0, got -1000")


# ------------------------------------------------------------ validators routed through it


def _same(call, name, value, **limits):
    """``call`` fails with exactly the sentence number() writes for that name and range."""
    assert _message(call) == _message(lambda: number(name, value, **limits))


def test_shuffle_amplification_uses_the_range_check():
    open_unit = dict(low=0.0, low_open=True, high=1.0, high_open=True)
    _same(lambda: shuffle_epsilon(1.0, 100, 1.0), "δ", 1.0, **open_unit)
    _same(lambda: shuffle_epsilon(1.0, 100, -0.5), "δ", -0.5, **open_unit)
    _same(lambda: shuffle_epsilon(-2.0, 100, 1e-6), "ε₀", -2.0, low=0.0, low_open=True)
    _same(lambda: shuffle_epsilon(1.0, 2 * 10**9, 1e-6), "n", 2 * 10**9, low=2, high=10**9,
          what="a whole number of users")
    _same(lambda: largest_local_epsilon(0.0, 100, 1e-6), "target ε", 0.0, low=0.0,
          low_open=True)
    # The model's own condition keeps its sentence.
    assert "n = 2" in _message(lambda: shuffle_epsilon(1.0, 1, 1e-6))


def test_privacy_blanket_uses_the_range_check():
    open_unit = dict(low=0.0, low_open=True, high=1.0, high_open=True)
    _same(lambda: blanket.blanket_parameters(1000, 0.5, 0.0), "δ", 0.0, **open_unit)
    _same(lambda: blanket.blanket_parameters(1000, 0.0, 1e-6), "ε", 0.0, low=0.0,
          low_open=True)
    _same(lambda: blanket.blanket_parameters(1000, 0.5, 1e-6, k=2**20 + 1), "precision k",
          2**20 + 1, low=1, high=2**20, what="an integer")
    # ε > 1 is the theorem's condition, said as such.
    assert "ε ≤ 1" in _message(lambda: blanket.blanket_parameters(1000, 2.0, 1e-6))


def test_budget_amounts_use_the_range_check_exactly():
    _same(lambda: exact(-0.5), "a budget amount", Decimal("-0.5"), low=0)
    # A negative amount too small for a float is still negative.
    with pytest.raises(ParameterError, match="≥ 0"):
        exact("-1e-500")
    assert exact("1e-500") == Decimal("1e-500")
    with pytest.raises(ParameterError, match="must be a number"):
        exact(True)


def test_tradeoff_curves_use_the_range_check():
    _same(lambda: krr_tradeoff(1.0, 1), "k (number of values)", 1, low=2, what="an integer")
    _same(lambda: discrete_laplace_tradeoff(0.0), "scale", 0.0, low=0.0, low_open=True)
    assert _message(lambda: discrete_laplace_tradeoff(-1.0)) == _message(
        lambda: positive("scale", -1.0))


def test_exact_samplers_use_the_range_check():
    src = SimulationSource(3)
    _same(lambda: sampling.discrete_laplace(2e12, 3, src), "scale", 2e12, low=0.0,
          low_open=True, high=1e12)
    _same(lambda: sampling.discrete_gaussian_variance(-1.0), "sigma", -1.0, low=0.0,
          low_open=True, high=1e12)
    _same(lambda: sampling.permutation(-1, src), "size", -1, low=0, what="an integer")
    # Refusals are still ValueErrors, as the samplers' callers expect.
    assert issubclass(ParameterError, ValueError)


# ---------------------------------------------------------------------- the shown range


def test_shown_range_of_epsilon_and_delta():
    assert EPSILON.shown_range == (0.01, 100.0)
    assert DELTA.shown_range == (1e-12, 0.1)
    # Shown values are valid ones.
    for p in (EPSILON, DELTA):
        for end in p.shown_range:
            assert p.validate(end) == end


def test_shown_range_narrows_with_the_valid_range():
    # The privacy blanket accepts ε ≤ 1 only: its slider must not offer more.
    assert replace(EPSILON, high=1.0).shown_range == (0.01, 1.0)
    # Without a shown range, the valid one is shown.
    p = Param("lambda", "float", 0.01, "Regularization strength.", low=1e-4, high=100.0)
    assert p.shown_range == (1e-4, 100.0)
    with pytest.raises(ValueError, match="no range to show"):
        _ = Param("shift", "float", 0.0, "A shift.").shown_range
