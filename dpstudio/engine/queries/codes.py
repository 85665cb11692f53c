"""Category codes of a column: each row's index into the declared labels, found by hashing.

A categorical column is counted through small integer codes, never through its text: no
fixed-width string array (as wide as the longest value) is built and the column is never
sorted. Each row costs one dictionary look-up in C (a label, or a value seen before); a
value met for the first time is converted to text once. The work is done in slices so a
worker thread running it lets the window's thread in between.

A read-only column (the application freezes the column it analyses) is encoded once per
set of labels and remembered for as long as the array lives: the jobs of one analysis
(utility curves, simulation, preview) share one encoding.

A column the data layer has already coded against its own dictionary of texts (as Arrow
dictionary-encodes a column) comes as :func:`dictionary_codes`: the dictionary is mapped
to the declared labels once, and each row costs one table look-up, with no text at all.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

__all__ = ["MISSING", "UNDECLARED", "coded", "dictionary_codes", "dictionary_of"]

#: Code of a missing value (None, NaN; in a numeric column also ±inf).
MISSING = -1
#: Code of a present value that is not one of the declared labels.
UNDECLARED = -2

# Rows looked up per slice: a few milliseconds each, so the GIL changes hands in between.
_SLICE = 1 << 16
# Label sets remembered per column (the analyst's current and a few earlier declarations).
_PER_COLUMN = 4


class _Lookup(dict):
    """Label → code; a value not seen yet is converted to text once (see ``__missing__``).

    Only ``str`` values are remembered: values of other types that compare equal can print
    differently (``1 == 1.0 == True``), so each of those is converted on its own.
    """

    def __init__(self, labels: list[str]) -> None:
        #: The labels, for values looked up by their text.
        self.index = {label: i for i, label in enumerate(labels)}
        # Only text labels are looked up as themselves: a label 1 must not match a value 1
        # (the value's text "1" is not the label 1).
        super().__init__({k: i for k, i in self.index.items() if isinstance(k, str)})
        self[None] = MISSING

    def __missing__(self, key: Any) -> int:
        if type(key) is str:
            self[key] = UNDECLARED  # not a label (labels are found before this is called)
            return UNDECLARED
        return _code_of(key, self.index)


def _code_of(value: Any, index: dict[str, int]) -> int:
    """Code of one value that is not a ``str``: missing, or its text looked up."""
    try:
        if value is None or bool(value != value):  # NaN is the one value ≠ itself
            return MISSING
    except (TypeError, ValueError):  # e.g. an array inside the column: compare as text
        pass
    return index.get(_text(value), UNDECLARED)


def _text(value: Any) -> str:
    """The value's text as numpy's ``astype(str)`` gives it (bytes are read as ASCII)."""
    if isinstance(value, bytes):
        try:
            return value.decode("ascii")
        except UnicodeDecodeError:
            pass
    return str(value)


def _code_dtype(k: int) -> np.dtype:
    """The narrowest signed integer holding codes ``−2 … k−1``."""
    for dtype in (np.int8, np.int16, np.int32):
        if k <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def _encode_objects(v: np.ndarray, labels: list[str], dtype: np.dtype) -> np.ndarray:
    lookup = _Lookup(labels)
    codes = np.empty(v.size, dtype=dtype)
    for start in range(0, v.size, _SLICE):
        part = v[start:start + _SLICE].tolist()
        try:
            codes[start:start + len(part)] = np.fromiter(
                map(lookup.__getitem__, part), dtype=dtype, count=len(part))
        except TypeError:  # an unhashable value (e.g. a list): this slice row by row
            codes[start:start + len(part)] = [
                lookup[x] if type(x) is str or x is None else _code_of(x, lookup.index)
                for x in part]
    return codes


def _encode_fixed(v: np.ndarray, labels: list[str], dtype: np.dtype) -> np.ndarray:
    """A column of a fixed-size type (numbers, booleans, dates, bytes): the distinct values
    are found among the raw values, and only those are converted to text."""
    index = {label: i for i, label in enumerate(labels)}
    codes = np.full(v.size, MISSING, dtype=dtype)
    present = np.isfinite(v) if v.dtype.kind in "fc" else np.ones(v.size, dtype=bool)
    values = v[present]
    if values.size == 0:
        return codes
    raw = values
    if v.dtype.kind == "f" and v.dtype.itemsize in (2, 4, 8):
        # The bits, so −0.0 and 0.0 stay apart: they print differently.
        raw = values.view(f"u{v.dtype.itemsize}")
    _, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
    texts = values[first].astype(str).tolist()  # the distinct values only
    table = np.array([index.get(t, UNDECLARED) for t in texts], dtype=dtype)
    codes[present] = table[inverse.reshape(-1)]
    return codes


def _encode_dictionary(v: np.ndarray, dictionary: tuple[str, ...], labels: list[str],
                       dtype: np.dtype) -> np.ndarray:
    """Codes of a column given as indices into ``dictionary`` (NaN where missing): each
    text of the dictionary is looked up once, each row is one look-up in that table."""
    lookup = _Lookup(labels)
    table = np.empty(len(dictionary) + 1, dtype=dtype)
    table[:-1] = [lookup[text] for text in dictionary]
    table[-1] = MISSING  # where the row's code is NaN
    codes = np.empty(v.size, dtype=dtype)
    for start in range(0, v.size, _SLICE):
        part = v[start:start + _SLICE]
        index = np.where(np.isnan(part), len(dictionary), part).astype(np.intp)
        np.take(table, index, out=codes[start:start + part.size])
    return codes


def _encode(v: np.ndarray, labels: list[str]) -> np.ndarray:
    dtype = _code_dtype(len(labels))
    dictionary = dictionary_of(v)
    if dictionary is not None:
        return _encode_dictionary(v, dictionary, labels, dtype)
    if v.dtype.kind == "O":
        return _encode_objects(v, labels, dtype)
    if v.dtype.kind == "U":  # text already: as Python strings, never sorted
        return _encode_objects(v.astype(object), labels, dtype)
    return _encode_fixed(v, labels, dtype)


class _Dictionaries:
    """The dictionary of each column given by :func:`dictionary_codes`, while it lives."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, tuple[weakref.ref, tuple[str, ...]]] = {}

    def put(self, codes: np.ndarray, dictionary: tuple[str, ...]) -> None:
        key = id(codes)
        ref = weakref.ref(codes, lambda r, key=key: self._forget(key, r))
        with self._lock:
            self._entries[key] = (ref, dictionary)

    def get(self, a: np.ndarray) -> tuple[str, ...] | None:
        with self._lock:
            entry = self._entries.get(id(a))
        return entry[1] if entry is not None and entry[0]() is a else None

    def _forget(self, key: int, ref: weakref.ref) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is ref:
                del self._entries[key]


