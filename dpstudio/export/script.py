"""A Python script that performs the same release with ``dpstudio`` as a library.

The script reads the dataset, checks its SHA-256 against the one the release was computed
on, builds the same :class:`~dpstudio.engine.queries.QuerySpec` and calls
:func:`~dpstudio.engine.queries.release` with a fresh :class:`SecureSource`. It reproduces
the *procedure*, not the number: the noise is fresh, so its output is a new release that
spends the privacy budget again — and, run outside DP Studio, that spending is not in the
project's ledger. The script says so at the top and on stderr when it runs.

A release on a folder (or glob) of files gets a script that sums the files where they are
(this process or a Dask cluster, as the release did), checks the files' fingerprint
(``files-sha256-v1``) before drawing anything, then draws the noise once.
"""

from __future__ import annotations

from typing import Any

from dpstudio.analysis.capabilities import release_refusal
from dpstudio.analysis.request import AnalysisSpec
from dpstudio.analysis.result import shape_of
from dpstudio.engine.queries import QuerySpec
from dpstudio.export.script_preamble import (
    DATASET_LINES,
    END,
    READERS,
    USAGE,
    doc_safe,
    literal,
    preamble,
    spec_lines,
)

__all__ = ["READERS", "release_script"]

# The preambles (warning, stderr note, SHA-256 check) of :mod:`script_preamble`: pasted
# into each script's text, never imported by it (a script stays self-contained).
_NOISE = preamble()
_LOCAL = preamble("randomness", "locally")
_FILES = preamble(check=False)  # the files' fingerprint is checked after summing them

_TEMPLATE = '''#!/usr/bin/env python3
"""Reproduce DP Studio release #{release_id} ({query} of {column_repr}) with dpstudio.

Generated {created_at} by DP Studio {version} for the dataset {dataset_name}
(SHA-256 {fingerprint}).

''' + _NOISE.warning + USAGE + '''
import json
import sys
from pathlib import Path

from dpstudio.data import load_table, sha256_file, {reader}
from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.rng import SecureSource
from dpstudio.export import public_result

''' + DATASET_LINES + '''
SPEC = QuerySpec(
{spec_lines}
)


''' + _NOISE.main + '''\
    frame = load_table(DATASET{header_arg})
    values = {reader}(frame, SPEC.column)
    result = release(values, SPEC, SecureSource())
    print(json.dumps(public_result(result), indent=2, allow_nan=False))  # public fields only
''' + END


_LOCAL_TEMPLATE = '''#!/usr/bin/env python3
"""Reproduce DP Studio release #{release_id} (local {query} of {column_repr}) with dpstudio.

Generated {created_at} by DP Studio {version} for the dataset {dataset_name}
(SHA-256 {fingerprint}). Local model: each value is randomized as its owner's device
would ({mechanism}), then the estimate is computed from the randomized reports alone.

''' + _LOCAL.warning + USAGE + '''
import json
import sys
from pathlib import Path

from dpstudio.data import load_table, sha256_file, {reader}
from dpstudio.engine.local import run_local
from dpstudio.engine.rng import SecureSource
from dpstudio.export.tables import local_public

''' + DATASET_LINES + '''\
COLUMN = {column!r}
MECHANISM = {mechanism!r}
PARAMS = {params}
CATEGORIES = {categories}
BOUNDS = {bounds}
CONFIDENCE = {confidence!r}


''' + _LOCAL.main + '''\
    frame = load_table(DATASET{header_arg})
    values = {reader}(frame, COLUMN)
    result = run_local(values, MECHANISM, PARAMS, categories=CATEGORIES, bounds=BOUNDS,
                       source=SecureSource(), confidence=CONFIDENCE)
    print(json.dumps(local_public(result, COLUMN), indent=2, allow_nan=False))  # public only
''' + END


_MODEL_TEMPLATE = '''#!/usr/bin/env python3
"""Reproduce DP Studio release #{release_id} (logistic regression of {column_repr}) with dpstudio.

Generated {created_at} by DP Studio {version} for the dataset {dataset_name}
(SHA-256 {fingerprint}). The model is fitted on the declared features, with missing
feature values set to the middle of their declared bounds, and released by output
perturbation (dp_erm_logistic, replace-one neighbours, n public).

''' + _NOISE.warning + USAGE + '''
import json
import sys
from pathlib import Path

from dpstudio.data import category_column, load_table, numeric_column, sha256_file
from dpstudio.engine.learning import release_logistic
from dpstudio.engine.queries import present_mask
from dpstudio.engine.rng import SecureSource
from dpstudio.export.tables import model_public

''' + DATASET_LINES + '''\
LABEL = {label!r}
FEATURES = {features}
BOUNDS = {bounds}  # declared in the dataset's schema, never read off the data
EPSILON = {epsilon!r}
DELTA = {delta!r}
LAMBDA = {lam!r}


''' + _NOISE.main + '''\
    frame = load_table(DATASET{header_arg})
    columns = {{}}
    for name in FEATURES:
        values = numeric_column(frame, name).copy()
        lo, hi = BOUNDS[name]
        values[~present_mask(values)] = 0.5 * (lo + hi)  # data-independent: n stays public
        columns[name] = values
    columns[LABEL] = category_column(frame, LABEL)
    if not present_mask(columns[LABEL]).all():
        print(f"error: the label {{LABEL!r}} has missing values", file=sys.stderr)
        return 2
    result = release_logistic(columns, LABEL, FEATURES, BOUNDS, EPSILON, DELTA, LAMBDA,
                              SecureSource())
    # Public fields only: the model's analyst-only utility (accuracy…) is never printed.
    print(json.dumps(model_public(result, LABEL), indent=2, allow_nan=False))
''' + END


