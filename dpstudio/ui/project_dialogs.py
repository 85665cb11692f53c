"""Dialogs of projects and releases: New Project, the release confirmation, the released
result with its files.

They only gather choices and show results; :mod:`dpstudio.ui.project_controller` opens
projects and runs releases.
"""

from __future__ import annotations

from decimal import Decimal
from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from dpstudio.engine.registry import REGISTRY
from dpstudio.project import PROJECT_SUFFIX, ProjectError, ReleaseRecord, ReleaseSpec
from dpstudio.project.store import budget_amounts
from dpstudio.ui.done_kinds import released
from dpstudio.ui.number_boxes import mark
from dpstudio.ui.param_form import REFUSED_STYLE, ScientificSpinBox, SignificantSpinBox
from dpstudio.ui.style import MUTED
from dpstudio.ui.texts import GLOSSARY, QUERY_LABELS

__all__ = [
    "FORMAT_LABELS",
    "PROJECT_FILTER",
    "NewProjectDialog",
    "ReleaseDialog",
    "ReleaseDoneDialog",
    "describe_query",
    "open_folder",
]

PROJECT_FILTER = f"DP Studio projects (*{PROJECT_SUFFIX});;All files (*)"
#: Export format → check-box label (order of the check boxes).
FORMAT_LABELS = {"csv": "CSV", "json": "JSON", "parquet": "Parquet", "xlsx": "Excel"}
LOCAL_MODEL_TEXT = ("local model: each record randomized before aggregation (the randomized "
                    "records are exported with the estimates; raw values never are)")
#: The release dialog's first line: what matters before anything else.
REAL_RELEASE = "Real release — cannot be undone."
REAL_RELEASE_MORE = ("Its ε and δ are charged to the dataset's budget for good and it is "
                     "recorded in the project's ledger. Noise from the OS CSPRNG, the "
                     "operating system's secure generator (the preview's simulations use a "
                     "seeded one and spend nothing).")
WARNING_STYLE = ("background:#fdecea; border:1px solid #e8a39b; border-radius:4px; "
                 "padding:6px; color:#7a1a10;")

TIPS = {
    "path": "The project file (.dpstudio) to create: one file holding the datasets, their "
            "budgets and the ledger of every release.",
    "epsilon": "Default total ε of each dataset: the most privacy loss all its releases "
               "together may cost (set when a dataset's first release registers it).",
    "delta": "Default total δ of each dataset: the summed failure probability its releases "
             "may use; 0 allows only pure ε-DP mechanisms.",
    "relation": GLOSSARY["relation"],
    "accountant": "How each dataset's releases add up against its budget, fixed at its first "
                  "release: basic adds ε and δ; the tight ones compose what the releases "
                  "drew and let the same budget last longer.",
    "out": "Folder the release's files are written to (created if missing).",
    "formats": "Tables of the released values, their intervals and the release's settings.",
    "report": "A stakeholder report (HTML and PDF) explaining the release in plain language.",
    "script": "A Python script that re-runs the release's computation (for reviewers).",
}


#: The New Project dialog's accountants, each with its one-sentence tooltip.
ACCOUNTANT_CHOICES = (
    ("basic", "basic (ε and δ add up)",
     "Basic composition: the ε and δ of every release add up, exactly; right for any mix "
     "of mechanisms."),
    ("advanced", "advanced (Kairouz, Oh & Viswanath)",
     "The optimal composition of the releases' (ε, δ) (Kairouz, Oh & Viswanath 2015): "
     "below basic for many releases of the same ε."),
    ("zcdp", "zCDP (ρ adds up)",
     "Zero-concentrated DP: Gaussian releases add up their ρ (pure-ε ones as ε²/2), "
     "converted to (ε, δ): much below basic for many Gaussian releases."),
    ("pld", "PLD (tightest)",
     "Privacy-loss distributions of what each release drew, composed by FFT (pessimistic): "
     "the tightest of the four."),
)


def _num(d: Decimal | float) -> str:
    """A budget amount for reading: 0.4, 1e-05, 3."""
    value = float(d)
    if value == 0:
        return "0"
    return f"{value:.4g}"


def open_folder(folder: str | Path) -> bool:
    """Show ``folder`` in the platform's file manager."""
    return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))))