_DICTIONARIES = _Dictionaries()


def dictionary_codes(codes: np.ndarray, dictionary: Any) -> np.ndarray:
    """A categorical column given as codes into its own dictionary of texts.

    The engine's categorical queries then take it as they take the column of texts it
    stands for (row ``i`` holds ``dictionary[codes[i]]``, or is missing where the code is
    NaN): :func:`coded` maps the dictionary to the declared labels once, and a missing
    row is found as in a numeric column (NaN), so counts, missing values and undeclared
    values are those of the texts. The codes are floats so that NaN can mark a missing
    row; every view of the returned array (``numpy.asarray``, a reshape, a slice) is
    still known as codes, a copy is not (it is then read as numbers).

    Parameters
    ----------
    codes : numpy.ndarray
        One code per row, of ``float16`` (up to 2¹¹ texts), ``float32`` (up to 2²⁴)
        or ``float64``, each of which numbers its texts exactly: an index
        into ``dictionary``, or NaN for a missing value. Frozen (made read-only) here.
    dictionary : sequence of str
        The distinct texts (stripped, none empty).

    Returns
    -------
    numpy.ndarray
        ``codes``, read-only, known to :func:`coded` as codes into ``dictionary``.

    Raises
    ------
    ValueError
        If the codes are not floats of one of those types or point outside the dictionary.
    """
    a = codes if isinstance(codes, np.ndarray) else np.asarray(codes)
    texts = tuple(dictionary)
    limit = {np.dtype(np.float16): 1 << 11, np.dtype(np.float32): 1 << 24,
             np.dtype(np.float64): 1 << 53}.get(a.dtype)
    if limit is None or len(texts) > limit or a.base is not None:
        raise ValueError("codes must be a float16, float32 or float64 array of its own "
                         "that numbers the dictionary exactly")
    if any(type(t) is not str for t in texts):
        raise ValueError("a dictionary holds texts only (missing rows are NaN codes)")
    for start in range(0, a.size, _SLICE):  # no full-size temporaries
        part = a.reshape(-1)[start:start + _SLICE]
        bad = (part < 0) | (part >= len(texts)) | (part != np.floor(part))
        if np.any(bad & ~np.isnan(part)):  # NaN: a missing row
            raise ValueError("a code points outside the dictionary")
    a.flags.writeable = False
    _DICTIONARIES.put(a, texts)
    return a


