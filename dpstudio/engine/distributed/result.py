"""What a secure-aggregation sum reports: its value, privacy and utility figures.

Both :func:`~dpstudio.engine.distributed.secure_sum.run_secure_sum` (a simulated run) and
:func:`~dpstudio.engine.distributed.secure_sum.plan_secure_sum` (the figures without data)
return a :class:`SecureSumResult`; the protocol's module re-exports it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["SecureSumResult"]


@dataclass
class SecureSumResult:
    """A secure-aggregation sum (or mean) with its privacy and utility figures.

    Error figures are in value units and data-independent.

    Attributes
    ----------
    mechanism, query : str
        The registry entry and ``"sum"`` or ``"mean"``.
    value : float or None
        The noisy sum (or mean) of the survivors; None in plan mode.
    stderr : float
        An upper bound on the standard error (rounding counted at its worst, n/4 steps²).
    error_bound : float
        P(|error| > error_bound) ≤ 1 − confidence, rigorously (noise tail + Bernstein for
        rounding).
    confidence : float
        Level of ``error_bound``.
    epsilon, delta : float
        The guarantee against the colluding server (that of the honest survivors' shares).
    n : int
        Survivors, whose values the sum covers.
    n_clients : int
        Clients taking part.
    dropouts, max_dropouts : int
        Clients that dropped out after masking, and the tolerance the noise was planned for.
    messages_per_user, bits_per_message : int
        One message per client, of the modulus' bits.
    precision : int
        p: grid steps across the bounds.
    noise : str
        The shares' family.
    noise_variance : float
        Variance of the noise in the released value (all survivors' shares).
    central_stderr : float
        Standard error of the central discrete Gaussian meeting the same (ε, δ) on the
        same grid, for comparison.
    overflow_probability : float
        Bound on the chance that the noisy sum wraps around the modulus.
    simulated : bool
        Whether the noise came from a seeded generator.
    source, accounting : str
        Where the noise came from; how (ε, δ) was accounted.
    clamped, missing_count : int
        Values clamped, and missing ones sent as the middle (analyst-only).
    notes : list of str
        The threat model and what the run did.
    corrupt_fraction : float
        γ, the fraction of clients that may collude with the server.
    corrupt_clients, honest_clients : int
        ⌊γn⌋, and the H = n − ⌊γn⌋ − max_dropouts honest survivors whose shares alone
        give (ε, δ).
    honest_noise_variance : float
        Variance of those H shares (value units).
    share_sigma_steps : float
        σ_c of the discrete Gaussian each client drew its share from, in grid steps: the
        draw's own parameter, which the loss description reads (0 for Skellam shares, or
        when not known). Not in :meth:`to_dict`: the JSON keys stay those above.
    """

    mechanism: str
    query: str
    value: float | None
    stderr: float
    error_bound: float
    confidence: float
    epsilon: float
    delta: float
    n: int
    n_clients: int
    dropouts: int
    max_dropouts: int
    messages_per_user: int
    bits_per_message: int
    precision: int
    noise: str
    noise_variance: float
    central_stderr: float
    overflow_probability: float
    simulated: bool
    source: str = ""
    clamped: int = 0
    missing_count: int = 0  # analyst-only, like clamped
    accounting: str = ""
    notes: list[str] = field(default_factory=list)
    # Threat model the noise was planned for (module doc): ⌊γn⌋ colluding clients, the
    # H = n − ⌊γn⌋ − max_dropouts honest survivors whose shares alone give (ε, δ), and the
    # variance of those H shares (value units; ``noise_variance`` is that of all survivors).
    corrupt_fraction: float = 0.0
    corrupt_clients: int = 0
    honest_clients: int = 0
    honest_noise_variance: float = 0.0
    # What the engine drew, for the loss description only (grid steps, not rescaled).
    share_sigma_steps: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dictionary (without ``share_sigma_steps``)."""
        out = asdict(self)
        out.pop("share_sigma_steps")
        return out

    def loss_description(self) -> Any:
        """What this sum drew, for a ledger's tight accountants: the discrete Gaussian
        the H honest survivors' shares make (σ = σ_c·√H, σ_c the drawn
        ``share_sigma_steps``, Δ = p steps) where that is exact to float resolution and
        the draw honours (ε, δ), else the (ε, δ) it states
        (:func:`~dpstudio.engine.accounting.protocol_loss.secure_sum_loss`).

        Returns
        -------
        LossDescription
        """
        from dpstudio.engine.accounting.protocol_loss import secure_sum_loss

        return secure_sum_loss(self)
