"""The report says when its trade-off figure shows only the (ε, δ) region (issue 14).

A shuffle release (the invisibility cloak) and a central permute-and-flip median have no
curve of their own: the report's first curve is the boundary of their (ε, δ) region,
labelled so, and the caption under the figure is the region's sentence. A central
Laplace count keeps its own curve and the usual caption. No Qt: the report's data pieces.
"""

from __future__ import annotations

import numpy as np

from dpstudio.engine.queries import QuerySpec
from dpstudio.engine.tradeoff import alpha_grid, epsilon_delta_tradeoff
from dpstudio.export.report_curves import (
    local_first_curve,
    local_tradeoff_caption,
    own_first_curve,
    own_tradeoff_caption,
)
from dpstudio.export.report_input import ReportInput

A = alpha_grid(64)
REGION = "Only the (ε, δ) guarantee of"


def _input(spec: QuerySpec, trust_model: str) -> ReportInput:
    return ReportInput(1, "u", "2026-01-01T00:00:00Z", "survey.csv", "0" * 64, spec, {},
                       spec.epsilon, spec.delta, "basic", 10.0, 1e-5,
                       history=[{"id": 1}], trust_model=trust_model)


def test_a_shuffle_report_draws_and_names_the_region():
    spec = QuerySpec("mean", "cloak", 1.0, 1e-6, bounds=(18.0, 100.0), relation="replace")
    inp = _input(spec, "shuffle")
    assert inp.shape == "estimate"  # read like a protocol's estimate
    label, beta = local_first_curve(inp, A)
    assert label == "(ε, δ) region (cloak): ε = 1, δ = 1e-06"
    np.testing.assert_allclose(beta, epsilon_delta_tradeoff(1.0, 1e-6, A).beta, atol=1e-12)
    caption = local_tradeoff_caption(inp)
    assert caption.startswith(REGION) and "Invisibility cloak" in caption


def test_a_distributed_report_draws_the_sums_own_curve():
    spec = QuerySpec("sum", "skellam", 1.0, 1e-6, bounds=(18.0, 100.0), relation="replace")
    inp = _input(spec, "distributed")
    label, beta = local_first_curve(inp, A)
    assert label.startswith("this release (") and ", exact)" in label
    assert np.all(beta >= epsilon_delta_tradeoff(1.0, 1e-6, A).beta - 1e-9)
    assert np.any(beta > epsilon_delta_tradeoff(1.0, 1e-6, A).beta + 1e-3)  # not the bound
    assert REGION not in local_tradeoff_caption(inp)


def test_a_permute_and_flip_report_says_it_is_the_region():
    spec = QuerySpec("median", "permute_and_flip", 1.0, bounds=(18.0, 100.0))
    inp = _input(spec, "central")
    label, _beta = own_first_curve(inp, A)
    assert label.startswith("(ε, δ) region (permute_and_flip)")
    assert own_tradeoff_caption(inp).startswith(REGION)
    laplace = _input(QuerySpec("count", "laplace", 1.0), "central")
    assert own_first_curve(laplace, A)[0].startswith("this release (Laplace, exact)")
    assert REGION not in own_tradeoff_caption(laplace)
