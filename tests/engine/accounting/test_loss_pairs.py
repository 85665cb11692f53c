"""Exact privacy-loss descriptions of the local randomizers and the sum protocols (issue 14).

Each local randomizer's stored description (``pair`` for SUE/OUE, OLH, Hadamard, the
count-mean sketch and the sequence-fragment puzzle) composes under the pld accountant to
an ε within 1e-3 of an independent computation and never below it. The independent
computation builds each worst-case pair from its closed form here (not from the engine's
pairs module), composes the k-fold privacy-loss distribution by enumeration (distinct
losses merged exactly), and reads ε at δ by bisection on the hockey-stick
δ(ε) = Σ P(L)·(1 − e^{ε−L})₊, the worse of both directions.
"""

import json
import math
import sys

import numpy as np
import pytest

from dpstudio.engine.accounting.ledger import spent
from dpstudio.engine.accounting.loss import SCHEMA_VERSION, LossDescription
from dpstudio.engine.distributed.secure_sum import plan_secure_sum
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.local import run_local
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.shuffle.summation import plan_shuffle_sum

EPS, K, TARGET = 1.0, 10, 1e-6
CATEGORIES = ["a", "b", "c"]

# A stored description of schema version 1 (before the pair family), as a ledger kept it.
V1_FIXTURE = ('{"schema_version": 1, "mechanism": "composed", "epsilon": 1.5, "delta": 0.0, '
              '"parts": [{"schema_version": 1, "mechanism": "randomized_response", '
              '"epsilon": 1.0, "delta": 0.0, "k": 3}, {"schema_version": 1, '
              '"mechanism": "pure", "epsilon": 0.5, "delta": 0.0}]}')


def _released(name: str, params: dict | None = None):
    """A real local release of ``name`` at ε = 1 (its engine result)."""
    p = {"epsilon": EPS, **(params or {})}
    if name == "sfp":
        values = np.array(["apple", "bread", "cider"] * 20, dtype=object)
        return run_local(values, name, p, source=SimulationSource(3))
    values = np.array(CATEGORIES * 20, dtype=object)
    return run_local(values, name, p, categories=CATEGORIES, source=SimulationSource(3))


def _three(eps: float, minus: float, zero: float, plus: float) -> dict:
    """A pair with losses ln(p/q) ∈ {ε, 0, −ε}: P-masses (minus, zero, plus) at losses
    (+ε, 0, −ε); Q swaps the outer two."""
    return {eps: (minus, plus), 0.0: (zero, zero), -eps: (plus, minus)}


def _unary(eps: float, optimized: bool) -> dict:
    if optimized:
        p1, q1 = 0.5, 1 / (1 + math.exp(eps))
    else:
        p1 = math.exp(eps / 2) / (1 + math.exp(eps / 2))
        q1 = 1 - p1
    # bits (b_x, b_x′): (1, 0) is most likely on x (loss +ε), (0, 1) least (−ε).
    minus, plus = p1 * (1 - q1), (1 - p1) * q1
    return _three(eps, minus, 1 - minus - plus, plus)


def _olh(eps: float, g: int, c: float) -> dict:
    keep, other = math.exp(eps) / (math.exp(eps) + g - 1), 1 / (math.exp(eps) + g - 1)
    a, b = (1 - c) * keep, (1 - c) * other
    return _three(eps, a, 1 - a - b, b)


def _hadamard(eps: float) -> dict:
    a = math.exp(eps) / (2 * (math.exp(eps) + 1))
    return _three(eps, a, 0.5, 0.5 - a)


def _product(x: dict, y: dict) -> dict:
    out: dict = {}
    for lx, (px, qx) in x.items():
        for ly, (py, qy) in y.items():
            key = round(lx + ly, 12)
            p0, q0 = out.get(key, (0.0, 0.0))
            out[key] = (p0 + px * py, q0 + qx * qy)
    return out


def _compose(pair: dict, k: int) -> dict:
    out = pair
    for _ in range(k - 1):
        out = _product(out, pair)
    return out


def _exact_epsilon(pair: dict, delta: float) -> float:
    """ε at δ of a finite pair, the worse direction, by bisection on the hockey stick."""
    losses = np.array(list(pair))
    p = np.array([v[0] for v in pair.values()])
    q = np.array([v[1] for v in pair.values()])

    def dlt(e: float) -> float:
        one = np.sum(p * np.clip(1 - np.exp(e - losses), 0, None))
        other = np.sum(q * np.clip(1 - np.exp(e + losses), 0, None))
        return max(one, other)

    lo, hi = 0.0, float(np.max(np.abs(losses)))
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if dlt(mid) > delta else (lo, mid)
    return hi


def _independent(name: str, result) -> dict:
    o = result.oracle
    return {"sue": lambda: _unary(EPS, False), "oue": lambda: _unary(EPS, True),
            "olh": lambda: _olh(EPS, o.g, o.collision), "hadamard": lambda: _hadamard(EPS),
            "cms": lambda: _unary(EPS, False),
            "sfp": lambda: _product(_unary(o.eps_fragment, False),
                                    _unary(EPS - o.eps_fragment, False))}[name]()


