"""Privacy accountants: how much privacy a sequence of mechanisms spends.

Modules
-------
pld          privacy-loss distributions (tight, pessimistic numerical accounting)
rdp          Rényi DP curves and their conversion to (ε, δ)
zcdp         zero-concentrated DP
gdp          Gaussian DP (exact for Gaussians; CLT approximation flagged ``approximate``)
composition  basic, advanced and optimal (Kairouz–Oh–Viswanath) composition theorems
subsampling  amplification by Poisson sampling and sampling without replacement
dpsgd        ε of DP-SGD and the σ that meets a target ε
budget       exact decimal budget arithmetic for the ledger

Every accountant returns an upper bound on the privacy loss unless it says
``approximate=True``.
"""

from dpstudio.engine.accounting.budget import exact, fits, remaining, spent, split
from dpstudio.engine.accounting.composition import (
    advanced_composition,
    basic_composition,
    optimal_composition,
    optimal_composition_delta,
)
from dpstudio.engine.accounting.dpsgd import (
    DPSGD_METHODS,
    AccountingResult,
    dpsgd_epsilon,
    dpsgd_sigma,
)
from dpstudio.engine.accounting.gdp import (
    GDPEstimate,
    gdp_compose,
    gdp_delta,
    gdp_epsilon,
    gdp_gaussian,
    gdp_subsampled_gaussian_clt,
)
from dpstudio.engine.accounting.pld import PLD
from dpstudio.engine.accounting.rdp import (
    DEFAULT_ORDERS,
    rdp_compose,
    rdp_epsilon,
    rdp_epsilon_and_order,
    rdp_gaussian,
    rdp_laplace,
    rdp_subsampled_gaussian,
)
from dpstudio.engine.accounting.subsampling import amplify_poisson, amplify_without_replacement
from dpstudio.engine.accounting.zcdp import (
    zcdp_compose,
    zcdp_from_pure,
    zcdp_gaussian,
    zcdp_to_epsilon,
)

__all__ = [
    "DEFAULT_ORDERS",
    "DPSGD_METHODS",
    "PLD",
    "AccountingResult",
    "GDPEstimate",
    "advanced_composition",
    "amplify_poisson",
    "amplify_without_replacement",
    "basic_composition",
    "dpsgd_epsilon",
    "dpsgd_sigma",
    "exact",
    "fits",
    "gdp_compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_gaussian",
    "gdp_subsampled_gaussian_clt",
    "optimal_composition",
    "optimal_composition_delta",
    "rdp_compose",
    "rdp_epsilon",
    "rdp_epsilon_and_order",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_subsampled_gaussian",
    "remaining",
    "spent",
    "split",
    "zcdp_compose",
    "zcdp_from_pure",
    "zcdp_gaussian",
    "zcdp_to_epsilon",
]
