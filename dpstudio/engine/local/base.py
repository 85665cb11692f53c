"""Common interface of the local randomizers and the post-processing of their estimates.

Every local protocol has two halves:

* the **client** (:meth:`LocalRandomizer.randomize`): each user's value is randomized on
  their own device; what it returns, per user, is all the untrusted collector ever sees
  (:meth:`LocalRandomizer.to_records` lays it out as columns);
* the **server** (:meth:`FrequencyOracle.estimate` / :meth:`MeanOracle.estimate`):
  unbiased estimates from the reports, with their exact variances over the randomizers'
  coins (the data held fixed).

Frequency oracles estimate **counts** (number of users holding each value ``0..k−1``);
divide by ``n`` for frequencies (variances by ``n²``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpstudio.engine.calibration import validate_epsilon
from dpstudio.engine.errors import ParameterError, QueryError

__all__ = [
    "POSTPROCESS",
    "FrequencyOracle",
    "LocalRandomizer",
    "MeanOracle",
    "PureFrequencyOracle",
    "check_domain_size",
    "check_values",
    "postprocess_counts",
    "project_simplex",
]

POSTPROCESS = ("none", "clip", "simplex")


def check_domain_size(k: Any, low: int = 2, name: str = "k") -> int:
    """Return the domain size as an int, or raise ParameterError unless it is ≥ ``low``.

    Parameters
    ----------
    k : int
        The domain size (a whole number; ``True``/``False`` and fractions are refused).
    low : int
        Smallest allowed size.
    name : str
        The parameter's name in the error message.

    Returns
    -------
    int
        ``k``, between ``low`` and 2^31 − 2.

    Raises
    ------
    ParameterError
        If ``k`` is not a whole number in ``[low, 2^31 − 2]``.
    """
    try:
        kk = int(k)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} (domain size) must be a whole number; got {k!r}") from None
    if isinstance(k, bool) or kk != k or kk < low:
        raise ParameterError(f"{name} (domain size) must be a whole number ≥ {low}; got {k!r}")
    if kk > 2**31 - 2:
        raise ParameterError(f"{name} (domain size) must be below 2^31 - 1; got {k!r}")
    return kk


def check_values(values: Any, k: int) -> np.ndarray:
    """``values`` as an int64 array of codes in ``0..k−1``; QueryError otherwise.

    Parameters
    ----------
    values : array_like
        Integer codes (booleans count as 0/1; floats must be whole). Flattened to 1-D.
    k : int
        The domain size.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        The codes.

    Raises
    ------
    QueryError
        For NaN, infinities, fractions, a non-numeric dtype, or a code outside ``0..k−1``.
    """
    v = np.asarray(values)
    if v.ndim != 1:
        v = v.reshape(-1)
    if v.dtype == bool:
        v = v.astype(np.int64)
    if v.dtype.kind == "f":
        if v.size and not np.all(np.isfinite(v)):
            raise QueryError(f"values must be integer codes in 0..{k - 1}; found NaN or infinity")
        if v.size and np.any(v != np.floor(v)):
            raise QueryError(f"values must be integer codes in 0..{k - 1}; found fractions")
        v = v.astype(np.int64)
    elif v.dtype.kind not in "iu":
        raise QueryError(f"values must be integer codes in 0..{k - 1}; got dtype {v.dtype}")
    v = v.astype(np.int64, copy=False)
    if v.size and (int(v.min()) < 0 or int(v.max()) >= k):
        bad = int(v[(v < 0) | (v >= k)][0])
        raise QueryError(f"values must be integer codes in 0..{k - 1}; found {bad}")
    return v


class LocalRandomizer:
    """What every registry entry of kind ``"randomizer"`` builds.

    Attributes
    ----------
    name : str
        Registry name (``"krr"``, ``"oue"``, …).
    label : str
        Name for people.
    epsilon, delta : float
        The per-user guarantee: every user's report is (ε, δ)-locally DP.
    messages_bits : int
        Bits per report.
    output_kind : str
        ``"categorical"``: the empirical audit uses events {key = v}; ``"numeric"``:
        threshold events.
    """

    name = ""
    label = ""
    delta = 0.0
    output_kind = "categorical"
    messages_bits = 0
    epsilon: float

    def randomize(self, values, source):  # pragma: no cover - interface
        """Each user's report (client side); randomness from ``source``.

        Parameters
        ----------
        values : array_like, shape (n,)
            One value per user (codes ``0..k−1``, numbers or words, as the protocol takes).
        source : Source
            Random source (:mod:`dpstudio.engine.rng`).

        Returns
        -------
        reports
            One report per user, in the protocol's layout (an array, or a named tuple of
            arrays whose ``len`` is the number of users).

        Raises
        ------
        QueryError
            For values outside the protocol's domain.
        """
        raise NotImplementedError

    def n_reports(self, reports) -> int:
        """The number of users who sent ``reports``.

        Parameters
        ----------
        reports
            What :meth:`randomize` returned.

        Returns
        -------
        int
        """
        return len(reports)

    def report_keys(self, reports, against=None) -> np.ndarray:  # pragma: no cover
        """An integer key per report, for the empirical audit's events.

        Any function of a report is a post-processing, so events on keys are valid
        events of the randomizer. With ``against`` (a few inputs, e.g. the two an audit
        compares), the key is the *support pattern* of the report over those inputs
        (bit ``i`` set when the report supports ``against[i]``): a small key space where
        the privacy loss between the inputs concentrates.

        Parameters
        ----------
        reports
            What :meth:`randomize` returned.
        against : array_like, optional
            A few inputs of the randomizer.

        Returns
        -------
        numpy.ndarray, shape (n,)
            One key per report (int64, or a fixed-width void type for long reports).
        """
        raise NotImplementedError

    def to_records(self, reports) -> dict[str, np.ndarray]:  # pragma: no cover
        """Columns of exactly what the untrusted collector receives, one row per user.

        Parameters
        ----------
        reports
            What :meth:`randomize` returned.

        Returns
        -------
        dict of str to numpy.ndarray
            Column name → one entry per user.
        """
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """The randomizer's parameters, JSON-ready (a release's ``parameters``).

        Returns
        -------
        dict
            At least ``mechanism``, ``epsilon``, ``delta`` and ``messages_bits``.
        """
        return {"mechanism": self.name, "epsilon": self.epsilon, "delta": self.delta,
                "messages_bits": self.messages_bits}


class FrequencyOracle(LocalRandomizer):
    """A randomizer of values in ``0..k−1`` with an unbiased count estimator.

    Attributes
    ----------
    k : int
        The domain size.
    """

    k: int

    def estimate(self, reports, n: int | None = None) -> np.ndarray:  # pragma: no cover
        """Unbiased estimates of the **counts** of values ``0..k−1`` (float64, length k).

        ``n`` is the number of users; by default the number of reports.

        Parameters
        ----------
        reports
            What :meth:`randomize` returned.
        n : int, optional
            The number of users.

        Returns
        -------
        numpy.ndarray of float64, shape (k,)
            The count estimates (unbiased, so possibly negative).
        """
        raise NotImplementedError

    def variance(self, n: int, counts=None) -> np.ndarray:  # pragma: no cover
        """Exact variance of each count estimate, over the randomizers' coins.

        With ``counts`` (the true counts, or estimates as a plug-in) the variance is exact
        for those data; without, the data-free ``Var*`` of Wang et al. (2017), i.e. the
        variance for a value held by no one (the usual approximation for rare values).

        Parameters
        ----------
        n : int
            The number of users.
        counts : array_like, shape (k,), optional
            True (or plug-in) counts.

        Returns
        -------
        numpy.ndarray of float64, shape (k,)
            Variance of each count estimate, in counts².
        """
        raise NotImplementedError

    def frequencies(self, reports) -> np.ndarray:
        """Estimated **frequencies** (counts over the number of reports).

        Parameters
        ----------
        reports
            What :meth:`randomize` returned.

        Returns
        -------
        numpy.ndarray of float64, shape (k,)
            Unbiased frequency estimates (0 for no reports).
        """
        n = self.n_reports(reports)
        return self.estimate(reports) / max(n, 1)


class PureFrequencyOracle(FrequencyOracle):
    """A *pure* protocol (Wang et al. 2017, Def. 3): a report supports some values; a
    user's report supports their own value with probability ``p`` and any other given
    value with probability ``q``, independently across users.

    Then ``(C_v − n q) / (p − q)`` is unbiased for the count of ``v`` (``C_v`` the number of
    reports supporting ``v``), with exact variance
    ``(c_v p(1−p) + (n − c_v) q(1−q)) / (p − q)²`` for true count ``c_v``.

    Attributes
    ----------
    p : float
        Probability that a report supports its sender's own value.
    q : float
        Probability that it supports any one other given value.
    """

    p: float
    q: float

    def support_counts(self, reports) -> np.ndarray:  # pragma: no cover - interface
        """``C_v``: the number of reports supporting each value.

        Parameters
        ----------
        reports
            What :meth:`randomize` returned.

        Returns
        -------
        numpy.ndarray of int64, shape (k,)
        """
        raise NotImplementedError

    def estimate(self, reports, n: int | None = None) -> np.ndarray:
        """Unbiased count estimates ``(C_v − n q)/(p − q)`` (Wang et al. 2017).

        Parameters
        ----------
        reports
            What :meth:`randomize` returned.
        n : int, optional
            The number of users; by default the number of reports.

        Returns
        -------
        numpy.ndarray of float64, shape (k,)
            The count estimates (possibly negative).
        """
        n = self.n_reports(reports) if n is None else int(n)
        return self.estimate_from_counts(self.support_counts(reports), n)

    def estimate_from_counts(self, support, n: int) -> np.ndarray:
        """The same estimates from the support counts alone (added over partitions).

        ``C_v`` is a sum over the users, so partitions may each count their reports'
        support and the collector add the counts: the estimate is then the one of all
        the reports together, bit for bit.

        Parameters
        ----------
        support : array_like of int, shape (k,)
            ``C_v`` (:meth:`support_counts`, summed over the partitions).
        n : int
            The number of users.

        Returns
        -------
        numpy.ndarray of float64, shape (k,)
            ``(C_v − n q)/(p − q)``.
        """
        c = np.asarray(support).astype(np.float64)
        return (c - int(n) * self.q) / (self.p - self.q)

    def variance(self, n: int, counts=None) -> np.ndarray:
        """Exact variance ``(c_v p(1−p) + (n − c_v) q(1−q))/(p − q)²`` of each estimate.

        Parameters
        ----------
        n : int
            The number of users.
        counts : array_like, shape (k,), optional
            True (or plug-in) counts, clipped to ``[0, n]``; by default 0 for every value
            (Wang et al.'s ``Var*``).

        Returns
        -------
        numpy.ndarray of float64, shape (k,)
            Variance of each count estimate, in counts².
        """
        p, q = self.p, self.q
        n = float(n)
        if counts is None:
            cv = np.zeros(self.k)
        else:
            cv = np.clip(np.asarray(counts, dtype=np.float64), 0.0, n)
        return (cv * p * (1 - p) + (n - cv) * q * (1 - q)) / (p - q) ** 2


class MeanOracle(LocalRandomizer):
    """A randomizer of numbers in ``[lower, upper]`` with an unbiased mean estimator.

    Attributes
    ----------
    lower, upper : float
        The declared bounds; values outside are clamped by :meth:`randomize`.
    """

    output_kind = "numeric"
    lower: float
    upper: float

    def estimate(self, reports, n: int | None = None) -> float:  # pragma: no cover
        """Unbiased estimate of the mean of the (clamped) values.

        Parameters
        ----------
        reports
            What :meth:`randomize` returned.
        n : int, optional
            The number of users; by default the number of reports.

        Returns
        -------
        float
            The mean estimate, in the values' units.

        Raises
        ------
        QueryError
            For no reports.
        """
        raise NotImplementedError

    def variance(self, n: int, second_moment: float | None = None) -> float:  # pragma: no cover
        """Variance of :meth:`estimate` over the randomizers' coins (data fixed).

        Parameters
        ----------
        n : int
            The number of users.
        second_moment : float, optional
            A statistic of the data the exact variance needs (Duchi et al.); without it an
            upper bound.

        Returns
        -------
        float
            In squared units of the values.
        """
        raise NotImplementedError


def validate_local_epsilon(epsilon: Any) -> float:
    """ε for a local randomizer: finite, > 0 and at most 700 (e^ε must stay finite).

    Parameters
    ----------
    epsilon : float
        The per-user ε.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        Outside (0, 700].
    """
    eps = validate_epsilon(epsilon)
    if eps > 700:
        raise ParameterError(f"ε must be at most 700 for a local randomizer; got {epsilon!r}")
    return eps


# ------------------------------------------------------------------ post-processing


def project_simplex(v: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{w : w ≥ 0, Σw = total}`` (``total > 0``).

    Sort-based algorithm (Held, Wolfe & Crowder 1974; Duchi et al. 2008): with ``u``
    sorted descending, ``ρ`` the largest ``j`` with ``u_j > (Σ_{i≤j} u_i − total)/j`` and
    ``θ = (Σ_{i≤ρ} u_i − total)/ρ``, the projection is ``max(v − θ, 0)``.

    Parameters
    ----------
    v : array_like, shape (k,)
        Finite estimates.
    total : float
        The sum of the result.

    Returns
    -------
    numpy.ndarray of float64, shape (k,)
        The closest (Euclidean) non-negative vector summing to ``total``.

    Raises
    ------
    QueryError
        For an empty, multi-dimensional or non-finite ``v``.
    """
    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise QueryError("simplex projection needs a non-empty vector")
    if not np.all(np.isfinite(v)):
        raise QueryError("simplex projection needs finite estimates")
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    j = np.arange(1, v.size + 1)
    rho = int(np.flatnonzero(u - css / j > 0)[-1]) + 1
    theta = css[rho - 1] / rho
    return np.maximum(v - theta, 0.0)


def postprocess_counts(counts: np.ndarray, method: str, total: float) -> np.ndarray:
    """Turn unbiased estimates into a valid histogram summing to ``total``.

    ``"none"``: unchanged (unbiased, may be negative); ``"clip"``: negatives set to 0,
    then rescaled to sum to ``total`` (all-zero: uniform); ``"simplex"``: the closest
    valid histogram in Euclidean distance (:func:`project_simplex`). Both are
    post-processing: no extra privacy cost, but they trade bias for lower error.

    Parameters
    ----------
    counts : array_like, shape (k,)
        Unbiased count estimates.
    method : {"none", "clip", "simplex"}
        The post-processing (:data:`POSTPROCESS`).
    total : float
        The histogram's total (the number of users); > 0 unless ``method`` is ``"none"``.

    Returns
    -------
    numpy.ndarray of float64, shape (k,)
        The post-processed counts (a copy).

    Raises
    ------
    QueryError
        For an unknown ``method``, a total that is not finite and positive, or non-finite
        estimates (``"simplex"``).
    """
    if method not in POSTPROCESS:
        raise QueryError(f"postprocess must be one of {', '.join(POSTPROCESS)}; got {method!r}")
    c = np.asarray(counts, dtype=np.float64)
    if method == "none":
        return c.copy()
    if not total > 0 or not math.isfinite(total):
        raise QueryError(f"a histogram's total must be positive; got {total!r}")
    if method == "clip":
        pos = np.maximum(c, 0.0)
        s = pos.sum()
        if s <= 0:
            return np.full(c.shape, total / c.size)
        return pos * (total / s)
    return project_simplex(c, total)
