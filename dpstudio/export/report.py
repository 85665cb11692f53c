"""The stakeholder report: HTML and PDF, rendered without a browser.

The page says what was released (values and error bars), the privacy guarantee in plain
language with the trade-off curve of the best possible attacker, how the error would
change with ε, and the dataset's budget history. It is filled from
``dpstudio/resources/templates/report.html`` (a :class:`string.Template`), with the plots drawn by
:mod:`dpstudio.export.plots`. The HTML file embeds its images (``data:`` URIs) so it is
one self-contained file; the PDF is the same HTML laid out by QTextDocument and printed
with QPdfWriter. Everything shown is public: the released output, the declaration and
the ledger — never raw data, never the analyst-only count of clamped values.

Two copies are drawn from one :class:`ReportInput`. The stakeholder copy (``analyst`` is
None) is the one a release writes. The analyst's copy (``analyst`` set to the figures
:func:`~dpstudio.export.report_analyst.measure_clamping` reads off the data at release
time) adds, for the analyst's eyes only, the number of records and the error as bias +
noise when the declared bounds clamp values ("84% of values are outside 18–30: the mean is
biased; widen the bounds"), in a banner-marked page that must not be published.

Every figure carries a caption (dataset, column, statistic, mechanism, ε), drawn into the
image and repeated under it; the guarantee says what ε means in odds (e^ε,
:mod:`~dpstudio.export.report_words`), and the page states n and the clamping note.

What the report shows is computed without Qt elsewhere: the trade-off figure's first curve
(the engine's own, :mod:`~dpstudio.export.report_curves`) and the error-against-ε series
(:mod:`~dpstudio.export.utility_series`). This module holds the wording, the tables and
the rendering; :data:`_READINGS` says which pieces each shape of result uses.
"""

from __future__ import annotations

import base64
import html
import math
import string
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QUrl
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPdfWriter, QTextDocument

from dpstudio.engine.queries import QuerySpec, missing_statement
from dpstudio.engine.registry import REGISTRY
from dpstudio.engine.tradeoff import alpha_grid, epsilon_delta_tradeoff
from dpstudio.export._qt import ensure_gui_application, png_bytes, quiet_qt
from dpstudio.export.errors import ExportError
from dpstudio.export.manifest_contributions import contributions_sentence
from dpstudio.export.plots import budget_image, error_bar_image, tradeoff_image, utility_image
from dpstudio.export.report_analyst import AnalystFigures, measure_clamping
from dpstudio.export.report_curves import (
    local_first_curve,
    local_tradeoff_caption,
    local_tradeoff_curve,
    own_first_curve,
    own_tradeoff_caption,
)
from dpstudio.export.report_input import ReportInput, is_model
from dpstudio.export.report_protocol import (
    PROTOCOL_CURATOR,
    protocol_caption,
    protocol_guarantee,
    protocol_rows,
    protocol_series,
)
from dpstudio.export.report_sections import (
    FIGURE_TITLES,
    analyst_banner,
    analyst_section,
    bias_causes,
    clamping_bias,
    figure_captions,
    footer,
)
from dpstudio.export.report_words import clamping_note, figure_facts, n_sentence, odds_sentence
from dpstudio.export.tables import coefficient_noise_scales
from dpstudio.export.utility_series import (
    UtilitySeries,
    local_utility_series,
    model_utility_series,
    utility_series,
)

# ReportInput and utility_series are re-exported: callers import them from here.
__all__ = ["FIGURE_TITLES", "AnalystFigures", "ReportInput", "analyst_copy", "measure_clamping",
           "render_report", "report_images", "template_path", "utility_series"]

TEMPLATE_NAME = "report.html"

def template_path() -> Path:
    """The report's HTML template.

    Returns
    -------
    pathlib.Path
        ``templates/report.html`` in the package's data (:mod:`dpstudio.resources`); if
        a copy was installed without it, :func:`load_template` says so.
    """
    from dpstudio.resources import resource_path  # package data, wherever it is installed

    return resource_path("templates", TEMPLATE_NAME)


