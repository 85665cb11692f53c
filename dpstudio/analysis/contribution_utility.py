"""Error against ε of a user-level release: the utility curves of :class:`PersonChoices`.

A user-level release (:mod:`dpstudio.engine.contribution`) answers on the rows kept
after each person's rows beyond k are dropped at random, with every noise k × a row's.
Its curves therefore differ from the per-row ones twice: the noise is k times larger, and
the statistic moves (fewer rows: a count shrinks, a mean shifts towards the people with
few rows). The analytic line is the engine's per-row noise curve on the rows one seeded
bounding keeps, times k, with the bias measured against the statistic of every row
(dropping and clamping); the points are simulated releases through the engine's own
user-level run, each with a fresh bounding. Only the central model bounds people, so no
other trust model is drawn for comparison. Everything here is a seeded simulation.
"""

from __future__ import annotations

import numpy as np

from dpstudio.analysis.bias import analyst_bias, estimand, with_bias
from dpstudio.analysis.contribution import PersonChoices
from dpstudio.analysis.curves import Curve, UtilityResult, curve_name, metric_label
from dpstudio.analysis.footing import assumptions
from dpstudio.analysis.sample_error import error_of_samples
from dpstudio.engine.contribution import (
    bound_contributions,
    person_relation,
    run_user_level,
    user_sensitivity,
)
from dpstudio.engine.errors import QueryError
from dpstudio.engine.rng import SimulationSource
from dpstudio.jobs import State, check

__all__ = ["USER_LEVEL_DRAWS", "user_level_utility"]

#: Rows × replications one ε of the simulated points may cost (each replication bounds
#: every person's rows again: a sort of the column).
USER_LEVEL_DRAWS = 2_000_000


def _kept(s: PersonChoices, values: np.ndarray, seed: int) -> np.ndarray:
    """The rows one seeded bounding keeps (the analytic line's data)."""
    return np.asarray(values)[bound_contributions(s.ids, s.max_rows, SimulationSource(seed))]


def _scale(s: PersonChoices, kept: np.ndarray, values: np.ndarray) -> float:
    """What turns the kept rows' relative or TV error into the error against all rows'
    truth (the noise is the same; the denominator is not)."""
    if s.metric not in ("relative", "tv"):
        return 1.0
    t_kept, t_all = estimand(s, kept), estimand(s, values)
    if s.metric == "tv":
        a, b = float(np.sum(t_kept)), float(np.sum(t_all))
    else:
        a, b = float(np.mean(np.abs(t_kept))), float(np.mean(np.abs(t_all)))
    return a / b if b else 1.0


def _line(s: PersonChoices, values: np.ndarray, kept: np.ndarray,
          epsilons: np.ndarray) -> Curve | None:
    from dpstudio.analysis.compare import noise_curve

    noise = noise_curve(s, kept, epsilons)
    if noise is None:
        return None
    noise = noise * s.max_rows * _scale(s, kept, values)
    bias = None
    if s.metric in ("rmse", "relative") and s.query != "histogram":
        inner = analyst_bias(s, kept) or 0.0  # clamping and imputing, on the rows kept
        # + what dropping rows moves the statistic by (a count: every row dropped)
        moved = float(estimand(s, kept)[0]) - float(estimand(s, values)[0])
        bias = inner + moved if np.isfinite(moved) else None
    truth = estimand(s, values) if bias and s.metric == "relative" else None
    return Curve(curve_name("central", s.info.label, "analytic"), "central", s.mechanism,
                 "analytic", epsilons, with_bias(noise, bias, s.metric, truth),
                 primary=True, assumptions=assumptions(s) + " · " +
                 person_relation(s.max_rows), bias=bias or None)


def _points(s: PersonChoices, values: np.ndarray, epsilons: np.ndarray, reps: int,
            seed: int, state: State | None) -> Curve:
    source = SimulationSource(seed)
    truth = estimand(s, values)
    pts = np.empty((epsilons.size, 3))
    for i, e in enumerate(epsilons):
        check(state)
        spec = s.spec(float(e))
        draws = []
        for _ in range(reps):
            rel = run_user_level(values, s.ids, spec, s.max_rows, source)
            v = rel.value
            draws.append(np.asarray(list(v.values()) if isinstance(v, dict) else [v],
                                    dtype=np.float64))
        pts[i] = error_of_samples(np.stack(draws), truth, s.metric)
        if state is not None:
            state.progress((i + 1) / epsilons.size)
    return Curve(curve_name("central", s.info.label, "simulated"), "central", s.mechanism,
                 "simulation", epsilons.copy(), pts[:, 0], pts[:, 1], pts[:, 2])


def user_level_utility(s: PersonChoices, values: np.ndarray, state: State | None, *,
                       mc_epsilons: np.ndarray, line_epsilons: np.ndarray, reps: int,
                       seed: int, simulate: bool, analytic: bool) -> UtilityResult:
    """The utility curves of a user-level central release (no other model compared).

    Parameters
    ----------
    s : PersonChoices
        The choices, with each row's identifier.
    values : numpy.ndarray
        The column's values (every row; the truth is their statistic).
    state : State or None
        Progress and cancellation.
    mc_epsilons, line_epsilons : numpy.ndarray
        ε of the points and of the line.
    reps : int
        Simulated releases per ε at most (fewer on a large column:
        :data:`USER_LEVEL_DRAWS`).
    seed : int
        Seed of the simulation (the line's bounding and the points').
    simulate, analytic : bool
        Whether to compute the points, the line.

    Returns
    -------
    UtilityResult
        Keyed by ``s.utility_key()``.

    Raises
    ------
    QueryError
        For choices a user-level release refuses (a quantile, the replace relation…).
    Cancelled
        When ``state`` asks the job to stop.
    """
    check(state)
    if s.ids is None or np.size(s.ids) != np.size(values):
        raise QueryError("the identifier column was not read: reopen the dataset")
    user_sensitivity(s.spec(), s.max_rows)  # refuses a quantile, replace-one… in one line
    n = int(np.size(values))
    curves: list[Curve] = []
    notes = [f"user-level: each person's rows beyond {s.max_rows} dropped at random, every "
             f"noise {s.max_rows} × a row's; only the central model bounds people, so no "
             "other trust model is drawn"]
    if analytic:
        kept = _kept(s, values, seed)
        line = _line(s, values, kept, line_epsilons)
        if line is not None:
            curves.append(line)
            if line.bias:
                notes.append(f"the line includes the bias: dropping rows and clamping move "
                             f"the release's expectation by {line.bias:+.3g} from the "
                             f"{s.query} of every row (one seeded bounding; analyst only); "
                             "the points also include how the random drops vary")
    used = 0
    if simulate:
        used = int(max(10, min(reps, USER_LEVEL_DRAWS // max(n, 1))))
        curves.append(_points(s, values, mc_epsilons, used, seed, state))
        notes.append(f"simulation: {used} simulated user-level releases per ε (each bounds "
                     f"the rows again), seeded generator (seed {seed}), on the {n:,} rows")
    return UtilityResult(s.utility_key(), s.metric, metric_label(s), curves, n, used, notes,
                         None, assumptions(s) + " · " + person_relation(s.max_rows), None)
