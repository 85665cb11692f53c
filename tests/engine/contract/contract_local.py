"""Contract adapter of the local model: randomizers each user runs on their own value."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from contract_common import (
    ACCEPT,
    AUDIT_DELTA,
    AUDIT_EPS,
    REJECT,
    WRONG,
    Adapter,
    binned_chi2,
    binomial_p,
    eps_lower,
    lattice_pmf,
    refused,
)

from dpstudio.engine.calibration import analytic_gaussian_sigma
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.rng import SimulationSource


def _pq(eps: float, k: int) -> tuple[float, float]:
    e = math.exp(eps)
    return e / (e + k - 1), 1 / (e + k - 1)


def _cms_closed_form(cms, eps: float) -> None:
    # Each bit is flipped with probability 1/(1 + e^{ε/2}) (Apple 2017, Alg. 1).
    h = math.exp(eps / 2)
    assert cms.epsilon == pytest.approx(eps, rel=1e-15)
    assert cms.c_eps == pytest.approx((h + 1) / (h - 1), rel=1e-12)
    assert cms.unit_var == pytest.approx(h / (h - 1) ** 2, rel=1e-12)


def _check_rr(o, eps):
    assert (o.p, o.q) == pytest.approx(_pq(eps, 2), rel=1e-12)


def _check_krr(o, eps):
    assert (o.p, o.q) == pytest.approx(_pq(eps, o.k), rel=1e-12)


def _check_sue(o, eps):
    assert (o.p, o.q) == pytest.approx(_pq(eps / 2, 2), rel=1e-12)


def _check_oue(o, eps):
    assert (o.p, o.q) == pytest.approx((0.5, 1 / (math.exp(eps) + 1)), rel=1e-12)


def _check_olh(o, eps):
    g = int(round(math.exp(eps))) + 1
    assert o.g == g
    assert o.p == pytest.approx(math.exp(eps) / (math.exp(eps) + g - 1), rel=1e-12)
    assert o.q == pytest.approx(1 / g, rel=1e-6)  # a universal hash collides with 1/g


def _check_hadamard(o, eps):
    assert (o.p, o.q) == pytest.approx((math.exp(eps) / (math.exp(eps) + 1), 0.5), rel=1e-12)


def _check_cms(o, eps):
    _cms_closed_form(o, eps)


def _check_sfp(o, eps):
    share = 0.5  # the entry's default fragment share
    _cms_closed_form(o.fragment_cms, share * eps)
    _cms_closed_form(o.word_cms, (1 - share) * eps)
    assert o.fragment_cms.epsilon + o.word_cms.epsilon == pytest.approx(eps, rel=1e-15)


def _check_local_laplace(o, eps):
    ref = (o.upper - o.lower) / eps
    assert ref <= o.noise.noise_scale <= ref * (1 + 2 * 2.0**-15)


def _check_local_gaussian(o, eps):
    ref = analytic_gaussian_sigma(o.upper - o.lower, eps, o.delta)
    assert ref * (1 - 1e-9) <= o.noise.noise_scale <= ref * 1.001 * (1 + 2 * 2.0**-15)


def _check_duchi(o, eps):
    assert o.B == pytest.approx((math.exp(eps) + 1) / (math.exp(eps) - 1), rel=1e-12)


#: Each local randomizer's claimed law in closed form (Wang et al. 2017, Table 1, and
#: each protocol's paper); an entry missing here fails its calibration check.
LOCAL_CLOSED_FORMS = {
    "rr": _check_rr, "krr": _check_krr, "sue": _check_sue, "oue": _check_oue,
    "olh": _check_olh, "hadamard": _check_hadamard, "cms": _check_cms, "sfp": _check_sfp,
    "local_laplace": _check_local_laplace, "local_gaussian": _check_local_gaussian,
    "duchi": _check_duchi,
}

WORDS = ("zebra", "apple")  # no common fragment at any position
LOCAL_N = 100_000


def _is_mean(info):
    return "mean" in info.queries


def _is_text(info):
    """An open-domain entry: its inputs are words, it takes no domain size."""
    return info.queries == ("heavy_hitters",)


def randomizer(info, eps=1.0, **given):
    """The entry's randomizer at ε, on small domains so the suite stays fast."""
    if any(p.name == "buckets" for p in info.params):
        given.setdefault("buckets", 64)
    params = info.resolve({"epsilon": eps, **given})
    if _is_mean(info):
        return info.build(**params, bounds=(0.0, 1.0))
    if _is_text(info):
        return info.build(**params)
    return info.build(**params, k=2 if info.name == "rr" else 4)


