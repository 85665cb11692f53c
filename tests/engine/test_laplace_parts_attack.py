"""The simulated attack on a release of several Laplace statistics
(:func:`dpstudio.engine.attack.simulate_laplace_parts_attack`) against the closed form of
its likelihood-ratio tests, with a power check: the boxes must miss a curve 25% off.

One part with ε, Δ = 1, b = 1/ε: its loss L = ε(2 clip(x, 0, 1) − 1) has an atom at −ε
(mass 1/2 under D, e^−ε/2 under D′), one at +ε (e^−ε/2 under D, 1/2 under D′) and density
e^{−(l+ε)/2}/4 under D (e^l times that under D′) between. So P_D(L > u) = e^{−(u+ε)/2}/2
and P_D′(L ≤ u) = e^{(u−ε)/2}/2 on [−ε, ε); two parts by one integral over the first.
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad

from dpstudio.engine.attack import simulate_laplace_parts_attack
from dpstudio.engine.errors import ParameterError
from dpstudio.engine.rng import SimulationSource
from dpstudio.jobs import Cancelled, NullState


def _survival_d(u: float, e: float) -> float:
    """P_D(L > u) for one part."""
    if u < -e:
        return 1.0
    return 0.5 * math.exp(-(u + e) / 2) if u < e else 0.0


def _cdf_d2(u: float, e: float) -> float:
    """P_D′(L ≤ u) for one part."""
    if u < -e:
        return 0.0
    return 0.5 * math.exp((u - e) / 2) if u < e else 1.0


def exact_errors(t: float, e: float, parts: int) -> tuple[float, float]:
    """(α, β) of "reject D when the summed loss exceeds t", for one or two parts."""
    if parts == 1:
        return _survival_d(t, e), _cdf_d2(t, e)
    assert parts == 2
    points = [p for p in (t - e, t + e) if -e < p < e]

    def a_density(v):
        return 0.25 * math.exp(-(v + e) / 2) * _survival_d(t - v, e)

    def b_density(v):
        return 0.25 * math.exp((v - e) / 2) * _cdf_d2(t - v, e)

    a = (0.5 * _survival_d(t + e, e) + 0.5 * math.exp(-e) * _survival_d(t - e, e)
         + quad(a_density, -e, e, points=points or None)[0])
    b = (0.5 * math.exp(-e) * _cdf_d2(t + e, e) + 0.5 * _cdf_d2(t - e, e)
         + quad(b_density, -e, e, points=points or None)[0])
    return a, b


def _covered(emp, e: float, parts: int) -> np.ndarray:
    exact = np.array([exact_errors(float(t), e, parts) for t in emp.thresholds])
    return ((emp.alpha_low <= exact[:, 0]) & (exact[:, 0] <= emp.alpha_high)
            & (emp.beta_low <= exact[:, 1]) & (exact[:, 1] <= emp.beta_high))


def test_the_closed_form_is_a_distribution():
    e = 0.7
    for parts in (1, 2):
        lo, hi = -parts * e - 1e-9, parts * e
        assert exact_errors(lo, e, parts) == pytest.approx((1.0, 0.0))
        assert exact_errors(hi, e, parts) == pytest.approx((0.0, 1.0))
    # Two parts: both in the lower tail is an atom of mass 1/4 at −2ε under D.
    assert exact_errors(-2 * e, e, 2)[0] == pytest.approx(0.75)


@pytest.mark.parametrize("parts", [1, 2])
def test_every_box_meets_the_closed_form(parts):
    e = 0.6
    emp = simulate_laplace_parts_attack(e, parts, 40_000, SimulationSource(3),
                                        confidence=0.99, simultaneous=True)
    assert emp.thresholds.size == 21 and emp.thresholds[0] == -parts * e
    assert np.all(_covered(emp, e, parts)), emp.to_dict()


def test_the_boxes_miss_a_wrong_curve():
    # Power: 40,000 draws per input tell ε_part = 0.6 from 0.75 (25% more), and two parts
    # from one part of the same total ε.
    e = 0.6
    emp = simulate_laplace_parts_attack(e, 2, 40_000, SimulationSource(3),
                                        confidence=0.99, simultaneous=True)
    assert not np.all(_covered(emp, 1.25 * e, 2))
    one = np.array([exact_errors(float(t), 2 * e, 1) for t in emp.thresholds])
    assert np.any((one[:, 1] < emp.beta_low) | (one[:, 1] > emp.beta_high)
                  | (one[:, 0] < emp.alpha_low) | (one[:, 0] > emp.alpha_high))


def test_the_same_seed_gives_the_same_points_and_the_state_is_honoured():
    plain = simulate_laplace_parts_attack(0.5, 3, 2_000, SimulationSource(9))
    state = NullState()
    watched = simulate_laplace_parts_attack(0.5, 3, 2_000, SimulationSource(9), state=state)
    assert watched.to_dict() == plain.to_dict()
    f = np.asarray(state.fractions)
    assert f.size >= 2 and np.all(np.diff(f) >= 0) and f[-1] == 1.0, f

    class CancelAfterOne(NullState):
        def cancelled(self) -> bool:
            return len(self.fractions) >= 1

    stopped = CancelAfterOne()
    with pytest.raises(Cancelled):
        simulate_laplace_parts_attack(0.5, 3, 2_000, SimulationSource(9), state=stopped)
    assert stopped.fractions == [0.0]


@pytest.mark.parametrize("args", [(0.0, 2, 100), (math.inf, 2, 100), (1.0, 0, 100),
                                  (1.0, 2, 0), (1.0, 2.5, 100), ("x", 2, 100)])
def test_bad_input_is_refused_in_one_line(args):
    with pytest.raises(ParameterError):
        simulate_laplace_parts_attack(*args, SimulationSource(1))
