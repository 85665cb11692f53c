"""CAPE against colluding sites: what is left of the noise when sites help the aggregator.

CAPE (Imtiaz & Sarwate; the lecture's "anticorrelated noise from common randomness") as
:mod:`.federated` runs it: on a ring of h participating sites, site i's message carries
zᵢ ~ N(0, σ̃²/h) of its own and eᵢ = wᵢ − wᵢ₊₁ (cyclic), wⱼ ~ N(0, κσ̃²), per coordinate
and in units of the sensitivity Δ. The common draw wᵢ is shared by the two sites whose
messages use it (i − 1 and i).

A colluding site hands the aggregator its own noise (zⱼ) and the common draws it holds
(wⱼ and wⱼ₊₁). Imtiaz & Sarwate state CAPE's guarantee against an aggregator colluding
with fewer than t sites by what remains of the noise; here it is computed exactly. For a
set C of colluders, the honest messages' noise, once the known draws are subtracted, is
Gaussian with covariance

    Σ_C = I/h + κ·D_{H,U} D_{H,U}ᵀ       (σ̃² units; H honest sites, U unknown draws),

and one record at an honest site i moves only message i, by at most Δ per unit vector of
the coordinates: the aggregator's whole view is a Gaussian mechanism of multiplier
σ̃/√(Σ_C⁻¹)ᵢᵢ. :func:`cape_information` returns max over i and over every C of c sites of
(Σ_C⁻¹)ᵢᵢ:

- c = 0: the joint view of all messages (:func:`~.federated_plan.cape_factor` squared);
- c = 1: by the ring's symmetry the colluder is site 0; the worst honest site is found by
  computing each;
- c ≥ 2 (h ≥ 3), or c = 1 with h = 2: two colluders on both sides of a site hold both of
  its correlated draws, leaving it its own zᵢ alone, and Σ_C ⪰ I/h bounds every view by
  (Σ_C⁻¹)ᵢᵢ ≤ h: the worst case is exactly h — the site is protected by its independent
  share only, 1/√h of the sum's noise.

The plan raises σ̃ so that the worst view at the declared collusion still has multiplier
σ (the accountant's): σ̃ = σ·√(information). At information h this is the noise of h
sites each protecting themselves, the local model's price for the sum — CAPE then keeps
none of its promise, and :func:`check_collusion` refuses.
"""

from __future__ import annotations

import math

import numpy as np

from dpstudio.engine.errors import ParameterError

__all__ = ["cape_information", "check_collusion", "information_multiplier"]

# Information at or above this share of h means a site is left its independent part only.
_LOCAL_LEVEL = 1.0 - 1e-9


def _information(h: int, kappa: float, colluders: set[int]) -> np.ndarray:
    """(Σ_C⁻¹)ᵢᵢ for each honest site i (in σ̃⁻² units) for the colluders C."""
    known = set()
    for c in colluders:
        known.update((c, (c + 1) % h))  # message c uses wc and w(c+1)
    honest = [i for i in range(h) if i not in colluders]
    unknown = [j for j in range(h) if j not in known]
    d = np.eye(h) - np.roll(np.eye(h), 1, axis=1)  # (Dw)ᵢ = wᵢ − wᵢ₊₁
    part = d[np.ix_(honest, unknown)]
    cov = np.eye(len(honest)) / h + kappa * part @ part.T
    return np.diag(np.linalg.inv(cov))


def cape_information(participants: int, ratio: float, colluding: int = 0) -> float:
    """max over honest sites and collusion sets of (Σ_C⁻¹)ᵢᵢ (see the module docstring).

    Parameters
    ----------
    participants : int
        h, the sites on the ring in a round.
    ratio : float
        κ, the common draws' variance over the sum's.
    colluding : int, optional
        c, the sites that may collude with the aggregator (0 ≤ c < h).

    Returns
    -------
    float
        The information, between 1 (one site, or κ → ∞ without collusion) and h.

    Raises
    ------
    ParameterError
        If c is negative or leaves no honest site.
    """
    h, c = int(participants), int(colluding)
    if c < 0:
        raise ParameterError("the number of colluding sites must be ≥ 0")
    if c >= h:
        raise ParameterError(f"with {c} colluding sites of {h} per round no honest site is "
                             "left to protect")
    if h == 1:
        return 1.0
    if c == 0:
        return float(np.max(_information(h, ratio, set())))
    if c == 1 and h >= 3:
        return float(np.max(_information(h, ratio, {0})))
    # Colluders on both sides of site 0 (the rest anywhere): its residual is z₀ alone.
    ring = [1, h - 1] + [j for j in range(2, h - 1)]
    return float(np.max(_information(h, ratio, set(ring[:c]))))


def check_collusion(participants: int, ratio: float, colluding: int) -> float:
    """The information at the declared collusion, refused where CAPE keeps no promise.

    Parameters
    ----------
    participants : int
        h.
    ratio : float
        κ.
    colluding : int
        c.

    Returns
    -------
    float
        :func:`cape_information`, below h.

    Raises
    ------
    ParameterError
        In one sentence, when c colluders can leave a site its independent share only.
    """
    h, c = int(participants), int(colluding)
    info = cape_information(h, ratio, c)
    if c > 0 and info >= _LOCAL_LEVEL * h:
        raise ParameterError(
            f"CAPE cannot protect against {c} colluding site{'s' if c > 1 else ''} of {h} "
            "per round: colluders on both sides of a site know both of its correlated "
            "parts, so its message keeps only its own share and the sum would need each "
            "site's full noise — use --fed-variant secagg (it tolerates colluders) or "
            "declare fewer")
    return info


def information_multiplier(sigma: float, information: float) -> float:
    """σ̃ = σ·√information: the sum's multiplier whose weakest view has multiplier σ.

    Parameters
    ----------
    sigma : float
        σ, the accountant's multiplier.
    information : float
        From :func:`check_collusion`.

    Returns
    -------
    float
    """
    return sigma * math.sqrt(information)
