"""The single-message summation protocol of Balle, Bell, Gascón & Nissim (CRYPTO 2019,
"The Privacy Blanket of the Shuffle Model"), for comparison with the cloak.

Each user rounds its value (scaled to [0, 1]) to x̄ ∈ {0, …, k} by randomized rounding
and sends **one** message: x̄ with probability 1 − γ, otherwise a uniform draw from
{0, …, k} (the "blanket"). The shuffler permutes the n messages; the analyzer debiases

    Ŝ = (Σ_i y_i/k − γn/2) / (1 − γ),

an unbiased estimate of Σ x_i. Privacy is that of shuffled k+1-ary randomized response
with blanket probability γ: BBGN19 Theorem 3.1 shows (ε, δ)-DP against replacing one
user's value when

    γ = max{ 14·k·ln(2/δ) / ((n − 1)ε²),  27·k / ((n − 1)ε) } < 1,    ε ≤ 1

(k here is the number of blanket values other than the input, as in their k-ary RR with
the input domain {0, …, k}; the numerical code of the authors' follow-up uses the same
expression). We take ε ≤ 1 as a condition of the theorem and refuse larger ε rather than
extrapolate. γ is rounded **up** to a multiple of 2⁻³² (more blanket, more privacy) so
that each user's coin is decided exactly by a 32-bit word.

Error. Per user, Var(y/k) ≤ (1 − γ)/(4k²) + γ(2k + 1)/(6k) − γ²/4 (the worst case is a
value at 0 or 1; the first term is the rounding's), divided by (1 − γ)² by the
debiasing; the n terms are independent and each lies in an interval of length
1/(1 − γ), which gives a Bernstein error bound. The precision k is chosen to minimize
this variance bound subject to γ < 1 (about (εn)^{1/3}/ln(1/δ)^{1/3}, BBGN19 §4), unless
given.

The guarantee charged. BBGN19's ε is what γ is calibrated for, but it is loose: the same
messages are n shuffled reports of an ε₀-LDP randomizer, ε₀ = ln(1 + (k+1)(1 − γ)/γ)
(:func:`blanket_local_epsilon`: a message equals any given level with probability between
γ/(k+1) and 1 − γ + γ/(k+1), whatever the value, randomized rounding included), so
Feldman, McMillan & Talwar's amplification bound holds for them too. Both bounds are valid
for the same messages: :func:`blanket_central_epsilon` states the smaller. The noise (γ)
is never changed by this, only the ε claimed for it (e.g. n = 3000, ε = 0.5, δ = 10⁻⁶: γ
gives ε₀ ≈ 1.85, whose FMT21 bound is ε ≈ 0.26).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpstudio.engine import sampling
from dpstudio.engine.checks import number, positive
from dpstudio.engine.distributed.encoding import randomized_round
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import Source
from dpstudio.engine.shuffle.amplification import shuffle_epsilon

__all__ = ["BlanketParameters", "blanket_central_epsilon", "blanket_gamma",
           "blanket_local_epsilon", "blanket_parameters", "blanket_randomize"]

_MAX_K = 1 << 20
_GAMMA_GRID = 2.0**-32


def blanket_gamma(k: int, n: int, epsilon: float, delta: float) -> float:
    """BBGN19 Theorem 3.1's blanket probability for domain {0, …, k} (not yet rounded).

    The arguments are not checked (:func:`blanket_parameters` checks them).

    Parameters
    ----------
    k : int
        Precision: values are rounded to {0, …, k}, k ≥ 1.
    n : int
        The number of users, ≥ 2.
    epsilon, delta : float
        The central guarantee wanted, 0 < ε ≤ 1 and 0 < δ < 1.

    Returns
    -------
    float
        γ = max{14·k·ln(2/δ)/((n − 1)ε²), 27·k/((n − 1)ε)}; the theorem applies when γ < 1.
    """
    return max(14.0 * k * math.log(2.0 / delta) / ((n - 1) * epsilon**2),
               27.0 * k / ((n - 1) * epsilon))


def _variance_per_user(k: int, gamma: float) -> float:
    """Upper bound on the variance of one user's debiased term (units of the [0, 1] scale)."""
    v = (1.0 - gamma) / (4.0 * k * k) + gamma * (2 * k + 1) / (6.0 * k) - gamma * gamma / 4.0
    return v / (1.0 - gamma) ** 2


