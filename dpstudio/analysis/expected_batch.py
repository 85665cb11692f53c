"""DP-SGD's step divisor: a declared expected batch B, never one read off the data.

DP-SGD (central, and FedAvg's private variants) divides each noisy sum of clipped
gradients by an expected batch. σ, q, T and ε come from public parameters only; if the
divisor were q·n, the released model's scale would depend on n — private under
add/remove-one, the relation DP-SGD's accountant uses — by a factor (n+1)/n between
neighbouring datasets: not post-processing of the noisy sums. So:

- the analyst declares B (``expected_batch``, ``--expected-batch``; per site for FedAvg,
  whose secagg and cape sums are divided by B × the summed sites, as the engine does);
- a simulation without B divides by q·n (q·n/S per site) and says so in its notes;
- a release without B is refused in one sentence (:data:`REFUSAL`), before anything is
  drawn or charged.
"""

from __future__ import annotations

from typing import Any

from dpstudio.engine.errors import QueryError

__all__ = ["REFUSAL", "declared_batch", "divisor_note", "require_declared_batch"]

#: The one sentence a DP-SGD release without a declared expected batch gets.
REFUSAL = ("a DP-SGD release divides by a public expected batch: declare expected_batch = B "
           "(e.g. q × a public row count); it is never read off the data")


def declared_batch(a: Any) -> float | None:
    """B as declared in a training run's parameters (None when not declared).

    Parameters
    ----------
    a : AnalysisSpec
        A training run.

    Returns
    -------
    float or None
        The declared expected batch; None when absent or 0 (the entry's "not declared").
    """
    value = (a.query.params or {}).get("expected_batch")
    return float(value) if value else None


def require_declared_batch(a: Any) -> None:
    """Refuse, in one sentence, a DP-SGD release whose expected batch is not declared.

    Parameters
    ----------
    a : AnalysisSpec
        A training run about to be released (drawn from the OS CSPRNG).

    Raises
    ------
    QueryError
        :data:`REFUSAL`, for method ``dpsgd`` (central or federated) without B.
    """
    if a.training is not None and a.training.method == "dpsgd" and declared_batch(a) is None:
        raise QueryError(REFUSAL)


def divisor_note(divisor: float, declared: bool, federated: bool) -> str:
    """The result's note saying which divisor DP-SGD's steps used.

    Parameters
    ----------
    divisor : float
        The divisor of each (per-site, for FedAvg) noisy sum.
    declared : bool
        Whether it is the declared expected batch.
    federated : bool
        Whether it is FedAvg's per-site divisor.

    Returns
    -------
    str
    """
    if declared:
        return (f"each step divides the noisy sum by the declared expected batch B = "
                f"{divisor:g}" + (" per site (× the sites summed, for secagg and cape)"
                                  if federated else "") + ": public, independent of n")
    what = "q·n/S" if federated else "q·n"
    return (f"each step divides the noisy sum by {what} = {divisor:g}, read from the data: "
            "declare expected_batch for a release")
