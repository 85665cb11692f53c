"""The generated release scripts, byte for byte, on fixed inputs.

The scripts' shared preamble (warning, stderr note, SHA-256 check) is pasted into every
template from one place (:func:`dpstudio.export.script.preamble`); refactoring it must not
change a single byte of any single release's script (central, local, model, folder of
files, shuffle, secure aggregation, user-level, trained model), nor the plan script's
layout. The texts under ``fixtures/`` were rendered before that refactor. To render them
again after a deliberate change: ``python tests/export/test_script_fixtures.py --write``.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path
from unittest.mock import patch

import pytest

from dpstudio.engine.queries import QuerySpec
from dpstudio.export import plan_bundle
from dpstudio.export.plan_bundle import PlanBundle
from dpstudio.export.script import release_script
from dpstudio.export.train_script import train_script

FIXTURES = Path(__file__).with_name("fixtures")

_COMMON = dict(release_id=12, created_at="2026-11-25T10:00:00Z", version="9.9.9",
               dataset_name="survey.csv", dataset_path="data/survey.csv",
               fingerprint="ab" * 32, script_name="r0012-fixture.py")
_MEAN = QuerySpec("mean", "laplace", 0.5, bounds=(0.0, 10.0), column="score",
                  missing="impute", impute=2.5, confidence=0.9)
_HISTOGRAM = QuerySpec("histogram", "laplace", 1.25, categories=("a", "b", "c"),
                       column="group")
_LOCAL = QuerySpec("histogram", "krr", 0.5, categories=("a", "b"), relation="replace",
                   column="g")
_MODEL = QuerySpec("logistic_regression", "dp_erm_logistic", 0.5, delta=1e-6,
                   relation="replace", column="y")
_FIT = {"label": "y", "features": ["x", "z"], "bounds": {"x": (0.0, 1.0), "z": (-2, 2)},
        "lambda": 0.1}
_SHUFFLE = QuerySpec("sum", "blanket", 0.41, delta=1e-6, bounds=(0.0, 1.0),
                     relation="replace", column="x")
_SECAGG = QuerySpec("sum", "skellam", 1.0, delta=1e-6, bounds=(0.0, 1.0),
                    relation="replace", column="x")
_PARTIES = {"sees": {"analyzer": "the shuffled multiset of n = 1,000 messages",
                     "shuffler": "who sent each message"},
            "trusted": ["the shuffler is trusted not to link messages to senders and not "
                        "to collude with the analyzer"]}


def _release(**kw) -> str:
    return release_script(**(_COMMON | kw))


def _train() -> str:
    schema = {"schema_version": 1, "columns": [
        {"name": "x", "type": "numeric", "lower": 0, "upper": 1},
        {"name": "y", "type": "yes_no"}]}
    training = {"label": "y", "features": ["x"], "model": "logistic", "method": "output",
                "epsilon": 1.0, "delta": 0.0, "params": {"lambda": 0.1}}
    public = {"model": "logistic", "label": "y", "method": "output", "fed_variant": "none",
              "epsilon": 1.0, "delta": 0.0}
    return train_script(**_COMMON, schema=schema, training=training, public=public,
                        header=False)


def _plan(identifier: str | None = None, max_rows: int | None = None) -> str:
    count = QuerySpec("count", "laplace", 0.25, column="score")
    mean = QuerySpec("mean", "laplace", 0.75, bounds=(0.0, 10.0), column="score",
                     missing="impute")
    stats = [
        {"label": "count of score", "column": "score", "query": "count", "by": [],
         "spec": count, "reader": "numeric_column", "keys": ()},
        {"label": "mean of score by region", "column": "score", "query": "mean",
         "by": ["region"], "spec": mean, "reader": "numeric_column",
         "keys": (("north", "south"),)},
    ]
    bundle = PlanBundle(
        release_id=7, uid="u" * 32, created_at="2026-11-25T10:00:00Z", stem="r0007-plan",
        dataset_name="survey.csv", fingerprint="cd" * 32, schema={},
        epsilon=Decimal("1.0"), delta=Decimal("0"), accountant="basic",
        budget_epsilon=Decimal("5"), budget_delta=Decimal("0"), plan={}, statistics=stats,
        formats=(), script=True, identifier=identifier, max_rows=max_rows,
        dataset_path="data/survey.csv")
    # The plan bundle names the running DP Studio: pinned, as the other scripts' is.
    with patch.object(plan_bundle, "__version__", "9.9.9"):
        (script,) = [f for f in plan_bundle.render_plan_bundle(bundle) if f.role == "script"]
    return script.data.decode("utf-8")


#: Every script, by its fixture's name.
RENDERS = {
    "central_mean": lambda: _release(spec=_MEAN, reader="numeric_column"),
    "central_histogram_no_header": lambda: _release(spec=_HISTOGRAM,
                                                    reader="category_column",
                                                    header=False),
    "local": lambda: _release(spec=_LOCAL, reader="category_column", trust_model="local"),
    "model": lambda: _release(spec=_MODEL, reader="numeric_column", model=_FIT),
    "files_dask": lambda: _release(spec=_MEAN, reader="numeric_column", files=True,
                                   engine="dask", scheduler="tcp://host:8786"),
    "files_local_cluster": lambda: _release(spec=_HISTOGRAM, reader="category_column",
                                            files=True, engine="dask", scheduler="local",
                                            header=False),
    "shuffle": lambda: _release(spec=_SHUFFLE, reader="numeric_column",
                                trust_model="shuffle",
                                public={"calibrated_for": {"epsilon": 0.5, "delta": 1e-6},
                                        "parties": _PARTIES}),
    "secagg": lambda: _release(spec=_SECAGG, reader="yes_no_column",
                               trust_model="distributed", public={}),
    "user_level": lambda: _release(spec=QuerySpec("sum", "laplace", 0.5, bounds=(0.0, 5.0),
                                                  column="minutes"),
                                   reader="numeric_column",
                                   contributions={"identifier": "person", "max_rows": 3}),
    "user_level_one_row": lambda: _release(spec=_HISTOGRAM, reader="category_column",
                                           contributions={"identifier": "id",
                                                          "max_rows": 1}),
    "train": _train,
    "plan": _plan,
    "plan_user_level": lambda: _plan("person", 2),
}


@pytest.mark.parametrize("name", sorted(RENDERS))
def test_the_script_is_byte_identical_to_its_fixture(name):
    want = (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")
    got = RENDERS[name]()
    assert got == want, f"{name}: the generated script changed (see the module docstring)"
    compile(got, f"{name}.py", "exec")


if __name__ == "__main__":  # pragma: no cover - rewrites the fixtures on purpose
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/export/test_script_fixtures.py --write")
    FIXTURES.mkdir(exist_ok=True)
    for fixture, render in RENDERS.items():
        (FIXTURES / f"{fixture}.txt").write_text(render(), encoding="utf-8")
