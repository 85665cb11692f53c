"""``dpstudio query`` offers the registry entries that answer a query, and only their
parameters: training methods (DP-SGD, objective perturbation) belong to ``dpstudio train``."""

from __future__ import annotations

from dpstudio.cli import main
from dpstudio.engine.registry import REGISTRY


def test_query_help_lists_no_training_flags(capsys):
    assert main(["query", "--help"]) == 0
    text = capsys.readouterr().out
    for flag in ("--epochs", "--batch-rate", "--learning-rate", "dp_sgd"):
        assert flag not in text, flag
    # Every entry that answers a query is still offered.
    for info in REGISTRY:
        if info.queries:
            assert info.name in text, info.name


def test_a_training_method_is_refused_by_query_in_one_line(capsys):
    assert main(["query", "sample:survey", "--column", "age", "--query", "mean",
                 "--mechanism", "dp_sgd", "--epsilon", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "invalid choice: 'dp_sgd'" in err[-1]
