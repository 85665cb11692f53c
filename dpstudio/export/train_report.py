"""The stakeholder report of a released trained model: HTML and PDF.

What it shows is public: the guarantee in words, the privacy–utility curve, the trade-off
curve, the coefficients (or the MLP's layer shapes), the ledger of the dataset, and the
model card (:mod:`~dpstudio.export.model_card`).

The privacy–utility curve is **computed without data**: the noise the method needs at
each ε for this model's size (and n, where it is public), from the engine's calibrations
— the per-coefficient noise scale of output perturbation, the expected norm of objective
perturbation's random term, DP-SGD's noise multiplier σ for the (q, T) that ran. An
accuracy-against-ε curve would be read off private rows, which is exactly what this
release does not publish (see the model card).
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["render_train_report", "train_utility_series"]

#: ε multiples the curve is computed at (each DP-SGD point is one PLD calibration).
_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)


def train_utility_series(pub: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, float,
                                                            str, str]:
    """The noise a training method needs at each ε, for this model (no data).

    Parameters
    ----------
    pub : mapping
        The release's public fields (:func:`~dpstudio.export.train_public.train_public`).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, float, str, str)
        ε values, the noise at each (NaN where the method cannot run), the released ε's,
        the y-axis label and the caption.
    """
    eps0, delta = float(pub["epsilon"]), float(pub["delta"])
    eps = np.array([eps0 * f for f in _FACTORS])
    plan = pub.get("plan") or {}
    p = len(pub["design"]) + 1
    lam = float(pub["lambda"])
    method = pub["method"]

    def guard(fn):
        def value(e: float) -> float:
            try:
                return float(fn(e))
            except Exception:  # a condition the method cannot meet at this ε: no point
                return math.nan
        return value

    if pub.get("fed_variant") not in (None, "none") or method == "dpsgd":
        # ε of each σ (one accounting each), not σ of each ε (a bisection each).
        from dpstudio.engine.accounting.dpsgd import dpsgd_epsilon

        if method == "dpsgd" and pub.get("fed_variant") in (None, "none"):
            q, steps = float(plan["sample_rate"]), int(plan["steps"])
            sigma0 = float(plan["noise_multiplier"])
            caption = (f"DP-SGD's noise multiplier σ against the ε it gives for the same "
                       f"q = {q:g}, T = {steps} steps and δ = {delta:g} (PLD accountant). "
                       "Smaller ε: more noise on every step. Computed without data.")
        else:
            from dpstudio.engine.learning.dpsgd import plan_dpsgd

            q = float(plan.get("batch_rate") or 0.05)
            steps = int(plan.get("rounds", 1)) * int(plan.get("local_steps", 1))
            sigma0 = plan_dpsgd(p, q, steps, 1.0, delta, epsilon=eps0).noise_multiplier
            caption = (f"The noise multiplier σ the PLD accountant needs for R·E = {steps} "
                       f"subsampled Gaussian steps at rate q = {q:g} (δ = {delta:g}): "
                       "secure aggregation adds it once to the sum, the local and shuffle "
                       "variants at every site. Computed without data.")
        sigmas = [sigma0 * f for f in (2.0, 1.4, 1.0, 0.7, 0.5)]
        eps = np.array([eps0 if s == sigma0 else
                        dpsgd_epsilon(s, q, steps, delta, "pld").epsilon for s in sigmas])
        return eps, np.array(sigmas), eps0, "noise multiplier σ", caption
    if method == "output":
        from dpstudio.engine.learning import calibrate_output_perturbation

        n = int(pub["n"])
        fn = guard(lambda e: calibrate_output_perturbation(p, n, lam, e, delta).noise_scale)
        ylabel = f"noise scale ({plan.get('noise_family')})"
        caption = (f"Noise scale added to each normalized coefficient at each ε, for the "
                   f"same {n} records and λ = {lam:g}. Computed without data.")
    else:
        from dpstudio.engine.learning.objective_perturbation import (
            calibrate_objective_perturbation,
        )

        n = int(pub["n"])

        def norm(e: float) -> float:
            c = calibrate_objective_perturbation(p, n, lam, e, delta)
            return (c.sigma_b * math.sqrt(p)) if c.sigma_b is not None else p / c.beta
        fn = guard(norm)
        ylabel = "expected ‖b‖ of the random term"
        caption = (f"Expected norm of objective perturbation's random linear term at each ε "
                   f"(n = {n}, λ = {lam:g}); missing points: the method's conditions fail "
                   "there. Computed without data.")
    values = np.array([fn(float(e)) for e in eps])
    return eps, values, eps0, ylabel, caption


def _img(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _coefficient_table(pub: Mapping[str, Any]) -> str:
    rows = pub.get("coefficients")
    if not rows:
        shapes = pub.get("weights_shape") or {}
        return ("<p>The network's weights are in the .npz file: "
                + ", ".join(f"{k} {tuple(v)}" for k, v in shapes.items()) + ".</p>")
    body = "".join(f"<tr><td>{html.escape(str(r['feature']))}</td><td>{r['coefficient']:.6g}"
                   "</td></tr>" for r in rows)
    return f"<table><tr><th>feature</th><th>coefficient</th></tr>{body}</table>"


def _history(history: Sequence[Mapping[str, Any]]) -> str:
    body = "".join(f"<tr><td>#{h['id']}</td><td>{html.escape(str(h['query']))} of "
                   f"{html.escape(str(h['column']))}</td><td>{h['epsilon']:.6g}</td>"
                   f"<td>{h['delta']:.6g}</td><td>{html.escape(str(h['status']))}</td></tr>"
                   for h in history)
    return ("<table><tr><th>release</th><th>what</th><th>ε</th><th>δ</th><th>status</th>"
            f"</tr>{body}</table>")


def render_train_report(pub: Mapping[str, Any], card_html: str, *, release_id: int,
                        history: Sequence[Mapping[str, Any]], budget: tuple[float, float]
                        ) -> tuple[bytes, bytes]:
    """The stakeholder report of a trained model, HTML and PDF.

    Parameters
    ----------
    pub : mapping
        The release's public fields.
    card_html : str
        The model card as HTML (:func:`~dpstudio.export.model_card.model_card_html`).
    release_id : int
        The release's number.
    history : sequence of mapping
        The dataset's ledger (as the other reports take it).
    budget : (float, float)
        The dataset's budget (ε, δ).

    Returns
    -------
    (bytes, bytes)
        The self-contained HTML page and the same laid out as a PDF (A4).

    Raises
    ------
    ExportError
        If the PDF cannot be rendered.
    """
    from dpstudio.engine.tradeoff import alpha_grid, epsilon_delta_tradeoff
    from dpstudio.export._qt import ensure_gui_application, png_bytes, quiet_qt
    from dpstudio.export.plots import tradeoff_image, utility_image
    from dpstudio.export.report import _pdf

    ensure_gui_application()
    eps, values, eps0, ylabel, caption = train_utility_series(pub)
    chosen = float(values[list(eps).index(eps0)]) if eps0 in eps else math.nan
    a = alpha_grid(400)
    delta = float(pub["delta"])
    region = (f"this model: ε = {eps0:g}, δ = {delta:g} ((ε, δ) region: the accountant "
              "gives the guarantee, not the exact curve)")
    with quiet_qt():
        images = {
            "utility": utility_image(eps, values, eps0, chosen, ylabel,
                                     "Privacy–utility: the noise at each ε", caption=caption,
                                     label="noise needed"),
            "tradeoff": tradeoff_image([(region, a, epsilon_delta_tradeoff(
                eps0, min(delta, 1 - 1e-12), a).beta)], caption=(
                "No test of whether a person's record was used can do better than this "
                "curve: its type II error stays above it at every type I error.")),
        }
        pngs = {k: png_bytes(v) for k, v in images.items()}
    title = f"Differentially private {pub['model']} model of {pub['label']}"
    spent = sum(h["epsilon"] for h in history)

    def page(src: Mapping[str, str]) -> str:
        return (
            "<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;"
            "max-width:60em;margin:auto}table{border-collapse:collapse}td,th{border:1px "
            "solid #bbb;padding:2px 6px}img{max-width:100%}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>"
            f"<p>DP Studio release #{release_id}. This model is differentially private "
            f"with ε = {eps0:g} and δ = {delta:g}: {html.escape(str(pub.get('trusts')))} "
            f"The dataset's budget is ε = {budget[0]:g}, δ = {budget[1]:g}; its releases "
            f"so far add up to ε = {spent:g} (basic composition).</p>"
            f"<h2>Privacy–utility</h2><p><img src='{src['utility']}'></p>"
            f"<p>{html.escape(caption)}</p>"
            f"<h2>What an attacker can learn</h2><p><img src='{src['tradeoff']}'></p>"
            f"<h2>The model</h2>{_coefficient_table(pub)}"
            f"<h2>The dataset's releases</h2>{_history(history)}"
            f"<h2>Model card</h2>{card_html}</body></html>")

    html_doc = page({k: _img(v) for k, v in pngs.items()})
    with quiet_qt():
        pdf = _pdf(page({k: f"plot-{k}.png" for k in images}), images,
                   f"DP Studio release #{release_id}")
    return html_doc.encode("utf-8"), pdf
