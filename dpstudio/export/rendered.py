"""One rendered output file, and the exact text of an amount: what every bundle renderer
(a statistic's, a plan's, a model's) writes with."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from decimal import Decimal

__all__ = ["RenderedFile", "exact_text"]


@dataclass(frozen=True)
class RenderedFile:
    """One output file: its name in the output folder, its role and its bytes."""

    name: str
    role: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def exact_text(x: Decimal | float) -> str:
    """The exact decimal of an amount (a float as the shortest decimal that rounds to it)."""
    return str(Decimal(repr(x)) if isinstance(x, float) else Decimal(x))