@pytest.mark.parametrize("name", ["sue", "oue", "olh", "hadamard", "cms", "sfp"])
def test_local_pair_composes_under_pld_to_the_independent_epsilon(name):
    result = _released(name)
    stored = json.loads(json.dumps(result.loss_description().to_dict()))
    assert stored["mechanism"] == "pair" and stored["schema_version"] == 2
    desc = LossDescription.from_dict(stored)
    assert desc.epsilon >= result.epsilon and desc.pure_epsilon <= EPS * (1 + 1e-12)
    k = 5 if name == "sfp" else K  # the puzzle's 9 classes: 5-fold is enough to tell
    got = spent([desc] * k, "pld", TARGET).epsilon
    exact = _exact_epsilon(_compose(_independent(name, result), k), TARGET)
    assert exact <= got <= exact + 1e-3, (name, got, exact)
    assert got < k * EPS  # exactly composed: below basic composition's k·ε


def test_twenty_sue_releases_spend_less_under_pld_than_basic():
    desc = _released("sue").loss_description()
    basic = spent([desc] * 20, "basic").epsilon
    pld = spent([desc] * 20, "pld", TARGET).epsilon
    assert basic == pytest.approx(20.0) and pld < basic - 1.0


def test_other_local_randomizers_are_described_exactly():
    values = np.linspace(0.0, 1.0, 50)
    for name, params, family in (("duchi", {}, "randomized_response"),
                                 ("local_laplace", {}, "discrete_laplace"),
                                 ("local_gaussian", {"delta": 1e-6}, "discrete_gaussian"),
                                 ("krr", None, "randomized_response")):
        if params is None:
            result = _released(name)
        else:
            result = run_local(values, name, {"epsilon": EPS, **params}, bounds=(0.0, 1.0),
                               source=SimulationSource(4))
        desc = result.loss_description()
        assert desc.mechanism == family, name
        assert desc.epsilon >= result.epsilon and desc.delta >= result.delta


def test_pair_descriptions_refuse_what_they_cannot_honour():
    good = _released("sue").loss_description().to_dict()
    for change, match in (({"epsilon": 0.5}, "largest privacy loss"),
                          ({"losses": [-1.0, 0.0, 1.2]}, "ln\\(p/q\\)"),
                          ({"p": [0.5, 0.5, 0.5]}, "summing to 1"),
                          ({"delta": 1e-6}, "pure"),
                          ({"schema_version": 1}, "cannot hold a pair")):
        with pytest.raises(ParameterError, match=match):
            LossDescription.from_dict({**good, **change})


def test_version_one_descriptions_still_read_and_write_as_version_one():
    assert SCHEMA_VERSION == 2
    old = LossDescription.from_dict(json.loads(V1_FIXTURE))
    assert [d.mechanism for d in old.leaves()] == ["randomized_response", "pure"]
    assert old.to_dict() == json.loads(V1_FIXTURE)  # no pair: still written as version 1


def test_secure_sum_descriptions_never_below_the_engine_guarantee():
    for mech, n, drop in (("secagg_gaussian", 1000, 0), ("secagg_gaussian", 120, 10),
                          ("skellam", 1000, 0)):
        params = {"max_dropouts": 20} if drop else {}
        r = plan_secure_sum(n, (0.0, 1.0), mech, 1.0, 1e-6, dropouts=drop, **params)
        desc = r.loss_description()
        assert desc.epsilon >= r.epsilon and desc.delta >= r.delta
        if mech == "secagg_gaussian":
            # The honest survivors' shares, as one discrete Gaussian: its own exact
            # (ε, δ) is at least as private as the engine's KLS21 bound says.
            assert desc.mechanism == "discrete_gaussian"
            assert desc.sensitivity == r.precision
            assert spent([desc], "pld", r.delta).epsilon <= r.epsilon
            from dpstudio.engine.sampling import discrete_gaussian_variance
            step_var = r.honest_noise_variance * r.precision ** 2
            assert discrete_gaussian_variance(desc.scale / math.sqrt(r.honest_clients)) \
                * r.honest_clients == pytest.approx(step_var, rel=1e-9)
        else:  # the Skellam sum: its exact (ε, δ), as the worst-case pair
            assert desc.mechanism == "approx"
            assert spent([desc], "pld", r.delta).epsilon >= r.epsilon


def test_shuffle_descriptions_are_their_amplified_epsilon_delta():
    for mech in ("cloak", "blanket"):
        r = plan_shuffle_sum(1000, (0.0, 1.0), mech, 1.0, 1e-6)
        desc = r.loss_description()
        assert desc.mechanism == "approx"
        assert (desc.epsilon, desc.delta) == (r.epsilon, r.delta)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
