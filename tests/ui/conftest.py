"""Every UI test gets its own settings folder: nothing reads or writes the user's config."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    """``$DPSTUDIO_CONFIG_DIR`` pointed at an empty temporary folder."""
    folder = tmp_path / "config"
    monkeypatch.setenv("DPSTUDIO_CONFIG_DIR", str(folder))
    return folder
