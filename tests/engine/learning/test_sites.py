"""Sites of a federation: from a column, or a seeded random split with Dirichlet label skew
whose spread is the Dirichlet's (with a power check against another α)."""

import math

import numpy as np
import pytest

from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.learning.sites import (
    label_skew,
    site_label_shares,
    sites_from_column,
    split_sites,
)


def test_sites_from_a_column_are_its_distinct_values():
    s = sites_from_column(np.array(["b", "a", "c", "a", "b", "b"], dtype=object))
    assert s.names == ("a", "b", "c")
    np.testing.assert_array_equal(s.codes, [1, 0, 2, 0, 1, 1])
    np.testing.assert_array_equal(s.sizes, [2, 3, 1])
    parts = s.indices()
    np.testing.assert_array_equal(parts[1], [0, 4, 5])
    assert sorted(np.concatenate(parts).tolist()) == list(range(6))


@pytest.mark.parametrize("column", [np.array([1.0, np.nan, 2.0]),
                                   np.array(["x", None, "y"], dtype=object)])
def test_a_site_column_with_missing_values_is_refused(column):
    with pytest.raises(QueryError, match="missing values"):
        sites_from_column(column)


def test_a_uniform_split_deals_sizes_within_one_and_is_seeded():
    y = np.r_[np.zeros(700), np.ones(303)]
    s = split_sites(y, 7, None, seed=3)
    assert s.sizes.max() - s.sizes.min() <= 1 and s.sizes.sum() == y.size
    np.testing.assert_array_equal(s.codes, split_sites(y, 7, None, seed=3).codes)
    assert not np.array_equal(s.codes, split_sites(y, 7, None, seed=4).codes)
    assert label_skew(y, s) < 0.05


def test_dirichlet_shares_have_the_dirichlet_spread():
    # 400 classes of 250 records over S = 5 sites: each class's shares are one
    # Dirichlet(α·1) draw, Var = (1/S)(1 − 1/S)/(Sα + 1) per share; the cut's rounding
    # moves a share by ≤ 1/500, negligible against the spread.
    S, K, m = 5, 400, 250
    y = np.repeat(np.arange(K), m)

    def var(a):
        return (1 / S) * (1 - 1 / S) / (S * a + 1)

    for alpha, other in ((0.5, 5.0), (5.0, 0.5)):
        shares = site_label_shares(y, split_sites(y, S, alpha, seed=11))
        np.testing.assert_allclose(shares.sum(axis=0), 1.0)
        v = shares.var()
        # The variance estimate over K·S (dependent within a class) shares has relative
        # s.e. about √(2/(K(S−1))) ≈ 3.5% (a Beta's kurtosis adds a little): 15% is > 4 s.e.
        assert abs(v / var(alpha) - 1) < 0.15, (alpha, v, var(alpha))
        assert abs(v / var(other) - 1) > 0.5  # power: the other α is rejected


def test_skew_falls_as_alpha_grows_and_single_class_sites_are_maximal():
    y = np.repeat([0, 1, 2, 3], 500)
    skews = [label_skew(y, split_sites(y, 8, a, seed=2)) for a in (0.05, 1.0, 100.0)]
    assert skews[0] > 0.5 > skews[1] > skews[2]
    assert skews[2] < 0.06
    one_each = sites_from_column(y)  # site = class: each site holds one of 4 classes
    assert math.isclose(label_skew(y, one_each), 0.75)


def test_split_refusals_are_one_sentence():
    y = np.repeat([0, 1], 10)
    with pytest.raises(ParameterError, match="cannot fill"):
        split_sites(y, 30, 1.0)
    with pytest.raises(ParameterError, match="α"):
        split_sites(y, 2, 0.0)
    with pytest.raises(ParameterError, match="raise α"):
        split_sites(np.repeat([0, 1], 10), 10, 0.001, min_size=2)
