"""What an attacker can do at the current ε: the analysis view's trade-off job.

:func:`tradeoff` draws the hypothesis-testing view of one release on the unit square:
the (ε, δ) bound, the release's exact trade-off curve (all its noisy statistics together;
one person's report in the local model), the tightest Gaussian-DP curve below it, the
curve after k releases, and a simulated likelihood-ratio attack with Clopper–Pearson
boxes. The curves come from the engine's trade-off functions
(:mod:`dpstudio.engine.tradeoff`, :mod:`dpstudio.engine.release_curve`); the attack is
the engine's seeded simulation (:mod:`dpstudio.engine.attack`), run where the release's
pair of output distributions is one the simulation draws from. Where only the release's
(ε, δ) is known (shuffle protocols, permute-and-flip), the release's curve is the boundary
of that region and :attr:`ReleaseTradeoff.region_note` says so in one sentence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpstudio.analysis.choices import ALPHA, Choices, build_randomizer, release_epsilon
from dpstudio.analysis.curves import AttackPoints, Line, TradeoffResult, short
from dpstudio.engine.attack import simulate_attack, simulate_laplace_parts_attack
from dpstudio.engine.release_curve import matching_mu, release_tradeoff, tightest_mu
from dpstudio.engine.rng import SimulationSource
from dpstudio.engine.tradeoff import (
    compose_tradeoff,
    epsilon_delta_tradeoff,
    gaussian_tradeoff,
)
from dpstudio.jobs import State, check

__all__ = ["ATTACK_DRAWS", "ReleaseTradeoff", "tradeoff"]

#: Simulated attack: draws of the mechanism on each of the two neighbouring inputs.
ATTACK_DRAWS = 8_000


@dataclass
class ReleaseTradeoff(TradeoffResult):
    """A :class:`~dpstudio.analysis.curves.TradeoffResult` that says whether the release's
    curve is its own or only the boundary of its (ε, δ) region.

    Attributes
    ----------
    region_note : str or None
        One sentence for the plot's caption when only the release's (ε, δ) is known (its
        curve is then that region's boundary, and its legend "(ε, δ) region"); None when
        the curve is the release's own.
    """

    region_note: str | None = None

    @property
    def region_only(self) -> bool:
        """Whether the release's curve is only the boundary of its (ε, δ) region."""
        return self.region_note is not None


def _attack_from(emp, label: str, draws: int, confidence: float) -> AttackPoints:
    return AttackPoints(label, emp.alpha, emp.beta, emp.alpha_low, emp.alpha_high,
                        emp.beta_low, emp.beta_high, draws, confidence)


def tradeoff(s: Choices, state: State | None = None, *, draws: int = ATTACK_DRAWS,
             seed: int = 7) -> ReleaseTradeoff:
    """What an attacker can do at the current ε: curves on the unit square.

    The (ε, δ) bound is the guarantee itself; the mechanism's curve is the release's exact
    trade-off (all its noisy statistics together; one person's report in the local model);
    μ is its Gaussian-DP parameter (exact for Gaussian noise, else the tightest μ below the
    curve); the composed curve is k such releases; the attack is a simulated
    likelihood-ratio test between two neighbours (seeded, Clopper–Pearson boxes).

    Parameters
    ----------
    s : Choices
    state : State, optional
        Cancellation of the job.
    draws : int
        Draws of the simulated attack on each neighbour.
    seed : int
        Seed of the simulated attack.

    Returns
    -------
    ReleaseTradeoff
        At the ε the release claims (:func:`~dpstudio.analysis.choices.release_epsilon`),
        with notes saying what is exact and what is simulated, and the region note where
        the release's curve is only its (ε, δ) region.

    Raises
    ------
    Cancelled
        When ``state`` asks the job to stop.
    EngineError
        For choices the engine refuses.
    """
    check(state)
    eps, dlt, k = release_epsilon(s), s.effective_delta, int(s.compositions)
    bound_c = epsilon_delta_tradeoff(eps, dlt, ALPHA)
    bound = Line(f"ε = {eps:.3g}, δ = {dlt:.0e}" if dlt else f"ε = {eps:.3g}",
                 bound_c.alpha, bound_c.beta)
    notes: list[str] = []
    mech = composed = attack = None
    mu = None
    info = s.info
    source = SimulationSource(seed)
    attack_label = "simulated attack"
    if not math.isclose(eps, float(s.epsilon), rel_tol=1e-9):
        notes.append(f"the mechanism's parameters fix its guarantee at ε = {eps:.4g} (not the "
                     f"slider's {float(s.epsilon):.4g}): that is the ε shown and charged")
    randomizer = build_randomizer(s, float(s.epsilon)) if s.trust_model == "local" else None
    rc = release_tradeoff(s.spec(), s.trust_model, k, ALPHA, randomizer=randomizer)
    notes.extend(rc.notes)
    if rc.available:
        label = (f"{short(info.label, 22)}: one report" if randomizer is not None
                 else rc.label)
        mech, mu = Line(label, rc.alpha, rc.beta, rc.exact), rc.mu
        composed = Line(rc.composed_label, rc.alpha, rc.composed_beta, rc.composed_exact)
        emp = None
        if rc.attack:
            emp = simulate_attack(*rc.attack, draws, source, confidence=s.confidence)
        elif rc.part_epsilon is not None:
            emp = simulate_laplace_parts_attack(rc.part_epsilon, rc.parts, draws, source,
                                                confidence=s.confidence)
        else:
            notes.append("no simulated attack for this mechanism: the simulation draws only "
                         "randomized response, Laplace and Gaussian pairs")
        if emp is not None:
            attack = _attack_from(emp, attack_label, draws, s.confidence)
            notes.append(f"simulated attack: likelihood-ratio tests on {draws:,} seeded "
                         f"draws per neighbour (seed {seed}), Clopper–Pearson boxes at "
                         f"{s.confidence:.0%}")
    check(state)
    suffix = ""
    if mu is None and (mech is not None or dlt == 0):
        mu = tightest_mu(mech.beta if mech is not None else bound.beta)
        notes.append("Gaussian DP: the tightest μ-GDP curve below the mechanism's")
    if mu is None:  # δ > 0 and no exact curve: the Gaussian with the same (ε, δ)
        mu = matching_mu(eps, dlt)
        suffix = ", same ε, δ"
        notes.append("Gaussian DP: the Gaussian mechanism with the same (ε, δ)")
    g = gaussian_tradeoff(mu, ALPHA)
    gdp = Line(f"Gaussian DP, μ = {mu:.2g}{suffix}", g.alpha, g.beta)
    if composed is None:
        if dlt == 0:
            ck = compose_tradeoff("rr", {"epsilon": eps}, k, ALPHA)
            composed = Line(f"{k} releases (ε-DP, optimal)", ck.alpha, ck.beta)
        else:
            ck = gaussian_tradeoff(mu * math.sqrt(k), ALPHA)
            composed = Line(f"{k} releases (≈ μ = {mu * math.sqrt(k):.2g})", ck.alpha,
                            ck.beta, False)
    return ReleaseTradeoff(eps, dlt, k, bound, mech, gdp, mu, composed, attack, notes,
                           rc.region_note if rc.region_only else None)
