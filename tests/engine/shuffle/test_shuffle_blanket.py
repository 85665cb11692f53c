"""The privacy-blanket single-message protocol: its γ, its validity limits, and an error
that matches the stated standard error."""

import math

import numpy as np
import pytest

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.shuffle import blanket
from dpstudio.engine.shuffle.summation import plan_shuffle_sum, run_shuffle_sum


def test_gamma_is_bbgn19_theorem_3_1_rounded_up():
    prm = blanket.blanket_parameters(10_000, 0.5, 1e-6, k=8)
    g = max(14 * 8 * math.log(2 / 1e-6) / (9999 * 0.25), 27 * 8 / (9999 * 0.5))
    assert g <= prm.gamma < g + 2**-32
    assert prm.bits_per_message == 4  # values 0..8


def test_automatic_precision_minimizes_the_variance_bound():
    prm = blanket.blanket_parameters(100_000, 1.0, 1e-6)
    v = prm.variance()
    for k in (prm.k - 1, prm.k + 1):
        other = blanket.blanket_parameters(100_000, 1.0, 1e-6, k=k)
        assert other.variance() >= v


@pytest.mark.parametrize("args,match", [
    ((1000, 2.0, 1e-6), "ε ≤ 1"), ((10, 0.5, 1e-6), "too few users"), ((1, 0.5, 1e-6), "2 users"),
])
def test_outside_validity(args, match):
    with pytest.raises(ParameterError, match=match):
        blanket.blanket_parameters(*args)
    with pytest.raises(ParameterError):
        blanket.blanket_parameters(1000, 0.5, 1e-6, k=10**5)  # γ ≥ 1


def test_error_matches_the_stated_standard_error():
    n, reps = 2000, 400
    values = (np.arange(n) % 2).astype(float)  # 0 and 1: the worst case, rounding exact
    src = SimulationSource(9)
    errors = np.empty(reps)
    for r in range(reps):
        out = run_shuffle_sum(values, (0, 1), "blanket", 1.0, 1e-6, src)
        errors[r] = out.value - values.sum()
    k, g = out.details["precision"], out.details["gamma"]
    exact_var = n * (g * (2 * k + 1) / (6 * k) - g * g / 4) / (1 - g) ** 2
    assert abs(errors.mean()) < 5 * math.sqrt(exact_var / reps)
    assert abs(errors.var() - exact_var) < 5 * exact_var * math.sqrt(2 / reps)
    assert out.stderr**2 >= exact_var and out.messages_per_user == 1
    plan = plan_shuffle_sum(n, (0, 1), "blanket", 1.0, 1e-6)
    assert plan.stderr == out.stderr and plan.error_bound == out.error_bound


def test_registry_refuses_epsilon_above_one():
    with pytest.raises(ParameterError):
        run_shuffle_sum(np.ones(5000), (0, 1), "blanket", 2.0, 1e-6, SimulationSource(0))