_FILES_TEMPLATE = '''#!/usr/bin/env python3
"""Reproduce DP Studio release #{release_id} ({query} of {column_repr}) with dpstudio.

Generated {created_at} by DP Studio {version} for the dataset {dataset_name}, a folder of
files (fingerprint {fingerprint}, kind files-sha256-v1: every file's size and SHA-256).
Each file is summed where it is ({engine} engine): clamped to the declared bounds, snapped
by randomized rounding from the OS CSPRNG, and returned as exact integers; the noise is
drawn once, here, after the files' fingerprint has been checked.

''' + _FILES.warning + '''
Usage: python {script_name} [FOLDER [SCHEDULER]]   (default: the path below; SCHEDULER,
e.g. tcp://host:8786, runs on that Dask cluster, "pandas" in this process)
"""

import json
import sys
from contextlib import nullcontext

from dpstudio.data.folders import files_fingerprint, open_files
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.queries.partial import run_partials
from dpstudio.engine.rng import SecureSource
from dpstudio.execution.engines import dask_cluster
from dpstudio.execution.partitions import sum_files
from dpstudio.export import public_result

DATASET = sys.argv[1] if len(sys.argv) > 1 else {dataset_path!r}
ENGINE, SCHEDULER = {engine!r}, {scheduler!r}
if len(sys.argv) > 2:
    ENGINE, SCHEDULER = ("pandas", None) if sys.argv[2] == "pandas" else ("dask", sys.argv[2])
FINGERPRINT = {fingerprint!r}
READER = {files_reader!r}

SPEC = QuerySpec(
{spec_lines}
)


''' + _FILES.main + '''\
    ds = open_files(DATASET)
    with dask_cluster(SCHEDULER) if ENGINE == "dask" else nullcontext() as cluster:
        total, files = sum_files(ds, SPEC.column, READER, SPEC, header={header!r},
                                 client=None if cluster is None else cluster.client,
                                 fingerprint=True)
    if files_fingerprint(files) != FINGERPRINT:
        print(f"error: {{DATASET}} is not the dataset of release #{release_id} "
              "(its files differ)", file=sys.stderr)
        return 2
    result = run_partials(total, SPEC, SecureSource())  # the noise, once, here
    print(json.dumps(public_result(result), indent=2, allow_nan=False))  # public fields only
''' + END


def _central_script(spec: QuerySpec, model: dict[str, Any] | None, **common: Any) -> str:
    return _TEMPLATE.format(spec_lines=spec_lines(spec), **common)


#: What a manifest's ``execution.scheduler`` says of a cluster started for the release
#: (:data:`dpstudio.execution.engines.LOCAL_SCHEDULER`): the script starts its own.
_LOCAL_CLUSTER = "local"
#: How :func:`dpstudio.execution.partitions.sum_files` reads a column, by the in-process
#: reader's name.
_FILES_READERS = {"numeric_column": "numeric", "category_column": "category",
                  "yes_no_column": "yes_no"}


def _files_script(spec: QuerySpec, *, engine: str, scheduler: str | None, header: bool,
                  **common: Any) -> str:
    common.pop("header_arg", None)
    return _FILES_TEMPLATE.format(spec_lines=spec_lines(spec), engine=engine,
                                  scheduler=scheduler, header=bool(header),
                                  files_reader=_FILES_READERS[common["reader"]], **common)


def _local_script(spec: QuerySpec, model: dict[str, Any] | None, **common: Any) -> str:
    return _LOCAL_TEMPLATE.format(
        column=spec.column, mechanism=spec.mechanism,
        params=literal(dict(spec.mechanism_params())),
        categories=literal(None if spec.categories is None else tuple(spec.categories)),
        bounds=literal(None if spec.bounds is None else tuple(float(b) for b in spec.bounds)),
        confidence=float(spec.confidence), **common)