@dataclass(frozen=True)
class BlanketParameters:
    """The protocol's settings for n users at (ε, δ) (from :func:`blanket_parameters`).

    Attributes
    ----------
    n : int
        The number of users the blanket probability was computed for.
    k : int
        Precision: values are rounded to {0, …, k}.
    gamma : float
        Blanket probability γ < 1, a multiple of 2⁻³².
    epsilon, delta : float
        The central guarantee.
    """

    n: int
    k: int
    gamma: float
    epsilon: float
    delta: float

    @property
    def bits_per_message(self) -> int:
        """Bits of one message in {0, …, k} (at least 1)."""
        return max(1, self.k.bit_length())  # messages in {0, …, k}

    def variance(self, n: int | None = None) -> float:
        """Upper bound on Var(Ŝ) on the [0, 1] scale.

        Parameters
        ----------
        n : int, optional
            The number of users summed (default: :attr:`n`).

        Returns
        -------
        float
        """
        return (self.n if n is None else int(n)) * _variance_per_user(self.k, self.gamma)

    @property
    def term_range(self) -> float:
        """Each user's debiased error term lies in an interval of this length."""
        return 1.0 / (1.0 - self.gamma)


def _check(n: int, epsilon: float, delta: float) -> tuple[float, float]:
    """(ε, δ) as floats once n, ε and δ are checked; the theorem's conditions (n ≥ 2,
    ε ≤ 1) are said as such, the ranges by the engine's range check."""
    if n < 2:
        raise ParameterError(f"the blanket protocol needs at least 2 users, got {n}")
    eps = positive("ε", epsilon)
    if eps > 1.0:
        raise ParameterError(
            f"the privacy-blanket bound (Balle et al. 2019, Thm 3.1) holds for ε ≤ 1, got "
            f"ε = {epsilon:g}; use the cloak")
    return eps, number("δ", delta, low=0.0, low_open=True, high=1.0, high_open=True)


def blanket_local_epsilon(k: int, gamma: float) -> float:
    """Each user's local ε₀ of the blanket's message: (k+1)-ary randomized response with
    blanket probability γ.

    A message equals the rounded value with probability 1 − γ + γ/(k+1) and any other
    level with γ/(k+1); randomized rounding mixes two levels first, which keeps every
    level's probability between those two, so ε₀ = ln(1 + (k+1)(1 − γ)/γ) for every
    pair of values in [0, 1].

    Parameters
    ----------
    k : int
        Precision (levels {0, …, k}).
    gamma : float
        Blanket probability, in (0, 1).

    Returns
    -------
    float
    """
    return math.log1p((k + 1) * (1.0 - gamma) / gamma)


# FMT21's computation needs δ at least this (amplification.py's floor).
_MIN_DELTA_FMT21 = 1e-12


@functools.lru_cache(maxsize=512)
def _fmt21(eps0: float, n: int, delta: float) -> float:
    return shuffle_epsilon(eps0, n, delta, "fmt21")[0]


def blanket_central_epsilon(params: BlanketParameters) -> tuple[float, str]:
    """The central ε of the blanket's shuffled messages: the smaller of BBGN19's (what γ
    was calibrated for) and FMT21's amplification of each user's ε₀, at the same δ.

    Parameters
    ----------
    params : BlanketParameters
        The protocol's settings (n, k, γ, ε, δ).

    Returns
    -------
    (float, str)
        ε, and the bound that gives it: ``"bbgn19"`` or ``"fmt21"``.
    """
    if params.delta < _MIN_DELTA_FMT21:
        return params.epsilon, "bbgn19"
    eps = _fmt21(blanket_local_epsilon(params.k, params.gamma), params.n, params.delta)
    return (eps, "fmt21") if eps < params.epsilon else (params.epsilon, "bbgn19")


