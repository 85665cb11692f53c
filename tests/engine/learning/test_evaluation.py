"""Evaluation helpers: AUC against a brute-force pairwise count, the others by hand."""

import math

import numpy as np
import pytest

from dpstudio.engine.errors import ParameterError
from dpstudio.engine.learning.evaluation import (
    accuracy,
    auc,
    excess_risk,
    logistic_loss,
    rmse,
    summarize,
)


def _pairwise_auc(y, s):
    """P(score₊ > score₋) + ½ P(tie), counted over every (positive, negative) pair."""
    pos, neg = s[y > 0], s[y <= 0]
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg)
    return wins / (pos.size * neg.size)


def test_auc_equals_brute_force_pairwise_count_with_ties():
    rng = np.random.default_rng(3)
    y = rng.choice([-1.0, 1.0], 60)
    scores = rng.integers(0, 6, (5, 60)).astype(float)  # few values: many ties
    got = auc(y, scores)
    assert got.shape == (5,)
    for row, value in zip(scores, got, strict=True):
        assert value == pytest.approx(_pairwise_auc(y, row), abs=1e-12)
    assert auc(y, scores[0]) == pytest.approx(got[0], abs=1e-15)


def test_auc_extremes_and_all_ties():
    y = np.array([0, 0, 1, 1])
    assert auc(y, np.array([0.1, 0.2, 0.3, 0.4])) == 1.0
    assert auc(y, np.array([0.4, 0.3, 0.2, 0.1])) == 0.0
    assert auc(y, np.zeros(4)) == 0.5


def test_auc_needs_both_classes():
    with pytest.raises(ParameterError, match="both classes"):
        auc(np.ones(3), np.array([0.1, 0.2, 0.3]))


def test_accuracy_rmse_and_loss_by_hand():
    y = np.array([1, -1, 1, -1])
    assert accuracy(y, np.array([2.0, -1.0, -0.5, 0.3])) == 0.5
    assert accuracy(y > 0, np.array([0.9, 0.1, 0.6, 0.4]), threshold=0.5) == 1.0
    runs = np.array([[2.0, -1.0, 3.0, -4.0], [-1.0, 1.0, -1.0, 1.0]])
    assert accuracy(y, runs).tolist() == [1.0, 0.0]
    assert rmse(np.array([1.0, 2.0]), np.array([2.0, 4.0])) == pytest.approx(math.sqrt(2.5))
    loss = logistic_loss(y, np.array([0.0, 0.0, 1000.0, 1000.0]))
    assert loss == pytest.approx([math.log(2), math.log(2), 0.0, 1000.0])


def test_excess_risk_per_run_and_summary_spread():
    base = np.array([0.5, 0.7])
    runs = np.array([[0.6, 0.8], [0.5, 0.7], [0.9, 1.1]])
    got = excess_risk(runs, base)
    assert got == pytest.approx([0.1, 0.0, 0.4])
    s = summarize(got)
    assert (s.mean, s.runs, s.low, s.high) == (pytest.approx(0.5 / 3), 3, 0.0,
                                               pytest.approx(0.4))
    assert s.std == pytest.approx(np.std(got, ddof=1))
    assert s.se == pytest.approx(s.std / math.sqrt(3))
    assert summarize([0.7]).std == 0.0
    assert set(s.to_dict()) == {"mean", "std", "se", "low", "high", "runs"}


def test_bad_input_is_one_sentence():
    with pytest.raises(ParameterError, match="one value per held-out row"):
        accuracy(np.ones(3), np.zeros(4))
    with pytest.raises(ParameterError, match="finite"):
        rmse(np.ones(2), np.array([1.0, np.nan]))
    with pytest.raises(ParameterError, match="at least one finite value"):
        summarize([])
