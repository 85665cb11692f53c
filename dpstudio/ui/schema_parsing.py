"""The schema panel's pure rules: one row of the table, what an analyst may type into it,
how a declaration reads, and guidance on bounds by a column's name.

No Qt: :func:`edit_row` takes a :class:`Row` and a value as typed and returns the new row
(or raises :class:`~dpstudio.data.errors.DataError` with one line naming the column), so
the rules are tested without a window.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

from dpstudio.data.errors import DataError
from dpstudio.data.schema import ColumnSpec, ColumnType
from dpstudio.ui.table_model import PHRASE_CHARS, elide_name

__all__ = [
    "BOUNDS_GUIDANCE",
    "TYPE_LABELS",
    "Row",
    "command_text",
    "describe_row",
    "edit_row",
    "format_bound",
    "format_categories",
    "format_labels",
    "missing_text",
    "parse_bound",
    "parse_categories",
    "parse_range",
    "shown_bound",
    "suggest_bounds",
]

TYPE_LABELS = {t: t.label for t in ColumnType}

_THOUSANDS_RE = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")


# --- one row of the table, and the pure editing rules --------------------------------------


@dataclass(frozen=True)
class Row:
    """A column's spec as declared so far.

    ``draft_lower``/``draft_upper`` hold a bound typed while the other is still missing
    (the spec then has no bounds: a column needs both). ``explicit``: the type comes from
    the sidecar or the analyst, not a guess. ``stash`` keeps the domain a column had
    under another type, so switching the type back restores it.
    """

    spec: ColumnSpec
    explicit: bool = False
    draft_lower: float | None = None
    draft_upper: float | None = None
    stash: tuple[ColumnSpec, ...] = field(default=())

    @property
    def lower(self) -> float | None:
        return self.spec.lower if self.spec.bounds is not None else self.draft_lower

    @property
    def upper(self) -> float | None:
        return self.spec.upper if self.spec.bounds is not None else self.draft_upper

    @property
    def half_declared(self) -> bool:
        return self.spec.bounds is None and (
            self.draft_lower is not None or self.draft_upper is not None
        )


def missing_text(row: Row) -> str | None:
    """What a half-declared column still lacks: "upper bound missing" (or lower).

    Parameters
    ----------
    row : Row

    Returns
    -------
    str or None
        None unless exactly one bound is declared.
    """
    if not row.half_declared:
        return None
    return "upper bound missing" if row.upper is None else "lower bound missing"


def parse_bound(text: str, column: str, which: str) -> float | None:
    """A bound typed by the analyst: a finite number, or ``None`` for an empty cell.

    Parameters
    ----------
    text : str
        As typed: a typographic minus, thousands separators ("250,000") and underscores
        are read.
    column : str
        The column's name (as shown), for the message.
    which : str
        ``"lower"`` or ``"upper"``, for the message.

    Returns
    -------
    float or None

    Raises
    ------
    DataError
        For text that is not a number, or a non-finite one.
    """
    text = str(text).strip().replace("\u2212", "-")  # a typographic minus
    if not text:
        return None
    candidate = text.replace(",", "") if _THOUSANDS_RE.fullmatch(text) else text
    try:
        value = float(candidate.replace("_", ""))
    except ValueError:
        raise DataError(f"column '{column}': the {which} bound must be a number, not "
                        f"'{text}'") from None
    if not math.isfinite(value):
        raise DataError(f"column '{column}': the {which} bound must be finite, not {text}")
    return value


#: What may stand between two bounds typed in one field: "18-65", "18–65", "18, 65", …
_RANGE_SEPARATORS = re.compile(r"\s*(?:–|—|-|\u2212|\bto\b|\.\.|;|,)\s*")


def parse_range(text: str, column: str) -> tuple[float, float] | None:
    """Both bounds typed in one field ("18-65", "18–65", "18 to 65", "18, 65").

    Parameters
    ----------
    text : str
        As typed; a single number ("1,000", "-5") is not a range.
    column : str
        The column's name (as shown), for the message.

    Returns
    -------
    (float, float) or None
        ``(lower, upper)``, or None if ``text`` is one number, empty, or no split of it
        reads as two numbers.
    """
    text = str(text).strip()
    if not text:
        return None
    try:
        parse_bound(text, column, "lower")
        return None  # one number ("1,000" is a thousand, not a range)
    except DataError:
        pass
    found = set()
    # Every separator is a candidate: "1,000-2,000" and "-10 - -5" split only one way.
    for match in _RANGE_SEPARATORS.finditer(text):
        left, right = text[:match.start()], text[match.end():]
        try:
            lower = parse_bound(left, column, "lower")
            upper = parse_bound(right, column, "upper")
        except DataError:
            continue
        if lower is not None and upper is not None:
            found.add((lower, upper))
    return found.pop() if len(found) == 1 else None


def parse_categories(text: str) -> tuple[str, ...]:
    """Categories as typed: comma-separated names; quote a name that contains a comma.

    Parameters
    ----------
    text : str
        E.g. ``"A, B", C``.

    Returns
    -------
    tuple of str
        The names, stripped, empty ones left out (``("A, B", "C")``).
    """
    text = str(text).strip()
    if not text:
        return ()
    fields = next(csv.reader([text], skipinitialspace=True))
    return tuple(f.strip() for f in fields if f.strip())


def format_categories(categories: tuple[str, ...]) -> str:
    """Categories as the analyst would type them (the inverse of :func:`parse_categories`).

    Parameters
    ----------
    categories : tuple of str

    Returns
    -------
    str
        Comma-separated, a name with a comma quoted.
    """
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(categories)
    return buffer.getvalue().replace(",", ", ").replace('", "', '", "')


def format_labels(labels: tuple[tuple[str, str], ...], categories: tuple[str, ...]) -> str:
    """Categories with their value labels, for reading: "0 = no, 1 = yes".

    Parameters
    ----------
    labels : tuple of (str, str)
        ``(category, label)`` pairs.
    categories : tuple of str
        All declared categories, in order (unlabelled ones shown as they are).

    Returns
    -------
    str
    """
    named = dict(labels)
    return ", ".join(f"{c} = {named[c]}" if c in named else c for c in categories)


def format_bound(value: float | None) -> str:
    """A bound for an editor: whole numbers without a decimal point, "" if not declared.

    Parameters
    ----------
    value : float or None

    Returns
    -------
    str
    """
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def shown_bound(value: float | None) -> str:
    """A bound for reading: thousands separated ("250,000"), "?" if not declared.

    Parameters
    ----------
    value : float or None

    Returns
    -------
    str
    """
    if value is None:
        return "?"
    return f"{value:,.0f}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:,g}"


def edit_row(row: Row, field_name: str, value: Any) -> Row | None:
    """``row`` with one field set to ``value`` as typed; ``None`` if nothing changes.

    Parameters
    ----------
    row : Row
        Never modified.
    field_name : str
        ``"type"``, ``"lower"``, ``"upper"``, ``"bounds"`` (value: both texts; both
        bounds may be typed in one of them, "18-65"), ``"categories"`` or ``"labels"``
        (value: a mapping of category to label; an empty label removes one).
    value : object
        As typed (a type's label or a :class:`ColumnType`, a bound's text, …).

    Returns
    -------
    Row or None

    Raises
    ------
    DataError
        One line, naming the column, for a value that cannot be declared.
    ValueError
        For an unknown ``field_name``.
    """
    spec = row.spec
    name = spec.name
    shown = elide_name(name, PHRASE_CHARS)  # for messages: a name can be 100,000 long
    if field_name == "type":
        kind = _parse_type(value, shown)
        if kind is spec.type:
            return None if row.explicit else replace(row, explicit=True)
        stash = tuple(s for s in row.stash if s.type is not spec.type and s.type is not kind)
        if spec.is_declared and spec.type is not ColumnType.BOOLEAN:
            stash += (spec,)
        restored = next((s for s in row.stash if s.type is kind), None)
        new_spec = restored or ColumnSpec(name, kind, description=spec.description)
        return Row(spec=new_spec, explicit=True, stash=stash)

    if field_name in ("lower", "upper", "bounds"):
        if spec.type is not ColumnType.NUMERIC:
            raise DataError(f"column '{shown}': bounds only apply to numeric columns, "
                            f"not {spec.type.label}")
        if field_name == "bounds":  # both at once: (lower text, upper text)
            lower_text, upper_text = value
            both = (parse_range(lower_text, shown) if not str(upper_text).strip() else
                    parse_range(upper_text, shown) if not str(lower_text).strip() else None)
            if both is not None:  # "18-65" typed in one field
                lower, upper = both
            else:
                lower = parse_bound(lower_text, shown, "lower")
                upper = parse_bound(upper_text, shown, "upper")
        else:
            new = parse_bound(value, shown, field_name)
            lower = new if field_name == "lower" else row.lower
            upper = new if field_name == "upper" else row.upper
        if (lower, upper) == (row.lower, row.upper):
            return None
        if lower is not None and upper is not None:
            bounded = ColumnSpec(name, spec.type, lower=lower, upper=upper,
                                 description=spec.description)  # raises if reversed
            return replace(row, spec=bounded, explicit=True, draft_lower=None, draft_upper=None)
        plain = ColumnSpec(name, spec.type, description=spec.description)
        return replace(row, spec=plain, explicit=True, draft_lower=lower, draft_upper=upper)

    if field_name == "categories":
        if spec.type is not ColumnType.CATEGORICAL:
            raise DataError(f"column '{shown}': categories only apply to categorical columns")
        categories = parse_categories(value)
        if categories == spec.categories:
            return None
        kept = tuple((c, label) for c, label in spec.labels if c in categories)
        new_spec = ColumnSpec(name, spec.type, categories=categories, labels=kept,
                              description=spec.description)  # raises on repeats
        return replace(row, spec=new_spec, explicit=True)

    if field_name == "max_rows":  # an identifier's declared maximum of rows per person
        text = str(value).strip()
        try:
            k = int(text) if text else None
        except ValueError:
            raise DataError(f"column '{shown}': the rows per person must be a whole number, "
                            f"not {text!r}") from None
        if k == spec.max_rows:
            return None
        return replace(row, spec=replace(spec, max_rows=k), explicit=True)  # raises if < 1

    if field_name == "labels":
        if spec.type is not ColumnType.CATEGORICAL or not spec.categories:
            raise DataError(f"column '{shown}': declare its categories before labelling them")
        new_spec = replace(spec, labels=tuple(dict(value).items()))  # raises if ambiguous
        if new_spec.labels == spec.labels:
            return None
        return replace(row, spec=new_spec, explicit=True)

    raise ValueError(f"unknown field {field_name!r}")


def _parse_type(value: Any, column: str) -> ColumnType:
    if isinstance(value, ColumnType):
        return value
    text = str(value).strip().lower()
    for kind, label in TYPE_LABELS.items():
        if text == label:
            return kind
    return ColumnType.parse(text, column)


def describe_row(row: Row) -> str:
    """What a column declares, for messages: "bounds 0 – 120", "no categories", …

    Parameters
    ----------
    row : Row

    Returns
    -------
    str
    """
    spec = row.spec
    if spec.type is ColumnType.NUMERIC:
        return f"bounds {spec.domain_text()}" if spec.bounds else "no bounds"
    if spec.type is ColumnType.CATEGORICAL:
        if spec.labels:
            return f"categories {format_labels(spec.labels, spec.categories)}"
        return f"categories {spec.domain_text()}" if spec.categories else "no categories"
    return spec.type.label


# --- guidance for bounds (by name and domain knowledge only) -------------------------------

#: (pattern on the column name, lower, upper, reason) — public facts about measurements.
BOUNDS_GUIDANCE: tuple[tuple[str, float, float, str], ...] = (
    (r"(^|_)age($|_)|years?_old", 0, 120, "human ages lie between 0 and 120"),
    (r"per_?week|weekly_hours|hours_week", 0, 168, "a week has 168 hours"),
    (r"per_?day|daily_hours|hours_day", 0, 24, "a day has 24 hours"),
    (r"percent|pct|percentage", 0, 100, "a percentage lies between 0 and 100"),
    (r"proportion|fraction|probability|(^|_)prob($|_)|(^|_)share($|_)", 0, 1,
     "a proportion lies between 0 and 1"),
    (r"(^|_)gpa($|_)", 0, 4, "grade point averages are on a 0–4 scale (check your institution's)"),
    (r"(^|_)bmi($|_)", 12, 60, "body-mass index outside 12–60 kg/m² is clinically implausible"),
    (r"systolic", 70, 250, "systolic blood pressure is measured within 70–250 mmHg"),
    (r"diastolic", 40, 150, "diastolic blood pressure is measured within 40–150 mmHg"),
    (r"(^|_)month($|_)", 1, 12, "months are numbered 1 to 12"),
    (r"(^|_)(hour|hour_of_day)($|_)", 0, 23, "hours of the day run from 0 to 23"),
    (r"likert|rating|stars", 1, 5, "a five-point rating scale runs from 1 to 5 (check yours)"),
)


def suggest_bounds(column: str) -> tuple[float, float, str] | None:
    """A public range suggested by the column's *name* (never its values), if any.

    Parameters
    ----------
    column : str
        The column's name.

    Returns
    -------
    tuple or None
        ``(lower, upper, reason)`` from :data:`BOUNDS_GUIDANCE`, or None.
    """
    name = column.strip().lower().replace(" ", "_").replace("-", "_")
    for pattern, lower, upper, reason in BOUNDS_GUIDANCE:
        if re.search(pattern, name):
            return float(lower), float(upper), reason
    return None


def command_text(before: Row, field_name: str, value: Any) -> str:
    """The undo stack's text (shown in the Undo button's tooltip): names elided.

    Parameters
    ----------
    before : Row
        The row edited.
    field_name : str
    value : object
        As typed.

    Returns
    -------
    str
        E.g. "Set bounds of 'age' to 0 – 120".
    """
    name = elide_name(before.spec.name, PHRASE_CHARS)
    if field_name == "type":
        return f"Set type of '{name}' to {_parse_type(value, before.spec.name).label}"
    if field_name == "bounds":
        lower, upper = (str(v).strip() for v in value)
        if not lower and not upper:
            return f"Clear bounds of '{name}'"
        return f"Set bounds of '{name}' to {lower or '?'} – {upper or '?'}"
    if field_name in ("lower", "upper"):
        text = str(value).strip()
        return f"Set {field_name} bound of '{name}' to {text}" if text else (
            f"Clear {field_name} bound of '{name}'")
    if field_name == "labels":
        return f"Label values of '{name}'"
    return f"Set categories of '{name}'"
