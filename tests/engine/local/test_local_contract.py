"""The contract every local randomizer passes, generated from the registry.

Register a randomizer and it gets: an empirical LDP audit on two inputs (the
Clopper–Pearson lower bound on ε from report events must not exceed the claimed ε, and
for randomized response and K-RR must come within 20% of it), a power check (a copy
built with a larger ε but claiming the original is caught), refusal of bad parameters and
inputs with one-line messages, and complete metadata. Entries answering only heavy
hitters (open-domain text, e.g. ``sfp``) are audited on two words.
"""

import numpy as np
import pytest

from dpstudio.engine.audit import epsilon_lower_bound
from dpstudio.engine.errors import EngineError, ParameterError, QueryError
from dpstudio.engine.local.base import FrequencyOracle, LocalRandomizer, MeanOracle
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.rng import SimulationSource

# Other trust models (distributed, shuffle) register randomizers too; these are the local ones.
RANDOMIZERS = [m for m in REGISTRY if m.kind == "randomizer" and "local" in m.trust_models]
ids = lambda m: m.name  # noqa: E731
EPS0 = 1.0
N = 100_000
TIGHT = {"rr", "krr"}  # audits that must reach 80% of the claimed ε


def _is_mean(info):
    return "mean" in info.queries


def _is_text(info):
    """An open-domain entry: its inputs are words, it takes no domain size."""
    return info.queries == ("heavy_hitters",)


WORDS = ("zebra", "apple")  # no common fragment at any position


def _build(info, eps):
    given = {"epsilon": eps}
    if "buckets" in {p.name for p in info.params}:
        given["buckets"] = 64  # a small sketch keeps the test fast
    params = info.resolve(given)
    if _is_mean(info):
        return info.build(**params, bounds=(0.0, 1.0))
    if _is_text(info):
        return info.build(**params)
    return info.build(**params, k=2 if info.name == "rr" else 4)


def _audit(oracle, seed):
    x, x2 = _inputs_for(oracle)
    src = SimulationSource(seed)
    ra, rb = oracle.randomize(x, src), oracle.randomize(x2, src)
    if oracle.output_kind == "numeric":
        return epsilon_lower_bound(oracle.report_keys(ra), oracle.report_keys(rb),
                                   delta=oracle.delta)
    against = (x[0], x2[0]) if x.dtype == object else (int(x[0]), int(x2[0]))
    return epsilon_lower_bound(oracle.report_keys(ra, against), oracle.report_keys(rb, against),
                               delta=oracle.delta, categorical=True)


def _inputs_for(oracle):
    if isinstance(oracle, MeanOracle):
        return np.zeros(N), np.ones(N)
    if oracle.name == "sfp":
        return np.full(N, WORDS[0], dtype=object), np.full(N, WORDS[1], dtype=object)
    return np.ones(N, dtype=np.int64), np.zeros(N, dtype=np.int64)


def test_local_registry_entries_and_metadata():
    names = {m.name for m in RANDOMIZERS}
    assert {"rr", "krr", "sue", "oue", "olh", "hadamard", "cms", "sfp", "local_laplace",
            "local_gaussian", "duchi"} <= names
    for m in RANDOMIZERS:
        # The frequency oracles that also run shuffled (issue 14) list the shuffle model.
        assert m.trust_models == (("local", "shuffle") if m.name in ("krr", "sue", "oue", "olh")
                                  else ("local",))
        assert m.queries and m.value_types and m.references
        d = m.to_dict()
        assert d["description"].endswith(".") and len(d["description"]) < 120
        assert m.resolve({}) == {p.name: p.default for p in m.params}
        assert m.needs_delta == ("delta" in {p.name for p in m.params})
    assert REGISTRY.select(trust_model="local", query="histogram")
    assert {m.name for m in REGISTRY.select(trust_model="local", query="mean")} == {
        "local_laplace", "local_gaussian", "duchi"}
    assert {m.name for m in REGISTRY.select(trust_model="local", query="heavy_hitters")} == {
        "cms", "sfp"}


