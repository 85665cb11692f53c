"""The model card of a released trained model: Markdown, and the same as HTML for the report.

A model card (Mitchell et al. 2019) says what a model is for and what it is not for. This
one is written from the release's public fields only (:mod:`~dpstudio.export.train_public`):
the data it was trained on (by name, fingerprint and declaration), the declared bounds,
the method and its noise, the trust model and what it trusts, ε and δ and what they mean,
and the intended use and limits.

Its accuracy section is honest about one decision: held-out metrics are read off private
rows without noise, so publishing them would be a release the ledger does not charge;
they are not published, and the card says so (with how the analyst sees them privately).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from dpstudio.export.report_words import odds_factor

__all__ = ["METRICS_SENTENCE", "METHOD_WORDS", "model_card", "model_card_html"]

#: Why the card (and every public file) shows no accuracy.
METRICS_SENTENCE = (
    "Not published. Accuracy, AUC or RMSE measured on held-out rows of this dataset are "
    "computed from private records without noise: publishing them would be a second "
    "release that this release's ε and δ do not cover. The same holds for a simulation's "
    "spread on these rows. The analyst sees them privately (`dpstudio train … --simulate "
    "SEED --runs R`, or the application's Models view); judge the model's utility on "
    "public or separately released data.")

METHOD_WORDS = {
    "output": "output perturbation: the regularized minimizer is computed exactly, then "
              "lattice noise calibrated to its sensitivity 2/(nλ) is added to the "
              "coefficients (Chaudhuri, Monteleoni & Sarwate 2011)",
    "objective": "objective perturbation: a random linear term is added to the regularized "
                 "objective before it is minimized (Chaudhuri, Monteleoni & Sarwate 2011; "
                 "Kifer, Smith & Thakurta 2012 for δ > 0)",
    "dpsgd": "DP-SGD: each step samples records by Poisson sampling at rate q, clips each "
             "record's gradient to norm C and adds Gaussian noise of multiplier σ to their "
             "sum (Abadi et al. 2016); ε is the accountant's for the (q, σ, T) run",
}

_MODEL_WORDS = {"logistic": "L2-regularized logistic regression (a yes/no classifier)",
                "linear": "ridge (L2-regularized linear) regression",
                "mlp": "a one-hidden-layer perceptron (tanh) classifying yes/no"}



def _f(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}" if math.isfinite(x) else "—"
    return str(x)


def _bounds_rows(pub: Mapping[str, Any]) -> list[str]:
    rows = ["| feature | declared | used as |", "|---|---|---|"]
    cats = pub.get("feature_categories") or {}
    yes_no = set(pub.get("yes_no_features") or ())
    for f in pub["features"]:
        if f in cats:
            rows.append(f"| {f} | categories: {', '.join(cats[f])} | one 0/1 indicator per "
                        "category |")
        elif f in yes_no:
            rows.append(f"| {f} | yes/no | one 0/1 indicator (yes) |")
        else:
            lo, hi = pub["feature_bounds"][f]
            rows.append(f"| {f} | [{_f(float(lo))}, {_f(float(hi))}] | mapped to [−1, 1] by "
                        "its bounds; values outside are clipped |")
    return rows


def _plan_lines(pub: Mapping[str, Any]) -> list[str]:
    plan = pub.get("plan") or {}
    words = {"noise_multiplier": "noise multiplier σ", "sample_rate": "Poisson rate q",
             "steps": "steps T", "clip": "clipping norm C", "learning_rate": "learning rate η",
             "noise_family": "noise family", "noise_scale": "noise scale per coefficient",
             "sensitivity_l2": "ℓ₂ sensitivity", "rounds": "rounds R",
             "local_steps": "local steps E", "fraction": "fraction of sites per round",
             "family": "objective noise", "epsilon_prime": "ε′", "sigma_b": "σ of b",
             "regularization_added": "regularization added Δ", "grid": "lattice step"}
    out = [f"- λ (regularization): {_f(pub.get('lambda'))}"]
    if pub.get("hidden"):
        out.append(f"- hidden width H: {pub['hidden']} (activation {pub.get('activation')})")
    for key, word in words.items():
        if plan.get(key) is not None:
            out.append(f"- {word}: {_f(plan[key])}")
    if plan.get("per_round"):
        e, d = plan["per_round"]
        out.append(f"- one round: ε = {_f(float(e))}, δ = {_f(float(d))}")
    return out


def model_card(pub: Mapping[str, Any], *, release_id: int, created_at: str, version: str,
               dataset_name: str, fingerprint: str, files: Sequence[str] = ()) -> str:
    """The model card of a released trained model, as Markdown.

    Parameters
    ----------
    pub : mapping
        The release's public fields (:func:`~dpstudio.export.train_public.train_public`).
    release_id : int
        The release's number in the project.
    created_at : str
        When it was released (UTC).
    version : str
        The DP Studio version.
    dataset_name, fingerprint : str
        The dataset's name and SHA-256.
    files : sequence of str
        The release's other files.

    Returns
    -------
    str
        Markdown: model, data, declared bounds, method, trust model, privacy, accuracy,
        intended use and limits, files.
    """
    eps, delta = float(pub["epsilon"]), float(pub["delta"])
    label, model, method = pub["label"], pub["model"], pub["method"]
    variant = pub.get("fed_variant") or "none"
    # A federated variant is described by what it trusts (the engine's sentence, below).
    how = (METHOD_WORDS.get(method, method) if variant == "none" else
           f"federated averaging of DP-SGD updates (the {variant} variant)")
    relation = ("replacing one record with another (n public)" if pub["relation"] == "replace"
                else "adding or removing one record")
    n = pub.get("n")
    rows = (f"{n} rows trained on (public under replace-one neighbours)" if n is not None
            else "the number of rows is not published (an add/remove guarantee keeps it "
                 "private)")
    split = pub.get("split") or {}
    out = [
        f"# Model card: {model} model of {label!r} (DP Studio release #{release_id})", "",
        "## Model", "",
        f"- {_MODEL_WORDS.get(model, model)}, predicting **{label}**"
        + (f" (declared range [{_f(float(pub['label_bounds'][0]))}, "
           f"{_f(float(pub['label_bounds'][1]))}])" if pub.get("label_bounds") else
           " (declared yes/no)"),
        f"- trained by {how}",
        f"- released {created_at} by DP Studio {version}; randomness: {pub.get('source')}",
        "", "## Data", "",
        f"- dataset **{dataset_name}**, SHA-256 `{fingerprint}`",
        f"- {rows}; a share of {_f(float(split.get('test_fraction', 0.25)))} of the rows "
        f"(split seed {split.get('split_seed', 0)}) was held out and not trained on",
        "- features and their declarations (from the dataset's declared schema, never read "
        "off the data); a missing number is set to the middle of its bounds:", "",
        *_bounds_rows(pub), "",
        "## Method", "", *_plan_lines(pub), "",
        "## Trust model", "",
        f"- {pub.get('trusts')}",
        "", "## Privacy guarantee", "",
        f"- ε = {_f(eps)}, δ = {_f(delta)} ({pub.get('accountant')} accounting), for "
        f"neighbouring datasets that differ by {relation}.",
        f"- Whatever an attacker knows, seeing this model changes the odds that any one "
        f"person's record was used by a factor of at most {odds_factor(eps)} (e^ε)"
        + (f", except with probability δ = {_f(delta)}." if delta else "."),
        "- Charged to the dataset's budget in the project's ledger; the noise was drawn "
        "from the operating system's cryptographic generator.",
        "", "## Accuracy", "", METRICS_SENTENCE, "",
        "## Intended use and limits", "",
        "- For predictions on records like the declared ones: inputs are clipped to the "
        "declared bounds, and categories outside the declared ones count as none of them.",
        "- Differential privacy protects each person in the training data; it does not "
        "hide what the data say about groups, and it makes the model noisier than a "
        "non-private one.",
        "- Not validated for decisions about individuals: check its utility on data you may "
        "use before relying on it.",
    ]
    if files:
        out += ["", "## Files", "", *(f"- {name}" for name in files)]
    return "\n".join(out) + "\n"


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", text)


def model_card_html(markdown: str) -> str:
    """The card's Markdown as HTML (headings, lists, tables, paragraphs: what it uses).

    Parameters
    ----------
    markdown : str
        From :func:`model_card`.

    Returns
    -------
    str
        An HTML fragment, every text escaped.
    """
    out: list[str] = []
    table: list[list[str]] = []
    in_list = False

    def flush() -> None:
        nonlocal in_list
        if in_list:
            out.append("</ul>")
            in_list = False
        if table:
            head, *body = table
            out.append("<table><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head)
                       + "</tr>" + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>"
                                                            for c in r) + "</tr>"
                                           for r in body) + "</table>")
            table.clear()

    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= {"-"} for c in cells):
                table.append(cells)
            continue
        if line.startswith("- "):
            if not in_list:
                flush()
                out.append("<ul>")
                in_list = True
            out.append(f"<li>{_inline(line[2:])}</li>")
            continue
        flush()
        if line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")) + 1, 4)
            out.append(f"<h{level}>{_inline(line.lstrip('#').strip())}</h{level}>")
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
    flush()
    return "\n".join(out)
