"""What a release's result dialog says was released, by kind of release: one statistic
(its value and interval), a histogram (a table of counts), a model (what was fitted, by
which method, and how many parameters) or a plan (a table of its statistics).

Read from the ledger's record alone (its ``query`` and public ``result``), so the result
dialog says it itself for any release — made from the Analysis, Models or Plan tab —
instead of each tab rewriting its lines after it opened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

from dpstudio.analysis.request import MODEL_QUERIES
from dpstudio.ui.texts import QUERY_LABELS

__all__ = ["DoneText", "charge_number", "done_text", "released"]

#: A training run's ledger query (the Models tab's releases).
TRAIN_QUERY = "train"
#: A release plan's ledger query (several statistics, one charge).
PLAN_QUERY = "plan"
#: How a plan split its ε, in words.
_SPLITS = {"weights": "ε split by weights", "accuracy": "ε split by accuracy targets"}


def value_text(v: Any) -> str:
    """A released number for reading (plain text): 1,234.57, 12,345,678; an integer or
    a non-number as is."""
    if isinstance(v, float):
        return f"{v:,.6g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def charge_number(x: Any) -> str:
    """An ε or δ for reading: 0, or four significant digits (1e-05, 0.2004)."""
    x = float(x)
    return "0" if x == 0 else f"{x:.4g}"


@dataclass(frozen=True)
class DoneText:
    """The dialog's lines for one release.

    Attributes
    ----------
    header : str
        Rich text: which release, of what, and its charge (data escaped).
    value : str
        Rich text: what was released, in a line.
    rows : list of (str, str, str)
        A table's rows (what, released, interval), plain text; empty for a single value.
    interval : str
        The table's interval column title ("95% interval").
    """

    header: str
    value: str
    rows: list[tuple[str, str, str]] = field(default_factory=list)
    interval: str = "95% interval"


def done_text(public: dict[str, Any], epsilon: Any) -> str:
    """What the result dialog says a model release released (rich text, one line).

    Parameters
    ----------
    public : dict
        The release's public fields (the ledger's result).
    epsilon : float or Decimal
        The ε charged.

    Returns
    -------
    str
    """
    model = public.get("model") or "model"
    coefs = public.get("coefficients") or []
    if coefs:
        held = f"{len(coefs)} coefficients"
    elif public.get("weights_shape"):
        held = f"weights {public['weights_shape']}"
    else:
        held = "its parameters"
    return (f"Released model: <b>{escape(str(model))} by "
            f"{escape(str(public.get('method', '?')))}</b>, {escape(held)} at "
            f"ε = {float(epsilon):.6g} (held-out metrics are not published)")


def _interval(lo: Any, hi: Any) -> str:
    return "" if lo is None or hi is None else f"{value_text(lo)} – {value_text(hi)}"


def _level(confidence: Any) -> str:
    try:
        return f"{float(confidence):.0%} interval"
    except (TypeError, ValueError):
        return "interval"


def _plan_rows(stats: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """One row per statistic; a grouped one (its value a dict), one row per group."""
    rows = []
    for s in stats:
        label = str(s.get("label") or f"{s.get('query', '?')} of {s.get('column', '?')}")
        value = s.get("value")
        if isinstance(value, dict):
            lows, highs = s.get("ci_low") or {}, s.get("ci_high") or {}
            rows += [(f"{label} — {key}", value_text(v),
                      _interval(lows.get(key), highs.get(key))) for key, v in value.items()]
        else:
            rows.append((label, value_text(value), _interval(s.get("ci_low"),
                                                             s.get("ci_high"))))
    return rows


def released(record: Any) -> DoneText:
    """The result dialog's lines for the release ``record`` (a ledger record).

    Parameters
    ----------
    record : ReleaseRecord
        Read for ``id``, ``query``, ``column``, ``mechanism``, ``epsilon``, ``delta`` and
        its public ``result``.

    Returns
    -------
    DoneText
    """
    r = record.result or {}
    charge = f"ε = {charge_number(record.epsilon)}, δ = {charge_number(record.delta)}"
    column = escape(str(record.column))
    if record.query == PLAN_QUERY:
        stats = list(r.get("statistics") or [])
        plan = r.get("plan") or {}
        k = len(stats)
        header = (f"<b>Release #{record.id}</b>: a plan of {k} "
                  f"statistic{'s' if k != 1 else ''} of <b>{column}</b> "
                  f"(one charge: {charge})")
        method = str(plan.get("method", "?"))
        split = _SPLITS.get(method, f"split: {method}")
        value = f"Released plan: <b>{k} statistic{'s' if k != 1 else ''}</b>, {escape(split)}"
        level = plan.get("confidence", stats[0].get("confidence") if stats else 0.95)
        return DoneText(header, value, _plan_rows(stats), _level(level))
    model = record.query == TRAIN_QUERY or record.query in MODEL_QUERIES
    what = "a model" if model else QUERY_LABELS.get(record.query, record.query)
    header = (f"<b>Release #{record.id}</b>: {escape(str(what))} of <b>{column}</b> "
              f"({escape(str(record.mechanism))}, {charge})")
    if model:  # no one value: what was fitted, by which method, how many parameters
        return DoneText(header, done_text(r, record.epsilon))
    value = r.get("value")
    level = _level(r.get("confidence", 0.95))
    if isinstance(value, dict):
        lows, highs = r.get("ci_low") or {}, r.get("ci_high") or {}
        rows = [(str(label), value_text(v), _interval(lows.get(label), highs.get(label)))
                for label, v in value.items()]
        return DoneText(header, f"{len(value)} released counts", rows, level)
    text = f"Released value: <b>{escape(value_text(value))}</b>"
    if r.get("ci_low") is not None:
        text += f" &nbsp;({level} {escape(_interval(r['ci_low'], r.get('ci_high')))})"
    return DoneText(header, text)
