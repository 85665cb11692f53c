"""What the distributed-noise tests share: the noise shares a sum's report says it added."""

from __future__ import annotations

import math

from dpstudio.engine import sampling
from dpstudio.engine.distributed.noise import DistributedNoise


def reported_shares(out, width: float = 1.0) -> DistributedNoise:
    """The per-client shares a sum's report says were added: its ``noise_variance`` (value
    units, all ``out.n`` survivors' shares) brought back to grid steps and split evenly —
    a variance (Skellam) or σ_c (Gaussian, with Var N_Z(0, σ_c²) = var, found by bisection)."""
    var = out.noise_variance / out.n * (out.precision / width) ** 2
    if out.noise == "skellam":
        per_client = var
    else:
        lo, hi = 0.9 * math.sqrt(var), 1.1 * math.sqrt(var)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if sampling.discrete_gaussian_variance(mid) < var else (lo, mid)
        per_client = hi
    return DistributedNoise(out.noise, per_client, 10**9, out.precision, out.epsilon,
                            out.delta)
