"""A shuffled K-RR released through a project from a spec (issue 14, first item).

Each user runs K-ary randomized response at the ε₀ that FMT21 amplification allows for
the central (ε, δ); the counts are drawn from the OS CSPRNG through the one dispatch,
charged with the engine object's (ε, δ) (FMT21 at ε₀, recomputed here), and the manifest
verifies and shows each user's ε₀ beside the central ε and who sees what.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpstudio.engine.errors import EngineError
from dpstudio.engine.shuffle.amplification import largest_local_epsilon, shuffle_epsilon
from dpstudio.export import verify_manifest
from dpstudio.project import Project, ProjectError, load_spec

N, DELTA = 3_000, 1e-6
CATS = ["red", "green", "blue"]


@pytest.fixture
def env(tmp_path):
    data = tmp_path / "colours.csv"
    rng = np.random.default_rng(0)
    x = rng.choice(CATS + [""], size=N, p=[0.5, 0.3, 0.15, 0.05])
    # An id column: a missing colour is an empty field, not a blank line (skipped).
    data.write_text("id,colour\n" + "\n".join(f"{i},{c}" for i, c in enumerate(x)) + "\n",
                    encoding="utf-8")
    (tmp_path / "colours.csv.schema.json").write_text(json.dumps({
        "schema_version": 1, "columns": [{"name": "id", "type": "numeric"},
                                      {"name": "colour", "type": "categorical",
                                       "categories": CATS}]}), encoding="utf-8")
    project = Project.create(tmp_path / "p.dpstudio", epsilon=5, delta=1e-4,
                             relation="replace")
    yield tmp_path, project, x
    project.close()


def _spec(tmp, mechanism="krr", epsilon=0.5, query="histogram", **extra):
    lines = ['schema_version = 1', 'dataset = "colours.csv"', 'column = "colour"',
             f'query = "{query}"', 'trust_model = "shuffle"', f'mechanism = "{mechanism}"',
             f'epsilon = {epsilon}', f'delta = {DELTA}']
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    path = tmp / f"{mechanism}-{query}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_spec(path)


def test_a_shuffled_krr_is_charged_its_amplified_epsilon_and_shows_each_users(qapp, env):
    from dpstudio.engine.rng import SecureSource
    from dpstudio.project import release as release_module

    tmp, project, x = env
    sources = []
    real_run = release_module.run_analysis

    def spy(analysis, values, source, *a, **kw):
        sources.append(source)
        return real_run(analysis, values, source, *a, **kw)

    release_module.run_analysis = spy
    try:
        record = project.release(_spec(tmp, report=True, script=True), tmp / "out")
    finally:
        release_module.run_analysis = real_run
    assert len(sources) == 1 and isinstance(sources[0], SecureSource)
    manifest = next((tmp / "out").glob("*.manifest.json"))
    check = verify_manifest(manifest)
    assert check.ok, check.problems
    m = check.manifest
    # Each user's ε₀ is the largest FMT21 allows for 3,000 users at a central 0.5 (the
    # amplification module's own search, to its tolerance), and what is charged and
    # stated is FMT21's ε at that ε₀, recomputed here.
    eps0 = m["parties"]["local_epsilon"]
    assert eps0 == pytest.approx(largest_local_epsilon(0.5, N, DELTA), rel=2e-6)
    assert eps0 <= largest_local_epsilon(0.5, N, DELTA)
    central = min(shuffle_epsilon(eps0, N, DELTA)[0], 0.5)
    assert (float(record.epsilon), float(record.delta)) == (central, DELTA)
    assert (m["privacy"]["epsilon"], m["privacy"]["delta"]) == (central, DELTA)
    assert 0.499 < central <= 0.5 and eps0 > 1.5
    parties = m["parties"]
    assert parties["local_epsilon"] == eps0 and parties["central_epsilon"] == central
    assert "K-ary randomized response" in parties["local_guarantee"]
    assert parties["sees"]["analyzer"].startswith(f"the shuffled multiset of n = {N:,}")
    assert "counts per category" in parties["sees"]["analyzer"]
    assert ("the shuffler is trusted not to link messages to senders and not to collude "
            "with the analyzer") in parties["trusted"]
    assert m["trust_model"] == "shuffle" and m["mechanism"]["name"] == "krr"
    assert m["privacy"]["relation"] == "replace"
    # Counts per declared category and the "other or missing" cell; nothing analyst-only.
    out = json.loads(next((tmp / "out").glob("*-histogram-colour.json")).read_text(
        encoding="utf-8"))
    rows = out["rows"]
    est = {r["cell"]: r["value"] for r in rows}
    se = {r["cell"]: r["std_error"] for r in rows}
    assert list(est) == CATS + ["(other or missing)"]
    assert m["protocol"]["details"]["epsilon_local"] == eps0
    assert not _keys(out) & {"clamped", "missing_count", "reports"}  # analyst-only
    truth = {c: int(np.sum(x == c)) for c in CATS}
    for c in CATS:
        assert abs(est[c] - truth[c]) < 5 * se[c]
    html = next((tmp / "out").glob("*.report.html")).read_text(encoding="utf-8")
    assert "ε₀ = " in html and "shuffled multiset" in html
    script = next((tmp / "out").glob("*.py")).read_text(encoding="utf-8")
    assert "'shuffle'" in script and "'krr'" in script


def _keys(value) -> set:
    if isinstance(value, dict):
        return set(value) | set().union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value)) if value else set()
    return set()


def test_check_shows_each_users_epsilon_before_any_noise(env):
    tmp, project, _ = env
    check = project.check(_spec(tmp), tmp / "o")
    notes = " ".join(check["notes"])
    assert "each user's local ε₀ = " in notes and "central ε after shuffling" in notes


def test_what_does_not_run_shuffled_is_refused_in_one_sentence(env):
    tmp, project, _ = env
    for spec, words in ((_spec(tmp, "hadamard"), "krr, sue, oue, olh"),
                        (_spec(tmp, "krr", query="count"), "histogram")):
        with pytest.raises((EngineError, ProjectError)) as info:
            project.release(spec, tmp / "o")
        message = str(info.value)
        assert project.ledger() == []  # refused before anything is charged
        assert "\n" not in message and words in message, message
