"""The report's sentences that depend on the release: odds, n, the clamping note, captions.

Plain text (the report escapes it). No Qt here: :mod:`dpstudio.export.report` fills the
template with these, and :mod:`dpstudio.export.plots` draws the captions into the figures.

- :func:`odds_factor` and :func:`odds_sentence`: what ε means in odds — a release changes
  the odds of any conclusion about one person by at most e^ε.
- :func:`n_sentence`: the number of records, where it is public (local reports, models)
  and why it is not where it is not (a central statistic's count is itself protected).
- :func:`clamping_note`: what the declared bounds do to the data (public: a procedure),
  and :func:`analyst_error_rows`/:func:`clamping_warning` for the analyst's copy: the
  error as bias + noise, measured on the data, the bias split into clamping and missing
  values, and the application's own warning sentence
  (:func:`dpstudio.analysis.bias.clamping_warning`, called, never reworded).
- :func:`figure_facts`: the caption every figure carries (dataset, column, statistic,
  mechanism, ε).
"""

from __future__ import annotations

import math

from dpstudio.analysis.bias import MATERIAL_SHARE
from dpstudio.analysis.bias import clamping_warning as bias_warning
from dpstudio.engine.registry import REGISTRY
from dpstudio.export.report_analyst import BIASED_QUERIES, AnalystFigures, percent
from dpstudio.export.report_input import ReportInput, is_model

__all__ = [
    "analyst_error_rows",
    "clamping_note",
    "clamping_warning",
    "figure_facts",
    "n_sentence",
    "odds_factor",
    "odds_sentence",
    "statistic_name",
]

_LARGE = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))


def odds_factor(epsilon: float) -> str:
    """e^ε as a reader takes it in: "1.65", "2.72", "148", "22,000", "485 million".

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.

    Returns
    -------
    str
        Two decimals below 10, three significant digits up to a million, then words
        ("485 million"), and a power of ten beyond a thousand trillion.
    """
    x = math.exp(float(epsilon)) if epsilon < 700 else math.inf
    if x < 10:
        return f"{x:.2f}"
    if x < 1e6:
        return f"{float(f'{x:.3g}'):,.0f}" if x >= 100 else f"{x:.3g}"
    for size, word in _LARGE:
        if size <= x < 1000 * size:
            return f"{float(f'{x / size:.3g}'):g} {word}"
    if not math.isfinite(x):
        return f"10^{epsilon / math.log(10):.0f}"
    return f"10^{math.log10(x):.0f}"


def odds_sentence(inp: ReportInput) -> str:
    """What ε means in odds, for this release and, with several, all of them together.

    Parameters
    ----------
    inp : ReportInput

    Returns
    -------
    str
        "In odds: whatever anyone concludes about one person … changes the odds of any
        conclusion by at most ×1.65 (e^ε, ε = 0.5)…".
    """
    about = ("about one person's value" if inp.shape == "estimate" else
             "about one person (for instance, that they are in the data)")
    text = (f"In odds: this release changes the odds of any conclusion {about} by at most "
            f"×{odds_factor(inp.epsilon)} (that is e^ε, with ε = {inp.epsilon:g})")
    text += (", except with probability at most δ = " + f"{inp.delta:g}." if inp.delta > 0
             else ", whatever else is known.")
    if len(inp.history) > 1:
        spent = sum(h["epsilon"] for h in inp.history)
        text += (f" All {len(inp.history)} releases from this dataset together: at most "
                 f"×{odds_factor(spent)} (ε = {spent:g}).")
    return text


def statistic_name(inp: ReportInput) -> str:
    """The released statistic in words: "mean of age", "quantile (q = 0.9) of income"."""
    spec, pub = inp.spec, inp.public
    if is_model(pub):
        return (f"logistic regression of {spec.column} on "
                f"{', '.join(pub.get('features', []))}")
    q = f"quantile (q = {spec.quantile:g})" if spec.query == "quantile" else spec.query
    return f"{q} of {spec.column}"


def figure_facts(inp: ReportInput) -> str:
    """The caption every figure of the report carries.

    Parameters
    ----------
    inp : ReportInput

    Returns
    -------
    str
        "Dataset affairs.csv · column age · mean · Laplace mechanism · ε = 0.5 (δ = 0) ·
        release #2".
    """
    info = REGISTRY.get(inp.spec.mechanism)
    stat = ("logistic regression" if is_model(inp.public) else
            f"quantile (q = {inp.spec.quantile:g})" if inp.spec.query == "quantile"
            else inp.spec.query)
    delta = f", δ = {inp.delta:g}" if inp.delta > 0 else " (δ = 0)"
    return (f"Dataset {inp.dataset_name} · column {inp.spec.column} · {stat} · "
            f"{info.label} mechanism · ε = {inp.epsilon:g}{delta} · release #{inp.release_id}")


