"""The application's words and colours: trust models, glossary, query and metric labels.

One UI table of the trust models the analysis view offers (:data:`TRUST_MODELS`): each
one's colour and a paragraph on who is trusted with what. Their names for people and
their one-sentence tooltips are the engine's (:mod:`dpstudio.engine.trust_models`), so a
new trust model brings its label and tooltip with it and adds one row here.
"""

from __future__ import annotations

from dpstudio.analysis.choices import VIEW_TRUST_MODELS
from dpstudio.engine.registry import DELTA, EPSILON, Param
from dpstudio.engine.trust_models import trust_model

__all__ = [
    "GLOSSARY",
    "SHORT_MECHANISMS",
    "TRADEOFF_CAPTION",
    "UTILITY_CAPTION",
    "METRICS",
    "QUERY_LABELS",
    "QUERY_PARAMS",
    "TRUST_MODELS",
    "short_mechanism",
]

#: Trust model → (colour, who is trusted with what). Colours: Okabe–Ito, distinguishable
#: with the common colour-vision deficiencies.
_LOOK: dict[str, tuple[str, str]] = {
    "central": (
        "#0072B2",
        "A trusted curator holds everyone's raw data, computes the statistic and adds "
        "noise once, before publishing. People must trust the curator with their data; "
        "everyone else (the public, an attacker) sees only the noisy result. The "
        "like-for-like central line is the least noise a curator can add at a given ε and δ; "
        "the mechanism chosen here may add more noise.",
    ),
    "local": (
        "#D55E00",
        "Each person randomizes their own answer on their device before sending it, so "
        "nobody — not even the collector — is trusted with raw data. The price: every "
        "report carries its own noise, so errors grow by a factor of about √n compared "
        "with the central model.",
    ),
    "shuffle": (
        "#009E73",
        "People randomize their reports lightly; an anonymizing shuffler strips "
        "identities and mixes the messages, breaking the link between people and "
        "messages. Only the shuffler must be trusted not to reveal who sent what; the "
        "analyst's guarantee is much stronger than each report's.",
    ),
    "distributed": (
        "#CC79A7",
        "Secure aggregation: people add small noise shares to their values and encrypt "
        "(mask) them so that the server can only add them up. The server sees the noisy "
        "sum and nothing else; no single party sees anyone's raw value.",
    ),
}

#: Trust model → label, colour, explanation and one-line tooltip, in the view's order.
TRUST_MODELS: dict[str, dict[str, str]] = {
    name: {
        "label": trust_model(name).label,
        "colour": _LOOK[name][0],
        "explanation": _LOOK[name][1],
        "tooltip": trust_model(name).trusted,
    }
    for name in VIEW_TRUST_MODELS
}

#: One-sentence tooltips for the differential-privacy terms the view uses.
GLOSSARY = {
    # ε and δ are explained where they are declared, so the tooltip and --help agree.
    "epsilon": EPSILON.help,
    "delta": DELTA.help,
    "sensitivity": "Sensitivity: the most one person's record can change the statistic, "
                   "fixed by the declared bounds — never read from the data.",
    "relation": "Neighbouring relation: which datasets count as differing by one person — "
                "add-remove (one record more or fewer) or replace (one record's value "
                "changed).",
    "type1": "Type I error α: the chance an attacker wrongly claims that a person's record "
             "is the one in the data (a false alarm).",
    "type2": "Type II error β: the chance an attacker misses that a person's record is the "
             "one in the data (a missed detection).",
    "compositions": "Compositions k: how many such releases an attacker sees; privacy "
                    "degrades as releases add up.",
    "confidence": "Confidence: the probability with which each interval covers the true "
                  "value (the noise's randomness, not sampling).",
    "mechanism": "Mechanism: the randomized algorithm that turns the data into a private "
                 "release.",
    "trust": "Trust model: who is trusted with the raw data, which decides where the noise "
             "is added.",
    "query": "Query: the statistic to release about the selected column.",
    "metric": "Error measure of the privacy–utility plot.",
    "hide_true": "Hide true values: draw nothing computed from the raw data (for showing "
                 "the screen to others).",
    "gdp": "Gaussian differential privacy (μ-GDP): distinguishing neighbours is as hard as "
           "telling N(0, 1) from N(μ, 1).",
    "missing": "Missing values (empty, NaN, ±inf): dropping them is the default, but under "
               "replace a value may then appear where one was missing, so the sum uses the "
               "larger true sensitivity max(hi − lo, |lo|, |hi|) (add-remove: max(|lo|, "
               "|hi|) as before); imputing a declared constant inside the bounds counts "
               "every row, which under replace makes the number of rows n public, so the "
               "sensitivity is hi − lo and a mean is the noisy sum / n with the whole "
               "budget (under add-remove n stays a noisy count).",
}

QUERY_LABELS = {
    "count": "Count",
    "sum": "Sum",
    "mean": "Mean",
    "variance": "Variance",
    "median": "Median",
    "quantile": "Quantile",
    "histogram": "Histogram",
    "heavy_hitters": "Heavy hitters",
    "plan": "Release plan",  # several statistics, one ledger charge (ui/plan_view.py)
}

#: Parameters of the queries themselves, as registry Params so one form builder serves.
QUERY_PARAMS: dict[str, tuple[Param, ...]] = {
    "quantile": (Param("quantile", "float", 0.9, "Which quantile to release (0.5 is the "
                       "median).", low=0.0, high=1.0, label="quantile q"),),
    "histogram": (Param("bins", "int", 10, "Number of equal-width bins between the "
                        "declared bounds (numeric columns).", low=1, high=1000,
                        label="bins"),),
}

METRICS = {"rmse": "RMSE", "relative": "relative error", "tv": "total variation"}

#: The plain-language captions under the plots (always under the trade-off plot; presentation
#: mode shows them too).
TRADEOFF_CAPTION = ("An attacker who wants to tell whether Alice is in the data cannot do "
                    "better than this curve: the closer it hugs the diagonal, the safer she is.")
UTILITY_CAPTION = ("How far the published number is likely to be from the truth at each "
                   "privacy level ε: lower is more accurate, further left is more private.")

#: Mechanism → the short name legends show (the full label goes in the entry's tooltip).
SHORT_MECHANISMS = {
    "cloak": "Invisibility cloak",
    "blanket": "Privacy blanket",
    "secagg_gaussian": "SecAgg + discrete Gaussian",
    "skellam": "SecAgg + Skellam",
    "dp_erm_logistic": "DP logistic regression",
}


def short_mechanism(name: str, label: str, width: int = 26) -> str:
    """A mechanism's short name for a legend.

    Parameters
    ----------
    name : str
        The mechanism's registry name.
    label : str
        Its full label ("Invisibility cloak (multi-message)").
    width : int
        Most characters of a name not in :data:`SHORT_MECHANISMS`.

    Returns
    -------
    str
        The table's short name, else the label without its parenthesis, cut at a word
        boundary to ``width`` characters (an ellipsis says so).
    """
    if name in SHORT_MECHANISMS:
        return SHORT_MECHANISMS[name]
    text = label.split(" (")[0].strip() or label
    if len(text) <= width:
        return text
    cut = text[: width - 1].rsplit(" ", 1)[0].rstrip(" +,:;–-")
    return (cut or text[: width - 1]) + "…"
