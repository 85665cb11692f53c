"""``dpstudio amplify``: the JSON contract and one-line errors with exit code 2."""

import json

import pytest

from dpstudio.cli import main
from dpstudio.engine.shuffle.amplification import shuffle_epsilon


def run(capsys, *argv):
    code = main(["amplify", *[str(a) for a in argv]])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("bound", ["fmt21", "ebh19"])
def test_json_contract(capsys, bound):
    eps0 = 2 if bound == "fmt21" else 0.4
    code, out, err = run(capsys, "--epsilon0", eps0, "--n", 10000, "--delta", 1e-6,
                         "--bound", bound, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert {"epsilon", "delta", "epsilon0", "n", "bound"} <= set(data)
    assert data["epsilon"] == shuffle_epsilon(eps0, 10000, 1e-6, bound)[0]
    assert data["delta"] == 1e-6 and data["n"] == 10000 and data["bound"] == bound


def test_default_bound_is_fmt21_and_text_output(capsys):
    code, out, _ = run(capsys, "--epsilon0", 2, "--n", "1e4", "--delta", 1e-6)
    assert code == 0 and "fmt21" in out and "ε = 0.155" in out


def test_target_epsilon(capsys):
    code, out, err = run(capsys, "--target-epsilon", 0.5, "--n", 10000, "--delta", 1e-6,
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["epsilon"] <= 0.5 and data["epsilon0"] > 3


@pytest.mark.parametrize("argv", [
    ["--epsilon0", 0, "--n", 100, "--delta", 1e-6],
    ["--epsilon0", -1, "--n", 100, "--delta", 1e-6],
    ["--epsilon0", 1, "--n", 1, "--delta", 1e-6],
    ["--epsilon0", 1, "--n", 2.5, "--delta", 1e-6],
    ["--epsilon0", 1, "--n", 100, "--delta", 0],
    ["--epsilon0", 1, "--n", 100, "--delta", 1],
    ["--epsilon0", 1, "--n", 100, "--delta", 1.5],
    ["--epsilon0", 2, "--n", 10000, "--delta", 1e-6, "--bound", "ebh19"],
    ["--epsilon0", 0.3, "--n", 100, "--delta", 1e-6, "--bound", "ebh19"],
    ["--epsilon0", 1, "--n", 100, "--delta", 1e-6, "--bound", "nope"],
    ["--n", 100, "--delta", 1e-6],
    ["--epsilon0", "x", "--n", 100, "--delta", 1e-6],
])
def test_bad_arguments_one_line_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