def describe_query(spec: Any) -> list[tuple[str, str]]:
    """(label, text) rows saying what a :class:`QuerySpec` releases."""
    info = REGISTRY.get(spec.mechanism)
    rows = [("Query", f"{QUERY_LABELS.get(spec.query, spec.query)} of {spec.column}"),
            ("Mechanism", f"{info.label} ({spec.mechanism})")]
    domain = []
    if spec.bounds is not None:
        domain.append(f"bounds {spec.bounds[0]:g} – {spec.bounds[1]:g}")
    if spec.categories is not None:
        cats = ", ".join(spec.categories)
        domain.append(f"categories {cats if len(cats) < 80 else cats[:77] + '…'}")
    if spec.bins is not None:
        domain.append(f"{spec.bins} bins")
    if spec.quantile is not None:
        domain.append(f"quantile q = {spec.quantile:g}")
    # A 0 that asks the mechanism to choose (the blanket's precision k) reads "auto".
    auto = {p.name for p in info.params if p.auto_at_zero}
    domain += [f"{k} = {'auto' if k in auto and v == 0 else v}"
               for k, v in sorted(spec.params.items())]
    domain.append(f"{spec.confidence:.0%} intervals")
    domain.append(f"neighbours: {spec.relation}")
    rows.append(("Parameters", "; ".join(domain)))
    return rows


class NewProjectDialog(QDialog):
    """Where the project file goes and the default budget of the datasets it registers."""

    def __init__(self, parent: QWidget | None = None, folder: str | Path | None = None
                 ) -> None:
        super().__init__(parent)
        self.setWindowTitle("New Project")
        folder = Path(folder) if folder is not None else Path.home()
        self.path_edit = QLineEdit(str(_free_name(folder, "study")), self)
        self.path_edit.setToolTip(TIPS["path"])
        self.path_edit.setMinimumWidth(380)
        browse = QPushButton("Browse…", self)
        browse.setToolTip(TIPS["path"])
        browse.clicked.connect(self._browse)
        where = QHBoxLayout()
        where.addWidget(self.path_edit, 1)
        where.addWidget(browse)
        # Typed budgets are kept as typed and checked as the project checks them.
        self.epsilon = SignificantSpinBox(self, steps_per_decade=10, keep_typed=True)
        self.epsilon.setRange(0.01, 1000.0)
        self.epsilon.setValue(3.0)
        self.epsilon.setToolTip(TIPS["epsilon"])
        self.delta = ScientificSpinBox(self, keep_typed=True)
        self.delta.setRange(0.0, 0.1)
        self.delta.setValue(1e-5)
        self.delta.setToolTip(TIPS["delta"])
        self.budget_hint = QLabel(self)
        self.budget_hint.setWordWrap(True)
        self.budget_hint.setStyleSheet(REFUSED_STYLE)
        self.budget_hint.hide()
        self.relation = QComboBox(self)
        for relation, text in (("add-remove", "add or remove one person"),
                               ("replace", "replace one person's record")):
            self.relation.addItem(text, relation)
        self.relation.setToolTip(TIPS["relation"])
        self.accountant = QComboBox(self)
        for i, (name, text, tip) in enumerate(ACCOUNTANT_CHOICES):
            self.accountant.addItem(text, name)
            self.accountant.setItemData(i, tip, Qt.ItemDataRole.ToolTipRole)
        self.accountant.setToolTip(TIPS["accountant"])
        self.accountant.currentIndexChanged.connect(self._accountant_tip)
        self._accountant_tip()
        form = QFormLayout()
        form.addRow(_tip_label("Project file", TIPS["path"], self), where)
        form.addRow(_tip_label("Budget ε per dataset", TIPS["epsilon"], self), self.epsilon)
        form.addRow(_tip_label("Budget δ per dataset", TIPS["delta"], self), self.delta)
        form.addRow(self.budget_hint)
        form.addRow(_tip_label("Neighbours", TIPS["relation"], self), self.relation)
        form.addRow(_tip_label("Accountant", TIPS["accountant"], self), self.accountant)
        note = QLabel("Each dataset gets this budget when its first release registers it; "
                      "every release is charged to it and recorded in the project.", self)
        note.setWordWrap(True)
        note.setStyleSheet(f"color: {MUTED};")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Create")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.path_edit.textChanged.connect(self._update)
        self.epsilon.valueChanged.connect(self._update)
        self.delta.valueChanged.connect(self._update)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.buttons)
        self._update()

    def _accountant_tip(self, _index: int = 0) -> None:
        tip = self.accountant.currentData(Qt.ItemDataRole.ToolTipRole) or ""
        self.accountant.setToolTip(f"{TIPS['accountant']}\n\n{tip}")

    def chosen_accountant(self) -> str:
        """The accountant chosen for the project's datasets (``basic`` by default)."""
        return str(self.accountant.currentData())

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "New project", self.path_edit.text(),
                                              PROJECT_FILTER)
        if path:
            self.path_edit.setText(path)

    def budget_problems(self) -> dict[str, str]:
        """Which budget box holds a number the project would refuse, and why (its
        sentence, the command line's)."""
        problems: dict[str, str] = {}
        eps, delta = (float(self.epsilon.typed_text()), float(self.delta.typed_text()))
        for key, pair in (("epsilon", (eps, 0.0)), ("delta", (1.0, delta))):
            try:
                budget_amounts(*pair)
            except ProjectError as exc:
                problems[key] = str(exc)
        return problems

    def _update(self) -> None:
        problems = self.budget_problems()
        for key, box in (("epsilon", self.epsilon), ("delta", self.delta)):
            mark(box, problems.get(key), TIPS[key])
        text = " ".join(f"{why}." for why in problems.values())
        self.budget_hint.setText(text)
        self.budget_hint.setVisible(bool(text))
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(bool(self.path_edit.text().strip()) and not problems)
        ok.setToolTip(text)

    def values(self) -> dict[str, Any]:
        """The chosen path (with the .dpstudio suffix), ε, δ and relation (the accountant
        is :meth:`chosen_accountant`: ``create_project`` does not take it yet)."""
        path = Path(self.path_edit.text().strip()).expanduser()
        if path.suffix.lower() != PROJECT_SUFFIX:
            path = path.with_name(path.name + PROJECT_SUFFIX)
        return {"path": path, "epsilon": float(self.epsilon.typed_text()),
                "delta": float(self.delta.typed_text()),
                "relation": self.relation.currentData()}


