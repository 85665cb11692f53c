"""Where a trust model cannot reach the asked (ε, δ), one sentence says so, the same in
``dpstudio compare``, the utility plot's readout and the preview; the central line of a
comparison names what it computed at each ε (issue 12 items 1–2, review gaps)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpstudio.analysis.choices import Choices, registry_value_types
from dpstudio.analysis.compare import (
    compare_models,
    computed_names,
    reach_at,
    unreachable_reason,
)
from dpstudio.analysis.footing import like_for_like
from dpstudio.analysis.preview import preview
from dpstudio.analysis.reach import Unreached, unreachable
from dpstudio.engine.errors import EngineError, QueryError

AGES = np.random.default_rng(3).integers(18, 91, 2000).astype(float)


def _mean(**kw) -> Choices:
    s = Choices(column="age", column_type="numeric",
                value_types=registry_value_types("numeric", AGES), trust_model="central",
                query="mean", mechanism="laplace", epsilon=20.0, delta=1e-6,
                bounds=(18.0, 90.0), relation="replace")
    return replace(s, **kw)


def test_the_sentence_says_where_the_guarantee_stops():
    u = Unreached(1e-6, 2000, (0.01, 6.3), None, 15.8)
    assert u.reaches(5) is True and u.reaches(20) is False and u.reaches(10) is None
    assert u.reason(20) == ("cannot reach ε = 20 with δ = 1e-6 for 2,000 people (at this δ "
                            "it reaches ε 6.3 but not 16)")
    assert u.reason(10).startswith("is not planned at ε = 10 with δ = 1e-6")  # unknown there
    assert Unreached(1e-6, 10, None).reason(1).endswith("(at this δ it reaches no ε from "
                                                       "0.01 to 100)")


def test_unreachable_reads_the_line_and_is_none_where_it_is_whole():
    eps = np.array([1.0, 2.0, 4.0, 8.0])
    assert unreachable(_mean(), AGES, eps, np.ones(4)) is None
    u = unreachable(_mean(), AGES, eps, np.array([np.nan, 1.0, 1.0, np.nan]))
    assert (u.reached, u.below, u.above, u.people) == ((2.0, 4.0), 1.0, 8.0, 2000)


def test_compare_and_preview_give_the_same_sentence():
    shuffle = like_for_like(_mean(), "shuffle")
    row = next(r for r in compare_models(_mean(), AGES, 20.0) if r["trust_model"] == "shuffle")
    assert row["rmse"] is None
    assert row["reason"] == unreachable_reason(shuffle, AGES, 20.0)
    assert row["reason"].startswith("cannot reach ε = 20 with δ = 1e-6 for 2,000 people (at "
                                    "this δ it reaches ε ")
    assert reach_at(shuffle, AGES, 2.0).reaches(2.0) is True
    with pytest.raises(QueryError) as e:
        preview(replace(shuffle, epsilon=20.0), AGES)
    assert str(e.value) == "Shuffle " + row["reason"]
    assert "9e-07" not in str(e.value)


def test_engine_refusal_names_the_shares_delta_plainly():
    from dpstudio.engine.distributed.noise import calibrate_noise

    with pytest.raises(EngineError) as e:
        calibrate_noise("skellam", 1, 20.0, 9e-7, 2000)
    assert str(e.value).startswith("the δ given to the noise shares (9e-07) is too small for "
                                   "2,000 clients at ε = 20")


def test_central_names_what_was_computed():
    assert computed_names(["discrete_laplace", "discrete_laplace", None],
                          [None, "rr", None]) == (
        "Discrete Laplace", "Randomized response, run by the curator", None)


def test_compare_labels_a_curator_run_protocol_as_such():
    yes_no = np.array(["yes"] * 300 + ["no"] * 1700, dtype=object)
    s = Choices(column="cheated", column_type="categorical",
                value_types=registry_value_types("categorical", yes_no),
                trust_model="central", query="histogram", mechanism="laplace", epsilon=20.0,
                delta=1e-6, categories=("yes", "no"), relation="replace")
    central = next(r for r in compare_models(s, yes_no, 20.0)
                   if r["trust_model"] == "central")
    assert central["mechanism"] == "rr"
    assert central["label"] == "Randomized response, run by the curator"
