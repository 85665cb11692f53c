"""Hypothesis-testing trade-off functions: how well can an adversary tell D from D′?

An adversary who sees one release tests H0 "the data was D" against H1 "the data was D′"
(neighbours). A test has a type I error α (false alarm: rejecting H0 when D is true) and a
type II error β (missed detection). The *trade-off function* of the mechanism's two output
distributions P (on D) and Q (on D′) is the smallest β any test reaches at type I error α,

    f(α) = T(P, Q)(α) = inf {β_φ : α_φ ≤ α},

(Wasserman & Zhou 2010; Kairouz, Oh & Viswanath 2017; Dong, Roth & Su 2019, "Gaussian
Differential Privacy", hereafter DRS). The infimum is reached by the Neyman–Pearson test
that rejects H0 where the likelihood ratio Q/P is largest (randomizing at the threshold),
so f is convex, non-increasing, continuous on (0, 1], f(α) ≤ 1 − α, and f(1) = 0. A
mechanism is (ε, δ)-DP exactly when f lies above

    f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε} (1 − δ − α))        (DRS Prop. 2.5)

for every pair of neighbours. Curves are values of :class:`TradeoffCurve` on a grid of α
(:func:`alpha_grid`); closed forms are exact, piecewise-linear curves carry their exact
breakpoints (``knots``), and curves built from a privacy profile are *pessimistic* lower
envelopes (``exact=False``): they never claim more privacy than the mechanism has.

Composition of Gaussian mechanisms is exact (G_μ composed k times is G_{μ√k}, DRS Cor.
3.3); randomized response, K-RR and the discrete Laplace mechanism compose exactly on
their lattice of privacy losses (up to 20001 lattice points); the continuous Laplace
mechanism, and larger lattices, compose through the privacy-loss distributions of
:mod:`dpstudio.engine.accounting.pld` and :func:`profile_to_tradeoff` (DRS Prop. 2.12).
What an attacker achieves empirically is in :mod:`dpstudio.engine.attack`.

The package holds six modules: :mod:`~dpstudio.engine.tradeoff.curves` (the curve type,
closed forms and finite-output curves), :mod:`~dpstudio.engine.tradeoff.profiles` (privacy
profile ↔ curve), :mod:`~dpstudio.engine.tradeoff.compose` (composition),
:mod:`~dpstudio.engine.tradeoff.pairs` (the worst-case pairs of the local randomizers, the
(ε, δ) region's pair and the exponential mechanism's curve),
:mod:`~dpstudio.engine.tradeoff.integer_noise` (discrete Gaussian, sums of shares and
Skellam noise) and :mod:`~dpstudio.engine.tradeoff.catalog` (the curve of every registry
mechanism by name, :func:`mechanism_curve`; ``region_only`` where only (ε, δ) is known).
Every public name is re-exported here: import from ``dpstudio.engine.tradeoff``. The
trade-off curve of a whole release (all its noisy statistics) is
:mod:`dpstudio.engine.release_curve`.
"""

from dpstudio.engine.tradeoff.catalog import (
    CURVE_PARAMS,
    MechanismCurve,
    curve_example,
    curve_for_object,
    curve_mechanisms,
    curve_params,
    mechanism_curve,
)
from dpstudio.engine.tradeoff.compose import COMPOSABLE, compose_gaussian, compose_tradeoff
from dpstudio.engine.tradeoff.curves import (
    TradeoffCurve,
    alpha_grid,
    discrete_laplace_tradeoff,
    discrete_tradeoff,
    epsilon_delta_tradeoff,
    gaussian_tradeoff,
    krr_tradeoff,
    laplace_tradeoff,
    neyman_pearson_knots,
    randomized_response_tradeoff,
)
from dpstudio.engine.tradeoff.integer_noise import (
    IntegerLaw,
    discrete_gaussian_law,
    integer_noise_pld,
    integer_noise_tradeoff,
    shifted_knots,
    skellam_law,
    sum_of_shares,
)
from dpstudio.engine.tradeoff.pairs import (
    LossPair,
    compose_pair,
    count_mean_sketch_pair,
    epsilon_delta_pair,
    exponential_mechanism_tradeoff,
    hadamard_pair,
    local_hashing_pair,
    pair_tradeoff,
    product_pair,
    unary_encoding_pair,
)
from dpstudio.engine.tradeoff.profiles import (
    gaussian_epsilon,
    knots_epsilon,
    profile_to_tradeoff,
    tradeoff_to_profile,
)

__all__ = [
    "COMPOSABLE",
    "CURVE_PARAMS",
    "IntegerLaw",
    "LossPair",
    "MechanismCurve",
    "TradeoffCurve",
    "alpha_grid",
    "compose_gaussian",
    "compose_pair",
    "compose_tradeoff",
    "count_mean_sketch_pair",
    "curve_example",
    "curve_for_object",
    "curve_mechanisms",
    "curve_params",
    "discrete_gaussian_law",
    "discrete_laplace_tradeoff",
    "discrete_tradeoff",
    "epsilon_delta_pair",
    "epsilon_delta_tradeoff",
    "exponential_mechanism_tradeoff",
    "gaussian_epsilon",
    "gaussian_tradeoff",
    "hadamard_pair",
    "integer_noise_pld",
    "integer_noise_tradeoff",
    "knots_epsilon",
    "krr_tradeoff",
    "laplace_tradeoff",
    "local_hashing_pair",
    "mechanism_curve",
    "neyman_pearson_knots",
    "pair_tradeoff",
    "product_pair",
    "profile_to_tradeoff",
    "randomized_response_tradeoff",
    "shifted_knots",
    "skellam_law",
    "sum_of_shares",
    "tradeoff_to_profile",
    "unary_encoding_pair",
]
