"""Missing values in the application (issue 10, items 1 and 2), driven through the real
widgets on a generated dataset whose numeric column has missing values:

* the local preview goes through the release's own path: n is the number of rows and a
  local mean imputes the bounds' middle (before: n was the present values only);
* "Missing values: drop / impute with [value]" for central sums, means and variances:
  imputing under replace makes n public, and the preview's error becomes the closed
  form of the imputed mean, noisy sum / n with the whole budget; a value outside the
  bounds gets one clear inline line; the release uses the treatment.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QMessageBox
from ui_helpers import TIMEOUT, close_window, open_window, pick, type_into, write_declared_csv

from dpstudio.engine.local import OTHER_LABEL, run_local
from dpstudio.engine.rng import SimulationSource
from dpstudio.ui.project_dialogs import ReleaseDialog

ROWS = 3_000
LO, HI = 0.0, 100.0


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(3)
    score = rng.uniform(40, 95, ROWS).round(1).astype(object)
    score[rng.random(ROWS) < 0.15] = ""  # 15% missing
    group = rng.choice(np.array(["a", "b", "c", "zz"], dtype=object), ROWS,
                       p=[0.4, 0.3, 0.2, 0.1])  # zz: not declared
    group[rng.random(ROWS) < 0.1] = ""
    return write_declared_csv(tmp_path / "scores.csv", ["score", "group"],
                              zip(score.tolist(), group.tolist(), strict=True), [
        {"name": "score", "type": "numeric", "lower": LO, "upper": HI},
        {"name": "group", "type": "categorical", "categories": ["a", "b", "c"]}])


@pytest.fixture
def window(qtbot, data, monkeypatch):
    win = open_window(qtbot, data, monkeypatch)
    yield win
    close_window(win)


def _settle(win) -> None:
    assert win.analysis.wait_idle(TIMEOUT)


def _impute(qtbot, win, value: str) -> None:
    panel = win.analysis_panel
    pick(qtbot, panel.missing_combo, "imp")
    assert panel.impute_edit.isEnabled()
    type_into(qtbot, panel.impute_edit, value)
    _settle(win)


def test_local_preview_sends_one_report_per_row(window, qtbot):
    """A local mean: n = rows (not the present values), the target is the mean of the
    present values (a missing value reports the bounds' middle, which the bias shows),
    and the preview is the engine's run_local."""
    s, panel = window.session, window.analysis_panel
    qtbot.mouseClick(panel.trust_buttons["local"], Qt.MouseButton.LeftButton)
    _settle(window)
    assert (s.column, s.trust_model, s.query) == ("score", "local", "mean")
    preview = window.result_panel.preview
    x = np.array(s.values, dtype=float)
    assert np.isnan(x).sum() > 300  # the column does have missing values
    assert preview.n == ROWS  # before: the 2,5xx present values
    assert preview.truth[0] == pytest.approx(np.nanmean(x))
    res = run_local(s.values, s.mechanism, {"epsilon": s.epsilon}, query="mean",
                    bounds=(LO, HI), source=SimulationSource(window.analysis.preview_seed))
    assert preview.value[0] == res.unbiased and res.n == ROWS
    assert f"n = {ROWS:,} reports" in window.result_panel.summary.text()
    # The Missing values control is for central sums, means and variances only.
    assert not panel.missing_row.isVisible()


def test_local_histogram_has_the_other_or_missing_cell(window, qtbot):
    s, panel = window.session, window.analysis_panel
    pick(qtbot, panel.column_combo, "group")
    qtbot.mouseClick(panel.trust_buttons["local"], Qt.MouseButton.LeftButton)
    _settle(window)
    assert (s.column, s.trust_model, s.query) == ("group", "local", "histogram")
    preview = window.result_panel.preview
    assert preview.n == ROWS
    assert preview.labels == ["a", "b", "c", OTHER_LABEL]
    values = np.array(["" if v is None else v for v in s.values], dtype=object)
    declared = [int(np.count_nonzero(values == c)) for c in ("a", "b", "c")]
    np.testing.assert_array_equal(preview.truth, declared + [ROWS - sum(declared)])
    # The utility curves use the same n (one report per row), and the plot says so.
    assert window.utility_plot.points()
    result = window.analysis._points_cache[s.settings().utility_key()]
    assert result.n == ROWS
    assert any(f"on the {ROWS:,} reports (one per row)" in note
               for note in window.utility_plot.notes())
    assert f"{ROWS:,} reports" in window.utility_plot.toolTip()


def test_impute_makes_the_mean_error_the_closed_form(window, qtbot):
    s, panel = window.session, window.analysis_panel
    assert (s.column, s.trust_model, s.query, s.mechanism) == ("score", "central", "mean",
                                                               "laplace")
    assert panel.missing_row.isVisible()
    assert panel.missing_combo.currentData() == "drop"
    tip = panel.missing_combo.toolTip()
    assert "replace" in tip and "add-remove" in tip and "n public" in tip
    pick(qtbot, panel.relation_combo, "rep")
    _settle(window)
    assert s.relation == "replace"
    assert "max(hi − lo, |lo|, |hi|) = 100" in panel.missing_hint.text()
    x = np.array(s.values, dtype=float)
    eps, conf = s.epsilon, s.confidence
    closed = math.sqrt(2.0) * (HI - LO) / (eps * ROWS)  # RMSE of Laplace(b)/n, b = Δ/ε
    before = window.utility_plot.curves()["Central: Laplace"]
    drop_half = float(window.result_panel.preview.ci_high[0] - window.result_panel.preview.value[0])

    _impute(qtbot, window, "50")
    assert (s.missing, s.impute_value()) == ("impute", 50.0)
    assert "n is public" in panel.missing_hint.text()
    preview = window.result_panel.preview
    imputed_mean = float(np.mean(np.where(np.isnan(x), 50.0, x)))
    present_mean = float(np.nanmean(x))
    bias = imputed_mean - present_mean  # what imputing 50 moves the mean by (≈ −2.8)
    assert abs(bias) > 10 * closed  # here the shift dominates the noise
    # The truth is the mean of the present values: the error shown includes the shift
    # (before: the imputed column's mean, which hid it).
    assert preview.truth[0] == pytest.approx(present_mean, rel=1e-12)
    line = f"analyst only: imputing moves the mean by {bias:+.4g} from the mean of the present"
    assert line in panel.missing_hint.text()
    assert line in window.result_panel.summary.text()
    # The interval: the Laplace noise of the sum (sensitivity hi − lo, whole ε) over n.
    half = float(preview.ci_high[0] - preview.value[0])
    assert half == pytest.approx((HI - LO) / eps * math.log(1 / (1 - conf)) / ROWS, rel=1e-3)
    assert drop_half > 2 * half  # dropping split ε between a noisy sum and a noisy count
    assert any("imputed as 50" in note for note in preview.notes)
    # The privacy–utility line at the marker is the closed form; Monte-Carlo agrees.
    eps_grid, err = window.utility_plot.curves()["Central: Laplace"]
    i = int(np.argmin(np.abs(eps_grid - eps)))
    assert eps_grid[i] == pytest.approx(eps)
    # The line is the whole error, noise and the imputation's shift: √(noise² + bias²).
    assert err[i] == pytest.approx(math.hypot(closed, bias), rel=1e-9)
    assert before[1][i] > 2 * closed
    assert "(noise only)" not in window.utility_plot.marker_text()
    assert any("the lines include the bias" in n for n in window.utility_plot.notes())
    # Monte-Carlo measures against the present mean: noise and shift together.
    e_pts, e_err, low, high = window.utility_plot.points()["Central: simulated releases"]
    j = int(np.argmin(np.abs(e_pts - eps)))
    expected = math.hypot(closed * eps / e_pts[j], bias)
    assert low[j] <= expected <= high[j]
    assert result_n(window) == ROWS  # every row counts once imputed

    window.grab().save(str(window.session.dataset.path.parent / "impute.png"))


def result_n(window) -> int:
    return window.analysis._points_cache[window.session.settings().utility_key()].n


def test_bad_imputed_values_get_one_inline_line(window, qtbot):
    s, panel = window.session, window.analysis_panel
    _impute(qtbot, window, "150")
    message = panel.missing_hint.text()
    assert "outside the declared bounds [0, 100]" in message and "Traceback" not in message
    assert panel.missing_hint.isVisible()
    assert s.problem() and "outside the declared bounds" in panel.problem_label.text()
    assert window.result_panel.preview is None  # nothing simulated with a bad value
    type_into(qtbot, panel.impute_edit, "abc")
    _settle(window)
    assert "must be a number, got 'abc'" in panel.missing_hint.text()
    type_into(qtbot, panel.impute_edit, "42.5")
    _settle(window)
    assert s.problem() is None and s.impute_value() == 42.5
    assert window.result_panel.preview is not None
    # Back to drop: the default, no imputed value in the query.
    pick(qtbot, panel.missing_combo, "dr")
    _settle(window)
    assert not panel.impute_edit.isEnabled()
    assert s.settings().spec().missing == "drop" and s.settings().spec().impute is None


def test_release_uses_the_imputation(window, qtbot, tmp_path, monkeypatch):
    for kind in ("critical", "warning", "information"):
        monkeypatch.setattr(QMessageBox, kind, staticmethod(
            lambda *a, **k: QMessageBox.StandardButton.Ok))
    monkeypatch.setattr(ReleaseDialog, "exec", lambda _d: QDialog.DialogCode.Accepted)
    assert window.projects.create_project(tmp_path / "study.dpstudio", epsilon=5.0,
                                          delta=1e-5, relation="replace")
    panel = window.analysis_panel
    pick(qtbot, panel.relation_combo, "rep")
    _impute(qtbot, window, "60")
    spec = window.projects.current_spec()
    assert (spec.query.missing, spec.query.impute, spec.query.relation) == (
        "impute", 60.0, "replace")
    button = window.result_panel.release_button
    assert button.isEnabled(), button.toolTip()
    with qtbot.waitSignal(window.projects.release_done, timeout=int(TIMEOUT * 1000)) as got:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    record = got.args[0]
    manifest = next(f for f in record.files if f.name.endswith(".manifest.json"))
    data = json.loads((record.out_dir / manifest.name).read_text(encoding="utf-8"))
    missing = data["query"]["missing"]
    assert (missing["treatment"], missing["value"], missing["rows_public"]) == (
        "impute", 60.0, True)
    # n public: one noisy sum with the whole ε and sensitivity hi − lo.
    [component] = data["mechanism"]["components"]
    assert (component["statistic"], component["sensitivity"]) == ("sum", HI - LO)
    assert component["epsilon"] == window.session.epsilon
    # A bad value blocks the release with the same one line.
    type_into(qtbot, panel.impute_edit, "-5")
    _settle(window)
    window.projects.update_release_state()
    assert not button.isEnabled()
    assert "outside the declared bounds" in button.toolTip()


@pytest.mark.parametrize("trust", ["shuffle", "distributed"])
def test_protocol_previews_count_every_row_as_a_client(window, qtbot, trust):
    """Shuffle and secure aggregation: one message per row (a missing value is sent as the
    middle of the bounds), so the preview's n is a release's; the truth is the statistic
    of the present values, so the error shown includes the middle's shift."""
    s, panel = window.session, window.analysis_panel
    qtbot.mouseClick(panel.trust_buttons[trust], Qt.MouseButton.LeftButton)
    _settle(window)
    assert (s.column, s.trust_model) == ("score", trust)
    preview = window.result_panel.preview
    x = np.array(s.values, dtype=float)
    assert np.isnan(x).sum() > 300
    assert preview.n == ROWS  # before: the present values only
    present = x[~np.isnan(x)]
    expected = present.sum() if s.query == "sum" else present.mean()
    assert preview.truth[0] == pytest.approx(expected, rel=1e-12)
