"""Numbers typed into the session's boxes that cannot be used: kept, said why, not used.

:class:`TypedNumbers` is one part of :class:`~dpstudio.ui.session.Session` (which mixes
it in). A number the engine refuses (ε = 0, ε = 1000, a parameter out of its range) is
never replaced by the nearest limit: it stays in its box as typed, the session keeps the
engine's sentence saying why (the command line's, from
:func:`dpstudio.engine.checks.number`), and nothing is computed or released until a valid
number replaces it. The last valid value stays in force meanwhile.
"""

from __future__ import annotations

from typing import Any

from dpstudio.engine.checks import number
from dpstudio.engine.entry import DELTA, EPSILON
from dpstudio.engine.errors import ParameterError
from dpstudio.ui.number_boxes import typed_number

__all__ = ["TypedNumbers", "check_declared"]


def check_declared(param: Any, value: Any) -> float:
    """``value`` checked against ε's or δ's declared range.

    Parameters
    ----------
    param : Param
        :data:`~dpstudio.engine.entry.EPSILON` or :data:`~dpstudio.engine.entry.DELTA`.
    value : number, Decimal or str
        As typed (a :class:`~decimal.Decimal` is shown as its digits in the message).

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        The engine's one range check named by the parameter's label: "ε must be a finite
        number in (0, 100], got 0".
    """
    return number(param.label, value, low=param.low, low_open=param.low_open,
                  high=param.high, high_open=param.high_open)


class TypedNumbers:
    """Numbers as typed, and the refused ones; part of the session.

    The session provides the attributes annotated here, :meth:`_put_epsilon` and
    :meth:`_put_delta` (set a valid value and drop its refusal).

    Attributes
    ----------
    refused : dict
        Key → (the number as typed, why it cannot be used). Keys: ``"epsilon"``,
        ``"delta"``, ``"params.NAME"``, ``"query_params.NAME"``.
    """

    refused: dict[str, tuple[str, str]]
    changed: Any
    needs_delta: bool

    def _put_epsilon(self, eps: float) -> None:  # the session's
        raise NotImplementedError

    def _put_delta(self, d: float) -> None:  # the session's
        raise NotImplementedError

    def enter_epsilon(self, text: str) -> bool:
        """ε as typed in its box: in force when the engine accepts it, else refused.

        Any ε the engine accepts is taken exactly, beyond the slider's range too (ε = 0.005
        stays 0.005). One it refuses is kept as typed in :attr:`refused` with the engine's
        sentence (the command line's: "ε must be a finite number in (0, 100], got 0"): the
        last valid ε stays, and nothing is computed or released until a valid one comes.

        Parameters
        ----------
        text : str
            What the box shows.

        Returns
        -------
        bool
            Whether ε was accepted.
        """
        try:
            value = check_declared(EPSILON, typed_number(text))
        except ParameterError as exc:
            self.refuse("epsilon", text, str(exc))
            return False
        self._put_epsilon(value)
        return True

    def enter_delta(self, text: str) -> bool:
        """δ as typed in its box (see :meth:`enter_epsilon`; the range is δ's).

        Parameters
        ----------
        text : str
            What the box shows.

        Returns
        -------
        bool
            Whether δ was accepted.
        """
        try:
            value = check_declared(DELTA, typed_number(text))
        except ParameterError as exc:
            self.refuse("delta", text, str(exc))
            return False
        self._put_delta(value)
        return True

    def use_epsilon(self, epsilon: float) -> None:
        """Set ε exactly (e.g. to what the budget has left), beyond the slider's range too.

        Parameters
        ----------
        epsilon : float
            An ε the engine accepts.

        Raises
        ------
        ParameterError
            For an ε outside the engine's range.
        """
        self._put_epsilon(check_declared(EPSILON, epsilon))

    def use_delta(self, delta: float) -> None:
        """Set δ exactly (e.g. to what the budget has left); see :meth:`use_epsilon`.

        Parameters
        ----------
        delta : float
            A δ the engine accepts.

        Raises
        ------
        ParameterError
            For a δ outside the engine's range.
        """
        self._put_delta(check_declared(DELTA, delta))

    def refuse(self, key: str, text: str, why: str) -> None:
        """Record a number typed that cannot be used (see :attr:`refused`).

        Parameters
        ----------
        key : str
            ``"epsilon"``, ``"delta"``, ``"params.NAME"`` or ``"query_params.NAME"``.
        text : str
            The number as typed (the box keeps showing it).
        why : str
            One sentence: the engine's range check.
        """
        if self.refused.get(key) != (text, why):
            self.refused[key] = (text, why)
            self.changed.emit("input")

    def refused_for(self, prefix: str) -> dict[str, str]:
        """Name → why, for the refusals under ``prefix`` (``"params."``, ``"query_params."``).

        Parameters
        ----------
        prefix : str

        Returns
        -------
        dict
        """
        return {key[len(prefix):]: why for key, (_text, why) in self.refused.items()
                if key.startswith(prefix)}

    def input_problem(self) -> str | None:
        """The first refused number that matters now (δ only where the mechanism takes
        one), as its sentence; None when every number in force is the one shown."""
        for key, (_text, why) in self.refused.items():
            if key == "delta" and not self.needs_delta:
                continue
            return why
        return None

    def _accept(self, key: str) -> bool:
        """Drop ``key``'s refusal (a valid value replaces it); whether there was one."""
        return self.refused.pop(key, None) is not None

    def _forget(self, *prefixes: str) -> None:
        """Drop the refusals of a form that is rebuilt (its boxes are new)."""
        for key in [k for k in self.refused if k.startswith(prefixes)]:
            del self.refused[key]
