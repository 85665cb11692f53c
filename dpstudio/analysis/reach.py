"""Where a trust model's guarantee stops at the asked δ, and the one sentence that says so.

A protocol may not reach every ε at a given δ (the shuffle's noise shares cost δ growing
with e^ε). :func:`unreachable` reads where a line of error against ε has no value;
:class:`Unreached` states it in words, the same for ``dpstudio compare``
(:func:`~dpstudio.analysis.compare.unreachable_reason`), the utility plot's readout and
the preview.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstudio.analysis.choices import LINE_EPSILONS, MC_EPSILONS, Choices
from dpstudio.analysis.dispatch import planned_trust_models
from dpstudio.analysis.footing import delta_text, effective_delta

__all__ = ["EPS_TEXT", "Unreached", "reach_grid", "unreachable"]

#: Sum protocols: their lines come from a plan per point.
_PLANNED = planned_trust_models()


@dataclass(frozen=True)
class Unreached:
    """Where a trust model's guarantee stops at its δ, and the sentence that says so.

    Attributes
    ----------
    delta : float
        The δ asked for (the analyst's, not a part of it a protocol keeps for itself).
    people : int
        The rows, one person each.
    reached : (float, float) or None
        The least and greatest ε of the grid the model reaches (None: none of them).
    below, above : float or None
        The greatest ε of the grid under ``reached`` and the least over it that the model
        does not reach (None: it reaches every one on that side).
    """

    delta: float
    people: int
    reached: tuple[float, float] | None
    below: float | None = None
    above: float | None = None

    def reaches(self, epsilon: float) -> bool | None:
        """Whether the model reaches ``epsilon``: True, False, or None where the grid
        cannot tell (between the last ε reached and the first not)."""
        if self.reached is None:
            return False
        lo, hi = self.reached
        if lo <= epsilon <= hi:
            return True
        if (self.above is not None and epsilon >= self.above) or (
                self.below is not None and epsilon <= self.below):
            return False
        return None

    def reason(self, epsilon: float) -> str:
        """Why there is no error at ``epsilon``, in one sentence (without the model's name).

        Parameters
        ----------
        epsilon : float

        Returns
        -------
        str
            E.g. "cannot reach ε = 20 with δ = 1e-6 for 2,000 people (at this δ it reaches
            ε 6.3 but not 16)"; where the grid cannot tell, "is not planned at ε = 10 …".
        """
        asked = (f"ε = {epsilon:g} with δ = {delta_text(self.delta)} for "
                 f"{self.people:,} people")
        if self.reached is None:
            return f"cannot reach {asked} (at this δ it reaches no ε from {EPS_TEXT})"
        lo, hi = self.reached
        if epsilon > hi:
            where = (f"it reaches ε {hi:.2g} but not {self.above:.2g}" if self.above
                     else f"it reaches ε {hi:.2g}")
        else:
            where = (f"it reaches ε {lo:.2g} but not {self.below:.2g}" if self.below
                     else f"it reaches ε {lo:.2g}")
        verb = "cannot reach" if self.reaches(epsilon) is False else "is not planned at"
        return f"{verb} {asked} (at this δ {where})"


#: The ε the plots show, in words.
EPS_TEXT = f"{float(LINE_EPSILONS[0]):g} to {float(LINE_EPSILONS[-1]):g}"


def reach_grid(c: Choices) -> np.ndarray:
    """The ε at which the utility plot computes the chosen line of ``c``.

    Parameters
    ----------
    c : Choices
        The analysis: its trust model decides the grid.

    Returns
    -------
    numpy.ndarray
        Every plotted ε, or for a sum protocol (a plan per point) every other
        Monte-Carlo ε.
    """
    return MC_EPSILONS[::2] if c.trust_model in _PLANNED else LINE_EPSILONS


def unreachable(c: Choices, values: np.ndarray, epsilons: np.ndarray,
                noise: np.ndarray | None) -> Unreached | None:
    """Where the line of ``c`` has no error, or None where it has one at every ε.

    Parameters
    ----------
    c : Choices
    values : numpy.ndarray
        The column (its number of rows: the people).
    epsilons : numpy.ndarray
        The ε at which ``noise`` was computed.
    noise : numpy.ndarray or None
        :func:`noise_curve` at ``epsilons`` (NaN where the model cannot reach it; None:
        at none of them).

    Returns
    -------
    Unreached or None
    """
    eps = np.asarray(epsilons, dtype=float)
    ok = np.zeros(eps.size, bool) if noise is None else np.isfinite(noise)
    if ok.all():
        return None
    people, delta = int(np.size(values)), float(effective_delta(c))
    if not ok.any():
        return Unreached(delta, people, None)
    lo, hi = float(eps[ok].min()), float(eps[ok].max())
    under, over = eps[~ok & (eps < lo)], eps[~ok & (eps > hi)]
    return Unreached(delta, people, (lo, hi),
                     float(under.max()) if under.size else None,
                     float(over.min()) if over.size else None)
