"""Settings: a versioned JSON file, migrated, written atomically, never fatal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from dpstudio.data import open_dataset, sample_path
from dpstudio.ui import settings as settings_module
from dpstudio.ui import style
from dpstudio.ui.main_window import MainWindow
from dpstudio.ui.settings import (
    DEFAULTS,
    MAX_RECENT,
    SCHEMA_VERSION,
    config_dir,
    migrate,
)
from dpstudio.ui.settings import AppSettings as Settings

FIXTURES = Path(__file__).parent / "fixtures"


def test_every_test_uses_a_temporary_config_dir(config_dir):
    assert settings_module.config_dir() == config_dir
    assert Settings.load().path == config_dir / "settings.json"
    assert not config_dir.exists()  # nothing written until something is saved


def test_round_trip(config_dir):
    s = Settings.load()
    s.palette = "dark"
    s.add_recent_file("/data/a.csv")
    s.add_recent_file("/data/b.csv")
    s.add_recent_file("/data/a.csv")
    s.last_choices["session"] = {"epsilon": 0.5, "mechanism": "laplace"}
    s.set_window_bytes("geometry", b"\x01\x02\xff")
    assert s.save()
    again = Settings.load()
    assert again.warning is None
    assert again.palette == "dark"
    assert again.recent_files == [str(Path("/data/a.csv").resolve()),
                                  str(Path("/data/b.csv").resolve())]
    assert again.last_choices == {"session": {"epsilon": 0.5, "mechanism": "laplace"}}
    assert bytes(again.window_bytes("geometry").data()) == b"\x01\x02\xff"
    assert json.loads((config_dir / "settings.json").read_text())["schema_version"] == 2
    assert [p.name for p in config_dir.iterdir()] == ["settings.json"]  # no temp files left


def test_recent_files_are_capped():
    s = Settings.load()
    for i in range(MAX_RECENT + 5):
        s.add_recent_file(f"/data/{i}.csv")
    assert len(s.recent_files) == MAX_RECENT
    assert s.recent_files[0].endswith("14.csv")


def test_migration_from_the_version_1_fixture(config_dir):
    raw = json.loads((FIXTURES / "settings_v1.json").read_text())
    migrated = migrate(raw)
    assert migrated["schema_version"] == SCHEMA_VERSION
    assert migrated["palette"] == "dark"
    assert migrated["recent_files"] == ["/data/survey.csv", "/data/health.csv"]
    assert migrated["presentation_font_scale"] == 2.0
    assert migrated["window"]["geometry"] == "AdnQywADAAA="  # hex → base64
    assert migrated["last_choices"] == {}
    assert raw["schema_version"] == 1  # the input is not modified
    config_dir.mkdir()
    shutil.copy(FIXTURES / "settings_v1.json", config_dir / "settings.json")
    s = Settings.load()
    assert s.warning is None and s.palette == "dark"
    assert bytes(s.window_bytes("geometry").data()) == bytes.fromhex("01d9d0cb00030000")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "is not valid JSON (line 1)"),
        ("[1, 2]", "not a JSON object"),
        ('{"palette": "dark"}', "unknown schema_version None"),
        ('{"schema_version": "two"}', "unknown schema_version 'two'"),
    ],
)
def test_a_corrupt_file_gives_the_defaults_and_one_line(config_dir, capsys, content, reason):
    config_dir.mkdir()
    (config_dir / "settings.json").write_text(content, encoding="utf-8")
    s = Settings.load()
    assert s.data == DEFAULTS
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and reason in err and "using the defaults" in err
    assert reason in s.warning
    assert s.save()  # and the next save repairs the file
    assert Settings.load().warning is None


def test_bad_fields_fall_back_one_by_one(config_dir):
    config_dir.mkdir()
    (config_dir / "settings.json").write_text(json.dumps({
        "schema_version": 2, "palette": "neon", "recent_files": ["/a.csv", 3, None],
        "presentation_font_scale": 99, "last_choices": [], "window": {"geometry": 5},
        "future_field": {"kept": True},
    }), encoding="utf-8")
    s = Settings.load()
    assert s.warning is None
    assert s.palette == "light" and s.recent_files == ["/a.csv"]
    assert s.presentation_font_scale == 1.5 and s.last_choices == {}
    assert s.window_bytes("geometry") is None
    assert s.data["future_field"] == {"kept": True}


def test_a_newer_file_is_read_as_defaults_and_never_overwritten(config_dir, capsys):
    config_dir.mkdir()
    newer = json.dumps({"schema_version": SCHEMA_VERSION + 1, "palette": "dark"})
    (config_dir / "settings.json").write_text(newer, encoding="utf-8")
    s = Settings.load()
    assert "newer DP Studio" in s.warning and s.palette == "light"
    assert not s.save()
    assert (config_dir / "settings.json").read_text(encoding="utf-8") == newer
    capsys.readouterr()


def test_unwritable_folder_is_a_warning_not_a_crash(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    s = Settings(blocker / "settings.json")
    assert not s.save()
    assert "cannot save" in s.warning
    assert capsys.readouterr().err.count("\n") == 1


def test_env_override_and_platform_default(monkeypatch, tmp_path):
    monkeypatch.setenv("DPSTUDIO_CONFIG_DIR", str(tmp_path / "x"))
    assert config_dir() == tmp_path / "x"
    monkeypatch.delenv("DPSTUDIO_CONFIG_DIR")
    assert config_dir().name  # Qt's AppConfigLocation (or ~/.config/dpstudio)


def test_the_window_remembers_geometry_docks_and_palette(qtbot, config_dir):
    app = QApplication.instance()
    try:
        win = MainWindow(open_dataset(sample_path("survey")))
        qtbot.addWidget(win)
        win.resize(700, 500)  # inside the offscreen screen (800×600)
        win.set_palette("dark")
        assert style.current_palette().name == "dark"
        win.close()  # closing saves the geometry and the dock layout
        saved = json.loads((config_dir / "settings.json").read_text())
        assert saved["palette"] == "dark"
        assert saved["window"]["geometry"] and saved["window"]["state"]
        style.apply_palette(app, "light")

        again = MainWindow()
        qtbot.addWidget(again)
        assert style.current_palette().name == "dark"  # restored from the settings
        assert again.palette_actions["dark"].isChecked()
        assert (again.width(), again.height()) == (700, 500)
    finally:
        style.apply_palette(app, "light")


def test_the_analysis_choices_come_back_for_the_same_dataset(qtbot, config_dir):
    win = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(win)
    win.session.set_column("faculty")
    win.session.set_trust_model("local")
    win.session.set_query("histogram")
    win.session.set_mechanism("oue")
    win.session.set_epsilon(0.3)
    chosen = win.session.choices()
    assert chosen["mechanism"] == "oue" and chosen["trust_model"] == "local"
    win.save_settings()
    win.analysis.shutdown()

    again = MainWindow(open_dataset(sample_path("survey")))
    qtbot.addWidget(again)
    assert again.session.choices() == chosen
    other = MainWindow(open_dataset(sample_path("health")))  # another dataset: defaults
    qtbot.addWidget(other)
    assert other.session.trust_model == "central"
    for w in (again, other):
        w.analysis.shutdown()