def n_sentence(inp: ReportInput) -> str:
    """The number of records, as far as this copy may state it.

    Parameters
    ----------
    inp : ReportInput
        With ``analyst`` figures, the analyst's copy: the exact count.

    Returns
    -------
    str
    """
    pub, a = inp.public, inp.analyst
    if a is not None:
        text = (f"n = {a.n:,} records used (analyst's copy: counted on the data), of "
                f"{a.rows:,} rows")
        if a.missing:
            treated = "imputed" if a.n == a.rows else "dropped"
            text += f"; {a.missing:,} without a usable value, {treated}"
        return text + "."
    if pub.get("n") is not None:
        what = "reports, one per person" if inp.shape == "estimate" else "records"
        return f"n = {int(pub['n']):,} {what} (public with this release)."
    if inp.spec.query == "count":
        return ("n, the number of records, is what this release estimates: the count "
                "above, with noise added.")
    return ("n, the number of records, is not published: the noise protects whether any "
            "one person is in the data, so the exact count is kept private too (the "
            f"{inp.spec.query} is computed from noisy parts).")


def clamping_note(inp: ReportInput) -> str:
    """What the declared bounds do to the data: a public statement of the procedure.

    Parameters
    ----------
    inp : ReportInput

    Returns
    -------
    str
        "" when no value is clamped by the procedure (counts, histograms, models).
    """
    spec = inp.spec
    if spec.bounds is None or is_model(inp.public) or spec.categories is not None:
        return ""
    lo, hi = spec.bounds
    q = spec.query
    if q in BIASED_QUERIES:
        return (f"Clamping: values outside the declared bounds {lo:g}–{hi:g} are clamped "
                f"to the nearest bound before the noise is added. The released {q} and its "
                f"interval describe the clamped data; when many values lie outside the "
                f"bounds, they differ from the raw data's {q}. How many do is not "
                "published.")
    if q in ("median", "quantile"):
        return (f"Clamping: the released {q} is chosen between the declared bounds "
                f"{lo:g}–{hi:g}; values outside them count as the nearest bound.")
    return ""


def clamping_warning(a: AnalystFigures, query: str, epsilon: float, noise: float) -> str:
    """The analyst's one-sentence warning: the application's sentence at the released ε.

    Parameters
    ----------
    a : AnalystFigures
        The figures measured on the data, with the bias's causes.
    query : str
        The released statistic.
    epsilon : float
        The released ε.
    noise : float
        The noise's standard deviation (standard error) at the released ε.

    Returns
    -------
    str
        The sentence of :func:`dpstudio.analysis.bias.clamping_warning` — the cause that
        dominates the bias, e.g. "84% of values are outside 18–30: the mean is biased;
        widen the bounds" or "6.2% of values are missing and imputed as the middle of the
        bounds (50,000): they bias the mean by +2,816; …" — ending with a full stop; for a
        statistic without a bias model (median, quantile, histogram) with values outside,
        that they count as the nearest bound; "" when there is nothing to warn of.
    """
    if a.causes is not None:
        # The application judges the bias material from the ε at which it reaches a tenth
        # of the noise; the report has one ε, so it is material from there or not at all.
        material = (math.isfinite(noise)
                    and abs(a.causes["bias"]) >= MATERIAL_SHARE * noise)
        at = {**a.causes, "material_from_epsilon": float(epsilon) if material else None}
        sentence = bias_warning(at, float(epsilon))
        return sentence + "." if sentence else ""
    if not a.outside or a.bounds is None or a.bias is not None:
        return ""
    lo, hi = a.bounds
    return (f"{percent(a.fraction_outside)} of values are outside {lo:g}–{hi:g}: they count "
            f"as the nearest bound; widen the bounds if the {query} should reflect them.")


def _filled(a: AnalystFigures) -> str:
    """How the missing values were filled in: "each sent as 50,000"."""
    return f"each sent as {a.causes['missing_value']:,.6g}"


def analyst_error_rows(inp: ReportInput, noise: float) -> list[tuple[str, str]]:
    """The analyst's copy's table: the error as bias + noise, measured on the data.

    Parameters
    ----------
    inp : ReportInput
        With ``analyst`` figures.
    noise : float
        The noise's standard deviation (standard error) at the released ε.

    Returns
    -------
    list of (str, str)
        Label and value, in the statistic's units.
    """
    a, q = inp.analyst, inp.spec.query
    if a is None:
        return []
    rows = [("records used (n)", f"{a.n:,} of {a.rows:,} rows")]
    if a.bounds is not None:
        rows.append(("values outside the declared bounds",
                     f"{a.outside:,} ({percent(a.fraction_outside)}) outside "
                     f"{a.bounds[0]:g}–{a.bounds[1]:g}, clamped to the nearest bound"))
    if a.bias is not None:
        units = "squared units of the column" if q == "variance" else "units of the column"
        rows += [
            (f"raw {q} (unclamped, never released)", f"{a.raw:.6g}"),
            (f"{'clamped and filled-in' if a.fills_missing else 'clamped'} {q} (what the "
             "noise was added to)", f"{a.clamped:.6g}"),
            ("bias from clamping", f"{a.clamping_bias:+.4g} ({units})"),
        ]
        if a.fills_missing:
            rows += [(f"bias from missing values ({_filled(a)})",
                      f"{a.missing_bias:+.4g} ({units})"),
                     ("bias (clamping + missing values)", f"{a.bias:+.4g} ({units})")]
        rows += [
            ("noise (standard error)", f"{noise:.4g}" if math.isfinite(noise) else "—"),
            ("expected error √(bias² + noise²)",
             f"{a.total_error(noise):.4g}" if math.isfinite(noise) else "—"),
        ]
    return rows
