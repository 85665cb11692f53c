"""ε and δ are declared once (:data:`dpstudio.engine.entry.EPSILON`, :data:`DELTA`).

The app's ε slider and δ spin box, the session's defaults and clamping, the analysis
grids, the glossary tooltips and the CLI's ``--epsilon`` help all read that one
declaration. The
first test checks what the app shows against it; the second swaps the declaration for a
probe before anything else is imported (in a fresh interpreter) and checks that every
client follows the probe, so a client that re-declares a range or a sentence (even with
today's values) fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from dpstudio.commands import query as query_command
from dpstudio.commands import tradeoff as tradeoff_command
from dpstudio.engine.entry import DELTA, EPSILON
from dpstudio.ui.analysis_panel import AnalysisPanel
from dpstudio.ui.session import Session
from dpstudio.ui.texts import GLOSSARY


def _flag_help(parser, dest: str) -> str:
    (action,) = [a for a in parser._actions if a.dest == dest]
    return action.help


def test_the_panel_session_glossary_and_cli_show_the_one_declaration(qtbot):
    session = Session()
    panel = AnalysisPanel(session)
    qtbot.addWidget(panel)

    assert (panel.epsilon.low, panel.epsilon.high) == EPSILON.shown_range == (0.01, 100.0)
    assert (panel.delta.minimum(), panel.delta.maximum()) == pytest.approx(DELTA.shown_range)
    assert panel.epsilon.toolTip() == EPSILON.help
    assert panel.delta.toolTip() == DELTA.help
    # The very same string objects: a copy typed into the glossary would be another one.
    assert GLOSSARY["epsilon"] is EPSILON.help and GLOSSARY["delta"] is DELTA.help

    # The session clamps to the shown range, at both ends.
    session.set_epsilon(1e6)
    assert session.epsilon == EPSILON.shown_range[1]
    session.set_epsilon(1e-9)
    assert session.epsilon == EPSILON.shown_range[0]
    session.set_delta(0.5)
    assert session.delta == DELTA.shown_range[1]

    assert EPSILON.help in _flag_help(tradeoff_command.parser(), "epsilon")
    assert EPSILON.help in _flag_help(query_command.parser(), "epsilon")
    assert DELTA.help in _flag_help(query_command.parser(), "delta")


_PROBE = textwrap.dedent("""
    import json
    from dataclasses import replace
    import dpstudio.engine.entry as entry
    # Probe values no client could have typed: each must come from here.
    entry.EPSILON = replace(entry.EPSILON, help="PROBE-EPSILON", default=0.7, shown_low=0.5,
                            shown_high=7.0)
    entry.DELTA = replace(entry.DELTA, help="PROBE-DELTA", default=1e-8, shown_low=1e-9,
                          shown_high=0.01)

    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from dpstudio.analysis import choices
    from dpstudio.commands import query, tradeoff
    from dpstudio.ui import session as session_module
    from dpstudio.ui.analysis_panel import AnalysisPanel
    from dpstudio.ui.texts import GLOSSARY

    def flag_help(parser, dest):
        return [a.help for a in parser._actions if a.dest == dest][0]

    session = session_module.Session()
    panel = AnalysisPanel(session)
    choice = choices.Choices("c", "numeric", ("numeric",), "central", "mean", "laplace")
    print(json.dumps({
        "defaults": [session.epsilon, session.delta, choice.epsilon, choice.delta,
                     panel.epsilon.value()],
        "slider": [panel.epsilon.low, panel.epsilon.high],
        "delta_box": [panel.delta.minimum(), panel.delta.maximum()],
        "session": [list(session_module.EPS_RANGE), list(session_module.DELTA_RANGE)],
        "grid": [choices.EPS_MIN, choices.EPS_MAX, float(choices.LINE_EPSILONS[0]),
                 float(choices.LINE_EPSILONS[-1])],
        "glossary": [GLOSSARY["epsilon"], GLOSSARY["delta"]],
        "tooltips": [panel.epsilon.toolTip(), panel.delta.toolTip()],
        "cli": [flag_help(tradeoff.parser(), "epsilon"), flag_help(query.parser(), "epsilon"),
                flag_help(query.parser(), "delta")],
    }))
""")


def test_every_client_follows_a_changed_declaration():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["defaults"] == [0.7, 1e-8, 0.7, 1e-8, 0.7]
    assert seen["slider"] == [0.5, 7.0]
    assert seen["delta_box"] == pytest.approx([1e-9, 0.01])
    assert seen["session"] == [[0.5, 7.0], [1e-9, 0.01]]
    assert seen["grid"] == pytest.approx([0.5, 7.0, 0.5, 7.0])
    assert seen["glossary"] == ["PROBE-EPSILON", "PROBE-DELTA"]
    assert seen["tooltips"] == ["PROBE-EPSILON", "PROBE-DELTA"]
    assert all(text.startswith("PROBE-") for text in seen["cli"])
    assert "PROBE-DELTA" in seen["cli"][2]
