"""Composition of trade-off curves: k independent runs of one mechanism.

The Gaussian is exact (G_μ composed k times is G_{μ√k}, DRS Cor. 3.3); randomized response,
K-RR and the discrete Laplace mechanism compose exactly on their lattice of privacy losses
(k-fold convolutions, Neyman–Pearson on the result); the continuous Laplace mechanism and
larger lattices go through the privacy-loss distributions of
:mod:`dpstudio.engine.accounting.pld` and
:func:`~dpstudio.engine.tradeoff.profiles.profile_to_tradeoff` (pessimistic). The theory
is in :mod:`dpstudio.engine.tradeoff`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpstudio.engine.calibration import validate_epsilon, validate_sensitivity
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.tradeoff.curves import (
    _MAX_LATTICE,
    TradeoffCurve,
    _check_alpha,
    _check_int,
    _check_integer_sensitivity,
    _check_mu,
    _check_scale,
    _dlap_pair,
    _knots_in_order,
    _krr_pair,
    gaussian_tradeoff,
)
from dpstudio.engine.tradeoff.profiles import profile_to_tradeoff

__all__ = ["COMPOSABLE", "compose_gaussian", "compose_tradeoff"]

# Mechanisms :func:`compose_tradeoff` knows, with their parameters (see its docstring).
COMPOSABLE = ("gaussian", "laplace", "discrete_laplace", "rr", "krr")


def compose_gaussian(mu: float, k: int, alpha=None) -> TradeoffCurve:
    """k-fold composition of G_μ: exactly G_{μ√k} (DRS Cor. 3.3).

    Parameters
    ----------
    mu : float
        μ ≥ 0 of one run.
    k : int
        Number of runs, ≥ 1.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`alpha_grid`).

    Returns
    -------
    TradeoffCurve
        Exact.

    Raises
    ------
    ParameterError
        For a bad μ, ``k`` or ``alpha``.
    """
    m = _check_mu(mu)
    kk = _check_int(k, "the number of compositions", 1)
    curve = gaussian_tradeoff(m * math.sqrt(kk), alpha)
    return TradeoffCurve(curve.alpha, curve.beta,
                         f"Gaussian, μ = {m:g}, composed {kk}× (μ = {m * math.sqrt(kk):g})",
                         True, "G_μ composed k times is G_{μ√k} (Dong, Roth & Su 2019)",
                         evaluator=curve.evaluator)


def _convolve_power(p: np.ndarray, k: int) -> np.ndarray:
    """p convolved with itself k times, by repeated squaring with direct np.convolve."""
    result = None
    base = p
    while k:
        if k & 1:
            result = base if result is None else np.convolve(result, base)
        k >>= 1
        if k:
            base = np.convolve(base, base)
    return result


def _compose_lattice(p: np.ndarray, q: np.ndarray, k: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Knots of the k-fold product of a pair whose loss ln(q_j/p_j) is increasing affine in j.

    The loss of k independent outputs is then affine in J = Σ j, so the composed pair is
    the pair of distributions of J (k-fold convolutions) and its likelihood-ratio order is
    the order of J: no ratios are formed, so underflowing probabilities cannot reorder it.
    """
    pk, qk = _convolve_power(p, k), _convolve_power(q, k)
    return _knots_in_order(pk[::-1] / pk.sum(), qk[::-1] / qk.sum())


def _lattice_pair(mechanism: str, params: Mapping[str, Any]):
    if mechanism == "rr":
        return _krr_pair(validate_epsilon(params.get("epsilon")), 2)
    if mechanism == "krr":
        return _krr_pair(validate_epsilon(params.get("epsilon")),
                         _check_int(params.get("k"), "k (number of values)", 2))
    if mechanism == "discrete_laplace":
        return _dlap_pair(_check_scale(params.get("scale")),
                          _check_integer_sensitivity(params.get("sensitivity", 1)))
    return None


def _describe(mechanism: str, params: Mapping[str, Any]) -> str:
    """Short human name of a mechanism and its parameters, for labels."""
    if mechanism == "gaussian":
        return f"Gaussian, σ = {params.get('sigma')}, Δ = {params.get('sensitivity', 1)}"
    if mechanism in ("laplace", "discrete_laplace"):
        name = "Laplace" if mechanism == "laplace" else "discrete Laplace"
        return f"{name}, scale {params.get('scale')}, Δ = {params.get('sensitivity', 1)}"
    if mechanism == "rr":
        return f"randomized response, ε = {params.get('epsilon')}"
    return f"{params.get('k')}-ary randomized response, ε = {params.get('epsilon')}"


