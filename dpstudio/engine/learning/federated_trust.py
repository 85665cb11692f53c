"""What each federated variant trusts, in one sentence, and the loss a ledger composes.

The sentence names the declared collusion and dropouts the guarantee was planned for;
the loss description is the family the accountant composed (see
:meth:`~dpstudio.engine.learning.federated.FederatedResult.loss_description`).
"""

from __future__ import annotations

from typing import Any

from dpstudio.engine.accounting.loss import LossDescription
from dpstudio.engine.learning.federated_plan import AggregatePlan, LocalPlan

__all__ = ["TRUSTS", "federated_loss", "trusts"]

TRUSTS = {
    "none": "Trusts the aggregator and every site with the exact updates: no privacy.",
    "local": "Trusts no one: each site's noisy update protects its records against the "
             "aggregator and the other sites.",
    "secagg": "Trusts the secure-aggregation protocol and that at most the declared "
              "number of sites collude with the server: the server sees only the noisy "
              "sum.",
    "cape": "Trusts that the common randomness is generated honestly and that no site "
            "colludes with the aggregator: each message is protected alone, and only "
            "the sum is as accurate as central DP.",
    "shuffle": "Trusts the shuffler to hide which site sent which update; no "
               "amplification is credited for it, so the guarantee is the local one.",
}


def _sites(k: int) -> str:
    return f"{k} site{'s' if k != 1 else ''}"


def trusts(variant: str, colluding: int = 0, dropouts: int = 0) -> str:
    """The variant's trust in one sentence, with the collusion and dropouts declared.

    Parameters
    ----------
    variant : str
        One of the federated variants.
    colluding : int, optional
        Sites per round declared as possibly colluding with the server.
    dropouts : int, optional
        Sites per round declared as possibly dropping out (secagg).

    Returns
    -------
    str
        One sentence, ending with a full stop.
    """
    c, u = int(colluding), int(dropouts)
    if variant == "secagg" and (c or u):
        drops = (f", with noise enough for the sum of the survivors when up to "
                 f"{_sites(u)} drop out" if u else "")
        verb = "colludes" if c == 1 else "collude"
        return ("Trusts the secure-aggregation protocol and that at most "
                f"{_sites(c)} per round {verb} with the server{drops}: the server sees "
                "only the noisy sum.")
    if variant == "cape" and c:
        return ("Trusts that the common randomness is generated honestly and that fewer "
                f"than {c + 1} sites per round collude with the aggregator (up to "
                f"{_sites(c)}: the guarantee is for what is left of the noise when they "
                "hand over theirs): each message is protected alone, and the sum is "
                "nearly as accurate as central DP.")
    return TRUSTS[variant]


def federated_loss(result: Any, plan: LocalPlan | AggregatePlan | None
                   ) -> LossDescription | None:
    """The loss description of a finished federated run (None for ``none``).

    The description states exactly the (ε, δ) the result states. The subsampled
    Gaussian the plan ran is described only where its accountant was asked at that δ:
    when sites are sampled, the accountant ran at δ′ = δ/P(a site joins) and the result
    states the δ credited for site sampling (:mod:`.site_sampling`), which no
    subsampled Gaussian of the plan's (σ, q, T) meets at ε — the credit is a mixture
    over participation patterns — so the run is described by its (ε, δ) alone. Skellam
    shares are too (their (ε, δ) includes the Poisson draws' total variation).

    Parameters
    ----------
    result : FederatedResult
        The run (its variant, ε and δ).
    plan : LocalPlan or AggregatePlan or None
        The plan that ran.

    Returns
    -------
    LossDescription or None
        ``subsampled_gaussian`` of the plan's noise when its accountant's (ε, δ) is the
        result's, else ``approx`` of the result's (ε, δ).
    """
    if plan is None or result.variant == "none":
        return None
    eps, delta = float(result.epsilon), float(result.delta)
    stated = LossDescription("approx", epsilon=eps, delta=delta)
    if plan.noise != "gaussian" or (plan.epsilon, plan.delta) != (eps, delta):
        return stated
    if isinstance(plan, LocalPlan):  # one plan at every site (parallel composition)
        site = plan.site
        return LossDescription("subsampled_gaussian", epsilon=eps, delta=delta,
                               scale=site.noise_std, sensitivity=site.sensitivity,
                               sample_rate=site.sample_rate, steps=site.steps)
    return LossDescription("subsampled_gaussian", epsilon=eps, delta=delta,
                           scale=plan.view_multiplier * plan.sensitivity,
                           sensitivity=plan.sensitivity, sample_rate=plan.sample_rate,
                           steps=plan.steps)
