"""Property tests: no sequence of releases can exceed a dataset's budget.

The ledger adds ε and δ exactly (decimal sums of what was typed), so splits of a budget
that sum to it in decimal all fit even when their float sum overshoots (0.1 + 0.2 >
0.3 in floating point), and any release beyond the budget is refused.
"""

from decimal import Decimal

import pytest
from dps_project_helpers import fast_dir, folder_state, make_dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpstudio.engine.accounting import budget as exact_budget
from dpstudio.engine.queries import QuerySpec
from dpstudio.project import BudgetExceededError, Project, ReleaseSpec


@pytest.fixture(scope="module")
def workdir():
    with fast_dir() as d:
        make_dataset(d)
        yield d


_counter = iter(range(10**9))


def _spec(data, eps, delta=0.0):
    mech = "gaussian" if delta > 0 else "laplace"
    return ReleaseSpec(dataset=str(data), formats=("json",), query=QuerySpec(
        query="count", mechanism=mech, epsilon=eps, delta=delta, column="g"))


def _fresh(workdir, eps_total, delta_total):
    n = next(_counter)
    project = Project.create(workdir / f"p{n}.dpstudio", epsilon=eps_total, delta=delta_total)
    return project, workdir / f"out{n}"


def _run(project, data, out, requests):
    """Release each (ε, δ) in turn; return which succeeded. Checks the invariant throughout."""
    accepted = []
    for eps, delta in requests:
        before = (len(project.ledger()), folder_state(out))
        try:
            project.release(_spec(data, eps, delta), out)
            accepted.append(True)
        except BudgetExceededError as exc:
            assert "left" in str(exc)
            assert (len(project.ledger()), folder_state(out)) == before  # nothing at all
            accepted.append(False)
        if project.datasets():
            b = project.budget(project.datasets()[0])
            assert b.spent_epsilon <= b.total_epsilon and b.spent_delta <= b.total_delta
    return accepted


def test_ten_tenths_fit_a_budget_of_one_and_an_eleventh_does_not(workdir):
    project, out = _fresh(workdir, 1.0, 0.0)
    with project:
        assert _run(project, workdir / "data.csv", out, [(0.1, 0.0)] * 11) == [True] * 10 + [
            False]
        b = project.budget(project.datasets()[0])
        assert b.spent_epsilon == Decimal("1.0") and b.remaining_epsilon == 0
    project, out = _fresh(workdir, 0.3, 0.0)  # 0.1 + 0.2 > 0.3 in floating point
    with project:
        assert 0.1 + 0.2 > 0.3
        assert _run(project, workdir / "data.csv", out, [(0.1, 0.0), (0.2, 0.0), (1e-9, 0.0)]
                    ) == [True, True, False]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tenths=st.integers(1, 40), k=st.integers(1, 9),
       extra=st.lists(st.floats(1e-6, 2.0), max_size=3), data=st.data())
def test_a_split_of_the_budget_fits_exactly_and_nothing_more(workdir, tenths, k, extra, data):
    total = tenths / 10
    parts = [float(p) for p in exact_budget.split(total, k)]
    order = data.draw(st.permutations(parts))
    project, out = _fresh(workdir, total, 0.0)
    with project:
        assert _run(project, workdir / "data.csv", out, [(p, 0.0) for p in order]) == [True] * k
        assert _run(project, workdir / "data.csv", out, [(e, 0.0) for e in extra]) == [
            False] * len(extra)
        assert project.budget(project.datasets()[0]).remaining_epsilon == 0


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(eps_total=st.sampled_from([0.5, 1.0, 1.3, 2.0]),
       requests=st.lists(st.tuples(
           st.sampled_from([0.05, 0.1, 0.2, 0.25, 0.3, 0.7, 1.0]),
           st.sampled_from([0.0, 0.0, 1e-6, 2.5e-6, 5e-6])), min_size=1, max_size=12))
def test_any_sequence_matches_exact_accounting(workdir, eps_total, requests):
    """Each release is accepted exactly when the exact sums stay within (ε, δ) = budget."""
    delta_total = Decimal("0.00001")
    project, out = _fresh(workdir, eps_total, float(delta_total))
    with project:
        got = _run(project, workdir / "data.csv", out, requests)
        spent_e, spent_d = Decimal(0), Decimal(0)
        for (eps, delta), ok in zip(requests, got, strict=True):
            fits = (spent_e + Decimal(repr(eps)) <= Decimal(repr(eps_total))
                    and spent_d + Decimal(repr(delta)) <= delta_total)
            assert ok == fits
            if ok:
                spent_e += Decimal(repr(eps))
                spent_d += Decimal(repr(delta))
        if project.datasets():
            b = project.budget(project.datasets()[0])
            assert (b.spent_epsilon, b.spent_delta) == (spent_e, spent_d)
