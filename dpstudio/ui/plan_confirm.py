"""The confirmation before a release plan is released: its one charge, the budget before
and after, where the files go, and whether to write the report and the script."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from dpstudio.ui.style import MUTED

__all__ = ["PlanConfirmDialog", "short_number"]


def short_number(x: Any) -> str:
    """4 significant digits ("0" for zero): ε, δ and budgets in sentences."""
    x = float(x)
    return "0" if x == 0 else f"{x:.4g}"


_num = short_number


class PlanConfirmDialog(QDialog):
    """The confirmation before a plan's release: its charge, the budget before and after,
    where the files go, and whether to write the report and the script."""

    def __init__(self, check: dict[str, Any], n: int, out_dir: Path,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Release the plan")
        eps, dlt = check["epsilon"], check["delta"]
        rem = check.get("remaining") or check.get("budget")
        lines = [f"<b>Release {n} statistics of {escape(str(check.get('dataset', '')))}</b> "
                 f"with fresh noise from the operating system's CSPRNG.",
                 f"One ledger charge: <b>ε = {_num(eps)}</b>, δ = {_num(dlt)}."]
        if rem is not None:
            lines.append(f"Budget left: ε {_num(rem[0])} now, "
                         f"<b>{_num(rem[0] - eps)}</b> after; δ {_num(rem[1])} now, "
                         f"{_num(rem[1] - dlt)} after.")
        lines.append(f"Files (one manifest, CSV and JSON) go to {escape(str(out_dir))}.")
        self.summary = QLabel("<br>".join(lines), self)
        self.summary.setWordWrap(True)
        self.notes = QLabel("\n".join(f"• {n}" for n in check.get("notes", [])), self)
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet(f"color: {MUTED};")
        self.notes.setVisible(bool(check.get("notes")))
        self.report = QCheckBox("Write the report", self)
        self.report.setChecked(True)
        self.report.setToolTip("An HTML report of the plan: every statistic, its share and "
                               "its interval")
        self.script = QCheckBox("Write the reproducible script", self)
        self.script.setChecked(True)
        self.script.setToolTip("A Python script that re-runs the plan's release")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.release_button = self.buttons.addButton("Release",
                                                     QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for w in (self.summary, self.notes, self.report, self.script, self.buttons):
            layout.addWidget(w)
        self.resize(560, self.sizeHint().height())
