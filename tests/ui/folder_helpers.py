"""A folder of Parquet files and its declared schema, for the UI tests of folders."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

ROWS = 4000  # per file


def write_folder(root, files: int = 3, rows: int = ROWS):
    """``root/visits``: ``files`` Parquet files of ages and regions, and its declared
    schema beside it (``visits.schema.json``: bounds declared, never read off the data)."""
    folder = root / "visits"
    folder.mkdir()
    rng = np.random.default_rng(7)
    for i in range(files):
        pd.DataFrame({"age": rng.normal(45, 15, rows).round(1),
                      "region": rng.choice(["North", "South"], rows)}).to_parquet(
            folder / f"part-{i}.parquet")
    schema = {"schema_version": 1, "columns": [
        {"name": "age", "type": "numeric", "lower": 18, "upper": 90},
        {"name": "region", "type": "categorical", "categories": ["North", "South"]}]}
    (root / "visits.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return folder
