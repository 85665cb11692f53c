"""Privacy amplification by subsampling (Balle, Barthe & Gaboardi 2018).

A mechanism that is (ε, δ)-DP on the sample becomes (ln(1 + q(e^ε − 1)), qδ)-DP on the
full dataset when the sample is drawn at random; the neighbouring relation must match the
sampling scheme, as stated per function.
"""

from __future__ import annotations

import math

from dpstudio.engine.calibration import validate_delta
from dpstudio.engine.checks import count, non_negative
from dpstudio.engine.checks import sample_rate as _check_rate
from dpstudio.engine.errors import ParameterError

__all__ = ["amplify_poisson", "amplify_without_replacement"]

_MARGIN = 2.0 ** -40  # covers the floating-point evaluation of the closed form


def _amplify(epsilon: float, delta: float, q: float) -> tuple[float, float]:
    e = non_negative("ε", epsilon)
    d = validate_delta(delta)
    # ln(1 + q(e^ε − 1)) without overflow for large ε: ε + ln(q + (1 − q)e^{−ε}).
    if e > 30:
        amplified = e + math.log(q + (1 - q) * math.exp(-e))
    else:
        amplified = math.log1p(q * math.expm1(e))
    return min(amplified * (1 + _MARGIN), e), min(q * d * (1 + _MARGIN), d)


def amplify_poisson(epsilon: float, delta: float, sample_rate: float) -> tuple[float, float]:
    """Amplification by Poisson sampling (each record kept independently w.p. q).

    Relation: add/remove one record. If M is (ε, δ)-DP under add/remove on its input,
    then M ∘ Poisson_q is (ln(1 + q(e^ε − 1)), qδ)-DP under add/remove (Balle, Barthe &
    Gaboardi 2018, Thm 8; Li, Qardaji & Su 2012).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 of the mechanism on the sample.
    delta : float
        δ in [0, 1) of the mechanism on the sample.
    sample_rate : float
        q in (0, 1].

    Returns
    -------
    (float, float)
        (ε′, δ′) of the subsampled mechanism.
    """
    return _amplify(epsilon, delta, _check_rate(sample_rate))


def amplify_without_replacement(epsilon: float, delta: float, m: int, n: int
                                ) -> tuple[float, float]:
    """Amplification by sampling m of n records uniformly without replacement.

    Relation: replace one record (substitution) on datasets of fixed size n. If M is
    (ε, δ)-DP under replace-one on datasets of size m, then M applied to a uniform
    m-subset of the n records is (ln(1 + (m/n)(e^ε − 1)), (m/n)δ)-DP under replace-one
    (Balle, Barthe & Gaboardi 2018, Thm 9). Under add/remove the dataset size itself
    changes and this bound does not apply.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 of the mechanism on the sample (replace-one).
    delta : float
        δ in [0, 1) of the mechanism on the sample.
    m : int
        Sample size, 1 ≤ m ≤ n.
    n : int
        Dataset size.

    Returns
    -------
    (float, float)
    """
    mm, nn = count("m", m), count("n", n)
    if mm > nn:
        raise ParameterError(f"cannot sample m = {mm} of n = {nn} records")
    return _amplify(epsilon, delta, mm / nn)
