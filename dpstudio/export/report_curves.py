"""The report's trade-off figure: its first curve, that curve's label, and the caption.

The first curve is the engine's own exact curve wherever the engine has one
(:func:`~dpstudio.engine.release_curve.release_tradeoff`): for a central release, every
noisy statistic of it composed ("this release (…)"); in the local model, one person's
report, its randomizer built as the release builds it (a K-ary randomized response counts
the "other or missing" cell). Elsewhere — model releases, selection mechanisms, other
randomizers — it is the (ε, δ) bound. The report never re-derives a curve. No Qt here:
:mod:`dpstudio.export.report` draws the curves.
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.release_curve import ReleaseCurve, release_tradeoff
from dpstudio.engine.tradeoff import epsilon_delta_tradeoff
from dpstudio.export.report_input import ReportInput, is_model

__all__ = [
    "local_first_curve",
    "local_tradeoff_caption",
    "local_tradeoff_curve",
    "own_first_curve",
    "own_tradeoff_caption",
    "release_curve",
]


def release_curve(inp: ReportInput, alpha: np.ndarray) -> ReleaseCurve | None:
    """The engine's trade-off curve of this release, or None where it has none.

    Parameters
    ----------
    inp : ReportInput
        The release (its spec and trust model).
    alpha : numpy.ndarray
        Type I errors at which to evaluate the curve.

    Returns
    -------
    ReleaseCurve or None
        All of the release's noisy statistics composed (one person's report in the local
        model); None for a model release or where the engine has no exact curve
        (selection mechanisms…): the report then draws the (ε, δ) bound.
    """
    if is_model(inp.public):
        return None
    curve = release_tradeoff(inp.spec, inp.trust_model, alpha=alpha)
    return curve if curve.available else None


def local_tradeoff_curve(spec: QuerySpec, epsilon: float, delta: float, alpha: np.ndarray
                         ) -> tuple[np.ndarray, bool]:
    """The trade-off curve of one person's report in the local model.

    Parameters
    ----------
    spec : QuerySpec
        The local release (randomizer, per-person ε, declared categories or bounds).
    epsilon, delta : float
        The guarantee the randomizer satisfies, drawn where the engine has no exact curve.
    alpha : numpy.ndarray
        Type I errors at which to evaluate the curve.

    Returns
    -------
    beta : numpy.ndarray
        The lowest type II error at each α: the engine's exact curve of the randomizer
        (:func:`~dpstudio.engine.release_curve.release_tradeoff`) where it has one, else
        the (ε, δ) bound.
    exact : bool
        Whether ``beta`` is the randomizer's exact curve.
    """
    curve = release_tradeoff(spec, "local", alpha=alpha)
    if curve.available:
        return curve.beta, curve.exact
    return epsilon_delta_tradeoff(epsilon, delta, alpha).beta, False


def local_first_curve(inp: ReportInput, alpha: np.ndarray) -> tuple[str, np.ndarray]:
    """The first curve of a local-model report: one person's report, and its label.

    Parameters
    ----------
    inp : ReportInput
        The local release.
    alpha : numpy.ndarray
        Type I errors.

    Returns
    -------
    label : str
        ``"one person's report (<mechanism>, exact|(ε, δ) bound): ε = …, δ = …"``.
    beta : numpy.ndarray
        The curve (:func:`local_tradeoff_curve`).
    """
    beta, exact_curve = local_tradeoff_curve(inp.spec, inp.epsilon, inp.delta, alpha)
    return (f"one person's report ({inp.spec.mechanism}"
            + (", exact" if exact_curve else ", (ε, δ) bound")
            + f"): ε = {inp.epsilon:g}, δ = {inp.delta:g}", beta)


def own_first_curve(inp: ReportInput, alpha: np.ndarray) -> tuple[str, np.ndarray]:
    """The first curve of a central or model report: the release's own, and its label.

    Parameters
    ----------
    inp : ReportInput
        The release.
    alpha : numpy.ndarray
        Type I errors.

    Returns
    -------
    label : str
        ``"this release (<curve label>, exact|approximate): ε = …, δ = …"`` where the
        engine has the release's curve (:func:`release_curve`), else
        ``"this release: ε = …, δ = …"``.
    beta : numpy.ndarray
        The engine's curve, else the (ε, δ) bound.
    """
    own = release_curve(inp, alpha)
    if own is None:
        return (f"this release: ε = {inp.epsilon:g}, δ = {inp.delta:g}",
                epsilon_delta_tradeoff(inp.epsilon, inp.delta, alpha).beta)
    return (f"this release ({own.label}" + (", exact" if own.exact else ", approximate")
            + f"): ε = {inp.epsilon:g}, δ = {inp.delta:g}", own.beta)


def local_tradeoff_caption(inp: ReportInput) -> str:
    """Caption of a local-model report's trade-off figure (plain text).

    Parameters
    ----------
    inp : ReportInput
        The local release (the caption is the same for all of them).

    Returns
    -------
    str
    """
    return ("The first curve is what one person's randomized report reveals about their "
            "value: the lowest miss rate any attacker can have at each false-alarm rate. "
            "The shaded region is out of reach.")


def own_tradeoff_caption(inp: ReportInput) -> str:
    """Caption of a central or model report's trade-off figure (plain text).

    Parameters
    ----------
    inp : ReportInput
        The release; the caption says whether its first curve is the engine's own and
        whether a second curve (all releases of the dataset) follows.

    Returns
    -------
    str
    """
    if release_curve(inp, np.array([0.0, 1.0])) is None:
        return ("Each curve is the (ε, δ)-differential-privacy bound: the lowest miss rate "
                "any attacker can have at each false-alarm rate. The shaded region is out of "
                "reach, even for an attacker who combines every release listed below.")
    return ("The first curve is this release's own trade-off, computed from its noise (all "
            "of its noisy statistics together): the lowest miss rate any attacker can have "
            "at each false-alarm rate."
            + (" The second is the (ε, δ)-differential-privacy bound of every release "
               "listed below together. The shaded region is out of reach, even for an "
               "attacker who combines them." if len(inp.history) > 1 else
               " The shaded region is out of reach."))