@pytest.mark.parametrize("info", RANDOMIZERS, ids=ids)
def test_interface(info):
    oracle = _build(info, EPS0)
    assert isinstance(oracle, LocalRandomizer)
    assert oracle.epsilon == EPS0 and oracle.name == info.name and oracle.messages_bits >= 1
    x, _ = _inputs_for(oracle)
    reports = oracle.randomize(x[:50], SimulationSource(1))
    records = oracle.to_records(reports)
    assert records and all(len(col) == 50 for col in records.values())
    assert len(oracle.report_keys(reports)) == 50
    if _is_text(info):
        est = oracle.estimate_words(reports, list(WORDS))
        assert est.shape == (2,) and np.isfinite(est).all() and oracle.variance(50)[0] > 0
        assert isinstance(oracle.discover(reports), list)
    elif isinstance(oracle, FrequencyOracle):
        est = oracle.estimate(reports)
        assert est.shape == (oracle.k,) and np.isfinite(est).all()
        assert oracle.variance(50).shape == (oracle.k,)
        if info.name in ("rr", "krr"):  # p + (k − 1)q = 1: the estimates sum to n
            assert est.sum() == pytest.approx(50, abs=1e-9)
    else:
        assert np.isfinite(oracle.estimate(reports)) and oracle.variance(50) > 0


@pytest.mark.parametrize("info", RANDOMIZERS, ids=ids)
def test_empirical_ldp_audit(info):
    oracle = _build(info, EPS0)
    result = _audit(oracle, seed=21)
    assert result.epsilon_lower <= EPS0, result
    if info.name in TIGHT:
        assert result.epsilon_lower >= 0.8 * EPS0, result


@pytest.mark.parametrize("info", RANDOMIZERS, ids=ids)
def test_audit_catches_a_miscalibrated_randomizer(info):
    factor = 3.0 if info.name == "local_gaussian" else 2.0
    loose = _build(info, factor * EPS0)  # spends more than it will claim
    loose.epsilon = EPS0
    if info.name == "local_gaussian":
        loose.delta = 1e-6
    result = _audit(loose, seed=22)
    assert result.epsilon_lower > EPS0, result


@pytest.mark.parametrize("info", RANDOMIZERS, ids=ids)
@pytest.mark.parametrize("given", [
    {"epsilon": 0}, {"epsilon": -1}, {"epsilon": float("nan")}, {"epsilon": float("inf")},
    {"epsilon": "x"}, {"nonsense": 1},
])
def test_bad_parameters(info, given):
    with pytest.raises(ParameterError) as err:
        info.resolve(given)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("info", RANDOMIZERS, ids=ids)
def test_bad_epsilon_in_build(info):
    for eps in (0.0, -0.5, float("nan")):
        with pytest.raises(ParameterError) as err:
            if _is_mean(info):
                info.build(epsilon=eps, bounds=(0, 1))
            elif _is_text(info):
                info.build(**(info.resolve({}) | {"epsilon": eps}))
            else:
                info.build(epsilon=eps, k=4 if info.name != "rr" else 2)
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("info", [m for m in RANDOMIZERS if _is_text(m)], ids=ids)
def test_bad_words_and_parameters(info):
    oracle = _build(info, 1.0)
    for bad in ([0, 1], [0.5], [b"ab"], ["ok", 3]):
        with pytest.raises(QueryError) as err:
            oracle.randomize(np.array(bad, dtype=object), SimulationSource(0))
        assert "\n" not in str(err.value)
    for given in ({"fragment_share": 0.0}, {"fragment_share": 1.0}, {"buckets": 1},
                  {"hashes": 0}):
        with pytest.raises(ParameterError) as err:
            info.resolve(given)
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("info", [m for m in RANDOMIZERS if not _is_mean(m) and not _is_text(m)],
                         ids=ids)
def test_bad_domain_and_values(info):
    for k in (1, 0, -3, 2.5, None):
        with pytest.raises(ParameterError) as err:
            info.build(epsilon=1.0, k=k)
        assert "\n" not in str(err.value)
    oracle = _build(info, 1.0)
    for bad in ([0, oracle.k], [-1, 0], [0.0, float("nan")], [0.5], ["a", "b"]):
        with pytest.raises(QueryError) as err:
            oracle.randomize(np.array(bad), SimulationSource(0))
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("info", [m for m in RANDOMIZERS if _is_mean(m)], ids=ids)
def test_bad_bounds_and_values(info):
    for bounds in (None, (1.0, 0.0), (0.0, 0.0), (0.0, float("inf")), ("a", 1)):
        with pytest.raises(EngineError) as err:
            info.build(**info.resolve({}), bounds=bounds)
        assert "\n" not in str(err.value)
    oracle = _build(info, 1.0)
    for bad in ([0.5, float("nan")], [float("inf")], ["a"]):
        with pytest.raises(QueryError) as err:
            oracle.randomize(np.array(bad), SimulationSource(0))
        assert "\n" not in str(err.value)


def test_gaussian_needs_delta():
    info = REGISTRY.get("local_gaussian")
    with pytest.raises(ParameterError):
        info.build(epsilon=1.0, delta=0.0, bounds=(0, 1))
