"""What sampling k of the S sites per round provably buys: δ scaled, never ε.

Each round FedAvg picks k of the S sites uniformly at random (without replacement), from
randomness independent of the data, and the server knows which. A record lives at one
site i, which joins a round with probability p = k/S, independently across rounds.

Given the participation pattern A ⊆ {1 … R} of site i, the run is the adaptive
composition of |A|·E noisy steps touching the record (none when A = ∅), whose privacy
profile is at most that of all R·E steps, δ(ε). The server's view is the pattern and the
transcript, so for every ε its hockey-stick divergence is the average over patterns
(joint convexity, with equality here):

    δ_run(ε) = Σ_A P(A)·δ_A(ε) ≤ P(A ≠ ∅)·δ(ε) = (1 − (1 − k/S)^R)·δ(ε),

and one round's δ is scaled by k/S the same way. That is all that is credited: the
amplification of ε by subsampling assumes the record's inclusions are independent of the
other steps' batches, while a site's participation includes *all* its records in *all*
E steps of the round together — the Poisson-subsampling accountant does not cover it.

Credit is taken by running the accountant at δ′ = δ/P(A ≠ ∅) (at most :data:`MAX_DELTA`),
so the reported δ is the target: less noise for the same (ε, δ).
"""

from __future__ import annotations

import math

from dpstudio.engine.errors import ParameterError

__all__ = ["MAX_DELTA", "SiteSampling", "site_sampling"]

#: The largest δ′ the accountant is run at, whatever the credit (a cap only loses credit).
MAX_DELTA = 0.1


class SiteSampling:
    """The participation of one site and the δ credit it gives.

    Attributes
    ----------
    sites, per_round, rounds : int
        S, k and R.
    round_probability : float
        p = k/S, a site's chance to join one round.
    run_probability : float
        1 − (1 − p)^R, its chance to join at least one round.
    accounted_delta : float
        δ′ the accountant is run at.
    delta : float
        The credited δ of the whole run: run_probability·δ′ (≤ the target).
    """

    def __init__(self, sites: int, per_round: int, rounds: int, delta: float):
        s, k, r = int(sites), int(per_round), int(rounds)
        if not 1 <= k <= s or r < 1:
            raise ParameterError("site sampling needs 1 ≤ k ≤ S sites per round and R ≥ 1")
        self.sites, self.per_round, self.rounds = s, k, r
        self.round_probability = k / s
        # 1 − (1 − p)^R without cancellation for small p.
        self.run_probability = (1.0 if k == s
                                else -math.expm1(r * math.log1p(-k / s)))
        self.accounted_delta = min(float(delta) / self.run_probability,
                                   max(float(delta), MAX_DELTA))
        self.delta = min(float(delta), self.run_probability * self.accounted_delta)

    @property
    def credited(self) -> bool:
        """True when sites are sampled (k < S) and δ′ is above the target."""
        return self.per_round < self.sites

    def round_delta(self, delta: float) -> float:
        """One round's δ at the accountant's δ for one round: scaled by k/S.

        Parameters
        ----------
        delta : float
            δ of E steps of a site that joins.

        Returns
        -------
        float
        """
        return self.round_probability * float(delta)

    def note(self) -> str:
        """The sentence the result carries (empty without sampling).

        Returns
        -------
        str
        """
        if not self.credited:
            return ""
        return (f"{self.per_round} of {self.sites} sites join each round: a site takes "
                f"part in at least one of {self.rounds} rounds with probability "
                f"{self.run_probability:.4g}, so δ is credited by that factor (joint "
                f"convexity; the accountant ran at δ′ = {self.accounted_delta:.3g}); no "
                "amplification of ε is credited for sampling sites")


def site_sampling(sites: int, per_round: int, rounds: int, delta: float) -> SiteSampling:
    """:class:`SiteSampling` for S sites, k per round, R rounds and target δ.

    Parameters
    ----------
    sites, per_round, rounds : int
        S, k, R.
    delta : float
        The target δ of the whole run.

    Returns
    -------
    SiteSampling
    """
    return SiteSampling(sites, per_round, rounds, delta)
