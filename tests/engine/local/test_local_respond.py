"""Every user sends a report (issue 10, item 2): who answers is not released.

Today's rule (before this fix) let only users with a declared value report, so the
number of reports — the released ``n``, the exported records, the sum of the estimates —
counted the users whose value is missing or undeclared exactly. The audits below compare
what the collector sees for two neighbouring columns that differ in one user's value
(declared vs missing, declared vs undeclared): it must not tell them apart beyond ε. A
test-local copy of the old rule shows that the same audit detects the leak.
"""

import numpy as np
import pytest

from dpstudio.engine.audit import epsilon_lower_bound
from dpstudio.engine.local import KaryRR, run_local
from dpstudio.engine.local.respond import OTHER_LABEL, histogram_inputs, mean_inputs
from dpstudio.engine.local.run import collect_reports
from dpstudio.engine.queries import category_codes, present_mask
from dpstudio.engine.rng import SimulationSource

EPS0 = 1.0
LABELS = ["1", "2", "3"]


def _religious(seed=0):
    """The issue's example: 6,366 rows, 5,710 of them in the declared 1, 2, 3."""
    rng = np.random.default_rng(seed)
    col = rng.choice(LABELS, size=6366, p=[0.5, 0.3, 0.2]).astype(object)
    others = rng.choice(6366, size=656, replace=False)
    col[others[:400]] = None  # missing
    col[others[400:]] = rng.choice(["4", "5", "refused"], size=256)  # undeclared
    return col


# ------------------------------------------------------------------ released n


@pytest.mark.parametrize("mech", ["rr", "krr", "sue", "oue", "olh", "hadamard", "cms"])
def test_histogram_n_is_the_number_of_rows(mech):
    col = _religious()
    cats = ["1", "2"] if mech == "rr" else LABELS
    res = run_local(col, mech, {"epsilon": 1.0}, categories=cats, source=SimulationSource(1))
    assert res.n == 6366  # before: 5,710, revealing the 656 others exactly
    assert all(len(c) == 6366 for c in res.records().values())
    assert res.missing == 400  # analyst-only
    assert "missing" not in res.to_dict()
    cells = cats if mech == "rr" else cats + [OTHER_LABEL]
    assert list(res.estimate) == cells
    if mech in ("rr", "krr"):  # p + (k − 1)q = 1: the estimates sum to the rows exactly
        assert sum(res.unbiased.values()) == pytest.approx(6366, abs=1e-6)


@pytest.mark.parametrize("mech", ["local_laplace", "local_gaussian", "duchi"])
def test_mean_n_is_the_number_of_rows(mech):
    col = np.array([10.0, np.nan, 30.0, np.inf, -np.inf, 70.0] * 500)
    res = run_local(col, mech, {"epsilon": 1.0}, bounds=(0, 100), source=SimulationSource(2))
    assert res.n == col.size and len(res.records()["report"]) == col.size
    assert res.missing == 1500  # NaN and ±inf are missing: sent as the midpoint
    assert any("middle of the declared bounds (50)" in note for note in res.notes)


def test_heavy_hitters_n_is_the_number_of_rows():
    col = np.array(["hello", None, "world", float("nan")] * 50, dtype=object)
    got = collect_reports(col, "sfp", {"epsilon": 1.0, "buckets": 64, "hashes": 8},
                          source=SimulationSource(3))
    assert got.n == 200 and len(got.reports) == 200 and got.missing == 100
    assert list(got.inputs[:2]) == ["hello", ""]


def test_postprocessed_histogram_sums_to_the_rows():
    res = run_local(_religious(), "oue", {"epsilon": 1.0}, categories=LABELS,
                    source=SimulationSource(4), postprocess="simplex")
    assert sum(res.estimate.values()) == pytest.approx(6366, rel=1e-12)
    assert min(res.estimate.values()) >= 0


# ------------------------------------------------------------------ the audit


def _old_histogram_view(values, source):
    """Test-local copy of the old rule: only declared values report (K-RR over k)."""
    codes, _ = category_codes(values, LABELS)
    oracle = KaryRR(EPS0, len(LABELS))
    return codes.size, oracle.randomize(codes, source)


def _new_histogram_view(values, source):
    res = run_local(values, "krr", {"epsilon": EPS0}, categories=LABELS, source=source)
    return res.n, res.records()["report"]


def _views(view, column, trials, seed):
    """One key per trial: the number of reports and every report, as the collector sees."""
    src = SimulationSource(seed)
    keys = []
    for _ in range(trials):
        n, reports = view(np.array(column, dtype=object), src)
        keys.append(f"{n}:" + ",".join(str(int(r)) for r in np.asarray(reports)))
    return np.array(keys)


@pytest.mark.parametrize("absent", [None, "refused"], ids=["missing", "undeclared"])
def test_answered_unanswered_audit_histogram(absent):
    declared, other = ["2", "3"], ["2", absent]
    trials = 6000
    new = epsilon_lower_bound(_views(_new_histogram_view, declared, trials, 1),
                              _views(_new_histogram_view, other, trials, 2), categorical=True)
    assert new.epsilon_lower <= EPS0, new
    assert new.epsilon_lower > 0.5 * EPS0, new  # the audit sees the target's report
    # Power: under the old rule the count of reports alone tells the two columns apart.
    old = epsilon_lower_bound(_views(_old_histogram_view, declared, trials, 3),
                              _views(_old_histogram_view, other, trials, 4), categorical=True)
    assert old.epsilon_lower > 4 * EPS0, old


def _old_mean_view(values, source):
    """Test-local copy of the old rule for means: missing values send nothing."""
    from dpstudio.engine.local import DuchiMean

    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    return x.size, DuchiMean(EPS0, (0.0, 10.0)).randomize(x, source)