def _model_script(spec: QuerySpec, model: dict[str, Any], **common: Any) -> str:
    features = tuple(str(f) for f in model["features"])
    return _MODEL_TEMPLATE.format(**(common | dict(
        column_repr=doc_safe(repr(model["label"])), label=str(model["label"]),
        features="[" + ", ".join(repr(f) for f in features) + "]",
        bounds=literal({f: tuple(float(b) for b in model["bounds"][f]) for f in features}),
        lam=float(model["lambda"]))))


#: The script of a release, by how its result reads (:func:`shape_of`).
_SCRIPTS = {"statistic": _central_script, "estimate": _local_script, "model": _model_script}


def release_script(*, release_id: int, created_at: str, version: str, dataset_name: str,
                   dataset_path: str, fingerprint: str, spec: QuerySpec, reader: str,
                   script_name: str, trust_model: str = "central",
                   model: dict[str, Any] | None = None, header: bool = True,
                   files: bool = False, engine: str = "pandas",
                   scheduler: str | None = None, public: dict[str, Any] | None = None,
                   contributions: dict[str, Any] | None = None) -> str:
    """The source text of a script that repeats the release with fresh noise.

    Parameters
    ----------
    release_id, created_at, version, dataset_name, fingerprint : int or str
        The release, DP Studio's version and the dataset, named in the script's docstring.
    dataset_path : str
        The dataset's default path (the script takes another as its argument).
    spec : QuerySpec
        The release's statistic and mechanism; its ε and δ are the ones charged.
    reader : str
        How the column is read (one of :data:`READERS`).
    script_name : str
        The script's file name, for its usage line.
    trust_model : str
        A trust model whose releases a project makes (central or local today).
    model : dict, optional
        A model release: ``label``, ``features``, their declared ``bounds`` and
        ``lambda``; the script then calls :func:`~dpstudio.engine.learning.release_logistic`.
    header : bool
        False: the dataset has no header line, and the script reads it so.
    files : bool
        The dataset is a folder or glob of files (fingerprint kind ``files-sha256-v1``):
        the script sums each file where it is and checks the files' fingerprint before
        drawing the noise (central statistics only).
    engine, scheduler : str
        Where a folder's files are summed (``pandas`` or ``dask``) and the Dask scheduler's
        address (None or ``"local"``: a local cluster); the script's user may choose
        another.
    public : dict, optional
        The release's public fields: a shuffle or secure-aggregation release's script
        reruns its protocol, calibrated as the release was (``calibrated_for``).
    contributions : dict, optional
        A user-level release's ``{"identifier": column, "max_rows": k}``: the script
        reads the identifier column too and bounds each person's rows to k at random
        before the statistic, as the release did (central, one file only).

    Returns
    -------
    str
        The script, chosen by how the result reads (a statistic, a local estimate, a model).

    Raises
    ------
    ValueError
        For an unknown reader, or a release the project cannot make (a model under
        another trust model than the curator's, a trust model without releases).
    """
    if reader not in READERS:
        raise ValueError(f"unknown column reader {reader!r}")
    write = _SCRIPTS.get(shape_of(trust_model, spec.query, model is not None))
    features = None if model is None else tuple(model["features"])
    if write is None or release_refusal(AnalysisSpec(trust_model, spec,
                                                     features=features)) is not None:
        raise ValueError("a model release is central-model only" if model is not None else
                         f"no script for {trust_model}-model releases")
    common = dict(release_id=int(release_id), query=spec.query,
                  column_repr=doc_safe(repr(spec.column)), created_at=created_at,
                  version=version, dataset_name=doc_safe(dataset_name),
                  fingerprint=fingerprint, epsilon=float(spec.epsilon),
                  delta=float(spec.delta), script_name=script_name, reader=reader,
                  dataset_path=str(dataset_path),
                  header_arg="" if header else ", header=False")
    if contributions is not None:
        if write is not _central_script or files:
            raise ValueError("a user-level script is a central statistic on one file only")
        from dpstudio.export.script_user import user_level_script

        return user_level_script(spec, contributions, **common)
    if files:
        if write is not _central_script:
            raise ValueError("a script for a folder of files is a central statistic only")
        return _files_script(spec, engine=engine if engine in ("pandas", "dask") else "pandas",
                             scheduler=None if scheduler in (None, _LOCAL_CLUSTER)
                             else scheduler,
                             header=header, **common)
    from dpstudio.analysis.protocol_release import is_protocol

    if model is None and is_protocol(trust_model):
        from dpstudio.analysis.capabilities import capability, mechanism_fits
        from dpstudio.export.script_protocol import protocol_script

        if not mechanism_fits(AnalysisSpec(trust_model, spec)):
            raise ValueError(f"no script for {trust_model}-model releases with "
                             f"{spec.mechanism}")
        return protocol_script(spec, public or {}, trust_model, capability(trust_model).title,
                               **common)
    return write(spec, model, **common)
