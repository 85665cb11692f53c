"""KLS21's τ in time independent of the number of clients, never below the direct sum."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from dpstudio.engine.distributed import noise
from dpstudio.engine.distributed.noise import distributed_gaussian_epsilon, kls21_tau


def _direct(sigma: float, n: int) -> float:
    """τ summed term by term, correctly rounded (``math.fsum``)."""
    c = 2.0 * math.pi**2 * sigma**2
    k = np.arange(1, n, dtype=np.float64)
    return 10.0 * math.fsum(np.exp(-c * k / (k + 1.0)).tolist())


@pytest.mark.parametrize("sigma", [0.5, 0.7, 1.0, 1.3, 2.0, 3.0])
@pytest.mark.parametrize("n", [2, 3, 100, 4096, 4097, 4098, 4099, 4100, 5000, 20_000,
                               300_000])
def test_tau_is_an_overestimate_within_1e_11(sigma: float, n: int) -> None:
    direct = _direct(sigma, n)
    tau = kls21_tau(sigma, n)
    # Above the direct sum by more than its own rounding (a few ulps): the safe side.
    assert tau >= direct * (1.0 + 5e-13)
    assert tau <= direct * (1.0 + 1e-11)


def test_tau_bound_above_direct_sum_at_a_million_clients() -> None:
    for sigma in (0.5, 1.0):
        direct = _direct(sigma, 1_000_000)
        assert direct * (1.0 + 5e-13) <= kls21_tau(sigma, 1_000_000) <= direct * (1 + 1e-11)


def test_tau_for_few_clients_is_zero() -> None:
    assert kls21_tau(1.0, 1) == 0.0
    assert kls21_tau(1.0, 0) == 0.0


def test_tau_is_monotone_in_clients() -> None:
    ns = [4090, 4097, 4098, 4099, 5000, 10**5, 10**6, 10**7, 10**8]
    taus = [kls21_tau(1.0, n) for n in ns]
    assert all(a < b for a, b in zip(taus, taus[1:], strict=False))


def test_tau_cost_does_not_grow_with_clients() -> None:
    kls21_tau(1.0, 10**4)  # warm up
    start = time.perf_counter()
    for _ in range(20):
        kls21_tau(1.0, 10**8)
    assert (time.perf_counter() - start) / 20 < 0.02  # a direct sum takes seconds


def test_epsilon_never_below_the_direct_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [(1.0, 50_000, 1, 1e-6), (1.2, 200_000, 4, 1e-8), (0.8, 10_000, 2, 1e-5)]
    fast = [distributed_gaussian_epsilon(s, n, d, delta) for s, n, d, delta in cases]
    monkeypatch.setattr(noise, "kls21_tau", _direct)
    slow = [distributed_gaussian_epsilon(s, n, d, delta) for s, n, d, delta in cases]
    for f, s in zip(fast, slow, strict=True):
        assert s <= f <= s * (1.0 + 1e-9)
