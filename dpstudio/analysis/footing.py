"""The footing of a comparison of trust models, and the words that state it.

Curves are compared like with like: the same ε and δ, the same neighbouring relation and
the same treatment of the number of rows. Local, shuffle and secure-aggregation releases
are stated under replace-one with n public (every row reports), so that is the footing
(:func:`like_for_like`); a curve off it says where in its :func:`assumptions`, and the
result's :func:`caption` says what the curves share and where one differs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dpstudio.analysis.choices import Choices, cell_labels, is_histogram, mechanisms_for
from dpstudio.engine.errors import EngineError
from dpstudio.engine.queries import noisy_statistics
from dpstudio.engine.registry import REGISTRY

__all__ = [
    "COMPARISON_RELATION",
    "assumptions",
    "caption",
    "delta_text",
    "effective_delta",
    "footing_text",
    "like_for_like",
    "n_known",
    "relation_of",
]

#: The one neighbouring relation every trust model's guarantee can be stated under:
#: local, shuffle and secure-aggregation releases bound changing one person's value with
#: the number of people public. A comparison puts every model on it.
COMPARISON_RELATION = "replace"


def n_known(s: Choices) -> bool:
    """Whether the release treats the number of rows as public.

    Parameters
    ----------
    s : Choices

    Returns
    -------
    bool
        True under the local, shuffle and secure-aggregation models (every row reports);
        for a central sum, mean or variance when the engine makes n public (imputed
        values under replace-one: no noisy count); for a central histogram or quantile
        under replace-one; False for a central count (n is the answer).
    """
    if s.trust_model != "central":
        return True
    if s.query in ("sum", "mean", "variance"):
        return s.spec().n_public()
    if s.query == "count":
        return False
    return s.relation == COMPARISON_RELATION


def relation_of(s: Choices) -> str:
    """The neighbouring relation a release under ``s`` is stated under.

    Parameters
    ----------
    s : Choices

    Returns
    -------
    str
        The chosen one for a central release; ``"replace"`` for the others.
    """
    return s.relation if s.trust_model == "central" else COMPARISON_RELATION


def effective_delta(s: Choices) -> float:
    """The δ the release spends: 0 for a pure mechanism and for every local randomizer.

    Parameters
    ----------
    s : Choices

    Returns
    -------
    float
    """
    return 0.0 if s.trust_model == "local" else s.effective_delta


def like_for_like(s: Choices, trust_model: str, mechanism: str | None = None
                  ) -> Choices | None:
    """The same column, query, ε and δ under ``trust_model``, on the comparison's footing.

    Replace-one neighbours and n known for every model: a central sum, mean or variance
    then imputes a missing value as the middle of the bounds, as the protocols send it,
    so the number of rows is public and a mean spends its whole budget on one sum.

    Parameters
    ----------
    s : Choices
    trust_model : str
    mechanism : str, optional
        The mechanism; by default the chosen one if it belongs to ``trust_model``, else
        the trust model's first matching one (central: its first additive one).

    Returns
    -------
    Choices or None
        At the mechanism's default parameters (the chosen ones for the chosen mechanism);
        None when the trust model has no mechanism for the column and query.
    """
    cells = None
    if is_histogram(s):
        try:
            cells = len(cell_labels(s))
        except EngineError:
            return None
    infos = mechanisms_for(trust_model, s.value_types, s.query, cells)
    if trust_model == "central":
        infos = [i for i in infos if i.kind == "additive"]
    names = [i.name for i in infos]
    if mechanism is None:
        mine = s.trust_model == trust_model and s.mechanism in names
        mechanism = s.mechanism if mine else (names[0] if names else None)
    if mechanism is None or mechanism not in names:
        return None
    if mechanism == s.mechanism:
        params = s.params
    else:
        info = REGISTRY.get(mechanism)
        params = tuple(sorted((p.name, p.default) for p in info.params
                              if p.name not in ("epsilon", "delta")))
    out = replace(s, trust_model=trust_model, mechanism=mechanism, params=params,
                  relation=COMPARISON_RELATION, missing="drop", impute=None)
    if trust_model == "central" and s.query in ("sum", "mean", "variance"):
        out = replace(out, missing="impute")  # the middle of the bounds, as protocols send
    return out


def delta_text(delta: float) -> str:
    """δ as a caption writes it: ``0``, ``1e-6``, ``2e-5``.

    Parameters
    ----------
    delta : float

    Returns
    -------
    str
    """
    if delta == 0:
        return "0"
    mantissa, exponent = f"{delta:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def assumptions(s: Choices) -> str:
    """One caption fragment: the curve's δ, neighbouring relation and treatment of n.

    Parameters
    ----------
    s : Choices

    Returns
    -------
    str
        E.g. "δ = 1e-6 · replace-one · n known" or "δ = 0 · add-remove · n unknown (ε
        split: sum, count)".
    """
    relation = "replace-one" if relation_of(s) == "replace" else "add-remove"
    parts = [f"δ = {delta_text(effective_delta(s))}", relation]
    if n_known(s):
        parts.append("n known")
    else:
        try:
            names = [name for name, *_ in noisy_statistics(s.spec())]
        except EngineError:
            names = []
        split = f" (ε split: {', '.join(names)})" if len(names) > 1 else ""
        parts.append("n unknown" + split)
    return " · ".join(parts)


def footing_text(s: Choices) -> str:
    """The comparison's shared footing in words.

    Parameters
    ----------
    s : Choices

    Returns
    -------
    str
    """
    n_words = ("n known (every row counts; a missing value as the middle of the bounds)"
               if s.query in ("sum", "mean") and not is_histogram(s) else "n known")
    return (f"the same ε and δ = {delta_text(s.delta)} (pure mechanisms: δ = 0), "
            f"replace-one neighbours, {n_words}")


def _same_footing(fragment: str) -> bool:
    """Replace-one and n known (δ = 0 meets any δ: not a difference)."""
    return fragment.split(" · ")[1:3] == ["replace-one", "n known"]


def caption(s: Choices, curves: list[Any], compared: bool) -> str:
    """One caption: the assumptions the curves share, and where a curve differs.

    Parameters
    ----------
    s : Choices
        The analyst's choices.
    curves : list of Curve
        The curves shown (the analytic ones' ``name``, ``assumptions`` and ``bias``).
    compared : bool
        Whether other trust models are compared.

    Returns
    -------
    str
        Empty without an analytic curve.
    """
    lines = [c for c in curves if c.kind == "analytic"]
    if not lines:
        return ""
    if compared:
        text = f"Compared like with like: {footing_text(s)}."
        for c in lines:
            if c.assumptions and not _same_footing(c.assumptions):
                text += f" {c.name} differs: {c.assumptions}."
    else:
        text = f"{lines[0].name}: {lines[0].assumptions}."
    if any(c.bias for c in lines):
        text += (" Errors include the bias of clamping to the declared bounds (and of "
                 "imputing), measured on the data: analyst only.")
    return text