def local_pair(oracle, n=LOCAL_N):
    """A worst neighbouring pair of inputs: the two ends of the range, or two values."""
    from dpstudio.engine.local.base import MeanOracle

    if isinstance(oracle, MeanOracle):
        return np.zeros(n), np.ones(n)
    if _takes_words(oracle):
        return np.full(n, WORDS[0], dtype=object), np.full(n, WORDS[1], dtype=object)
    return np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)


def _takes_words(oracle) -> bool:
    from dpstudio.engine.local.sketch import SequenceFragmentPuzzle

    return isinstance(oracle, SequenceFragmentPuzzle)


def _sketch_bit_pvalues(cms, keys, reports, eps) -> tuple[float, float]:
    """Binomial p-values of the bits a count-mean sketch report sets: the user's own
    bucket is 1 with probability e^{ε/2}/(1+e^{ε/2}), any other with 1/(1+e^{ε/2})."""
    from dpstudio.engine.local.bits import get_bits

    keep = math.exp(eps / 2) / (1 + math.exp(eps / 2))
    j = np.asarray(reports.j, dtype=np.int64)
    own = cms.bucket(j, keys)
    other = (own + 1) % cms.buckets
    n = j.size
    return (binomial_p(int(get_bits(reports.bits, own).sum()), n, keep),
            binomial_p(int(get_bits(reports.bits, other).sum()), n, 1 - keep))


def local_law_pvalues(oracle, eps: float, reports, values) -> list[float]:
    """p-values of the reports of users all holding ``values[0]`` against the law the
    randomizer claims at ``eps`` (``eps`` may differ from the oracle's: a wrong law)."""
    from dpstudio.engine.local.base import PureFrequencyOracle
    from dpstudio.engine.local.mean import DuchiMean
    from dpstudio.engine.local.sketch import CountMeanSketch, SequenceFragmentPuzzle

    n = len(values)
    if isinstance(oracle, PureFrequencyOracle):
        # A pure protocol supports the user's value with p and any other value with q.
        p, q = _pure_pq(oracle, eps)
        counts = oracle.support_counts(reports)
        v = int(values[0])
        return [binomial_p(counts[v], n, p), binomial_p(counts[1 - v], n, q)]
    if isinstance(oracle, CountMeanSketch):
        from dpstudio.engine.local.cms import code_keys

        keys = code_keys(np.asarray(values, dtype=np.int64))
        return list(_sketch_bit_pvalues(oracle, keys, reports, eps))
    if isinstance(oracle, SequenceFragmentPuzzle):
        from dpstudio.engine.local.sfp import word_fingerprints

        share = oracle.eps_fragment / oracle.epsilon
        words = oracle.prepare(values)
        keys, h8 = word_fingerprints(words, oracle.hash_seed)
        fkeys = oracle.fragment_keys(words, np.asarray(reports.position, dtype=np.int64), h8)
        return [*_sketch_bit_pvalues(oracle.word_cms, keys, reports.word, (1 - share) * eps),
                *_sketch_bit_pvalues(oracle.fragment_cms, fkeys, reports.fragment,
                                     share * eps)]
    if isinstance(oracle, DuchiMean):
        # Input at the lower end: report +B (bit 1) with probability 1/(1 + e^ε).
        return [binomial_p(int(np.sum(reports)), n, 1 / (1 + math.exp(eps)))]
    if hasattr(oracle, "noise"):  # grid noise: report = value + integer noise on a grid
        scale = oracle.noise.scale * oracle.epsilon / eps
        steps = np.rint(np.asarray(reports) / oracle.grid).astype(np.int64)
        noise = steps - int(round(float(values[0]) / oracle.grid))
        k, pmf = lattice_pmf(oracle.noise.family, scale)
        return [binned_chi2(noise, k, pmf)]
    pytest.fail(f"no distribution law for local randomizer {oracle.name}: add one to the "
                "local adapter")


def _pure_pq(oracle, eps: float) -> tuple[float, float]:
    """(p, q) of a pure protocol of the oracle's class and domain at ``eps``."""
    from dpstudio.engine.local.frequency import (
        OptimalLocalHashing,
        RandomizedResponse,
        UnaryEncoding,
    )

    if isinstance(oracle, RandomizedResponse):
        law = RandomizedResponse(eps)
    elif isinstance(oracle, UnaryEncoding):
        law = UnaryEncoding(eps, oracle.k, oracle.optimized)
    elif isinstance(oracle, OptimalLocalHashing):
        law = OptimalLocalHashing(eps, oracle.k, oracle.g)  # the same hash buckets
    else:
        law = type(oracle)(eps, oracle.k)
    return law.p, law.q


