"""Exact budget arithmetic: spending that sums to the budget fits; any overdraw does not."""

from decimal import Decimal

import pytest

from dpstudio.engine.accounting.budget import as_float, exact, fits, remaining, spent, split
from dpstudio.engine.errors import ParameterError


def test_amounts_are_the_decimals_typed():
    assert exact(0.1) == Decimal("0.1")
    assert exact(1e-5) == Decimal("0.00001")
    assert exact("0.3333333333333333") == Decimal("0.3333333333333333")
    assert exact(3) == Decimal(3)


def test_ten_tenths_use_up_one_exactly():
    assert remaining(1.0, [0.1] * 10) == 0
    assert fits(1.0, [0.1] * 9, 0.1)
    assert not fits(1.0, [0.1] * 10, 1e-12)
    assert sum([0.1] * 10) != 1.0  # what a float ledger would have seen


def test_thirds_as_typed_plus_remainder_fit_exactly():
    parts = [0.3333333333333333, 0.3333333333333333, 0.3333333333333334]
    assert remaining(1.0, parts) == 0
    assert fits(1.0, parts[:2], parts[2])
    assert not fits(1.0, parts[:2], 0.3333333333333335)
    assert fits(1.0, ["0.3333333333333333"] * 3, "0.0000000000000001")


def test_point_one_plus_point_two_is_point_three():
    assert fits(0.3, [0.1], 0.2)
    assert fits(0.6, [0.1, 0.2], 0.3)
    assert remaining(0.3, [0.1, 0.2]) == 0
    assert not fits(0.3, [0.1, 0.2], 5e-324)  # the smallest overdraw is caught


def test_pairs_are_tracked_componentwise():
    total = (1.0, 1e-5)
    used = [(0.5, 3e-6), (0.25, 3e-6)]
    assert remaining(total, used) == (Decimal("0.25"), Decimal("0.000004"))
    assert fits(total, used, (0.25, 4e-6))
    assert not fits(total, used, (0.25, 4.000000001e-6))  # δ overdrawn
    assert not fits(total, used, (0.2500001, 1e-6))  # ε overdrawn
    assert spent(used) == (Decimal("0.75"), Decimal("0.000006"))
    assert remaining(2.0, []) == 2


@pytest.mark.parametrize("total,k", [(1.0, 3), (1.0, 7), (0.3, 3), (2.5, 10), (1e-5, 3),
                                     (7.0, 1), (1.0, 1000), (123.456, 9)])
def test_split_parts_sum_exactly_and_fit_even_through_floats(total, k):
    parts = split(total, k)
    assert len(parts) == k and sum(parts) == exact(total)
    unit = Decimal(1).scaleb(parts[0].as_tuple().exponent)  # 15th digit of a part
    assert 0 <= parts[-1] - parts[0] < k * unit  # as equal as 15 digits allow
    assert fits(total, parts[:-1], parts[-1])
    # Spent as floats (what the UI stores) and read back, they still fit exactly.
    as_floats = [float(p) for p in parts]
    assert remaining(total, as_floats) == 0
    assert not fits(total, as_floats, 1e-300)


def test_split_of_a_total_with_17_digits_is_exact_in_decimals():
    parts = split(0.30000000000000004, 3)
    assert sum(parts) == Decimal("0.30000000000000004")
    assert fits(0.30000000000000004, parts[:2], parts[2])


def test_split_pairs():
    parts = split((1.0, 1e-6), 4)
    assert parts[0] == (Decimal("0.25"), Decimal("2.5E-7"))
    assert remaining((1.0, 1e-6), parts) == (0, 0)


def test_as_float_never_understates():
    third = Decimal(1) / 3
    assert Decimal(as_float(third)) >= third
    assert as_float(Decimal("0.5")) == 0.5


@pytest.mark.parametrize("call", [
    lambda: exact(-0.1),
    lambda: exact(float("nan")),
    lambda: exact(float("inf")),
    lambda: exact("abc"),
    lambda: exact(True),
    lambda: remaining((1.0, 1e-5), [0.5]),
    lambda: remaining(1.0, [(0.5, 1e-6)]),
    lambda: split(1.0, 0),
])
def test_bad_amounts_raise_one_line_errors(call):
    with pytest.raises(ParameterError) as err:
        call()
    assert "\n" not in str(err.value)
