"""Shuffle-model and secure-aggregation releases through a project (issue 14, first item).

Each of cloak, blanket, secagg_gaussian and skellam is released from a spec: noise from
the OS CSPRNG through the one dispatch (secure aggregation with the real pairwise masks),
charged with the (ε, δ) of the engine object that drew it, checked here against an
independent computation of each protocol's accounting; the manifest verifies and says
what each party sees and what is trusted (the blanket's local ε₀ beside the central ε).
A distribution test on the same dispatch with the manifest's own figures accepts the
calibrated noise and rejects a tampered scale. A shuffled K-RR answers histograms only
(tests/project/test_release_shuffled_krr.py): a mean of it is refused in one sentence.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from dpstudio.analysis import AnalysisSpec, run
from dpstudio.engine.errors import QueryError
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SimulationSource
from dpstudio.export import verify_manifest
from dpstudio.project import Project, ProjectError, load_spec

N = 2000  # users: enough for the blanket at ε = 0.5, δ = 1e-6 (γ < 1)
DELTA = 1e-6


@pytest.fixture
def env(tmp_path):
    """A 0/1 column (values on every protocol's grid: rounding draws nothing) and a
    project budgeted under replace."""
    data = tmp_path / "flags.csv"
    x = (np.arange(N) % 3 == 0).astype(int)
    data.write_text("x\n" + "\n".join(map(str, x)) + "\n", encoding="utf-8")
    (tmp_path / "flags.csv.schema.json").write_text(json.dumps({
        "schema_version": 1, "columns": [{"name": "x", "type": "numeric", "lower": 0,
                                          "upper": 1}]}), encoding="utf-8")
    project = Project.create(tmp_path / "p.dpstudio", epsilon=20, delta=1e-4,
                             relation="replace")
    yield tmp_path, data, project, x
    project.close()


def _spec(tmp, trust_model, mechanism, epsilon, query="sum", params=None, **extra):
    lines = ['schema_version = 1', 'dataset = "flags.csv"', 'column = "x"',
             f'query = "{query}"', f'trust_model = "{trust_model}"',
             f'mechanism = "{mechanism}"', f'epsilon = {epsilon}', f'delta = {DELTA}']
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    if params:
        lines.append("[params]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in params.items()]
    path = tmp / f"{mechanism}-{query}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_spec(path)


def _release(env, trust_model, mechanism, epsilon, **kw):
    tmp, _, project, _ = env
    spec = _spec(tmp, trust_model, mechanism, epsilon, **kw)
    record = project.release(spec, tmp / f"out-{mechanism}")
    manifest = next((tmp / f"out-{mechanism}").glob("*.manifest.json"))
    check = verify_manifest(manifest)
    assert check.ok, check.problems
    m = check.manifest
    # What is charged is what the manifest states, to the digit.
    assert float(record.epsilon) == m["privacy"]["epsilon"]
    assert float(record.delta) == m["privacy"]["delta"]
    assert m["trust_model"] == trust_model and m["mechanism"]["name"] == mechanism
    assert m["privacy"]["relation"] == "replace"
    assert not _keys(m) & {"clamped", "missing_count", "seed", "seeds"}  # analyst-only
    return record, m


def _keys(value) -> set:
    if isinstance(value, dict):
        return set(value) | set().union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value)) if value else set()
    return set()


# ---------------------------------------------------------------- independent accounting


def _skellam_delta(variance: float, sensitivity: int, epsilon: float) -> float:
    """δ(ε) of the Skellam(V/2, V/2) mechanism at integer sensitivity Δ, summed over its
    support (±12 standard deviations) from the Bessel form of its pmf, P(k) = e^{−V}
    I_|k|(V) (the worst direction: the law is symmetric)."""
    from scipy.special import ive

    half = int(12 * math.sqrt(variance)) + 2 * sensitivity
    k = np.arange(-half, half + 1, dtype=float)
    p = ive(np.abs(k), variance)
    q = ive(np.abs(k + sensitivity), variance)
    return float(np.sum(np.maximum(p - math.exp(epsilon) * q, 0.0)))


def _kls21_epsilon(sigma: float, clients: int, sensitivity: float, delta: float) -> float:
    """KLS21 Theorem 1 (one dimension), τ summed term by term, then the zCDP → (ε, δ)
    conversion of Canonne, Kamath & Steinke minimized by scipy."""
    from scipy.optimize import minimize_scalar

    k = np.arange(1, clients, dtype=float)
    tau = 10.0 * np.sum(np.exp(-2 * math.pi**2 * sigma**2 * k / (k + 1)))
    e_t = min(math.sqrt(sensitivity**2 / (clients * sigma**2) + tau / 2),
              sensitivity / (math.sqrt(clients) * sigma) + tau)
    rho = e_t**2 / 2

    def f(log_a: float) -> float:
        a = 1.0 + math.exp(log_a)
        return a * rho + (math.log(1 / delta) + (a - 1) * math.log1p(-1 / a)
                          - math.log(a)) / (a - 1)

    return float(minimize_scalar(f, bounds=(-10, 15), method="bounded").fun)


def test_skellam_secure_sum_is_charged_its_exact_skellam_guarantee(env, monkeypatch):
    from dpstudio.engine.distributed import secagg
    from dpstudio.engine.rng import SecureSource
    from dpstudio.project import release as release_module

    seen: dict[str, list] = {"sources": [], "rounds": []}
    real_run, real_aggregate = release_module.run_analysis, secagg.SecAggSession.aggregate

    def spy_run(analysis, values, source, *a, **kw):
        seen["sources"].append(source)
        return real_run(analysis, values, source, *a, **kw)

    def spy_aggregate(session, inputs, survivors, *a, **kw):
        seen["rounds"].append((session.n, len(survivors)))
        return real_aggregate(session, inputs, survivors, *a, **kw)

    monkeypatch.setattr(release_module, "run_analysis", spy_run)
    monkeypatch.setattr(secagg.SecAggSession, "aggregate", spy_aggregate)
    record, m = _release(env, "distributed", "skellam", 1.0, params={"max_dropouts": 40})
    # One draw, from the OS CSPRNG, through one real masking round over every client.
    assert len(seen["sources"]) == 1 and isinstance(seen["sources"][0], SecureSource)
    assert seen["rounds"] == [(N, N)]
    proto, parties = m["protocol"], m["parties"]
    assert (float(record.epsilon), float(record.delta)) == (1.0, DELTA)
    # The threat model as planned: ⌊γn⌋ colluders, the declared dropouts, H honest.
    assert proto["corrupt_clients"] == int(0.1 * N) and proto["max_dropouts"] == 40
    honest = N - int(0.1 * N) - 40
    assert proto["honest_clients"] == honest
    assert parties["sees"]["server"].startswith("only the masked sum")
    assert any("at most d = 40 clients drop out" in t for t in parties["trusted"])
    assert any(t.startswith("fewer than t = 201 parties collude") for t in parties["trusted"])
    # Independently: the H honest shares sum to Skellam of the stated variance (grid
    # units: the sum's step is 1/p of the bounds' width), whose exact δ at the charged ε
    # is within the charged δ, and not far below it (the calibration is tight).
    p = proto["precision"]
    v = proto["honest_noise_variance"] * p * p  # bounds [0, 1]: value units → steps
    d = _skellam_delta(v, p, float(record.epsilon))
    assert d <= float(record.delta) and d > 0.5 * float(record.delta)
    # Secure aggregation ran: one message per client of the modulus' bits.
    assert proto["messages_per_user"] == 1 and proto["bits_per_message"] >= 8


def test_secagg_gaussian_is_charged_the_kls21_guarantee_of_its_honest_shares(env):
    record, m = _release(env, "distributed", "secagg_gaussian", 1.0, query="mean")
    proto = m["protocol"]
    p, honest = proto["precision"], proto["honest_clients"]
    assert honest == N - int(0.1 * N) and proto["max_dropouts"] == 0
    # σ_c from the honest shares' variance (a mean: value units are 1/n of the sum's).
    sigma = math.sqrt(proto["honest_noise_variance"] * (p * N) ** 2 / honest)
    eps = _kls21_epsilon(sigma, honest, p, float(record.delta))
    assert eps <= float(record.epsilon) * (1 + 1e-6)
    assert eps >= 0.999 * float(record.epsilon)  # the smallest σ_c meeting ε (tight)


def test_blanket_is_shuffled_randomized_response_with_its_local_epsilon(qapp, env):
    record, m = _release(env, "shuffle", "blanket", 0.5, report=True, script=True)
    proto, parties = m["protocol"], m["parties"]
    k, gamma = proto["details"]["precision"], proto["details"]["gamma"]
    # BBGN19 Thm 3.1's blanket probability, computed here, rounded up to 2⁻³².
    want = max(14 * k * math.log(2 / DELTA) / ((N - 1) * 0.5**2), 27 * k / ((N - 1) * 0.5))
    assert want <= gamma < want + 2.0**-32 and gamma < 1
    # Each user's ε₀ beside the central ε: (k+1)-ary RR with blanket γ.
    eps0 = math.log((1 - gamma + gamma / (k + 1)) / (gamma / (k + 1)))
    assert parties["local_epsilon"] == pytest.approx(eps0, rel=1e-12)
    # Charged the smaller of BBGN19's 0.5 (what γ was calibrated for) and FMT21's
    # amplification of ε₀ at the same δ (here FMT21's, about 0.20).
    from dpstudio.engine.shuffle.amplification import shuffle_epsilon

    fmt21 = shuffle_epsilon(parties["local_epsilon"], N, DELTA)[0]
    assert (float(record.epsilon), float(record.delta)) == (min(0.5, fmt21), DELTA)
    assert fmt21 < 0.25 and proto["details"]["bound"] == "fmt21"
    assert parties["central_epsilon"] == float(record.epsilon) and eps0 > 0.5
    assert parties["sees"]["analyzer"].startswith(f"the shuffled multiset of n = {N:,} messages")
    assert ("the shuffler is trusted not to link messages to senders and not to collude "
            "with the analyzer") in parties["trusted"]
    out = env[0] / "out-blanket"
    html = next(out.glob("*.report.html")).read_text(encoding="utf-8")
    assert "ε₀ = " in html and "shuffled multiset" in html
    script = next(out.glob("*.py")).read_text(encoding="utf-8")
    assert "AnalysisSpec(TRUST_MODEL, SPEC)" in script and "'shuffle'" in script


def test_cloak_is_charged_the_delta_its_encoding_leaves(env):
    record, m = _release(env, "shuffle", "cloak", 1.0)
    proto, parties = m["protocol"], m["parties"]
    tv = proto["details"]["encoding_tv"]
    # GPV19 Lemma 1 chained: the noise's (ε, 0.9δ) plus (1 + e^ε)·TV of the encoding.
    want = min(DELTA, 0.9 * DELTA + (1 + math.e) * tv)
    assert float(record.delta) == pytest.approx(want, rel=1e-12)
    assert float(record.delta) <= DELTA and float(record.epsilon) == 1.0
    # The Skellam pre-randomizer of all n users alone is (ε, 0.9δ), independently.
    p = proto["details"]["precision"]
    v = proto["details"]["noise_variance_per_user"] * N
    assert _skellam_delta(v, p, 1.0) <= 0.9 * DELTA
    assert m["protocol"]["calibrated_for"] == {"epsilon": 1.0, "delta": DELTA}
    assert "local_epsilon" not in parties
    assert "no useful local guarantee" in parties["local_guarantee"]
    m_users = proto["messages_per_user"]
    assert parties["sees"]["analyzer"].startswith(f"the shuffled multiset of n = "
                                                  f"{N * m_users:,} messages")


def test_ledger_and_tight_accountant_gate_protocol_releases(tmp_path):
    """Under the pld accountant a protocol release is gated and charged too; a release
    over the budget is refused with nothing drawn."""
    data = tmp_path / "flags.csv"
    data.write_text("x\n" + "\n".join(str(i % 2) for i in range(N)) + "\n", encoding="utf-8")
    (tmp_path / "flags.csv.schema.json").write_text(json.dumps({
        "schema_version": 1, "columns": [{"name": "x", "type": "numeric", "lower": 0,
                                          "upper": 1}]}), encoding="utf-8")
    with Project.create(tmp_path / "q.dpstudio", epsilon=1.5, delta=1e-5,
                        relation="replace", accountant="pld") as project:
        spec = _spec(tmp_path, "distributed", "skellam", 1.0)
        record = project.release(spec, tmp_path / "o1")
        assert (float(record.epsilon), float(record.delta)) == (1.0, DELTA)
        with pytest.raises(ProjectError, match="budget exceeded"):
            project.release(spec, tmp_path / "o2")
        assert not (tmp_path / "o2").exists() or not any((tmp_path / "o2").iterdir())


def test_check_says_who_sees_what_and_the_local_epsilon(env):
    tmp, _, project, _ = env
    check = project.check(_spec(tmp, "shuffle", "blanket", 0.5), tmp / "o")
    notes = " ".join(check["notes"])
    assert "each user's local ε₀ = " in notes and "central ε after shuffling = 0.2" in notes
    assert "the analyzer sees the shuffled multiset" in notes


@pytest.mark.parametrize("trust,mechanism", [("shuffle", "blanket"), ("shuffle", "cloak"),
                                             ("distributed", "secagg_gaussian")])
def test_the_check_states_the_charge_the_release_records(env, trust, mechanism):
    # The confirmation shows check["epsilon"]: it must be what the ledger then records
    # (the blanket's FMT21 bound is below the ε asked for, 0.2004 against 0.5).
    tmp, _, project, _ = env
    check = project.check(_spec(tmp, trust, mechanism, 0.5), tmp / "o")
    record, _ = _release(env, trust, mechanism, 0.5)
    assert (check["epsilon"], check["delta"]) == (record.epsilon, record.delta)


def test_a_shuffled_krr_mean_is_refused_in_one_sentence(env):
    tmp, _, project, _ = env
    spec = _spec(tmp, "shuffle", "krr", 1.0, query="mean")
    # The engine's own refusal (not any exception), before anything is charged.
    with pytest.raises(QueryError, match="runs shuffled for a histogram") as info:
        project.release(spec, tmp / "o")
    message = str(info.value)
    assert "\n" not in message and "krr" in message.lower()
    assert project.ledger() == [] and project.datasets() == []


# ------------------------------------------------------------- the calibrated noise scale


def _variance_test(errors: np.ndarray, variance: float) -> float:
    """Two-sided p-value of the sample variance of ``errors`` (mean known: 0) against
    ``variance``: Σ e²/variance is χ² with len(errors) degrees of freedom (Gaussian noise;
    the Skellam and discrete Gaussian sums here are Gaussian to within a few 1e-3)."""
    stat = float(np.sum(errors**2) / variance)
    dof = errors.size
    cdf = stats.chi2.cdf(stat, dof)
    return 2 * min(cdf, 1 - cdf)


def test_the_released_noise_has_the_manifests_scale_and_a_tampered_one_is_rejected(env):
    """The noise of the very dispatch a release runs (seeded here: a simulation) has the
    variance the release's manifest states, and σ_c is the one its guarantee was computed
    for (independently, above); the same test rejects a σ 25% off either way."""
    _, m = _release(env, "distributed", "secagg_gaussian", 1.0)
    _, _, _, x = env
    users = 100  # the same protocol on fewer users: a quick simulation
    values = x[:users].astype(float)
    q = QuerySpec("sum", "secagg_gaussian", 1.0, DELTA, bounds=(0.0, 1.0),
                  relation="replace", column="x")
    runs = [run(AnalysisSpec("distributed", q), values, SimulationSource(seed))
            for seed in range(600)]
    errors = np.array([r.engine.value for r in runs]) - values.sum()
    plan = runs[0].engine
    # The manifest's σ_c (from its honest shares' variance) is the simulation's: the
    # calibration depends on the honest clients only, the same per client here.
    p, honest = m["protocol"]["precision"], m["protocol"]["honest_clients"]
    sigma_release = math.sqrt(m["protocol"]["honest_noise_variance"] * p * p / honest)
    sigma_sim = math.sqrt(plan.honest_noise_variance * p * p / plan.honest_clients)
    assert sigma_release <= sigma_sim  # more honest clients: each needs less noise
    stated = plan.noise_variance
    assert _variance_test(errors, stated) > 1e-3
    assert _variance_test(errors, stated * 1.25**2) < 1e-3  # power: a wrong σ is rejected
    assert _variance_test(errors, stated / 1.25**2) < 1e-3


def test_the_blankets_noise_matches_its_gamma_and_a_tampered_gamma_is_rejected(env):
    _, m = _release(env, "shuffle", "blanket", 0.5)
    _, _, _, x = env
    gamma, k = m["protocol"]["details"]["gamma"], m["protocol"]["details"]["precision"]
    assert k == 1
    values = x.astype(float)
    q = QuerySpec("sum", "blanket", 0.5, DELTA, bounds=(0.0, 1.0), relation="replace",
                  column="x")
    runs = [run(AnalysisSpec("shuffle", q), values, SimulationSource(seed))
            for seed in range(600)]
    errors = np.array([r.engine.value for r in runs]) - values.sum()

    def variance(g: float) -> float:
        # k = 1, values at 0 or 1: each message's variance γ/2 − γ²/4, debiased by 1 − γ.
        return N * (g / 2 - g * g / 4) / (1 - g) ** 2

    assert _variance_test(errors, variance(gamma)) > 1e-3
    assert _variance_test(errors, variance(gamma / 1.4)) < 1e-3  # less blanket: rejected