def local_audit(oracle, seed: int, n: int = LOCAL_N) -> float:
    """The audit's ε lower bound from ``oracle``'s reports on the worst pair of inputs
    (numeric reports by thresholds, others by their support pattern over the pair)."""
    x, x2 = local_pair(oracle, n)
    src = SimulationSource(seed)
    ra, rb = oracle.randomize(x, src), oracle.randomize(x2, src)
    if oracle.output_kind == "numeric":
        return eps_lower(oracle.report_keys(ra), oracle.report_keys(rb), oracle.delta)
    against = (x[0], x2[0]) if x.dtype == object else (int(x[0]), int(x2[0]))
    return eps_lower(oracle.report_keys(ra, against), oracle.report_keys(rb, against),
                     oracle.delta, categorical=True)


class LocalAdapter(Adapter):
    """Randomizers each user runs on their own value (:mod:`dpstudio.engine.local`)."""

    def calibration(self, info):
        check = LOCAL_CLOSED_FORMS.get(info.name)
        if check is None:
            pytest.fail(f"no closed form for local randomizer {info.name}: add one to "
                        "LOCAL_CLOSED_FORMS")
        for eps in (0.5, 1.0, 3.0):
            oracle = randomizer(info, eps)
            assert oracle.epsilon == eps and oracle.name == info.name
            check(oracle, eps)
        if info.name == "rr":  # p given: ε = ln(p/(1−p)), never rounded below the truth
            oracle = info.build(**info.resolve({"p": 0.75}))
            assert math.log(3) <= oracle.epsilon <= math.nextafter(math.log(3), 9)

    def distribution(self, info):
        eps = 1.0
        oracle = randomizer(info, eps)
        values = local_pair(oracle, 60_000)[0]
        reports = oracle.randomize(values, SimulationSource(17))
        assert min(local_law_pvalues(oracle, eps, reports, values)) > ACCEPT
        for factor in WRONG:  # the law at 1.5× or 1/1.5× the ε
            assert min(local_law_pvalues(oracle, eps * factor, reports, values)) < REJECT

    def audit(self, info):
        delta = AUDIT_DELTA if info.needs_delta else 0.0
        given = {"delta": delta} if delta else {}
        oracle = randomizer(info, AUDIT_EPS, **given)
        assert local_audit(oracle, seed=21) <= AUDIT_EPS
        if hasattr(oracle, "noise"):  # additive noise: half the scale
            loose = randomizer(info, AUDIT_EPS, **given)
            loose.noise = dataclasses.replace(loose.noise, scale=loose.noise.scale / 2)
        else:  # a randomizer built for 2ε that claims ε
            loose = randomizer(info, 2 * AUDIT_EPS, **given)
            loose.epsilon = AUDIT_EPS
        assert local_audit(loose, seed=22) > AUDIT_EPS

    def bad_input(self, info):
        for eps in (0.0, -0.5, float("nan"), 701.0):
            if _is_mean(info):
                refused(info.build, epsilon=eps, bounds=(0, 1), error=ParameterError)
            elif _is_text(info):
                refused(info.build, **(info.resolve({}) | {"epsilon": eps}),
                        error=ParameterError)
            else:
                refused(info.build, epsilon=eps, k=2 if info.name == "rr" else 4,
                        error=ParameterError)
        oracle = randomizer(info)
        src = SimulationSource(0)
        if _is_mean(info):
            for bounds in (None, (1.0, 0.0), (0.0, float("inf")), ("a", 1)):
                refused(info.build, **info.resolve({}), bounds=bounds)
            bad_values = ([0.5, float("nan")], [float("inf")], ["a"])
        elif _is_text(info):
            bad_values = ([0, 1], [0.5], [b"ab"], ["ok", 3])
        else:
            for k in (1, 0, -3, 2.5, None):
                refused(info.build, epsilon=1.0, k=k, error=ParameterError)
            bad_values = ([0, oracle.k], [-1, 0], [0.0, float("nan")], [0.5], ["a", "b"])
        for bad in bad_values:
            refused(oracle.randomize, np.array(bad, dtype=object if _is_text(info) else None),
                    src, error=QueryError)