def _rounded_gamma(k: int, n: int, epsilon: float, delta: float) -> float:
    return math.ceil(blanket_gamma(k, n, epsilon, delta) / _GAMMA_GRID) * _GAMMA_GRID


def blanket_parameters(n: int, epsilon: float, delta: float, k: int = 0) -> BlanketParameters:
    """Blanket probability and precision k (chosen if ``k`` is 0) for n users at (ε, δ).

    Parameters
    ----------
    n : int
        The number of users, ≥ 2.
    epsilon : float
        The central ε, 0 < ε ≤ 1 (the theorem's condition).
    delta : float
        The central δ, 0 < δ < 1.
    k : int
        Precision in [1, 2²⁰], or 0 to choose the k of least error.

    Returns
    -------
    BlanketParameters

    Raises
    ------
    ParameterError
        For n < 2, ε outside (0, 1], δ outside (0, 1), k outside its range, or too few
        users for a blanket probability below 1.
    """
    n = int(n)
    epsilon, delta = _check(n, epsilon, delta)
    if k:
        k = int(k)
        number("precision k", k, low=1, high=_MAX_K, what="an integer")
        gamma = _rounded_gamma(k, n, epsilon, delta)
        if gamma >= 1:
            raise ParameterError(
                f"with n = {n} users, precision k = {k} needs a blanket probability ≥ 1 "
                f"at ε = {epsilon:g}, δ = {delta:g}: use a smaller k or more users")
        return BlanketParameters(n, k, gamma, epsilon, delta)
    best = None
    k_try = 1
    while k_try <= _MAX_K:
        gamma = _rounded_gamma(k_try, n, epsilon, delta)
        if gamma >= 1:
            break
        v = _variance_per_user(k_try, gamma)
        if best is None or v < best[0]:
            best = (v, k_try, gamma)
        elif v > 2 * best[0]:
            break
        k_try += 1 if k_try < 64 else max(1, k_try // 32)
    if best is None:
        raise ParameterError(
            f"too few users for the blanket protocol at ε = {epsilon:g}, δ = {delta:g}: "
            f"even k = 1 needs a blanket probability ≥ 1 with n = {n}")
    return BlanketParameters(n, best[1], best[2], epsilon, delta)


def blanket_randomize(u: np.ndarray, params: BlanketParameters, source: Source
                      ) -> np.ndarray:
    """Each user's single message from its value in [0, 1].

    Parameters
    ----------
    u : numpy.ndarray
        The users' values scaled to [0, 1].
    params : BlanketParameters
        The protocol's settings.
    source : Source
        Randomness.

    Returns
    -------
    numpy.ndarray
        int64 messages in {0, …, k}, one per user.
    """
    x = randomized_round(u, params.k, source)
    threshold = np.uint64(round(params.gamma / _GAMMA_GRID))  # γ·2^32, an integer
    blanket = source.uint32(x.size).astype(np.uint64) < threshold
    count = int(np.count_nonzero(blanket))
    if count:
        x[blanket] = sampling.uniform_int(params.k + 1, count, source)
    return x


def blanket_analyze(messages: np.ndarray, params: BlanketParameters) -> float:
    """Ŝ on the [0, 1] scale from the n shuffled messages.

    Parameters
    ----------
    messages : numpy.ndarray
        The shuffled messages (their order does not matter).
    params : BlanketParameters
        The protocol's settings.

    Returns
    -------
    float
        The debiased estimate of the sum of the users' values.
    """
    y = np.asarray(messages, dtype=np.int64)
    return blanket_debias(int(y.sum(dtype=np.int64)), y.size, params)


def blanket_debias(message_sum: int, n: int, params: BlanketParameters) -> float:
    """Ŝ on the [0, 1] scale from the sum of the n messages alone (what partitions add).

    Parameters
    ----------
    message_sum : int
        The sum of the n messages (levels in {0, …, k}).
    n : int
        The number of messages.
    params : BlanketParameters
        The protocol's settings.

    Returns
    -------
    float
        The debiased estimate of the sum of the users' values.
    """
    return (float(message_sum) / params.k - params.gamma * n / 2.0) / (1.0 - params.gamma)
