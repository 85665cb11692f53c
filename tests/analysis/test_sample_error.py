"""The error of simulated releases the row-level and user-level utility curves share
(:mod:`dpstudio.analysis.sample_error`), against a direct computation."""

from __future__ import annotations

import numpy as np
import pytest

from dpstudio.analysis.sample_error import error_of_samples


def test_the_error_of_samples_against_a_direct_computation():
    g = np.random.default_rng(11)
    truth = np.array([10.0, -4.0])
    samples = truth + g.normal(0.0, 2.0, (400, 2))
    sq = ((samples - truth) ** 2).mean(axis=1)
    se = sq.std(ddof=1) / np.sqrt(sq.size)
    point, low, high = error_of_samples(samples, truth, "rmse")
    assert point == pytest.approx(np.sqrt(sq.mean()), rel=1e-12)
    assert (low, high) == pytest.approx((np.sqrt(sq.mean() - 2 * se),
                                         np.sqrt(sq.mean() + 2 * se)), rel=1e-12)
    assert point == pytest.approx(2.0, rel=0.1)  # σ = 2: ~400·2 squares, sd of √ ≈ 2.5%
    rel = error_of_samples(samples, truth, "relative")
    assert rel == pytest.approx((point / 7.0, low / 7.0, high / 7.0), rel=1e-12)
    counts = np.array([30.0, 70.0])
    tv = error_of_samples(counts + np.array([[5.0, -5.0], [-10.0, 10.0]]), counts, "tv")
    assert tv[0] == pytest.approx((0.5 * 10 / 100 + 0.5 * 20 / 100) / 2)