def load_template() -> string.Template:
    """Read the report's HTML template.

    Returns
    -------
    string.Template
        With ``$name`` placeholders for the title, tables, captions and image sources.

    Raises
    ------
    ExportError
        If the template file cannot be read.
    """
    path = template_path()
    try:
        return string.Template(path.read_text(encoding="utf-8"))
    except OSError:
        raise ExportError(f"the report template is missing (expected {path}); the "
                          "installation is incomplete: reinstall DP Studio") from None


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.6g}" if math.isfinite(x) else "—"
    return str(x)


def report_images(inp: ReportInput) -> dict[str, QImage]:
    """Draw the report's four figures (QtGui only: no widgets, no display).

    Parameters
    ----------
    inp : ReportInput
        The release and its dataset's history (with ``analyst`` figures, the analyst's
        copy: the utility figure then shows the error as bias + noise).

    Returns
    -------
    dict of str to QImage
        ``errorbars`` (released values and intervals), ``tradeoff`` (the first curve,
        :mod:`~dpstudio.export.report_curves`, then the (ε, δ) bound of all releases when
        there are several), ``utility`` (:mod:`~dpstudio.export.utility_series`) and
        ``budget`` (ε per release against the dataset's budget). Each carries the
        release's caption (:func:`~dpstudio.export.report_words.figure_facts`), drawn
        under its legend and stored as the PNG's ``Description``.

    Raises
    ------
    ExportError
        For a shape of result that has no report.
    """
    ensure_gui_application()
    pub, spec = inp.public, inp.spec
    facts = figure_facts(inp)
    with quiet_qt():
        if is_model(pub):
            labels = list(pub["value"])
            values = [pub["value"][k] for k in labels]
            scales = coefficient_noise_scales(pub)
            err = error_bar_image(labels, values, [v - s for v, s in zip(values, scales,
                                                                           strict=True)],
                                  [v + s for v, s in zip(values, scales, strict=True)],
                                  f"Released coefficients (± noise scale) for "
                                  f"{pub.get('column')}", "coefficient (log-odds)",
                                  caption=facts)
        elif pub["query"] == "histogram":
            labels = list(pub["value"])
            err = error_bar_image(labels, [pub["value"][k] for k in labels],
                                  [pub["ci_low"][k] for k in labels],
                                  [pub["ci_high"][k] for k in labels],
                                  f"Released histogram of {pub.get('column')}", "count",
                                  caption=facts)
        else:
            title = (f"Released {pub['query']}" if pub.get("ci_low") is None else
                     f"Released {pub['query']} with its {spec.confidence:.0%} interval")
            err = error_bar_image([f"{pub['query']} of {pub.get('column')}"], [pub["value"]],
                                  [pub.get("ci_low")], [pub.get("ci_high")], title,
                                  pub["query"], caption=facts)
        a = alpha_grid(400)
        spent_e, spent_d = _spent(inp)
        spent_d = min(spent_d, 1.0 - 1e-12)
        reading = _reading(inp)
        label, beta = reading.first_curve(inp, a)
        curves = [(label, a, beta)]
        if len(inp.history) > 1:
            curves.append((f"all {len(inp.history)} releases: ε = {spent_e:g}, "
                           f"δ = {spent_d:g}", a, epsilon_delta_tradeoff(spent_e, spent_d,
                                                                         a).beta))
        trade = tradeoff_image(curves, caption=facts)
        util = _utility_figure(inp, reading.series(spec, pub), facts)
        budget = budget_image([h["epsilon"] for h in inp.history],
                              ["pending" if h["status"] == "this release" else h["status"]
                               for h in inp.history], inp.budget_epsilon, caption=facts)
    return {"errorbars": err, "tradeoff": trade, "utility": util, "budget": budget}


def _utility_figure(inp: ReportInput, series: UtilitySeries, caption: str) -> QImage:
    """Error against ε: the noise alone, or (analyst's copy, values clamped) bias + noise
    with the noise alone dashed beside it."""
    bias = clamping_bias(inp)
    title = FIGURE_TITLES["utility"]
    if bias is None:
        return utility_image(series.epsilon, series.error, float(inp.spec.epsilon),
                             series.at_release, series.ylabel, title, caption=caption)
    total = np.hypot(series.error, bias)
    return utility_image(series.epsilon, total, float(inp.spec.epsilon),
                         math.hypot(series.at_release, bias), "expected error √(bias² + noise²)",
                         title + " (analyst's copy: bias + noise)", caption=caption,
                         noise=series.error, label="bias + noise (measured on the data)")


