"""Notes a secure-aggregation sum carries, worded once for every way it is computed.

A sum run in one process (:mod:`~dpstudio.engine.distributed.secure_sum`) and one summed
from partitions (:mod:`~dpstudio.engine.distributed.partial`) must say the same thing
about the same run, so the sentences live here and both import them.
"""

from __future__ import annotations

__all__ = ["dropout_note"]


def dropout_note(dropouts: int, planned: int, survivors: int) -> str:
    """The note of a run where clients dropped out after masking.

    Parameters
    ----------
    dropouts : int
        Clients that dropped out.
    planned : int
        The most dropouts the noise was planned for (``max_dropouts``).
    survivors : int
        Clients whose inputs the sum holds.

    Returns
    -------
    str
        One sentence, e.g. "3 clients dropped out after masking (up to 5 planned); the
        sum is over the 97 survivors".
    """
    return (f"{dropouts} clients dropped out after masking (up to {planned} planned); "
            f"the sum is over the {survivors} survivors")
