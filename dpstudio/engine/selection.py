"""Selection mechanisms of the central model: pick one candidate by a noisy score.

Scores are utilities u(D, r) with sensitivity Δu (how much one record can move any
score). Both mechanisms sample exactly (:mod:`dpstudio.engine.sampling`), never through
floating-point Gumbel or exponential noise.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.calibration import validate_epsilon, validate_sensitivity
from dpstudio.engine.entry import EPSILON, MechanismInfo, Param
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import Source

__all__ = ["ENTRIES", "ExponentialMechanism", "PermuteAndFlip", "SelectionMechanism"]


def _scores(scores: np.ndarray) -> np.ndarray:
    u = np.asarray(scores, dtype=np.float64)
    if u.ndim != 1 or u.size == 0:
        raise ParameterError("selection needs a non-empty one-dimensional array of scores")
    if not np.all(np.isfinite(u)):
        raise ParameterError("selection scores must be finite numbers")
    return u


class SelectionMechanism:
    """Common parts: ε, Δu, and the exponent ε·u/(2Δu) (ε·u/Δu for monotone scores).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    sensitivity : float
        Δu > 0: how much one record can move any score, in the scores' units.
    monotonic : bool, optional
        All scores move in the same direction between neighbours (e.g. counts under
        add/remove), which halves the exponent's denominator.

    Attributes
    ----------
    epsilon, sensitivity, monotonic
        As validated.
    delta : float
        Always 0.0: both mechanisms are pure ε-DP.
    name : str
        The registry name.

    Raises
    ------
    ParameterError
        If ε or Δu is not finite and positive.
    """

    name = ""

    def __init__(self, epsilon: float, sensitivity: float, monotonic: bool = False) -> None:
        self.epsilon = validate_epsilon(epsilon)
        self.sensitivity = validate_sensitivity(sensitivity)
        self.monotonic = bool(monotonic)
        self.delta = 0.0

    @property
    def rate(self) -> float:
        """The factor multiplying scores in the exponent."""
        return self.epsilon / ((1.0 if self.monotonic else 2.0) * self.sensitivity)

    def utility_bound(self, n_candidates: int, beta: float) -> float:
        """With probability ≥ 1−β the chosen score is within this of the best.

        (2Δu/ε)(ln m + ln 1/β) for the exponential mechanism (McSherry & Talwar 2007);
        permute-and-flip is never worse in expectation (McKenna & Sheldon 2020), and the
        same tail bound holds for it.

        Parameters
        ----------
        n_candidates : int
            Number of candidates m ≥ 1.
        beta : float
            Failure probability β in (0, 1].

        Returns
        -------
        float
            The score gap, in the scores' units.
        """
        return (math.log(n_candidates) + math.log(1.0 / beta)) / self.rate

    def probabilities(self, scores: np.ndarray) -> np.ndarray:
        """Each candidate's selection probability (implemented by the subclasses).

        Parameters
        ----------
        scores : array_like, shape (m,)
            Finite scores, one per candidate.

        Returns
        -------
        numpy.ndarray, shape (m,)
            Probabilities summing to 1.

        Raises
        ------
        ParameterError
            If the scores are empty, not 1-d, or not finite.
        """
        raise NotImplementedError

    def select(self, scores: np.ndarray, source: Source, size: int | None = None):
        """Choose candidates (implemented by the subclasses).

        Parameters
        ----------
        scores : array_like, shape (m,)
            Finite scores, one per candidate.
        source : Source
            Random bits (a :class:`~dpstudio.engine.rng.SecureSource` for a release).
        size : int or None, optional
            Number of independent draws; None for one.

        Returns
        -------
        int or numpy.ndarray of int64
            The chosen index, or ``size`` indices.

        Raises
        ------
        ParameterError
            If the scores are empty, not 1-d, or not finite.
        """
        raise NotImplementedError


class ExponentialMechanism(SelectionMechanism):
    """P(r) ∝ exp(ε·u(r)/(2Δu)) (McSherry & Talwar 2007).

    Sampled exactly from the log-weights (:func:`dpstudio.engine.sampling.categorical_log`).

    Parameters
    ----------
    epsilon, sensitivity, monotonic
        See :class:`SelectionMechanism`.
    """

    name = "exponential"

    def probabilities(self, scores: np.ndarray) -> np.ndarray:
        """Exact selection probabilities (computed in floating point).

        Parameters
        ----------
        scores : array_like, shape (m,)
            Finite scores, one per candidate.

        Returns
        -------
        numpy.ndarray, shape (m,)
            softmax(ε·u/(2Δu)) (ε·u/Δu when monotonic).

        Raises
        ------
        ParameterError
            If the scores are empty, not 1-d, or not finite.
        """
        z = self.rate * _scores(scores)
        w = np.exp(z - z.max())
        return w / w.sum()

    def select(self, scores: np.ndarray, source: Source, size: int | None = None):
        """Index of the chosen candidate (an array of ``size`` indices if given).

        Parameters
        ----------
        scores, source, size
            See :meth:`SelectionMechanism.select`.

        Returns
        -------
        int or numpy.ndarray
        """
        z = self.rate * _scores(scores)
        out = sampling.categorical_log(z - z.max(), 1 if size is None else size, source)
        return int(out[0]) if size is None else out


class PermuteAndFlip(SelectionMechanism):
    """Permute-and-flip (McKenna & Sheldon 2020): visit candidates in random order, accept r
    with probability exp(ε(u(r) − u*)/(2Δu)); equal in law to report-noisy-max with
    exponential noise, and never worse than the exponential mechanism in expected score.

    Parameters
    ----------
    epsilon, sensitivity, monotonic
        See :class:`SelectionMechanism`.
    """

    name = "permute_and_flip"

    def probabilities(self, scores: np.ndarray) -> np.ndarray:
        """Exact selection probabilities by enumerating orders (up to 8 candidates).

        Parameters
        ----------
        scores : array_like, shape (m,)
            Finite scores, one per candidate; m ≤ 8.

        Returns
        -------
        numpy.ndarray, shape (m,)

        Raises
        ------
        ParameterError
            If the scores are empty, not 1-d or not finite, or m > 8.
        """
        u = _scores(scores)
        m = u.size
        if m > 8:
            raise ParameterError("exact permute-and-flip probabilities: 8 candidates at most")
        accept = np.exp(self.rate * (u - u.max()))
        probs = np.zeros(m)
        for order in itertools.permutations(range(m)):
            reach = 1.0
            for r in order:
                probs[r] += reach * accept[r]
                reach *= 1.0 - accept[r]
        return probs / math.factorial(m)

    def select(self, scores: np.ndarray, source: Source, size: int | None = None):
        """Index of the chosen candidate (an array of ``size`` indices if given).

        Parameters
        ----------
        scores, source, size
            See :meth:`SelectionMechanism.select`.

        Returns
        -------
        int or numpy.ndarray of int64
        """
        u = _scores(scores)
        gamma = self.rate * (u.max() - u)  # ≥ 0; the best candidate always accepts
        rows = 1 if size is None else int(size)
        m = u.size
        # Each row: a uniform order (argsort of random keys; ties of 64-bit keys are broken
        # by index, an event of probability < m²/2^64), then one coin per candidate.
        keys = source.uint64(rows * m).reshape(rows, m)
        order = np.argsort(keys, axis=1, kind="stable")
        coins = sampling.bernoulli_exp(gamma[order].ravel(), source).reshape(rows, m)
        first = np.argmax(coins, axis=1)
        chosen = order[np.arange(rows), first]
        return int(chosen[0]) if size is None else chosen.astype(np.int64)


_BINS = Param("candidates", "int", 1024,
              "Number of equally spaced candidate values in the declared range.",
              low=2, high=1_000_000)

#: The registry entries of this module (registered by :mod:`dpstudio.engine.mechanisms`).
ENTRIES = (
    MechanismInfo(
        name="exponential",
        label="Exponential mechanism",
        description="Chooses a candidate with probability proportional to exp(ε·score/(2Δu)).",
        trust_models=("central",),
        value_types=("numeric", "integer", "scores"),
        kind="selection",
        params=(EPSILON, _BINS),
        factory=lambda epsilon, sensitivity=1.0, monotonic=False, **kw: ExponentialMechanism(
            epsilon, sensitivity, monotonic),
        queries=("quantile", "median"),
        references=("McSherry & Talwar 2007", "Smith 2011 (quantiles)"),
    ),
    MechanismInfo(
        name="permute_and_flip",
        label="Permute-and-flip",
        description="Report-noisy-max with exponential noise: tries candidates in random order.",
        trust_models=("central",),
        value_types=("numeric", "integer", "scores"),
        kind="selection",
        params=(EPSILON, _BINS),
        factory=lambda epsilon, sensitivity=1.0, monotonic=False, **kw: PermuteAndFlip(
            epsilon, sensitivity, monotonic),
        queries=("quantile", "median"),
        references=("McKenna & Sheldon 2020",),
    ),
)
