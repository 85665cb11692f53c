"""The few ``scipy.special`` functions the engine calls, imported on their first call.

``import scipy.special`` costs a command about 0.15 s (it brings scipy's array-API layer
with it), more than the rest of the engine's imports, and most commands (``dpstudio
mechanisms``, a count or a mean) never call one of these functions. Each name here is
the scipy function itself once called (the first call imports scipy.special and keeps
the function); use ``from dpstudio.engine.special import ndtr`` instead of importing
from scipy at the top of an engine module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["bdtr", "betaincinv", "erfc", "expit", "gammaincinv", "gammaln", "gammasgn", "ive",
           "log_ndtr", "ndtr", "ndtri"]


def _lazy(name: str) -> Callable[..., Any]:
    """A stand-in for ``scipy.special.<name>`` that imports it on its first call."""
    function: Callable[..., Any] | None = None

    def call(*args: Any, **kwargs: Any) -> Any:
        nonlocal function
        if function is None:
            import scipy.special

            function = getattr(scipy.special, name)
        return function(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``scipy.special.{name}``, imported on the first call."
    return call


bdtr = _lazy("bdtr")
betaincinv = _lazy("betaincinv")
erfc = _lazy("erfc")
expit = _lazy("expit")
gammaincinv = _lazy("gammaincinv")
gammaln = _lazy("gammaln")
gammasgn = _lazy("gammasgn")
ive = _lazy("ive")
log_ndtr = _lazy("log_ndtr")
ndtr = _lazy("ndtr")
ndtri = _lazy("ndtri")