def _delta_text(inp: ReportInput) -> str:
    return (" (δ = 0: the guarantee never fails)" if inp.delta == 0 else
            f", except with probability at most δ = {inp.delta:g}")


def _spent(inp: ReportInput) -> tuple[float, float]:
    """ε and δ of every release in the history added up (basic composition)."""
    return sum(h["epsilon"] for h in inp.history), sum(h["delta"] for h in inp.history)


def _report_guarantee(inp: ReportInput) -> str:
    """Randomized on each person's side: the guarantee is one report's."""
    exact_curve = local_tradeoff_curve(inp.spec, inp.epsilon, inp.delta,
                                       np.array([0.0, 1.0]))[1]
    text = (f"{inp.capability.title.capitalize()}: each person's record was randomized on "
            f"their side, before it was collected, with ε-local differential privacy, "
            f"ε = {inp.epsilon:g}{_delta_text(inp)}. Nobody — not even the collector — "
            "received a raw value: only the randomized reports (exported with this release) "
            "and the estimates computed from them. An attacker who sees a person's report "
            "and wants to tell what their value was (between any two values) cannot do "
            "better than the curve shown" + (" — the exact trade-off of this randomizer"
                                             if exact_curve else
                                             " — the (ε, δ) bound the randomizer satisfies")
            + ": if their test wrongly says \"yes\" to at most a fraction α of people, "
            "it must miss at least the fraction shown by the curve.")
    if len(inp.history) > 1:
        spent, spent_d = _spent(inp)
        text += (f" Counting all {len(inp.history)} releases from this dataset (basic "
                 f"composition), the combined guarantee is ε = {spent:g}, "
                 f"δ = {spent_d:g}: the second curve.")
    return _e(text)


def _curator_guarantee(inp: ReportInput, opening: str) -> str:
    """Noise added once by a trusted curator: ``opening`` says to what."""
    who = ("whether any one person's rows are in the data"
           if inp.public.get("contributions") else
           "whether any one person's record is in the data"
           if inp.spec.relation == "add-remove" else
           "what any one person's record says (between two values of their choice)")
    text = (opening
            + f"An attacker who wants to tell {who} cannot do better than the curve shown, "
            "whatever else they know and however they analyse the result: if their test "
            "wrongly says \"yes\" to at most a fraction α of people (false alarms), it must "
            "miss at least the fraction shown by the curve of the people it is looking for. "
            "The closer the curve is to the dashed diagonal, the closer the attacker is to "
            "guessing.")
    if len(inp.history) > 1:
        spent, spent_d = _spent(inp)
        text += (f" Counting all {len(inp.history)} releases from this dataset (every "
                 f"ε and δ added up: basic composition), the combined guarantee is ε = "
                 f"{spent:g}, δ = {spent_d:g}: the second curve.")
    return _e(text)


def _statistic_guarantee(inp: ReportInput) -> str:
    return _curator_guarantee(inp, f"This result is differentially private with "
                                   f"ε = {inp.epsilon:g}{_delta_text(inp)}. ")


def _model_guarantee(inp: ReportInput) -> str:
    pub = inp.public
    return _curator_guarantee(
        inp, f"This model is differentially private with ε = {inp.epsilon:g}"
             f"{_delta_text(inp)}: its coefficients were fitted on {pub['n']} records and then "
             f"randomized ({pub['noise_family']} noise), so replacing any one person's record "
             "— all of its values, label included — barely changes what is published. ")


def _value_table(pub: dict[str, Any], conf: float) -> str:
    if is_model(pub):
        rows = [f"<tr><td>{_e(k)}</td><td class='num'>{_num(v)}</td><td class='num'>± "
                f"{_num(s)}</td></tr>"
                for (k, v), s in zip(pub["value"].items(), coefficient_noise_scales(pub),
                                     strict=True)]
        return ("<tr><th>term</th><th>released coefficient</th><th>noise scale</th></tr>"
                + "\n".join(rows))
    head = (f"<tr><th>{'cell' if pub['query'] == 'histogram' else 'statistic'}</th>"
            f"<th>released value</th><th>{conf:.0%} interval</th></tr>")
    rows = []
    if pub["query"] == "histogram":
        for k, v in pub["value"].items():
            rows.append(f"<tr><td>{_e(k)}</td><td class='num'>{_num(v)}</td><td>["
                        f"{_num(pub['ci_low'][k])}, {_num(pub['ci_high'][k])}]</td></tr>")
    else:
        ci = ("—" if pub.get("ci_low") is None else
              f"[{_num(pub['ci_low'])}, {_num(pub['ci_high'])}]")
        rows.append(f"<tr><td>{_e(pub['query'])} of {_e(pub.get('column'))}</td>"
                    f"<td class='num'>{_num(pub['value'])}</td><td>{ci}</td></tr>")
    return head + "\n".join(rows)


