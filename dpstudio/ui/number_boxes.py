"""Number boxes: spin boxes that show significant digits, and ones that keep what was typed.

A plain :class:`~PySide6.QtWidgets.QDoubleSpinBox` replaces a number outside its range by
the nearest limit when Enter is pressed (ε = 0 became 0.01, 1000 became 100, silently).
With ``keep_typed`` the boxes here take any number, show it as typed, and leave the
judgement to their owner (the session checks ε and δ with the engine's own range check,
a :class:`~dpstudio.ui.param_form.ParamForm` a parameter's): the range they are given is
only what the arrow keys and the slider offer. :func:`mark` shows a refused value.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPalette, QValidator
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QSlider, QSpinBox, QWidget

__all__ = ["INVALID_BASE", "INVALID_TEXT", "LogSliderSpin", "ScientificSpinBox",
           "SignificantSpinBox", "WholeSpinBox", "mark", "typed_number"]

#: How a box holding a refused number looks (the sentence saying why is beside it): its
#: field's colours, so that a spin box keeps its native frame and arrows.
INVALID_BASE, INVALID_TEXT = "#fdecea", "#7a1a10"
#: The real range of a box that keeps what is typed: any number a person can type.
_WIDE = 1e300
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
#: Decimals a keep-typed box rounds to: every double keeps its value (ε = 1e-13 is valid).
_ALL_DECIMALS = 323


def mark(widget: QWidget, message: str | None, tip: str) -> None:
    """Show ``widget`` as holding a refused value (``message`` says why), or as valid.

    Parameters
    ----------
    widget : QWidget
        The editing box; its ``invalid`` property says which (tests, style sheets).
    message : str or None
        The one sentence saying why the value cannot be used; None: it can.
    tip : str
        The box's own tooltip; the reason is added below it.
    """
    invalid = bool(message)
    if bool(widget.property("invalid")) != invalid:
        widget.setProperty("invalid", invalid)
        if invalid:
            palette = widget.palette()
            palette.setColor(QPalette.ColorRole.Base, QColor(INVALID_BASE))
            palette.setColor(QPalette.ColorRole.Text, QColor(INVALID_TEXT))
            widget.setPalette(palette)
        else:
            widget.setPalette(QPalette())  # back to the application's
    widget.setToolTip(f"{tip}\n\n{message}" if invalid else tip)
    widget.setAccessibleDescription(message or "")


def typed_number(text: str) -> Decimal | str:
    """A typed number as the exact decimal it spells (what the range check compares and
    its message shows: "got 0", not "got 0.0"); text that is no number stays text, for
    the check to refuse as such."""
    try:
        value = Decimal(text.strip().replace(",", "."))
    except InvalidOperation:
        return text
    return value if value.is_finite() else text


def _shortest(value: float, low: int, high: int, fmt: str) -> str:
    """``value`` with the fewest significant digits in [low, high] that read back exactly,
    else with ``low`` (a number the box holds is shown as it is, when it is short)."""
    for digits in range(low, high + 1):
        text = format(value, f".{digits}{fmt}")
        if float(text) == value:
            return text
    return format(value, f".{low}{fmt}")


class SignificantSpinBox(QDoubleSpinBox):
    """A float spin box that shows 3 significant digits (0.0123, 1.5, 42) and steps
    multiplicatively when ``steps_per_decade`` is set (×10^(1/steps_per_decade) per arrow
    press).

    A value with more digits that are exact (0.123456, set by "use the remaining ε") is
    shown with them, up to 12. With ``keep_typed`` the box takes any number and shows it
    as typed; :meth:`minimum` and :meth:`maximum` are then the range the arrows offer, and
    the owner checks the value (see the module's docstring). ``zero_text`` is shown for 0
    (``"auto"`` where 0 chooses automatically) and typed for it.
    """

    def __init__(self, parent: QWidget | None = None, digits: int = 3,
                 steps_per_decade: int = 0, *, keep_typed: bool = False,
                 zero_text: str = "") -> None:
        super().__init__(parent)
        self._digits = digits
        self._per_decade = steps_per_decade
        self._keep = keep_typed
        self._zero_text = zero_text
        self._offered = (0.0, 99.99)
        self._typed: tuple[str, float] | None = None
        self.setDecimals(_ALL_DECIMALS if keep_typed else 12)
        if keep_typed:
            super().setRange(-_WIDE, _WIDE)
        self.setKeyboardTracking(False)
        self.setAccelerated(True)

    # -- the range: offered (arrows) or enforced -------------------------------------------

    def setRange(self, low: float, high: float) -> None:  # noqa: N802 - Qt override
        if not self._keep:
            super().setRange(low, high)
            return
        self._offered = (float(low), float(high))

    def setMinimum(self, low: float) -> None:  # noqa: N802 - Qt override
        self.setRange(low, max(low, self.maximum()))

    def setMaximum(self, high: float) -> None:  # noqa: N802 - Qt override
        self.setRange(min(high, self.minimum()), high)

    def minimum(self) -> float:  # noqa: D102 - Qt override
        return self._offered[0] if self._keep else super().minimum()

    def maximum(self) -> float:  # noqa: D102 - Qt override
        return self._offered[1] if self._keep else super().maximum()

    # -- text --------------------------------------------------------------------------------

    def _format(self, value: float) -> str:
        return _shortest(value, self._digits, 12, "g")

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt override
        typed = self._typed
        if typed is not None and typed[1] == value:
            return typed[0]
        if value == 0 and self._zero_text:
            return self._zero_text
        return self._format(value)

    def valueFromText(self, text: str) -> float:  # noqa: N802 - Qt override
        stripped = text.replace(",", ".").strip()
        if self._zero_text and stripped == self._zero_text:
            return 0.0
        try:
            value = float(stripped)
        except ValueError:
            return self.value()
        if self._keep:
            self._typed = (stripped, value)
        return value

    def typed_text(self) -> str:
        """What the box shows: the text as typed, or the value as the box writes it."""
        return self.textFromValue(self.value())

    def validate(self, text: str, pos: int):  # noqa: D102 - Qt override
        stripped = text.replace(",", ".").strip()
        if self._zero_text and stripped and self._zero_text.startswith(stripped):
            state = (QValidator.State.Acceptable if stripped == self._zero_text
                     else QValidator.State.Intermediate)
            return state, text, pos
        if stripped in ("", "-", "+", ".", "-.", "+."):
            return QValidator.State.Intermediate, text, pos
        try:
            value = float(stripped)
        except ValueError:
            if stripped.lower().endswith(("e", "e-", "e+")):
                return QValidator.State.Intermediate, text, pos
            return QValidator.State.Invalid, text, pos
        if not math.isfinite(value):  # "inf", "nan": no one means them
            return QValidator.State.Invalid, text, pos
        return QValidator.State.Acceptable, text, pos

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt override
        value = self.value()
        low, high = self.minimum(), self.maximum()
        if self._per_decade and value > 0:
            new = value * 10.0 ** (steps / self._per_decade)
        elif self._keep:
            # From a refused value (0, −1) the arrows lead back into the offered range.
            new = low if self._per_decade else value + steps * self.singleStep()
        else:
            super().stepBy(steps)
            return
        self.setValue(min(max(new, low), high))


class ScientificSpinBox(SignificantSpinBox):
    """δ-style values: shown as 1e-06, stepped by a factor of 10 per arrow press."""

    def __init__(self, parent: QWidget | None = None, *, keep_typed: bool = False) -> None:
        super().__init__(parent, digits=2, steps_per_decade=1, keep_typed=keep_typed)
        if not keep_typed:
            self.setDecimals(15)

    def _format(self, value: float) -> str:
        if value <= 0:
            return "0" if value == 0 else _shortest(value, 2, 12, "g")
        mantissa, exponent = _shortest(value, 1, 11, "e").split("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"


class WholeSpinBox(QSpinBox):
    """An integer spin box that keeps what was typed (see :class:`SignificantSpinBox`).

    ``zero_text`` is shown for 0 and typed for it (``"auto"``).
    """

    def __init__(self, parent: QWidget | None = None, *, zero_text: str = "") -> None:
        super().__init__(parent)
        self._zero_text = zero_text
        self._offered = (0, 99)
        self._typed: tuple[str, int] | None = None
        super().setRange(_INT_MIN, _INT_MAX)
        self.setKeyboardTracking(False)
        self.setAccelerated(True)

    def setRange(self, low: int, high: int) -> None:  # noqa: N802 - Qt override
        self._offered = (int(low), int(high))

    def minimum(self) -> int:  # noqa: D102 - Qt override
        return self._offered[0]

    def maximum(self) -> int:  # noqa: D102 - Qt override
        return self._offered[1]

    def textFromValue(self, value: int) -> str:  # noqa: N802 - Qt override
        typed = self._typed
        if typed is not None and typed[1] == value:
            return typed[0]
        if value == 0 and self._zero_text:
            return self._zero_text
        return str(value)

    def valueFromText(self, text: str) -> int:  # noqa: N802 - Qt override
        stripped = text.strip()
        if self._zero_text and stripped == self._zero_text:
            return 0
        try:
            value = int(stripped)
        except ValueError:
            return self.value()
        self._typed = (stripped, value)
        return value

    def typed_text(self) -> str:
        """What the box shows: the text as typed, or the value."""
        return self.textFromValue(self.value())

    def validate(self, text: str, pos: int):  # noqa: D102 - Qt override
        stripped = text.strip()
        if self._zero_text and stripped and self._zero_text.startswith(stripped):
            state = (QValidator.State.Acceptable if stripped == self._zero_text
                     else QValidator.State.Intermediate)
            return state, text, pos
        if stripped in ("", "-", "+"):
            return QValidator.State.Intermediate, text, pos
        try:
            value = int(stripped)
        except ValueError:
            return QValidator.State.Invalid, text, pos
        if not _INT_MIN <= value <= _INT_MAX:
            return QValidator.State.Invalid, text, pos
        return QValidator.State.Acceptable, text, pos

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt override
        low, high = self._offered
        self.setValue(min(max(self.value() + steps * self.singleStep(), low), high))


class LogSliderSpin(QWidget):
    """A logarithmic slider and a spin box showing the same positive number.

    ``value_changed`` fires on every slider step (drags are live); a number typed into
    the box is sent as typed by ``typed`` (its owner checks it: the box keeps any number,
    in or out of range). :meth:`set_value` shows a number: the box exactly, the slider
    at its nearest end when the number is beyond it.
    """

    value_changed = Signal(float)
    typed = Signal(str)

    def __init__(self, low: float, high: float, value: float, steps_per_decade: int = 100,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.low, self.high = float(low), float(high)
        self._per_decade = steps_per_decade
        self._value = float(value)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        decades = math.log10(self.high / self.low)
        self.slider.setRange(0, int(round(decades * steps_per_decade)))
        self.slider.setPageStep(steps_per_decade // 4 or 1)
        self.spin = SignificantSpinBox(self, steps_per_decade=max(steps_per_decade // 10, 1),
                                       keep_typed=True)
        self.spin.setRange(self.low, self.high)
        self.spin.setMinimumWidth(72)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.spin)
        self.slider.valueChanged.connect(self._slider_moved)
        self.spin.valueChanged.connect(self._spin_changed)
        self.set_value(value)

    def value(self) -> float:
        """The number shown in the box."""
        return self._value

    def _to_position(self, value: float) -> int:
        value = min(max(value, self.low), self.high)
        return int(round(math.log10(value / self.low) * self._per_decade))

    def _from_position(self, position: int) -> float:
        return self.low * 10.0 ** (position / self._per_decade)

    def set_value(self, value: float) -> None:
        """Show ``value`` without emitting a signal."""
        v = float(value)
        self._value = v
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.slider.setValue(self._to_position(v))
        self.spin.setValue(v)
        for w in (self.slider, self.spin):
            w.blockSignals(False)

    def _slider_moved(self, position: int) -> None:
        v = float(f"{self._from_position(position):.3g}")
        v = min(max(v, self.low), self.high)
        self._value = v
        self.spin.blockSignals(True)
        self.spin.setValue(v)
        self.spin.blockSignals(False)
        self.value_changed.emit(v)

    def _spin_changed(self, value: float) -> None:
        # The slider follows only once the owner has accepted the number (set_value).
        self._value = float(value)
        self.typed.emit(self.spin.typed_text())

    def mark(self, message: str | None, tip: str) -> None:
        """Show the box as holding a refused number (:func:`mark`), or as valid."""
        mark(self.spin, message, tip)
        self.slider.setToolTip(tip)
        super().setToolTip(tip)

    def setToolTip(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setToolTip(text)
        self.slider.setToolTip(text)
        self.spin.setToolTip(text)
