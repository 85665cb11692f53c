"""The contract every registry entry passes, generated from the registry.

Register a mechanism and it gets these four tests, whatever its kind and trust model
(``adapters.py`` says what each means per kind): calibration against a closed form or an
independent computation, distribution against the claimed law with a power check,
an empirical privacy audit on a worst neighbouring pair with a power check, and refusal
of bad input in one line. Test ids are the entries' names, e.g.
``test_calibration[secagg_gaussian]``; an entry of a kind without an adapter fails.
"""

import pytest
from adapters import contract_cases, run_check

from dpstudio.engine.registry import REGISTRY

CASES = contract_cases(REGISTRY)


@pytest.mark.parametrize("info", CASES)
def test_calibration(info):
    run_check("calibration", info)


@pytest.mark.parametrize("info", CASES)
def test_distribution(info):
    run_check("distribution", info)


@pytest.mark.parametrize("info", CASES)
def test_audit(info):
    run_check("audit", info)


@pytest.mark.parametrize("info", CASES)
def test_bad_input(info):
    run_check("bad_input", info)