def _history_table(inp: ReportInput) -> str:
    head = ("<tr><th>#</th><th>time (UTC)</th><th>release</th><th>mechanism</th>"
            "<th>ε</th><th>δ</th><th>cumulative ε</th><th>status</th></tr>")
    rows, cum = [], 0.0
    for h in inp.history:
        cum += h["epsilon"]
        rows.append(
            f"<tr><td>{_e(h['id'])}</td><td>{_e(h['time'])}</td><td>{_e(h['query'])} of "
            f"{_e(h['column'])}</td><td>{_e(h['mechanism'])}</td><td class='num'>"
            f"{h['epsilon']:g}</td><td class='num'>{h['delta']:g}</td><td class='num'>"
            f"{cum:.6g}</td><td>{_e(h['status'])}</td></tr>")
    return head + "\n".join(rows)


def _missing_text(spec: QuerySpec) -> str:
    """How a sum, mean or variance treated missing values (empty, NaN, ±inf), in words:
    the engine's public statement."""
    s = missing_statement(spec)
    return "" if s is None else f"{s['meaning']}; sensitivity {s['sensitivity_rule']}"


def _statistic_caption(inp: ReportInput) -> str:
    if inp.public.get("ci_low") is None:
        return "The exponential mechanism gives no interval in value units; see the notes."
    return (f"Each interval contains the value the noise was added to with probability at "
            f"least {inp.spec.confidence:g}"
            + (" (each cell on its own)" if inp.public["query"] == "histogram" else "") + ".")


def _estimate_caption(inp: ReportInput) -> str:
    return (f"Estimated from the randomized reports alone; each interval is a normal "
            f"{inp.spec.confidence:g} interval from the protocol's exact variance"
            + (" (each cell on its own)." if inp.public["query"] == "histogram" else "."))


def _model_caption(inp: ReportInput) -> str:
    return ("Coefficients on the log-odds scale: logit P(" + str(inp.spec.column) + " = yes) "
            "= (intercept) + Σ coefficient × feature, each feature clipped to its declared "
            "bounds. Noise scale: the noise added, carried to each coefficient's units "
            "(the error bars in the chart).")


Rows = tuple[tuple[str, str], ...]


def _statistic_rows(pub: dict[str, Any]) -> Rows:
    return (("sensitivity", _num(pub.get("sensitivity"))),
            ("noise scale", _num(pub.get("noise_scale"))))


def _estimate_rows(pub: dict[str, Any]) -> Rows:
    return (("reports", _num(pub.get("n"))),
            ("randomizer", ", ".join(f"{k} = {_num(v)}" for k, v in
                                     (pub.get("parameters") or {}).items())),
            ("bits per report", _num(pub.get("messages_bits"))))


def _model_rows(pub: dict[str, Any]) -> Rows:
    return (("records (n, public under replace-one)", _num(pub.get("n"))),
            ("sensitivity", f"ℓ1 {_num(pub.get('sensitivity_l1'))}, ℓ2 "
                            f"{_num(pub.get('sensitivity_l2'))} (normalized coefficients)"),
            ("noise", f"{pub.get('noise_family')}, scale {_num(pub.get('noise_scale'))} per "
                      f"coordinate, on a grid of {_num(pub.get('grid'))}"))


@dataclass(frozen=True)
class _Reading:
    """How the report reads one shape of result: who added the noise (method table), the
    utility series, the first trade-off curve and its caption, the guarantee paragraph,
    the values' caption and the method table's noise rows."""

    curator: str
    series: Callable[[QuerySpec, dict[str, Any]], UtilitySeries]
    first_curve: Callable[[ReportInput, np.ndarray], tuple[str, np.ndarray]]
    tradeoff_caption: Callable[[ReportInput], str]
    guarantee: Callable[[ReportInput], str]
    value_caption: Callable[[ReportInput], str]
    noise_rows: Callable[[dict[str, Any]], Rows]