def _pld_class():
    try:
        from dpstudio.engine.accounting.pld import PLD
    except ImportError:
        raise NotImplementedError(
            "composition through privacy-loss distributions needs "
            "dpstudio.engine.accounting.pld (not available yet)"
        ) from None
    return PLD


def _pld_for(mechanism: str, params: Mapping[str, Any]):
    pld = _pld_class()
    if mechanism == "gaussian":
        return pld.gaussian(_check_scale(params.get("sigma"), "σ"),
                            validate_sensitivity(params.get("sensitivity", 1.0)))
    if mechanism == "laplace":
        return pld.laplace(_check_scale(params.get("scale")),
                           validate_sensitivity(params.get("sensitivity", 1.0)))
    if mechanism == "discrete_laplace":
        return pld.discrete_laplace(_check_scale(params.get("scale")),
                                    _check_integer_sensitivity(params.get("sensitivity", 1)))
    if mechanism == "rr":
        return pld.randomized_response(validate_epsilon(params.get("epsilon")), 2)
    return pld.randomized_response(validate_epsilon(params.get("epsilon")),
                                   _check_int(params.get("k"), "k (number of values)", 2))


def compose_tradeoff(mechanism: str, params: Mapping[str, Any], compositions: int,
                     alpha=None, *, method: str = "auto", eps_grid=None) -> TradeoffCurve:
    """Trade-off curve of ``compositions`` independent runs of one mechanism.

    Parameters
    ----------
    mechanism : {"gaussian", "laplace", "discrete_laplace", "rr", "krr"}
        The mechanism run each time (:data:`COMPOSABLE`).
    params : mapping
        Its parameters: gaussian ``sigma``, ``sensitivity`` (default 1); laplace and
        discrete_laplace ``scale``, ``sensitivity`` (default 1; an integer for the
        discrete one); rr ``epsilon``; krr ``epsilon``, ``k``.
    compositions : int
        Number of runs, ≥ 1.
    alpha : array_like, optional
        Type I errors in [0, 1] (default :func:`alpha_grid`).
    method : {"auto", "exact", "pld"}
        ``exact``: the Gaussian is G_{μ√k}; rr, krr and discrete_laplace have privacy losses
        on a lattice, so the k-fold loss distribution is a k-fold convolution of a finite
        pmf and Neyman–Pearson on it is exact (support up to 20001 points). ``pld``:
        :func:`profile_to_tradeoff` of ``PLD.<mechanism>(…).self_compose(k).delta``
        (pessimistic). ``auto``: exact when possible, PLD otherwise (laplace, or a
        lattice too large).
    eps_grid : array_like, optional
        Passed to :func:`profile_to_tradeoff` on the PLD route.

    Returns
    -------
    TradeoffCurve
        ``exact`` True on the closed-form and lattice routes, False on the PLD route
        (a pessimistic lower envelope).

    Raises
    ------
    ParameterError
        For an unknown mechanism or method, a bad parameter, or ``method="exact"`` where
        no exact composition exists.
    """
    if mechanism not in COMPOSABLE:
        raise ParameterError(f"unknown mechanism {mechanism!r}; expected one of "
                             + ", ".join(COMPOSABLE))
    if method not in ("auto", "exact", "pld"):
        raise ParameterError(f"method must be auto, exact or pld, got {method!r}")
    k = _check_int(compositions, "the number of compositions", 1)
    a = _check_alpha(alpha)
    if method != "pld" and mechanism == "gaussian":
        sigma = _check_scale(params.get("sigma"), "σ")
        return compose_gaussian(validate_sensitivity(params.get("sensitivity", 1.0)) / sigma,
                                k, a)
    pair = None if method == "pld" else _lattice_pair(mechanism, params)
    if pair is not None and k * (pair[0].size - 1) + 1 <= _MAX_LATTICE:
        ka, kb = _compose_lattice(*pair, k)
        return TradeoffCurve(a, np.interp(a, ka, kb), f"{_describe(mechanism, params)}, "
                             f"composed {k}×", True,
                             "Neyman–Pearson on the exact k-fold privacy-loss lattice",
                             knots=(ka, kb))
    if method == "exact":
        raise ParameterError(f"no exact composition for {mechanism} with these parameters "
                             f"(laplace, or more than {_MAX_LATTICE} loss values)")
    pld = _pld_for(mechanism, params)
    composed = pld.self_compose(k) if k > 1 else pld
    curve = profile_to_tradeoff(composed.delta, a, eps_grid,
                                label=f"{_describe(mechanism, params)}, composed {k}× (PLD)")
    return TradeoffCurve(curve.alpha, curve.beta, curve.label, False,
                         "privacy-loss distribution composed, then " + curve.note,
                         evaluator=curve.evaluator)
