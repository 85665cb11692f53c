"""The report's trade-off figure: its first curve, that curve's label, and the caption.

The first curve is the engine's own curve wherever the engine has one
(:func:`~dpstudio.engine.release_curve.release_tradeoff`): for a central release, every
noisy statistic of it composed ("this release (…)"); in the local model, one person's
report, its randomizer built as the release builds it (a K-ary randomized response counts
the "other or missing" cell); under secure aggregation, the noisy sum's. Where only the
release's (ε, δ) is known — shuffle protocols, permute-and-flip, model training — it is
the boundary of that region, labelled "(ε, δ) region", and the caption says so in one
sentence. The report never re-derives a curve. No Qt here: :mod:`dpstudio.export.report`
draws the curves.
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
        model); its (ε, δ) region where only that is known (``region_only``); None for a
        model release or where the engine has no curve: the report then draws the
        (ε, δ) bound.
    """
    if is_model(inp.public):
        return None
    # A protocol's curve is that of its noise as planned for the release's n clients.
    clients = inp.public.get("n_clients") or inp.public.get("n")
    curve = release_tradeoff(inp.spec, inp.trust_model, alpha=alpha,
                             clients=int(clients) if clients else None)
    return curve if curve.available else None


def _region_sentence(curve: ReleaseCurve | None) -> str:
    """The curve's region note with a leading space, or "" for the release's own curve."""
    return f" {curve.region_note}" if curve is not None and curve.region_only else ""


def local_tradeoff_curve(spec: QuerySpec, epsilon: float, delta: float, alpha: np.ndarray,
                         trust_model: str = "local") -> tuple[np.ndarray, bool]:
    """The trade-off curve of one person's report in the local model.

    Parameters
    ----------
    spec : QuerySpec
        The local release (randomizer, per-person ε, declared categories or bounds).
    epsilon, delta : float
        The guarantee the randomizer satisfies, drawn where the engine has no exact curve.
    alpha : numpy.ndarray
        Type I errors at which to evaluate the curve.
    trust_model : str, optional
        ``"local"`` (default), ``"shuffle"`` or ``"distributed"``.

    Returns
    -------
    beta : numpy.ndarray
        The lowest type II error at each α: the engine's exact curve of the randomizer
        (:func:`~dpstudio.engine.release_curve.release_tradeoff`) where it has one, else
        the (ε, δ) bound.
    exact : bool
        Whether ``beta`` is the randomizer's exact curve.
    """
    curve = release_tradeoff(spec, trust_model, alpha=alpha)
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
        ``"one person's report (<mechanism>, exact|(ε, δ) bound): ε = …, δ = …"``; for a
        shuffle or secure-aggregation release ``"this release (…)"``, or ``"(ε, δ) region
        (<mechanism>): …"`` where only the region is known.
    beta : numpy.ndarray
        The curve (:func:`local_tradeoff_curve`).
    """
    guarantee = f"ε = {inp.epsilon:g}, δ = {inp.delta:g}"
    if not _per_report(inp):  # shuffle, secure aggregation: what the analyst sees
        own = release_curve(inp, alpha)
        if own is None:
            return (f"this release: {guarantee}",
                    epsilon_delta_tradeoff(inp.epsilon, inp.delta, alpha).beta)
        if own.region_only:
            return f"(ε, δ) region ({inp.spec.mechanism}): {guarantee}", own.beta
        return (f"this release ({own.label}" + (", exact" if own.exact else ", approximate")
                + f"): {guarantee}", own.beta)
    beta, exact_curve = local_tradeoff_curve(inp.spec, inp.epsilon, inp.delta, alpha)
    return (f"one person's report ({inp.spec.mechanism}"
            + (", exact" if exact_curve else ", (ε, δ) bound")
            + f"): {guarantee}", beta)


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
        engine has the release's curve (:func:`release_curve`), ``"(ε, δ) region
        (<mechanism>): …"`` where only its region is known, else
        ``"this release: ε = …, δ = …"``.
    beta : numpy.ndarray
        The engine's curve, else the (ε, δ) bound.
    """
    own = release_curve(inp, alpha)
    if own is None:
        return (f"this release: ε = {inp.epsilon:g}, δ = {inp.delta:g}",
                epsilon_delta_tradeoff(inp.epsilon, inp.delta, alpha).beta)
    if own.region_only:
        return (f"(ε, δ) region ({inp.spec.mechanism}): ε = {inp.epsilon:g}, "
                f"δ = {inp.delta:g}", own.beta)
    return (f"this release ({own.label}" + (", exact" if own.exact else ", approximate")
            + f"): ε = {inp.epsilon:g}, δ = {inp.delta:g}", own.beta)


def local_tradeoff_caption(inp: ReportInput) -> str:
    """Caption of a local-model report's trade-off figure (plain text).

    Parameters
    ----------
    inp : ReportInput
        The local release (the caption is the same for all of them); a shuffle or
        secure-aggregation release is read the same way, and where only its (ε, δ) region
        is known the caption is that sentence (the region note).

    Returns
    -------
    str
    """
    if not _per_report(inp):
        own = release_curve(inp, np.array([0.0, 1.0]))
        if own is not None and own.region_only:
            return own.region_note + " The shaded region is out of reach."
        return ("The first curve is what the released result reveals about one person: the "
                "lowest miss rate any attacker can have at each false-alarm rate. The shaded "
                "region is out of reach.")
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
    own = release_curve(inp, np.array([0.0, 1.0]))
    if own is not None and own.region_only:
        return (own.region_note + " The shaded region is out of reach"
                + (", even for an attacker who combines every release listed below."
                   if len(inp.history) > 1 else "."))
    if own is None:
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


def _per_report(inp: ReportInput) -> bool:
    """Whether the release's guarantee is of each person's own report (the local model:
    the collector receives every randomized report, its ``records``), rather than of
    what the analyst sees of all of them."""
    from dpstudio.analysis.capabilities import capability

    return "records" in capability(inp.trust_model).options
