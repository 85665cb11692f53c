"""The script of a user-level release: it bounds each person's rows as the release did.

A user-level release (a column declared ``identifier`` with ``max_rows`` = k) protects
people, not rows: neighbouring datasets differ by adding or removing one person with up
to k rows. A script that re-ran the query per row would draw k times too little noise
for that relation, so this one reads the identifier column too and calls the very engine
function the release called
(:func:`~dpstudio.engine.contribution.release_user_level`): each person's rows beyond k
dropped at random with keys from the OS CSPRNG, rows without an identifier left out, then
every sensitivity × k. The script states the relation in its docstring and prints only
the release's public fields: how many rows were dropped depends on the data and is never
printed.
"""

from __future__ import annotations

from typing import Any

from dpstudio.engine.contribution import check_max_rows, person_relation
from dpstudio.engine.queries import QuerySpec
from dpstudio.export.script_preamble import (
    DATASET_LINES,
    END,
    USAGE,
    doc_safe,
    preamble,
    spec_lines,
)

__all__ = ["user_level_script"]

_PREAMBLE = preamble(also="a fresh choice of each person's rows")

_USER_TEMPLATE = '''#!/usr/bin/env python3
"""Reproduce DP Studio release #{release_id} (user-level {query} of {column_repr}) with dpstudio.

Generated {created_at} by DP Studio {version} for the dataset {dataset_name}
(SHA-256 {fingerprint}).

User-level release. Neighbouring datasets differ by:
    {relation}
The column {identifier_repr} identifies a person. Each person keeps at most {rows} (declared,
never read off the data), chosen at random with the OS CSPRNG exactly as the release
did; rows without an identifier are left out; every sensitivity is {max_rows} x a row's.
How many rows were dropped is never printed.

''' + _PREAMBLE.warning + USAGE + '''
import json
import sys
from pathlib import Path

from dpstudio.data import {data_imports}
from dpstudio.engine.contribution import release_user_level
from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.rng import SecureSource
from dpstudio.export import public_result

''' + DATASET_LINES + '''\
IDENTIFIER = {identifier!r}  # the column naming each row's person
MAX_ROWS = {max_rows!r}  # declared maximum of rows per person (public)

SPEC = QuerySpec(
{spec_lines}
)


''' + _PREAMBLE.main + '''\
    frame = load_table(DATASET{header_arg})
    values = {reader}(frame, SPEC.column)
    ids = category_column(frame, IDENTIFIER)
    # The release's own engine call: each person's rows beyond MAX_ROWS dropped at random
    # (OS CSPRNG), then the noise calibrated to MAX_ROWS x each sensitivity.
    result = release_user_level(values, ids, SPEC, MAX_ROWS, SecureSource())
    print(json.dumps(public_result(result), indent=2, allow_nan=False))  # public fields only
''' + END


def user_level_script(spec: QuerySpec, contributions: dict[str, Any], **common: Any) -> str:
    """The source text of a user-level release's script.

    Parameters
    ----------
    spec : QuerySpec
        The release's central count, sum, mean, variance or histogram (add-remove).
    contributions : dict
        ``{"identifier": column, "max_rows": k}``, as the manifest states them.
    **common
        The fields every release script names (release, dataset, ε, δ, reader…).

    Returns
    -------
    str
        The script.

    Raises
    ------
    ValueError
        Without an identifier column, or with a bad ``max_rows``.
    """
    identifier = contributions.get("identifier")
    if not isinstance(identifier, str) or not identifier:
        raise ValueError("a user-level script needs the identifier column")
    try:
        k = check_max_rows(contributions.get("max_rows"))
    except Exception as exc:  # QueryError: one sentence, as a ValueError here
        raise ValueError(str(exc)) from None
    names = sorted({"load_table", "sha256_file", "category_column", common["reader"]})
    return _USER_TEMPLATE.format(
        spec_lines=spec_lines(spec), identifier=identifier, max_rows=k,
        rows=f"{k} row{'s' if k != 1 else ''}",
        identifier_repr=doc_safe(repr(identifier)), relation=person_relation(k),
        data_imports=", ".join(names), **common)
