"""``dpstudio release PLAN.toml`` says in its header whom the guarantee protects: one
person (identifier and k) for a user-level plan, one row otherwise — not only in a note."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpstudio.cli import main

PLAN = """schema_version = 2
dataset = "visits.csv"
epsilon = 1.0
rows = 100
{extra}
[[statistics]]
column = "amount"
query = "count"

[[statistics]]
column = "amount"
query = "mean"
by = ["region"]
"""


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _release(tmp_path, capsys, *, identifier: bool, max_rows: int = 2, extra: str = ""):
    g = np.random.default_rng(5)
    person = np.repeat([f"p{i}" for i in range(30)], 4)
    amount = g.integers(0, 11, person.size)
    region = np.array(["north", "south"])[g.integers(0, 2, person.size)]
    (tmp_path / "visits.csv").write_text("person,amount,region\n" + "".join(
        f"{p},{a},{r}\n" for p, a, r in zip(person, amount, region, strict=True)),
        encoding="utf-8")
    who = ({"name": "person", "type": "identifier", "max_rows": max_rows} if identifier
           else {"name": "person", "type": "categorical",
                 "categories": [f"p{i}" for i in range(30)]})
    (tmp_path / "visits.csv.schema.json").write_text(json.dumps({"schema_version": 3,
        "columns": [who, {"name": "amount", "type": "numeric", "lower": 0, "upper": 10},
                    {"name": "region", "type": "categorical",
                     "categories": ["north", "south"]}]}), encoding="utf-8")
    (tmp_path / "plan.toml").write_text(PLAN.format(extra=extra), encoding="utf-8")
    project = tmp_path / "p.dpstudio"
    code, _, err = _run(capsys, "project", "init", project, "--epsilon", "5")
    assert code == 0, err
    code, out, err = _run(capsys, "release", tmp_path / "plan.toml", "--project", project,
                          "--out", tmp_path / "out")
    assert code == 0, err
    return out.splitlines()


@pytest.mark.parametrize(("k", "rows"), [(2, "2 rows"), (1, "1 row")])
def test_a_user_level_plan_names_the_person_relation_in_its_header(tmp_path, capsys, k,
                                                                   rows):
    lines = _release(tmp_path, capsys, identifier=True, max_rows=k)
    assert lines[0].startswith("release #1 done: plan of 2 statistics (ε = 1, δ = 0,")
    # The header, before any statistic: ε is read per person from the first lines.
    assert lines[1] == (f"  neighbours: add or remove one person (identifier 'person', "
                        f"at most {rows})")
    assert lines[2].startswith("  count of amount")


@pytest.mark.parametrize(("extra", "words"), [
    ("", "  neighbours: add or remove one row"),
    ('relation = "replace"', "  neighbours: replace one row (the number of rows is public)"),
])
def test_a_row_level_plan_names_its_row_relation(tmp_path, capsys, extra, words):
    lines = _release(tmp_path, capsys, identifier=False, extra=extra)
    assert lines[1] == words
    assert not any("person" in line for line in lines)
