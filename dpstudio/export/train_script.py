"""The reproducible script of a released trained model (``query = "train"``).

Like every release's script (:mod:`dpstudio.export.script`) it reproduces the
*procedure*, not the model: it checks the dataset's SHA-256, describes the same training
run field by field (:func:`~dpstudio.analysis.training.describe_training`), resolves it
against the declaration the release used (embedded: never read off the data), reads the
columns as the release did and trains once from a fresh
:class:`~dpstudio.engine.rng.SecureSource`, printing the public fields only. Its output is
a new release that the project's ledger does not record; it says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dpstudio.export.script_preamble import DATASET_LINES, END, USAGE, preamble

__all__ = ["train_script"]

_PREAMBLE = preamble(output="model")

_TEMPLATE = '''#!/usr/bin/env python3
"""Reproduce DP Studio release #{release_id} ({model} model of {label_doc}) with dpstudio.

Generated {created_at} by DP Studio {version} for the dataset {dataset_name}
(SHA-256 {fingerprint}). Method: {method}{variant_doc}.

''' + _PREAMBLE.warning + USAGE + '''
import json
import sys
from pathlib import Path

from dpstudio.analysis import run
from dpstudio.analysis.training import describe_training, resolve_training
from dpstudio.data import load_table, sha256_file
from dpstudio.data.schema import Schema
from dpstudio.engine.rng import SecureSource
from dpstudio.execution.training_input import training_column_names, training_columns
from dpstudio.export.train_public import train_public

''' + DATASET_LINES + '''\
# The declaration the release used (bounds, categories, yes/no): never read off the data.
SCHEMA = json.loads({schema!r})
TRAINING = dict(
{training}
)


''' + _PREAMBLE.main + '''\
    analysis, _ = resolve_training(describe_training(**TRAINING), Schema.from_dict(SCHEMA))
    frame = load_table(DATASET{header_arg}, columns=training_column_names(analysis))
    result = run(analysis, training_columns(frame, analysis), SecureSource())
    # Public fields only: held-out metrics are read off private rows and never printed.
    print(json.dumps(train_public(result), indent=2, allow_nan=False))
''' + END


def train_script(*, release_id: int, created_at: str, version: str, dataset_name: str,
                 dataset_path: str, fingerprint: str, schema: Mapping[str, Any],
                 training: Mapping[str, Any], public: Mapping[str, Any], script_name: str,
                 header: bool = True) -> str:
    """The Python script that trains the same model again, from the OS CSPRNG.

    Parameters
    ----------
    release_id : int
        The release's number.
    created_at, version : str
        When, and by which DP Studio.
    dataset_name, dataset_path, fingerprint : str
        The dataset (its SHA-256 is checked before anything runs).
    schema : mapping
        The declared schema the release used (as recorded in the manifest).
    training : mapping
        :func:`~dpstudio.analysis.training.describe_training`'s keyword arguments.
    public : mapping
        The release's public fields (ε, δ, model, method for the header).
    script_name : str
        The script's file name (for its usage line).
    header : bool, optional
        Whether the dataset's first line holds the column names.

    Returns
    -------
    str
        The script's text.
    """
    lines = ",\n".join(f"    {k}={v!r}" for k, v in training.items())
    variant = public.get("fed_variant")
    return _TEMPLATE.format(
        release_id=release_id, model=public["model"],
        label_doc=repr(public["label"]).replace('"""', "'''"), created_at=created_at,
        version=version, dataset_name=dataset_name, fingerprint=fingerprint,
        method=public["method"],
        variant_doc="" if variant in (None, "none") else f", federated averaging ({variant})",
        epsilon=float(public["epsilon"]), delta=float(public["delta"]),
        script_name=script_name, dataset_path=dataset_path,
        schema=json.dumps(dict(schema), ensure_ascii=False, sort_keys=True),
        training=lines, header_arg="" if header else ", header=False")
