"""The randomized-response classroom demo (the questionnaire: test_questionnaire.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstudio.ui.rr_demo import (
    Z_95,
    RRDemoDialog,
    Survey,
    band_half_width,
    epsilon_from_p,
    p_from_epsilon,
    warner_estimate,
)


def test_epsilon_and_p_are_two_names_for_one_coin():
    assert p_from_epsilon(math.log(3)) == pytest.approx(0.75)
    assert epsilon_from_p(0.75) == pytest.approx(math.log(3))
    assert warner_estimate(0.75, 0.75) == pytest.approx(1.0)
    assert warner_estimate(0.25, 0.75) == pytest.approx(0.0)


@pytest.mark.parametrize(("p", "truth"), [(0.75, 0.3), (0.6, 0.05), (0.9, 0.8)])
def test_the_estimate_converges_to_the_truth(p, truth):
    survey = Survey(p, truth, seed=11)
    survey.add(100_000)
    estimate, half_width = survey.estimate()
    assert abs(estimate - truth) < 5 * survey.true_standard_error()
    assert half_width == pytest.approx(Z_95 * survey.true_standard_error(), rel=0.05)


def test_the_band_has_the_textbook_width():
    survey = Survey(0.75, 0.3, seed=3)
    survey.add(5000)
    n, estimate, half = survey.running()
    z_mean = np.cumsum(survey.reports) / n
    expected = Z_95 * np.sqrt(z_mean * (1 - z_mean) / n) / (2 * 0.75 - 1)
    np.testing.assert_allclose(half, expected)
    np.testing.assert_allclose(estimate, (z_mean + 0.75 - 1) / (2 * 0.75 - 1))
    assert band_half_width(0.5, 100, 0.75) == pytest.approx(Z_95 * 0.05 / 0.5)


def test_the_simulation_is_seeded_and_the_coins_are_fair():
    a, b = Survey(0.75, 0.3, seed=5), Survey(0.75, 0.3, seed=5)
    a.add(1000)
    b.add(1000)
    np.testing.assert_array_equal(a.reports, b.reports)
    big = Survey(0.75, 0.5, seed=1)
    big.add(100_000)
    told_truth = np.mean(big.reports == big.true_answers)
    assert abs(told_truth - 0.75) < 5 * math.sqrt(0.75 * 0.25 / 100_000)


def test_the_dialog_clicks_and_labels(qtbot):
    dialog = RRDemoDialog(seed=2)
    qtbot.addWidget(dialog)
    assert "SIMULATION" in dialog.badge.text() and "seed 2" in dialog.badge.text()
    dialog.ask_button.click()
    assert dialog.survey.n == 1
    assert "Respondent #1" in dialog.last_label.text()
    for button in dialog.add_buttons.values():
        button.click()
    assert dialog.survey.n == 1 + 10 + 100 + 1000
    assert len(dialog.estimate_curve.xData) == dialog.survey.n  # (drawn downsampled)
    assert "1,111" in dialog.readout.text() and "estimate" in dialog.readout.text()
    dialog.truth_spin.setValue(60)  # a new classroom
    assert dialog.survey.n == 0 and dialog.survey.truth == 0.6
    assert dialog.truth_line.value() == pytest.approx(0.6)


def test_choosing_p_or_epsilon(qtbot):
    dialog = RRDemoDialog()
    qtbot.addWidget(dialog)
    dialog.p_spin.setValue(0.8)
    assert dialog.survey.p == 0.8
    assert dialog.epsilon_spin.value() == pytest.approx(math.log(4), abs=0.005)
    dialog.epsilon_spin.setValue(1.0)
    assert dialog.survey.p == pytest.approx(p_from_epsilon(1.0))
    assert "ε = 1.00" in dialog.privacy_label.text()


def test_rr_demo_from_the_tools_menu(qtbot):
    from dpstudio.data import open_dataset, sample_path
    from dpstudio.ui.main_window import MainWindow

    window = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(window)
    window.rr_demo_action.trigger()
    assert window.findChild(RRDemoDialog) is not None
