"""Release specs: a TOML file saying what to release, read by ``dpstudio release``.

Example (every key but ``schema_version``, ``dataset``, ``column``, ``query``,
``mechanism`` and ``epsilon`` is optional)::

    schema_version = 1
    dataset = "survey.csv"          # relative to the spec file's folder
    column = "age"
    query = "mean"                  # count, sum, mean, variance, histogram, quantile, median
    bounds = [18, 100]              # or categories = ["a", "b"]; bins = 10; quantile = 0.9
    mechanism = "laplace"
    epsilon = 0.5
    delta = 0.0
    relation = "add-remove"         # must match the dataset's registered relation
    # missing = "impute"            # sum/mean/variance: "drop" (default) or "impute" the
    # impute = 50.0                 # declared constant (default: the bounds' midpoint)
    confidence = 0.95
    formats = ["csv", "json"]       # also "parquet", "xlsx"
    report = true                   # HTML + PDF stakeholder report
    script = true                   # reproducible Python script
    # script_format = "ipynb"       # the script as a Jupyter notebook (default "py")
    # fingerprint = "…"             # refuse unless the dataset has exactly this SHA-256
    # accountant = "pld"            # basic, advanced, zcdp or pld; default: the dataset's
    #                               # (for its first release, the project's)
    # name = "age-mean"             # file name stem (default: "<query>-<column>")
    # trust_model = "local"         # default "central"; "local": each record randomized on
    #                               # its owner's side (histogram or mean, with rr, krr,
    #                               # sue, oue, olh, hadamard, cms, local_laplace,
    #                               # local_gaussian or duchi), relation "replace";
    #                               # "shuffle": a sum or mean with cloak or blanket;
    #                               # "distributed": secure aggregation, secagg_gaussian
    #                               # or skellam ([params] max_dropouts = the dropouts
    #                               # tolerated), delta > 0
    # share_budget_with = 1         # this file is a version of registered dataset #1 (same
    #                               # people): spend that dataset's budget
    # separate_budget = true        # this file looks like a version of a registered dataset
    #                               # but holds other people: give it a budget of its own
    # features = ["a", "b"]         # query = "logistic_regression" (mechanism
    #                               # "dp_erm_logistic"): column is the label, features
    #                               # numeric columns with declared bounds; relation "replace"
    # engine = "dask"               # where the sums are computed: "pandas", "dask" or
    #                               # "auto" (default; see dpstudio.execution.engines)
    # scheduler = "tcp://host:8786" # the Dask cluster (default: a local one, closed after)
    # identifier = "person_id"      # central count/sum/mean/variance/histogram: protect
    # max_rows = 5                  # people, each person's rows beyond max_rows dropped at
    #                               # random first (default: the schema's declaration)

    [params]                        # further mechanism parameters
    # calibration = "analytic"
    # lambda = 0.01                 # dp_erm_logistic: regularization strength λ
    # p = 0.75                      # rr: probability of a truthful answer; the release is
    #                               # then ln(p/(1−p))-DP: epsilon may be left out, and an
    #                               # epsilon that disagrees is refused

    [budget]                        # the dataset's total budget, if this release registers it
    epsilon = 3.0
    delta = 1e-5

Bounds and categories left out are taken from the dataset's sidecar schema
(``DATA.schema.json``) when it declares them — never from the data. A dataset is
identified by its rows as parsed: the same rows re-encoded or reordered spend the same
budget; a file that looks like a version of a registered dataset is refused until the
spec (or ``dpstudio release --share-budget-with ID`` / ``--separate-budget``) says whose
budget it spends.
:func:`save_spec` writes this format (for the GUI's "Save release spec…").

This module is the door: it checks ``schema_version`` and hands the spec to its format —
one statistic (:mod:`dpstudio.project.spec_statistic`), a trained model
(:mod:`dpstudio.project.train_spec`) or a release plan
(:mod:`dpstudio.project.spec_plan`); the keys they share are read by
:mod:`dpstudio.project.spec_fields`, below all three.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from dpstudio.project.errors import SpecError
from dpstudio.project.spec_fields import SPEC_VERSION, check_version, prefix
from dpstudio.project.spec_plan import PlanSpec, parse_plan_spec
from dpstudio.project.spec_statistic import ReleaseSpec, parse_statistic_spec, statistic_spec_text
from dpstudio.project.train_spec import parse_train_spec, train_spec_text

__all__ = ["SPEC_VERSION", "ReleaseSpec", "SpecError", "load_spec", "parse_spec", "save_spec",
           "spec_text"]


def parse_spec(data: dict[str, Any], source: str = "", base: Path | None = None
               ) -> ReleaseSpec | PlanSpec:
    """The spec parsed TOML describes, handed to its format by ``schema_version``.

    Parameters
    ----------
    data : dict
        The parsed TOML.
    source : str, optional
        The spec file's name, for messages.
    base : pathlib.Path, optional
        The folder a relative ``dataset`` is relative to.

    Returns
    -------
    ReleaseSpec or PlanSpec
        A :class:`~dpstudio.project.spec_plan.PlanSpec` for ``schema_version = 2``.

    Raises
    ------
    SpecError
        In one line, for anything the spec gets wrong.
    """
    where = prefix(source)
    if check_version(data, where) == 2:  # a release plan: several statistics, one budget
        return parse_plan_spec(data, source, base)
    if data.get("query") == "train":  # a trained model: the keys of dpstudio train
        return parse_train_spec(data, source, base)
    return parse_statistic_spec(data, source, base)


def load_spec(path: str | os.PathLike[str]) -> ReleaseSpec:
    """Read a spec file; relative dataset paths are relative to the file's folder."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise SpecError(f"no spec file {p}") from None
    except OSError as exc:
        raise SpecError(f"{p.name}: cannot read ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise SpecError(f"{p.name}: not a text file (a spec is TOML, UTF-8)") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{p.name}: malformed TOML: {exc}") from None
    return parse_spec(data, p.name, p.resolve().parent)


def spec_text(spec: ReleaseSpec) -> str:
    """The TOML text of a spec (what :func:`save_spec` writes)."""
    if spec.training is not None:
        return train_spec_text(spec)
    return statistic_spec_text(spec)


def save_spec(spec: ReleaseSpec, path: str | os.PathLike[str]) -> Path:
    """Write ``spec`` as TOML (atomically); :func:`load_spec` reads it back equal.

    Parameters
    ----------
    spec : ReleaseSpec
        The spec to write.
    path : str or os.PathLike
        The ``.toml`` file, replaced if it exists.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    SpecError
        If the file cannot be written (it then keeps its old content).
    """
    from dpstudio.data.atomic import write_atomic

    p = Path(path)
    try:
        write_atomic(p, spec_text(spec))
    except OSError as exc:
        raise SpecError(f"{p.name}: cannot save spec ({exc.strerror or exc})") from None
    return p
