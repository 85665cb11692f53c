"""spec.py hands every version to its format (tests/test_import_circles.py checks that no
format imports it back), and the split keeps the sentences word for word."""

from __future__ import annotations

import pytest

from dpstudio.project.errors import SpecError
from dpstudio.project.spec import parse_spec
from dpstudio.project.spec_plan import PlanSpec
from dpstudio.project.spec_statistic import ReleaseSpec
from dpstudio.project.train_spec import train_spec


def test_one_door_for_every_version(tmp_path):
    plan = parse_spec({"schema_version": 2, "dataset": "d.csv", "epsilon": 1.0,
                       "statistics": [{"column": "a", "query": "count"}]}, "", tmp_path)
    assert isinstance(plan, PlanSpec) and plan.dataset == str(tmp_path / "d.csv")
    one = parse_spec({"schema_version": 1, "dataset": "d.csv", "column": "a",
                      "query": "count", "mechanism": "laplace", "epsilon": 1.0})
    assert isinstance(one, ReleaseSpec) and one.training is None
    model = parse_spec({"schema_version": 1, "dataset": "d.csv", "query": "train",
                        "label": "y", "features": ["a"], "epsilon": 1.0})
    assert isinstance(model, ReleaseSpec) and model.training["method"] == "output"


@pytest.mark.parametrize(("data", "message"), [
    ({}, "s.toml: missing schema_version (write schema_version = 1)"),
    ({"schema_version": 3}, "s.toml: unsupported schema_version 3 (this DP Studio reads 1 "
                            "and 2, a release plan)"),
    ({"schema_version": 1, "dataset": "d", "colum": "a"},
     "s.toml: unknown key 'colum' (known: schema_version, dataset, fingerprint, column, "
     "query, bounds, categories, bins, quantile, mechanism, epsilon, delta, relation, "
     "confidence, accountant, formats, report, script, name, trust_model, features, "
     "missing, impute, header, share_budget_with, separate_budget, engine, scheduler, "
     "script_format, identifier, max_rows, [params], [budget])"),
    ({"schema_version": 1, "dataset": "d", "column": "a", "query": "count",
      "mechanism": "laplace", "epsilon": 1.0, "script_format": "doc"},
     "s.toml: script_format must be one of py, ipynb, got 'doc'"),
    ({"schema_version": 2, "dataset": "d", "epsilon": 1,
      "statistics": [{"column": "a", "query": "count", "bins": 0}]},
     "s.toml: [[statistics]] 1: bins must be a whole number ≥ 1, got 0"),
    ({"schema_version": 1, "dataset": "d", "query": "train", "label": "y",
      "features": ["a"], "epsilon": 1.0, "accountant": "exact"},
     "s.toml: accountant must be one of basic, advanced, zcdp, pld, got 'exact' (leave it "
     "out to use the project's)"),
])
def test_the_sentences_are_the_same_through_every_format(data, message):
    with pytest.raises(SpecError) as err:
        parse_spec(data, "s.toml")
    assert str(err.value) == message


def test_a_train_spec_of_another_version_is_refused_in_one_sentence():
    fields = {"dataset": "d.csv", "label": "y", "features": ["a"], "epsilon": 1.0}
    assert train_spec(fields).training["model"] == "logistic"
    with pytest.raises(SpecError, match=r"^a train spec has schema_version = 1 \(2 is a "
                                        r"release plan\)$"):
        train_spec(fields | {"schema_version": 2})
    with pytest.raises(SpecError, match="^unsupported schema_version 7"):
        train_spec(fields | {"schema_version": 7})