def _new_mean_view(values, source):
    res = run_local(np.asarray(values, dtype=np.float64), "duchi", {"epsilon": EPS0},
                    bounds=(0.0, 10.0), source=source)
    return res.n, res.records()["report"]


def test_answered_unanswered_audit_mean():
    # 10 against the midpoint 5: the pair whose reports differ most (ε-LDP: at most e^ε).
    declared, missing = [2.0, 10.0], [2.0, np.nan]
    trials = 6000
    new = epsilon_lower_bound(_views(_new_mean_view, declared, trials, 5),
                              _views(_new_mean_view, missing, trials, 6), categorical=True)
    assert new.epsilon_lower <= EPS0, new
    old = epsilon_lower_bound(_views(_old_mean_view, declared, trials, 7),
                              _views(_old_mean_view, missing, trials, 8), categorical=True)
    assert old.epsilon_lower > 4 * EPS0, old


def test_answered_unanswered_audit_heavy_hitters():
    params = {"epsilon": EPS0, "buckets": 64, "hashes": 16}

    def keys(column, seed, old=False, trials=2500):
        src = SimulationSource(seed)
        out = []
        for _ in range(trials):
            col = np.array(column, dtype=object)
            if old:  # test-local copy of the old rule: missing words send nothing
                col = col[present_mask(col)]
            got = collect_reports(col, "sfp", params, source=src)
            target = got.oracle.report_keys(got.reports, ["zebra", ""])[-1]
            out.append(got.n * 16 + int(target) if not old or got.n == 2 else got.n * 16)
        return np.array(out)

    new = epsilon_lower_bound(keys(["hello", "zebra"], 9), keys(["hello", None], 10),
                              categorical=True)
    assert new.epsilon_lower <= EPS0, new
    old = epsilon_lower_bound(keys(["hello", "zebra"], 11, old=True, trials=1500),
                              keys(["hello", None], 12, old=True, trials=1500),
                              categorical=True)
    assert old.epsilon_lower > 4 * EPS0, old


# ------------------------------------------------------------------ unbiased, stated variance


def _column(n=1000, seed=7):
    rng = np.random.default_rng(seed)
    col = rng.choice(LABELS + ["9"], size=n, p=[0.45, 0.25, 0.15, 0.15]).astype(object)
    col[rng.random(n) < 0.1] = None
    return col


@pytest.mark.parametrize("mech,params", [
    ("krr", {}), ("sue", {}), ("oue", {}), ("olh", {}), ("hadamard", {}),
    ("cms", {"buckets": 64, "hashes": 16}),
    ("cms", {"buckets": 64, "hashes": 16, "debias": "apple"}),
], ids=["krr", "sue", "oue", "olh", "hadamard", "cms-exact", "cms-apple"])
def test_every_cell_unbiased_with_its_stated_variance(mech, params):
    col = _column()
    codes = histogram_inputs(col, LABELS, None).values
    truth = np.bincount(codes, minlength=4)  # the "other" cell: missing and undeclared
    assert truth[3] > 0
    R = 200
    src = SimulationSource(8)
    est, var = np.empty((R, 4)), np.empty((R, 4))
    for r in range(R):
        res = run_local(col, mech, {"epsilon": 2.0} | params, categories=LABELS, source=src)
        est[r] = list(res.unbiased.values())
        var[r] = np.square(list(res.stderr.values()))
    stated = var.mean(axis=0)
    se_mean = np.sqrt(stated / R)
    assert np.all(np.abs(est.mean(axis=0) - truth) < 5 * se_mean), (est.mean(axis=0), truth)
    # The stated variance is the spread over releases (a variance's s.e. is ≈ √(2/R)).
    ratio = est.var(axis=0, ddof=1) / stated
    assert np.all(np.abs(ratio - 1) < 5 * np.sqrt(2 / R)), ratio


def test_rr_counts_each_other_user_as_half_yes():
    col = np.array(["yes"] * 600 + ["no"] * 200 + [None] * 150 + ["maybe"] * 50, dtype=object)
    R = 300
    src = SimulationSource(9)
    yes = np.array([run_local(col, "rr", {"epsilon": 1.0}, categories=["no", "yes"],
                              source=src).unbiased["yes"] for _ in range(R)])
    se = yes.std(ddof=1) / np.sqrt(R)
    assert abs(yes.mean() - (600 + 200 / 2)) < 5 * se


def test_rr_on_booleans_with_missing_values():
    col = np.array([True] * 600 + [False] * 300 + [None] * 100, dtype=object)
    res = run_local(col, "rr", {"epsilon": 2.0}, source=SimulationSource(12))
    assert list(res.estimate) == ["False", "True"] and res.n == 1000 and res.missing == 100
    assert abs(res.unbiased["True"] - 650) < 5 * res.stderr["True"]


@pytest.mark.parametrize("mech", ["local_laplace", "duchi"])
def test_mean_is_unbiased_for_the_imputed_column(mech):
    rng = np.random.default_rng(10)
    col = rng.uniform(0, 40, 2000)
    col[rng.random(2000) < 0.3] = np.nan
    target = mean_inputs(col, 0.0, 100.0).values.mean()  # missing → 50
    assert abs(target - np.nanmean(col)) > 5  # the imputation matters
    R = 200
    src = SimulationSource(11)
    runs = [run_local(col, mech, {"epsilon": 1.0}, bounds=(0, 100), source=src)
            for _ in range(R)]
    values = np.array([r.unbiased for r in runs])
    stated = np.mean([r.stderr ** 2 for r in runs])
    assert abs(values.mean() - target) < 5 * np.sqrt(stated / R)