def dictionary_of(values: Any) -> tuple[str, ...] | None:
    """The dictionary of a column made by :func:`dictionary_codes` (or of a view of it
    with the same type), else None.

    Parameters
    ----------
    values : array_like
        Any column.

    Returns
    -------
    tuple of str or None
        The texts its codes index, or None when it is no such column.
    """
    a = values
    while isinstance(a, np.ndarray):
        if a.dtype.kind != "f":
            return None
        found = _DICTIONARIES.get(a)
        if found is not None:
            return found if a.dtype == values.dtype else None
        a = a.base
    return None


def _frozen(a: np.ndarray) -> bool:
    """Whether no one can change the array's values in place (it and every array it is a
    view of are read-only; an immutable ``bytes`` buffer counts as frozen too)."""
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return False
        a = a.base
    return a is None or isinstance(a, bytes)


class _Memo:
    """Codes of read-only columns, per column (by identity, while it lives) and labels."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, tuple[weakref.ref, dict[tuple[str, ...], np.ndarray]]] = {}

    def get(self, column: np.ndarray, labels: tuple[str, ...]) -> np.ndarray | None:
        with self._lock:
            entry = self._entries.get(id(column))
            if entry is None or entry[0]() is not column:
                return None
            return entry[1].get(labels)

    def put(self, column: np.ndarray, labels: tuple[str, ...], codes: np.ndarray) -> None:
        key = id(column)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0]() is not column:
                ref = weakref.ref(column, lambda r, key=key: self._forget(key, r))
                entry = self._entries[key] = (ref, {})
            by_labels = entry[1]
            if len(by_labels) >= _PER_COLUMN:
                by_labels.pop(next(iter(by_labels)))  # the oldest declaration
            by_labels[labels] = codes

    def _forget(self, key: int, ref: weakref.ref) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is ref:
                del self._entries[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


_MEMO = _Memo()
_ENCODING = threading.Lock()


def coded(values: Any, labels: list[str]) -> np.ndarray:
    """Per row, the index into ``labels`` of its value, :data:`MISSING` or :data:`UNDECLARED`.

    Values are compared with the labels as text (``str(value)``; ASCII bytes decoded, as
    numpy's ``astype(str)`` does); missing means None or NaN
    (and ±inf in a numeric column). The result of a read-only array is remembered while
    the array lives, so it must not be written to.

    Parameters
    ----------
    values : array_like
        The column: an object array of labels (as the data layer gives it), text,
        numbers, or codes into a dictionary of texts (:func:`dictionary_codes`).
    labels : list of str
        The declared categories.

    Returns
    -------
    numpy.ndarray
        Read-only codes of the narrowest signed integer type that holds them, one per row
        of ``values`` flattened.
    """
    key = tuple(labels)
    if not (isinstance(values, np.ndarray) and _frozen(values)):
        return _read_only(_encode(np.asarray(values).reshape(-1), list(key)))
    known = _MEMO.get(values, key)
    if known is not None:
        return known
    # One encoding at a time: the jobs of one analysis start together, and the second
    # then finds the first's codes instead of doing the same work again.
    with _ENCODING:
        known = _MEMO.get(values, key)
        if known is None:
            known = _read_only(_encode(values.reshape(-1), list(key)))
            _MEMO.put(values, key, known)
    return known


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a
