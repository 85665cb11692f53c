"""What an attacker can do at the current ε: the analysis view's trade-off job.

:func:`tradeoff` draws the hypothesis-testing view of one release on the unit square:
the (ε, δ) bound, the release's exact trade-off curve (all its noisy statistics together;
one person's report in the local model), the tightest Gaussian-DP curve below it, the
curve after k releases, and a simulated likelihood-ratio attack with Clopper–Pearson
boxes. The curves come from the engine's trade-off functions
(:mod:`dpstudio.engine.tradeoff`, :mod:`dpstudio.engine.release_curve`); the attack is
the engine's seeded simulation (:mod:`dpstudio.engine.attack`).
"""

from __future__ import annotations

import math

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

__all__ = ["ATTACK_DRAWS", "tradeoff"]

#: Simulated attack: draws of the mechanism on each of the two neighbouring inputs.
ATTACK_DRAWS = 8_000


def _attack_from(emp, label: str, draws: int, confidence: float) -> AttackPoints:
    return AttackPoints(label, emp.alpha, emp.beta, emp.alpha_low, emp.alpha_high,
                        emp.beta_low, emp.beta_high, draws, confidence)


def tradeoff(s: Choices, state: State | None = None, *, draws: int = ATTACK_DRAWS,
             seed: int = 7) -> TradeoffResult:
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
    TradeoffResult
        At the ε the release claims (:func:`~dpstudio.analysis.choices.release_epsilon`),
        with notes saying what is exact and what is simulated.

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
    notes.append(f"simulated attack: likelihood-ratio tests on {draws:,} seeded draws per "
                 f"neighbour (seed {seed}), Clopper–Pearson boxes at {s.confidence:.0%}")
    randomizer = build_randomizer(s, float(s.epsilon)) if s.trust_model == "local" else None
    rc = release_tradeoff(s.spec(), s.trust_model, k, ALPHA, randomizer=randomizer)
    notes.extend(rc.notes)
    if rc.available:
        label = (f"{short(info.label, 22)}: one report" if randomizer is not None
                 else rc.label)
        mech, mu = Line(label, rc.alpha, rc.beta, rc.exact), rc.mu
        composed = Line(rc.composed_label, rc.alpha, rc.composed_beta, rc.composed_exact)
        emp = (simulate_attack(*rc.attack, draws, source, confidence=s.confidence)
               if rc.attack else simulate_laplace_parts_attack(
                   rc.part_epsilon, rc.parts, draws, source, confidence=s.confidence))
        attack = _attack_from(emp, attack_label, draws, s.confidence)
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
    return TradeoffResult(eps, dlt, k, bound, mech, gdp, mu, composed, attack, notes)
