"""Secure aggregation and distributed noise: the server sees only the (noisy) sum.

Modules
-------
encoding    values → integers in {0, …, p} by randomized rounding (shared with the shuffle
            model's protocols)
noise       distributed noise shares: Skellam and discrete Gaussian (Kairouz, Liu &
            Steinke 2021), planned for the clients whose shares protect the sum
skellam     the Skellam law and its exact δ(ε) (and the variance meeting (ε, δ))
secagg      pairwise-masked secure aggregation with dropout recovery (Bonawitz et al.
            2017, simulated), over a sparse random graph above 512 clients (Bell et al.
            2020), masks by a numpy ChaCha20 vectorized over keys
secure_sum  the protocol end to end and the registry entries ``secagg_gaussian`` and
            ``skellam``: :func:`run_secure_sum`, :func:`plan_secure_sum`; the noise is
            planned for the honest clients left after the declared dropouts
            (:class:`NoisePlan`)
result      :class:`SecureSumResult`, what a run or a plan reports
"""

from dpstudio.engine.distributed.noise import DistributedNoise, calibrate_noise
from dpstudio.engine.distributed.secagg import SecAggSession, setup_session
from dpstudio.engine.distributed.secure_sum import (
    NoisePlan,
    SecureSumMechanism,
    SecureSumResult,
    corrupt_clients,
    plan_secure_sum,
    run_secure_sum,
)

__all__ = [
    "DistributedNoise",
    "NoisePlan",
    "SecAggSession",
    "SecureSumMechanism",
    "SecureSumResult",
    "calibrate_noise",
    "corrupt_clients",
    "plan_secure_sum",
    "run_secure_sum",
    "setup_session",
]