_CURATOR = "a trusted curator adds noise to the statistic"

#: The report's pieces by how the result reads (:attr:`ReportInput.shape`).
_READINGS = {
    "statistic": _Reading(_CURATOR, utility_series, own_first_curve, own_tradeoff_caption,
                          _statistic_guarantee, _statistic_caption, _statistic_rows),
    "estimate": _Reading("each record was randomized on its owner's side before aggregation",
                         local_utility_series, local_first_curve, local_tradeoff_caption,
                         _report_guarantee, _estimate_caption, _estimate_rows),
    "model": _Reading(_CURATOR, model_utility_series, own_first_curve, own_tradeoff_caption,
                      _model_guarantee, _model_caption, _model_rows),
    # Shuffle and secure aggregation (estimates too, but no per-person report is seen).
    "protocol": _Reading(PROTOCOL_CURATOR, protocol_series, local_first_curve,
                         local_tradeoff_caption, protocol_guarantee, protocol_caption,
                         protocol_rows),
}


def _reading(inp: ReportInput) -> _Reading:
    from dpstudio.analysis.protocol_release import is_protocol

    try:
        return _READINGS["protocol" if is_protocol(inp.trust_model) and not is_model(
            inp.public) else inp.shape]
    except KeyError:
        raise ExportError(f"there is no report for a {inp.shape} result") from None


def _method_table(inp: ReportInput) -> str:
    spec, pub = inp.spec, inp.public
    info = REGISTRY.get(spec.mechanism)
    model = is_model(pub)
    domain = ("feature bounds " + ", ".join(f"{f} [{pub['bounds'][f][0]:g}, "
                                            f"{pub['bounds'][f][1]:g}]"
                                            for f in pub["features"]) if model else
              "categories " + ", ".join(spec.categories) if spec.categories is not None else
              f"bounds [{spec.bounds[0]:g}, {spec.bounds[1]:g}]" if spec.bounds is not None
              else "—")
    if spec.bins is not None and spec.categories is None:
        domain += f", {spec.bins} bins"
    params = info.resolve(spec.mechanism_params())
    reading = _reading(inp)
    rows = [
        ("dataset", f"{inp.dataset_name} (SHA-256 {inp.fingerprint})"),
        ("trust model", f"{inp.trust_model}: {reading.curator}"),
        ("statistic", f"logistic regression of {spec.column} on "
         f"{', '.join(pub['features'])}" if model else f"{spec.query} of {spec.column}"
         + (f" (q = {spec.quantile:g})" if spec.query == "quantile" else "")),
        ("declared domain", domain + " — declared, never read off the data"),
        ("neighbouring relation", pub.get("relation", spec.relation)),
        *((("contributions per person",
            contributions_sentence(pub["contributions"]["max_rows"])),)
          if pub.get("contributions") else ()),
        *((("missing values", _missing_text(spec)),)
          if "missing" in inp.capability.options and _missing_text(spec) else ()),
        ("mechanism", f"{info.label}: {info.description}"),
        ("parameters", ", ".join(f"{k} = {v}" for k, v in params.items())),
        *reading.noise_rows(pub),
        ("ε, δ charged", f"{inp.epsilon:g}, {inp.delta:g} ({inp.accountant} accountant)"),
        *(() if model else (("confidence level", f"{spec.confidence:g}"),)),
        ("randomness", str(pub.get("source", ""))),
        ("release", f"#{inp.release_id} ({inp.uid}), {inp.created_at}"),
        ("engine", f"dpstudio {inp.engine_version}"),
    ]
    return "\n".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)


