"""Release specs: the TOML format, its checks, and the emitter the GUI saves with."""

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstudio.engine.queries import QuerySpec
from dpstudio.project import ReleaseSpec, SpecError, load_spec, save_spec
from dpstudio.project.spec import spec_text

EXAMPLE = """\
schema_version = 1
dataset = "survey.csv"
column = "age"
query = "mean"
bounds = [18, 100]
mechanism = "gaussian"
epsilon = 0.5
delta = 1e-6
relation = "add-remove"
confidence = 0.9
formats = ["csv", "json", "excel", "parquet"]
report = true
script = true

[params]
calibration = "classical"

[budget]
epsilon = 3
delta = 1e-5
"""


def test_the_documented_example_reads(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(EXAMPLE, encoding="utf-8")
    spec = load_spec(path)
    assert spec.dataset == str(tmp_path / "survey.csv")  # relative to the spec's folder
    assert spec.query == QuerySpec(query="mean", mechanism="gaussian", epsilon=0.5, delta=1e-6,
                                   bounds=(18.0, 100.0), relation="add-remove", confidence=0.9,
                                   params={"calibration": "classical"}, column="age")
    assert spec.formats == ("csv", "json", "xlsx", "parquet")
    assert spec.report and spec.script
    assert (spec.budget_epsilon, spec.budget_delta) == (3.0, 1e-5)


def test_defaults(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('schema_version = 1\ndataset = "/d.csv"\ncolumn = "c"\nquery = "count"\n'
                    'mechanism = "laplace"\nepsilon = 1\n', encoding="utf-8")
    spec = load_spec(path)
    assert spec.formats == ("csv", "json") and not spec.report and not spec.script
    assert spec.query.delta == 0.0 and spec.query.confidence == 0.95
    assert spec.accountant is None and spec.budget_epsilon is None  # the project's decides


@pytest.mark.parametrize(("text", "message"), [
    ("", "missing schema_version"),
    ("schema_version = 3", "unsupported schema_version 3"),
    ("schema_version = 1\ndataset = 'd.csv'", "missing required key 'column'"),
    ("schema_version = 1\nepsilonn = 1", "unknown key 'epsilonn'"),
    ('schema_version = 1\ndataset="d"\ncolumn="c"\nquery="sum"\nmechanism="laplace"\n'
     'epsilon="lots"', "epsilon must be a number"),
    ('schema_version = 1\ndataset="d"\ncolumn="c"\nquery="sum"\nmechanism="laplace"\n'
     'epsilon=1\nbounds=[1]', "bounds must be two numbers"),
    ('schema_version = 1\ndataset="d"\ncolumn="c"\nquery="sum"\nmechanism="laplace"\n'
     'epsilon=1\nformats=["pdf"]', "unknown output format 'pdf'"),
    ('schema_version = 1\ndataset="d"\ncolumn="c"\nquery="sum"\nmechanism="laplace"\n'
     'epsilon=1\nreport="yes"', "report must be true or false"),
    ('schema_version = 1\ndataset="d"\ncolumn="c"\nquery="sum"\nmechanism="laplace"\n'
     'epsilon=1\nfingerprint="abc"', "64 hexadecimal digits"),
    ('schema_version = 1\ndataset="d"\ncolumn="c"\nquery="sum"\nmechanism="laplace"\n'
     'epsilon=1\n[budget]\nepsilon=1\nepsilonn=2', "unknown key 'epsilonn' in \\[budget\\]"),
    ("schema_version = [", "malformed TOML"),
])
def test_bad_specs_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError, match=message) as info:
        load_spec(path)
    assert "\n" not in str(info.value)


def test_missing_and_binary_spec_files(tmp_path):
    with pytest.raises(SpecError, match="no spec file"):
        load_spec(tmp_path / "none.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SpecError, match="not a text file"):
        load_spec(tmp_path / "bin.toml")


_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                 max_size=12).filter(lambda s: s.strip() == s and s)


@settings(max_examples=60, deadline=None)
@given(column=_names, categories=st.lists(_names, min_size=1, max_size=4, unique=True),
       eps=st.floats(1e-6, 50), delta=st.sampled_from([0.0, 1e-9, 1e-6]),
       params=st.dictionaries(_names, st.one_of(st.integers(-5, 5), st.floats(-1e9, 1e9),
                                                _names, st.booleans()), max_size=2),
       report=st.booleans(), name=st.one_of(st.none(), _names))
def test_save_spec_round_trips(tmp_path_factory, column, categories, eps, delta, params, report,
                               name):
    spec = ReleaseSpec(
        dataset="/data/with \"quotes\" and \\ backslash.csv",
        query=QuerySpec(query="histogram", mechanism="laplace", epsilon=eps, delta=delta,
                        categories=tuple(categories), relation="replace", params=params,
                        column=column),
        formats=("xlsx", "csv"), report=report, script=not report, budget_epsilon=2.5,
        budget_delta=1e-7, fingerprint="a" * 64, name=name)
    tomllib.loads(spec_text(spec))  # valid TOML
    path = save_spec(spec, tmp_path_factory.mktemp("s") / "spec.toml")
    assert load_spec(path) == spec