def _free_name(folder: Path, stem: str) -> Path:
    path = folder / f"{stem}{PROJECT_SUFFIX}"
    n = 2
    while path.exists():
        path = folder / f"{stem}-{n}{PROJECT_SUFFIX}"
        n += 1
    return path


def _tip_label(text: str, tip: str, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    label.setToolTip(tip)
    return label


def _muted(text: str, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {MUTED};")
    return label


class ReleaseDialog(QDialog):
    """The confirmation before a real release: what, what it costs, where it goes.

    ``check`` is what :meth:`Project.check` returned for ``spec``; ``choices`` the
    remembered output options (``formats``, ``report``, ``script``).
    """

    def __init__(self, spec: ReleaseSpec, check: dict[str, Any], *, project: str,
                 out_dir: str | Path, choices: dict[str, Any] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec, self.check = spec, check
        choices = choices or {}
        dataset = check.get("dataset") or Path(spec.dataset).name
        self.setWindowTitle(f"Release {QUERY_LABELS.get(spec.query.query, '').lower()} of "
                            f"{spec.query.column} — a real release")
        self.banner = QLabel(f"<b style='font-size:12pt'>{REAL_RELEASE}</b><br>"
                             f"{REAL_RELEASE_MORE}", self)
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(WARNING_STYLE)

        what = QGroupBox("What will be released", self)
        form = QFormLayout(what)
        form.addRow("Dataset", _selectable(f"{dataset}", what))
        self.trust_label: QLabel | None = None
        if getattr(spec, "trust_model", "central") == "local":
            self.trust_label = _selectable(LOCAL_MODEL_TEXT, what)
            form.addRow("Trust model", self.trust_label)
        for label, text in describe_query(check["query"]):
            form.addRow(label, _selectable(text, what))

        cost = QGroupBox(f"Budget of {dataset} in {project}", self)
        costs = QFormLayout(cost)
        charge_e, charge_d = Decimal(check["epsilon"]), Decimal(check["delta"])
        left_e, left_d = (Decimal(x) for x in check["remaining"])
        total_e, total_d = (Decimal(x) for x in check["budget"])
        self.charge_label = _selectable(f"<b>ε = {_num(charge_e)}, δ = {_num(charge_d)}</b>",
                                        cost, rich=True)
        self.before_label = _selectable(
            f"ε = {_num(left_e)}, δ = {_num(left_d)} &nbsp;(of ε = {_num(total_e)}, "
            f"δ = {_num(total_d)})", cost, rich=True)
        self.after_label = _selectable(f"ε = {_num(left_e - charge_e)}, δ = "
                                       f"{_num(left_d - charge_d)}", cost)
        costs.addRow("This release charges", self.charge_label)
        costs.addRow("Left before", self.before_label)
        costs.addRow("Left after", self.after_label)
        notes = list(check.get("notes", []))
        if check.get("registers_dataset"):
            notes.insert(0, f"First release of {dataset}: it will be registered in the "
                            f"project with this budget, and its SHA-256 recorded (a changed "
                            f"file is refused later).")
        # One bullet a note: several notes run together as one paragraph otherwise.
        self.notes_label = _muted("\n".join(f"• {n}" for n in notes), self)
        self.notes_label.setVisible(bool(notes))

        out = QGroupBox("Output", self)
        outs = QFormLayout(out)
        self.out_edit = QLineEdit(str(out_dir), out)
        self.out_edit.setToolTip(TIPS["out"])
        self.out_edit.setMinimumWidth(360)
        browse = QPushButton("Browse…", out)
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.out_edit, 1)
        row.addWidget(browse)
        outs.addRow(_tip_label("Folder", TIPS["out"], out), row)
        formats = set(choices.get("formats") or spec.formats)
        self.format_boxes: dict[str, QCheckBox] = {}
        boxes = QHBoxLayout()
        for name, label in FORMAT_LABELS.items():
            box = QCheckBox(label, out)
            box.setChecked(name in formats)
            box.setToolTip(TIPS["formats"])
            box.toggled.connect(self._update)
            boxes.addWidget(box)
            self.format_boxes[name] = box
        boxes.addStretch(1)
        outs.addRow(_tip_label("Tables", TIPS["formats"], out), boxes)
        self.report_box = QCheckBox("Stakeholder report (HTML and PDF)", out)
        # Ticked unless the analyst unticked it last time: a release is for stakeholders.
        self.report_box.setChecked(bool(choices.get("report", True)))
        self.report_box.setToolTip(TIPS["report"])
        self.script_box = QCheckBox("Reproducible Python script", out)
        self.script_box.setChecked(bool(choices.get("script", spec.script)))
        self.script_box.setToolTip(TIPS["script"])
        extras = QHBoxLayout()
        extras.addWidget(self.report_box)
        extras.addWidget(self.script_box)
        extras.addStretch(1)
        outs.addRow("Also", extras)

        self.buttons = QDialogButtonBox(self)
        self.release_button = self.buttons.addButton("Release",
                                                     QDialogButtonBox.ButtonRole.AcceptRole)
        self.release_button.setToolTip(f"{REAL_RELEASE} {REAL_RELEASE_MORE}")
        self.release_button.setAutoDefault(False)
        cancel = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        cancel.setDefault(True)  # Enter never releases by accident
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.out_edit.textChanged.connect(self._update)

        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(what)
        layout.addWidget(cost)
        layout.addWidget(self.notes_label)
        layout.addWidget(out)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(560)
        self._update()
        fit_height(self)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Output folder", self.out_edit.text())
        if folder:
            self.out_edit.setText(folder)

    def _update(self) -> None:
        ok = bool(self.out_edit.text().strip()) and any(
            b.isChecked() for b in self.format_boxes.values())
        self.release_button.setEnabled(ok)

    def values(self) -> dict[str, Any]:
        """``out_dir``, ``formats``, ``report`` and ``script`` as chosen."""
        return {"out_dir": Path(self.out_edit.text().strip()).expanduser(),
                "formats": tuple(n for n, b in self.format_boxes.items() if b.isChecked()),
                "report": self.report_box.isChecked(), "script": self.script_box.isChecked()}


def fit_height(dialog: QDialog) -> None:
    """Give ``dialog`` the height its rows need at its width.

    Word-wrapped labels make a layout's height depend on its width, which Qt's first
    sizing of a dialog does not follow: the release dialog's rows came out clipped (its
    parameters squeezed onto one cut line). Capped at the screen's available height.
    """
    width = max(dialog.minimumWidth(), dialog.sizeHint().width())
    layout = dialog.layout()
    height = (layout.totalHeightForWidth(width) if layout is not None
              and layout.hasHeightForWidth() else dialog.sizeHint().height())
    screen = dialog.screen()
    if screen is not None:
        height = min(height, screen.availableGeometry().height() - 60)
    dialog.resize(width, max(height, dialog.minimumSizeHint().height()))


def _selectable(text: str, parent: QWidget, rich: bool = False) -> QLabel:
    """A selectable label; ``rich`` text must have its data escaped by the caller."""
    label = QLabel(text, parent)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class ReleaseDoneDialog(QDialog):
    """The released value, where its files went, and an "Open folder" button."""

    def __init__(self, record: ReleaseRecord, budget: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.record = record
        self.setWindowTitle(f"Release #{record.id} done")
        # A statistic, a histogram, a model or a plan: each says what it released.
        said = released(record)
        self.header = _selectable(said.header, self, rich=True)
        self.table: QTableWidget | None = None
        if said.rows:
            self.table = QTableWidget(len(said.rows), 3, self)
            self.table.setHorizontalHeaderLabels(["", "released", said.interval])
            for i, cells in enumerate(said.rows):
                for j, cell in enumerate(cells):
                    self.table.setItem(i, j, QTableWidgetItem(cell))
                self.table.item(i, 0).setToolTip(cells[0])  # a plan's labels are long
            self.table.verticalHeader().hide()
            self.table.setWordWrap(False)
            self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
            self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
            self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            # The figures whole; the labels take what is left (elided, whole in tooltips).
            self.table.horizontalHeader().setSectionResizeMode(
                QHeaderView.ResizeMode.ResizeToContents)
            self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
            rows = (self.table.horizontalHeader().sizeHint().height()  # no empty rows below
                    + self.table.verticalHeader().length() + 2 * self.table.frameWidth())
            self.table.setMaximumHeight(min(220, rows))
        self.value_label = _selectable(said.value, self, rich=True)
        self.value_label.setStyleSheet("font-size: 12pt;")
        self.files = QListWidget(self)
        for f in record.files:
            self.files.addItem(f.name)
            self.files.item(self.files.count() - 1).setToolTip(str(f.path))
        self.files.setMaximumHeight(max(60, 22 * (len(record.files) + 1)))
        folder = _selectable(f"Files in <b>{escape(str(record.out_dir))}</b>:", self, rich=True)
        self.budget_label = _muted(budget, self)
        self.budget_label.setVisible(bool(budget))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.open_button = self.buttons.addButton("Open folder",
                                                  QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.setToolTip(f"Show {record.out_dir} in the file manager")
        self.open_button.clicked.connect(lambda: open_folder(record.out_dir))
        # The analyst's copy of the report (bias, clamped share, exact n) lives in the
        # project's private folder, never among the files to publish.
        analyst = getattr(record, "analyst_report", None)
        note = getattr(record, "analyst_note", "")
        self.analyst_label = _muted(
            f"Your analyst's copy of the report (do not publish): {analyst}" if analyst
            else note, self)
        self.analyst_label.setVisible(bool(analyst or note))
        self.analyst_button = None
        if analyst:
            self.analyst_button = self.buttons.addButton(
                "Open analyst's copy", QDialogButtonBox.ButtonRole.ActionRole)
            self.analyst_button.setToolTip("The report with the figures only you may see: "
                                           "what clamping and missing values cost")
            self.analyst_button.clicked.connect(
                lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(analyst))))
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addWidget(self.value_label)
        if self.table is not None:
            layout.addWidget(self.table)
        layout.addWidget(folder)
        layout.addWidget(self.files)
        layout.addWidget(self.budget_label)
        layout.addWidget(self.analyst_label)
        layout.addWidget(self.buttons)
        wide = self.table is not None and max(len(r[0]) for r in said.rows) > 24
        self.setMinimumWidth(680 if wide else 520)
