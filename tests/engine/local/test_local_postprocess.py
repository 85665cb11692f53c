"""Post-processing of local estimates into valid histograms."""

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from dpstudio.engine.errors import QueryError
from dpstudio.engine.local import postprocess_counts, project_simplex, run_local
from dpstudio.engine.rng import SimulationSource


def _brute_force_projection(v, total):
    """Closest point of {w ≥ 0, Σw = total} by enumerating supports (KKT on each)."""
    best, best_d = None, np.inf
    k = v.size
    for r in range(1, k + 1):
        for support in itertools.combinations(range(k), r):
            s = list(support)
            theta = (v[s].sum() - total) / r
            w = np.zeros(k)
            w[s] = v[s] - theta
            if np.all(w >= -1e-12):
                d = np.sum((w - v) ** 2)
                if d < best_d:
                    best, best_d = w, d
    return best


@pytest.mark.parametrize("seed", range(40))
def test_simplex_projection_matches_brute_force_qp(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 7))
    total = float(rng.choice([1.0, 37.0]))
    v = rng.normal(total / k, total, size=k)
    w = project_simplex(v, total)
    np.testing.assert_allclose(w, _brute_force_projection(v, total), atol=1e-9)
    # And a generic QP solver agrees (to its tolerance).
    qp = minimize(lambda x: np.sum((x - v) ** 2), np.full(k, total / k), method="SLSQP",
                  bounds=[(0, None)] * k,
                  constraints=[{"type": "eq", "fun": lambda x: x.sum() - total}],
                  options={"ftol": 1e-14, "maxiter": 500})
    np.testing.assert_allclose(w, qp.x, atol=1e-5 * max(total, 1.0))


def test_projection_keeps_valid_histograms_and_is_idempotent():
    h = np.array([3.0, 0.0, 5.0, 2.0])
    np.testing.assert_allclose(project_simplex(h, 10.0), h)
    w = project_simplex(np.array([-4.0, 20.0, 1.0, 3.0]), 10.0)
    np.testing.assert_allclose(project_simplex(w, 10.0), w)


@pytest.mark.parametrize("method", ["clip", "simplex"])
@pytest.mark.parametrize("seed", range(10))
def test_postprocessed_histograms_are_valid(method, seed):
    rng = np.random.default_rng(100 + seed)
    n = 500.0
    est = rng.normal(50.0, 80.0, size=int(rng.integers(2, 30)))
    for total in (n, 1.0):
        out = postprocess_counts(est, method, total)
        assert np.all(out >= 0)
        assert out.sum() == pytest.approx(total, rel=1e-12)
    np.testing.assert_array_equal(postprocess_counts(est, "none", n), est)


def test_clip_of_all_negative_is_uniform_and_bad_method_refused():
    np.testing.assert_allclose(postprocess_counts(np.array([-1.0, -2.0]), "clip", 10.0), [5, 5])
    with pytest.raises(QueryError):
        postprocess_counts(np.ones(3), "round", 3.0)


@pytest.mark.parametrize("method", ["clip", "simplex"])
@pytest.mark.parametrize("mech", ["krr", "oue", "olh", "hadamard"])
def test_run_local_postprocess_gives_valid_histograms(method, mech):
    rng = np.random.default_rng(7)
    cats = [f"c{i}" for i in range(12)]
    values = rng.choice(cats[:3], size=3000, p=[0.6, 0.3, 0.1])  # 9 empty categories
    res = run_local(values, mech, {"epsilon": 0.5}, categories=cats,
                    source=SimulationSource(1), postprocess=method)
    counts = np.array(list(res.estimate.values()))
    assert np.all(counts >= 0) and counts.sum() == pytest.approx(3000, rel=1e-12)
    raw = np.array(list(res.unbiased.values()))
    assert raw.min() < 0 or abs(raw.sum() - 3000) > 1  # the raw estimates were no histogram
