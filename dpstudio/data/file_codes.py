"""A file's categorical column read straight into codes (never a text per row).

:func:`load_category_codes` is :func:`~dpstudio.data.columns.category_codes` of one column
of a file: Arrow's dictionary encoding batch by batch where the file allows it
(:func:`~dpstudio.data.projected.project_codes`), else the loaded column, coded. It sits
above the loader and the column readers so that neither imports the other's layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpstudio.data.columns import _texts, category_codes, normalize_yes_no
from dpstudio.data.loading import load_table
from dpstudio.data.projected import CodesNotTaken, project_codes

__all__ = ["load_category_codes"]


def load_category_codes(path: Any, column: str, *, header: bool = True, yes_no: bool = False,
                        state: Any = None) -> tuple[np.ndarray, list[str], dict[str, Any]]:
    """:func:`category_codes` of one column of a file, read straight into codes.

    The codes and dictionary of ``load_table(path, header=header, columns=[column])``'s
    column, and that frame's ``attrs`` (its load notes among them), with the same errors.
    A text column of a Parquet file or of a UTF-8 text file that pyarrow reads as pandas
    does is dictionary-encoded by Arrow batch by batch: its texts are never held, not
    even as the loaded frame's Arrow strings (about 1.5× the column's raw bytes); other
    columns and files are loaded, then coded.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    column : str
        The column.
    header : bool
        Whether a text or Excel file's first line names the columns.
    yes_no : bool
        As :func:`category_codes`.
    state : object, optional
        Progress and cancel, as :func:`~dpstudio.data.loading.load_table`.

    Returns
    -------
    codes : numpy.ndarray
        As :func:`category_codes`.
    dictionary : list of str
        As :func:`category_codes`.
    attrs : dict
        The loaded frame's ``attrs``.
    """
    p = Path(path)
    if p.is_file() and p.stat().st_size > 0:  # else the loader says what is wrong

        def texts(values: Any, strip: bool) -> list[str | None]:
            if strip and not yes_no:
                return _stripped(values)
            out = _texts(values)
            if yes_no:
                mapped = [None if t is None else normalize_yes_no(t) for t in out]
                if any(t is not None and m is None for t, m in zip(out, mapped, strict=True)):
                    raise CodesNotTaken  # the loaded column says which row
                out = mapped
            return out

        try:
            fast = project_codes(p, p.suffix.lower(), state, header, str(column), texts)
        except CodesNotTaken:
            fast = None
        if fast is not None:
            return fast
    frame = load_table(p, state=state, header=header, columns=[column])
    codes, dictionary = category_codes(frame, str(column), yes_no=yes_no)
    return codes, dictionary, dict(frame.attrs)


def _stripped(values: Any) -> list[str | None]:
    """Texts of distinct values stripped as :func:`category_column` strips a column of
    mostly distinct texts (pandas' ``str.strip``; blank → missing)."""
    return [None if t is None or t != t or t == "" else t
            for t in pd.Series(values).str.strip().tolist()]
