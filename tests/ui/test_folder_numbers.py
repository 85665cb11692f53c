"""A folder's numbers from its exact aggregates equal those of the same rows in memory:
the analytic error at every ε (the delta method at the true sums for a mean or variance),
n and the noise scale; the clamping bias is said to be unmeasured, never pretended."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpstudio.analysis import AnalysisSpec, run
from dpstudio.analysis.choices import Choices
from dpstudio.analysis.compare import noise_curve
from dpstudio.data.folders import open_files
from dpstudio.engine.rng import SimulationSource
from dpstudio.ui.folder_numbers import (
    describe_execution,
    folder_preview,
    folder_utility,
    sums_job,
)
from dpstudio.ui.folder_open import BIAS_NOT_MEASURED


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("numbers")
    rng = np.random.default_rng(3)
    parts = [rng.normal(40, 12, n) for n in (3000, 1000, 2000)]
    for i, x in enumerate(parts):
        pd.DataFrame({"age": x}).to_parquet(root / f"part-{i}.parquet")
    return open_files(root), np.concatenate(parts)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("query", ["count", "sum", "mean", "variance", "histogram"])
def test_the_analytic_error_on_a_folder_is_the_in_memory_one(folder, query, mechanism):
    ds, values = folder
    s = Choices("age", "numeric", ("numeric",), "central", query, mechanism, epsilon=1.0,
                delta=1e-6, bounds=(0.0, 60.0))
    sums = sums_job(s, ds, None, "pandas", "", seed=5)
    result = folder_utility(s, sums)
    assert result.n == values.size and sums.execution["engine"] == "pandas"
    line = result.curves[0]
    # The same noise at every ε; a ratio's delta method at the same (clamped) sums, up to
    # the randomized rounding of the sums (a few grid steps in millions).
    np.testing.assert_allclose(line.error, noise_curve(s, values, line.epsilon), rtol=1e-5)
    preview = folder_preview(s, sums, seed=2)
    memory = run(AnalysisSpec("central", s.spec()), values, SimulationSource(2)).engine
    assert preview.noise_scale == pytest.approx(memory.noise_scale, rel=1e-12)
    clamped = int(np.count_nonzero((values < 0) | (values > 60)))  # a count clamps none
    assert clamped > 0 and sums.total.clamped == (0 if query == "count" else clamped)
    unmeasured = query in ("sum", "mean", "variance")
    assert any(BIAS_NOT_MEASURED in n for n in result.notes) == unmeasured
    assert line.noise_only == unmeasured


def test_the_preview_moves_with_epsilon_from_the_same_aggregates(folder):
    ds, values = folder
    s = Choices("age", "numeric", ("numeric",), "central", "mean", "laplace", epsilon=1.0,
                bounds=(0.0, 60.0))
    sums = sums_job(s, ds, None, "pandas", "", seed=5)
    for eps in (0.1, 1.0, 7.0):
        at = Choices(**{**s.__dict__, "epsilon": eps})
        preview = folder_preview(at, sums, seed=3)
        memory = run(AnalysisSpec("central", at.spec()), values, SimulationSource(3)).engine
        assert preview.noise_scale == pytest.approx(memory.noise_scale, rel=1e-12)
        # The truth shown is the clamped values' mean, from the aggregates.
        assert preview.truth[0] == pytest.approx(np.clip(values, 0, 60).mean(), rel=1e-6)


def test_the_status_bar_words_for_an_execution():
    assert describe_execution(None, "dask", "tcp://h:8786") == (
        "Engine: dask · scheduler tcp://h:8786")
    assert describe_execution({"engine": "pandas", "partitions": 3}) == "Engine: pandas"
    assert describe_execution({"engine": "dask", "scheduler": "local", "workers": 2,
                               "threads": 2, "memory_bytes": 8 * 2**30}) == (
        "Engine: Dask · local cluster, 2 workers, 2 threads, 8 GiB")
