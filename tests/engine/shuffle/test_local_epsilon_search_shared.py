"""One search for the largest local ε₀: ``largest_local_epsilon`` and
``shuffled_local_epsilon`` both call :func:`largest_meeting`.

The values below are what the two functions returned before they shared the search
(each with its own copy of the bisection): the shared one must give them again, and each
returned ε₀ must still meet its target (the pessimistic side), while a slightly larger
one does not (the search is not merely safe but tight).
"""

from __future__ import annotations

import math

import pytest

from dpstudio.engine.shuffle.amplification import (
    fmt21_delta,
    largest_local_epsilon,
    largest_meeting,
    shuffle_epsilon,
)
from dpstudio.engine.shuffle.shuffled_local import shuffled_local_epsilon

# (ε, n, δ) → largest_local_epsilon, then shuffled_local_epsilon's (ε₀, central ε),
# as the separate bisections computed them.
BEFORE = [
    (1.0, 3000, 1e-09, 3.1988204941153526, 3.198820114135742, 0.9999997054108882),
    (3.0, 2, 1e-05, 3.00001076515764, 3.0000085830688477, 2.9999978178804083),
    (3.0, 50, 1e-09, 3.0000000027939677, 3.0, 2.9999999972060323),
    (3.0, 1000000, 1e-05, 10.677710875868797, 10.677709579467773, 2.999903473912966),
]


@pytest.mark.parametrize("eps,n,delta,largest,local,central", BEFORE)
def test_shared_search_gives_what_each_copy_gave(eps, n, delta, largest, local, central):
    got = largest_local_epsilon(eps, n, delta)
    assert got == pytest.approx(largest, rel=1e-12, abs=0.0)
    assert shuffle_epsilon(got, n, delta)[0] <= eps  # meets the target
    assert shuffle_epsilon(got * (1 + 4e-9), n, delta)[0] > eps or got == eps
    eps0, stated = shuffled_local_epsilon(eps, n, delta)
    assert (eps0, stated) == pytest.approx((local, central), rel=1e-12, abs=0.0)
    assert fmt21_delta(eps, eps0, n, delta) <= delta and stated <= eps
    assert fmt21_delta(eps, eps0 * (1 + 4e-6), n, delta) > delta or eps0 == eps


def test_search_returns_the_side_that_meets_within_its_tolerance():
    # A closed form: the condition holds for x ≤ c exactly.
    for c in (1.0, 2.0 ** 0.5, 7.3, 123.0):
        x = largest_meeting(lambda v, c=c: v <= c, 1.0, 1e-9, 745.0)
        assert x <= c and (c - x) <= 1e-9 * c
    # A target start that is itself the answer, and the cap kept when it still meets.
    assert largest_meeting(lambda v: v <= 1.0, 1.0, 1e-9, 745.0) == 1.0
    assert largest_meeting(lambda v: True, 1.0, 1e-9, 700.0) == 700.0
    x = largest_meeting(lambda v: v <= 650.0, 1.0, 1e-6, 700.0)
    assert x <= 650.0 and math.isclose(x, 650.0, rel_tol=1e-6)