def _fill(inp: ReportInput, sources: dict[str, str]) -> str:
    spec, pub = inp.spec, inp.public
    model = is_model(pub)
    reading = _reading(inp)
    series = reading.series(spec, pub)
    util_caption = series.caption
    if clamping_bias(inp) is not None:
        util_caption += (f" Analyst's copy: the solid line adds the {bias_causes(inp)} "
                         "measured on the data to the noise; the dashed line is the noise "
                         "alone.")
    notes = "".join(f"<p class='caption'>Note: {_e(n)}</p>" for n in pub.get("notes", []))
    left = inp.budget_epsilon - sum(h["epsilon"] for h in inp.history)
    left_d = inp.budget_delta - sum(h["delta"] for h in inp.history)
    note = clamping_note(inp)
    values = {
        "title": _e(f"Differentially private logistic regression of {spec.column}" if model
                    else f"Differentially private {spec.query} of {spec.column}"),
        "subtitle": _e(f"Release #{inp.release_id} from {inp.dataset_name}, "
                       f"{inp.created_at} (UTC) — DP Studio {inp.engine_version}"),
        "analyst_banner": analyst_banner(inp),
        "value_table": _value_table(pub, spec.confidence),
        "value_caption": _e(reading.value_caption(inp)),
        "n_text": _e(n_sentence(inp)),
        "clamping_note": f"<p class='caption'>{_e(note)}</p>" if note else "",
        "analyst_section": analyst_section(inp, float(series.at_release)),
        "guarantee": reading.guarantee(inp),
        "odds": _e(odds_sentence(inp)),
        "tradeoff_caption": _e(reading.tradeoff_caption(inp)),
        "utility_caption": _e(util_caption),
        "budget_caption": _e(
            f"Budget of this dataset: ε = {inp.budget_epsilon:g}, δ = {inp.budget_delta:g}; "
            f"left after this release: ε = {max(left, 0.0):.6g}, δ = {max(left_d, 0.0):.3g}. "
            "Aborted releases stay charged: their noise was drawn and may have been seen."),
        "history_table": _history_table(inp),
        "method_table": _method_table(inp),
        "notes": notes,
        "footer": _e(footer(inp)),
        **figure_captions(inp),
    }
    values.update(sources)
    try:
        return load_template().substitute(values)
    except (KeyError, ValueError) as exc:
        raise ExportError(f"the report template is invalid ({exc})") from None


def _pdf(doc_html: str, images: dict[str, QImage], title: str) -> bytes:
    doc = QTextDocument()
    for name, image in images.items():
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(f"plot-{name}.png"),
                        image)
    doc.setHtml(doc_html)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setTitle(title)
    writer.setCreator("DP Studio")
    writer.setResolution(150)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout.Unit.Millimeter)
    doc.print_(writer)
    del writer
    buf.close()
    out = bytes(data.data())
    if not out.startswith(b"%PDF"):
        raise ExportError("the PDF report could not be rendered")
    return out


def analyst_copy(inp: ReportInput, values: np.ndarray) -> ReportInput:
    """The analyst's copy of a report: ``inp`` with the figures measured on the data.

    Parameters
    ----------
    inp : ReportInput
        The stakeholder copy's input.
    values : numpy.ndarray
        The very column the release read, at release time.

    Returns
    -------
    ReportInput
        With ``analyst`` set (:func:`measure_clamping`); a model release is returned as
        is (its analyst-only utility is the model's, not a clamping bias).
    """
    if is_model(inp.public):
        return inp
    return replace(inp, analyst=measure_clamping(inp.spec, values, inp.trust_model))


def render_report(inp: ReportInput) -> tuple[bytes, bytes]:
    """Render the report: the stakeholder copy, or the analyst's copy when
    ``inp.analyst`` holds figures measured on the data.

    Parameters
    ----------
    inp : ReportInput
        The release, its declaration and its dataset's history (all public), and for the
        analyst's copy only, ``analyst`` (:func:`measure_clamping` at release time).

    Returns
    -------
    html : bytes
        One self-contained UTF-8 HTML page (images embedded as ``data:`` URIs).
    pdf : bytes
        The same page laid out by QTextDocument on A4.

    Raises
    ------
    ExportError
        If the template is missing or invalid, the shape of result has no report, or the
        PDF cannot be rendered.
    """
    ensure_gui_application()
    images = report_images(inp)
    with quiet_qt():
        pngs = {k: png_bytes(v) for k, v in images.items()}
        html_doc = _fill(inp, {f"{k}_src": "data:image/png;base64,"
                               + base64.b64encode(v).decode("ascii") for k, v in pngs.items()})
        pdf_doc = _pdf(_fill(inp, {f"{k}_src": f"plot-{k}.png" for k in images}), images,
                       f"DP Studio release #{inp.release_id}"
                       + (" — analyst's copy" if inp.analyst is not None else ""))
    return html_doc.encode("utf-8"), pdf_doc
