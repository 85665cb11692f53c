"""A Python script that performs the same release with ``dpstudio`` as a library.

The script reads the dataset, checks its SHA-256 against the one the release was computed
on, builds the same :class:`~dpstudio.engine.queries.QuerySpec` and calls
:func:`~dpstudio.engine.queries.release` with a fresh :class:`SecureSource`. It reproduces
the *procedure*, not the number: the noise is fresh, so its output is a new release that
spends the privacy budget again — and, run outside DP Studio, that spending is not in the
project's ledger. The script says so at the top and on stderr when it runs.
"""

from __future__ import annotations

from typing import Any

from dpstudio.engine.queries import QuerySpec

__all__ = ["READERS", "release_script"]

#: How a column is read for a query (the function of :mod:`dpstudio.data`).
READERS = ("numeric_column", "category_column", "yes_no_column")

_TEMPLATE = '''#!/usr/bin/env python3
"""Reproduce DP Studio release #{release_id} ({query} of {column_repr}) with dpstudio.

Generated {created_at} by DP Studio {version} for the dataset {dataset_name}
(SHA-256 {fingerprint}).

WARNING: running this script draws FRESH noise. Its output is a NEW differentially
private release: publishing it spends epsilon = {epsilon!r} (delta = {delta!r}) again, and
this spending is NOT recorded in the DP Studio project ledger. Use it to audit or repeat
the procedure, and record any result you publish with `dpstudio release` instead.

Usage: python {script_name} [DATASET]   (default: the path below)
"""

import json
import sys
from pathlib import Path

from dpstudio.data import load_table, sha256_file, {reader}
from dpstudio.engine.queries import QuerySpec, release
from dpstudio.engine.rng import SecureSource
from dpstudio.export import public_result

DATASET = Path(sys.argv[1]) if len(sys.argv) > 1 else Path({dataset_path!r})
FINGERPRINT = {fingerprint!r}

SPEC = QuerySpec(
{spec_lines}
)


def main() -> int:
    print("note: this draws fresh noise; publishing the output is a new release that is "
          "not in the project ledger", file=sys.stderr)
    if sha256_file(DATASET) != FINGERPRINT:
        print(f"error: {{DATASET}} is not the dataset of release #{release_id} "
              "(its SHA-256 differs)", file=sys.stderr)
        return 2
    frame = load_table(DATASET)
    values = {reader}(frame, SPEC.column)
    result = release(values, SPEC, SecureSource())
    print(json.dumps(public_result(result), indent=2, allow_nan=False))  # public fields only
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _literal(value: Any) -> str:
    """A Python literal for a spec field (repr round-trips str, float, int, tuples, dicts)."""
    if isinstance(value, tuple):
        return "(" + ", ".join(_literal(v) for v in value) + ("," if len(value) == 1 else "") \
            + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float | int | str | bool) or value is None:
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} into a script")


def _doc_safe(text: str) -> str:
    """Text that can sit inside the script's docstring whatever it contains."""
    return "".join(ch if ch.isprintable() and ch not in '\\"' else "?" for ch in str(text))


def release_script(*, release_id: int, created_at: str, version: str, dataset_name: str,
                   dataset_path: str, fingerprint: str, spec: QuerySpec, reader: str,
                   script_name: str) -> str:
    """The script's source text."""
    if reader not in READERS:
        raise ValueError(f"unknown column reader {reader!r}")
    fields = {
        "query": spec.query, "mechanism": spec.mechanism, "epsilon": float(spec.epsilon),
        "delta": float(spec.delta),
        "bounds": None if spec.bounds is None else tuple(float(b) for b in spec.bounds),
        "categories": None if spec.categories is None else tuple(spec.categories),
        "bins": spec.bins, "quantile": spec.quantile, "relation": spec.relation,
        "confidence": float(spec.confidence), "params": dict(spec.params),
        "column": spec.column,
    }
    spec_lines = "\n".join(f"    {k}={_literal(v)}," for k, v in fields.items())
    return _TEMPLATE.format(
        release_id=int(release_id), query=spec.query, column_repr=_doc_safe(repr(spec.column)),
        created_at=created_at, version=version, dataset_name=_doc_safe(dataset_name),
        fingerprint=fingerprint, epsilon=float(spec.epsilon), delta=float(spec.delta),
        script_name=script_name, reader=reader, dataset_path=str(dataset_path),
        spec_lines=spec_lines,
    )
