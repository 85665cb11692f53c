"""The user's settings: one versioned JSON file in the platform's config directory.

``settings.json`` lives in ``QStandardPaths.AppConfigLocation`` (e.g.
``~/.config/DP Studio`` on Linux), or in ``$DPSTUDIO_CONFIG_DIR`` when that is set (tests
and portable installs). It holds the window's geometry and dock layout, the recent files
and projects, the palette and ``last_choices`` (a dict the session may fill with whatever
it wants remembered). Writes are atomic. A file that cannot be read gives the defaults and one
line on stderr, never a crash; a file written by a newer DP Studio is left untouched.

Versions: 1 (``recent``, ``theme``, ``geometry`` in hex) → 2 (this one); see
:func:`migrate`. Keys added later within version 2 (``execution``: the engine and the Dask
scheduler's address) get their defaults when absent, and an older DP Studio keeps them as
unknown fields: no migration is needed for a key that only adds.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QStandardPaths

SCHEMA_VERSION = 2
FILE_NAME = "settings.json"
ENV_DIR = "DPSTUDIO_CONFIG_DIR"
MAX_RECENT = 10
PALETTES = ("light", "dark")
#: Where a folder's sums run (as ``--engine``): auto picks Dask for data larger than a
#: share of memory.
EXECUTION_ENGINES = ("auto", "pandas", "dask")

DEFAULTS: dict[str, Any] = {
    "schema_version": SCHEMA_VERSION,
    "window": {"geometry": None, "state": None},
    "recent_files": [],
    "recent_projects": [],
    "palette": "light",
    "presentation_font_scale": 1.5,
    "last_choices": {},
    # Empty scheduler: a local cluster started for the work and closed after.
    "execution": {"engine": "auto", "scheduler": ""},
}


def config_dir() -> Path:
    """``$DPSTUDIO_CONFIG_DIR`` if set, else Qt's per-user app config directory."""
    override = os.environ.get(ENV_DIR, "").strip()
    if override:
        return Path(override).expanduser()
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppConfigLocation)
    return Path(location) if location else Path.home() / ".config" / "dpstudio"


def settings_path() -> Path:
    return config_dir() / FILE_NAME


# --- migrations --------------------------------------------------------------------------


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 kept ``recent`` and ``theme`` and the window geometry in hex."""
    out = {k: v for k, v in data.items() if k not in ("recent", "theme", "geometry")}
    out["recent_files"] = data.get("recent", [])
    out["palette"] = data.get("theme", "light")
    geometry = data.get("geometry")
    window = {"geometry": None, "state": None}
    if isinstance(geometry, str):
        try:
            window["geometry"] = base64.b64encode(bytes.fromhex(geometry)).decode("ascii")
        except ValueError:
            pass
    out["window"] = window
    out.setdefault("last_choices", {})
    out["schema_version"] = 2
    return out


#: version n → function turning a version-n dict into a version-(n + 1) dict.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}


class SettingsError(ValueError):
    """A settings file that cannot be used (the message is one line)."""


def migrate(data: Any) -> dict[str, Any]:
    """``data`` (any older version) brought to :data:`SCHEMA_VERSION`, then checked.

    Raises :class:`SettingsError` for something that is not a settings object, has an
    unknown version, or was written by a newer DP Studio.
    """
    if not isinstance(data, dict):
        raise SettingsError("not a JSON object")
    version = data.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SettingsError(f"unknown schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise SettingsError(
            f"written by a newer DP Studio (version {version}; this one reads {SCHEMA_VERSION})"
        )
    data = copy.deepcopy(data)
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version = data["schema_version"]
    return _validated(data)


def _validated(data: dict[str, Any]) -> dict[str, Any]:
    """Defaults for every missing or ill-typed field; unknown fields kept as they are."""
    out = copy.deepcopy(DEFAULTS)
    out.update({k: v for k, v in data.items() if k not in DEFAULTS})
    window = data.get("window")
    if isinstance(window, dict):
        for key in ("geometry", "state"):
            if isinstance(window.get(key), str):
                out["window"][key] = window[key]
    recent = data.get("recent_files")
    if isinstance(recent, list):
        out["recent_files"] = _unique([r for r in recent if isinstance(r, str) and r])[:MAX_RECENT]
    projects = data.get("recent_projects")
    if isinstance(projects, list):
        out["recent_projects"] = _unique([r for r in projects
                                          if isinstance(r, str) and r])[:MAX_RECENT]
    if data.get("palette") in PALETTES:
        out["palette"] = data["palette"]
    scale = data.get("presentation_font_scale")
    if isinstance(scale, int | float) and not isinstance(scale, bool) and 1.0 <= scale <= 4.0:
        out["presentation_font_scale"] = float(scale)
    if isinstance(data.get("last_choices"), dict):
        out["last_choices"] = data["last_choices"]
    execution = data.get("execution")
    if isinstance(execution, dict):
        if execution.get("engine") in EXECUTION_ENGINES:
            out["execution"]["engine"] = execution["engine"]
        if isinstance(execution.get("scheduler"), str):
            out["execution"]["scheduler"] = execution["scheduler"].strip()
    out["schema_version"] = SCHEMA_VERSION
    return out


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    return [x for x in items if not (x in seen or seen.add(x))]


# --- the settings object -------------------------------------------------------------------


class AppSettings:
    """The application preferences of one user: :meth:`load` reads them, :meth:`save`
    writes them. (An analysis's choices are :class:`~dpstudio.analysis.choices.Choices`.)

    ``warning`` is the one-line reason the file was not used (``None`` if it was, or if
    there was none).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None,
                 data: dict[str, Any] | None = None) -> None:
        self.path = Path(path) if path is not None else settings_path()
        self.data: dict[str, Any] = _validated(data) if data is not None else copy.deepcopy(
            DEFAULTS)
        self.warning: str | None = None
        self.read_only = False  # a newer version's file: never overwrite it

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> AppSettings:
        settings = cls(path)
        p = settings.path
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            return settings
        except (OSError, UnicodeError) as exc:
            settings._warn(f"cannot read {p} ({exc}); using the defaults")
            return settings
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            settings._warn(f"{p} is not valid JSON (line {exc.lineno}); using the defaults")
            return settings
        try:
            settings.data = migrate(raw)
        except SettingsError as exc:
            newer = isinstance(raw, dict) and isinstance(raw.get("schema_version"), int) and (
                raw["schema_version"] > SCHEMA_VERSION)
            settings.read_only = bool(newer)
            settings._warn(f"{p}: {exc}; using the defaults")
        return settings

    def _warn(self, message: str) -> None:
        self.warning = " ".join(message.splitlines())
        print(f"DP Studio: settings: {self.warning}", file=sys.stderr)

    def save(self) -> bool:
        """Write atomically (:mod:`dpstudio.data.atomic`); ``False`` if it could not be."""
        if self.read_only:
            return False
        p = self.path
        text = json.dumps(self.data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        try:
            from dpstudio.data.atomic import write_atomic  # here: dpstudio.data loads pandas

            p.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(p, text)
            return True
        except OSError as exc:
            self._warn(f"cannot save {p} ({exc.strerror or exc})")
            return False

    # -- typed accessors ------------------------------------------------------------------

    @property
    def palette(self) -> str:
        return self.data["palette"]

    @palette.setter
    def palette(self, name: str) -> None:
        if name not in PALETTES:
            raise ValueError(f"unknown palette {name!r} (expected one of {', '.join(PALETTES)})")
        self.data["palette"] = name

    @property
    def presentation_font_scale(self) -> float:
        return float(self.data["presentation_font_scale"])

    @property
    def engine(self) -> str:
        """``auto``, ``pandas`` or ``dask``: where a folder's sums run."""
        return str(self.data["execution"]["engine"])

    @engine.setter
    def engine(self, name: str) -> None:
        if name not in EXECUTION_ENGINES:
            raise ValueError(f"unknown engine {name!r} (choose from "
                             f"{', '.join(EXECUTION_ENGINES)})")
        self.data["execution"]["engine"] = name

    @property
    def scheduler(self) -> str:
        """A Dask scheduler's address (``tcp://host:8786``); empty: a local cluster."""
        return str(self.data["execution"]["scheduler"])

    @scheduler.setter
    def scheduler(self, address: str) -> None:
        self.data["execution"]["scheduler"] = str(address).strip()

    @property
    def recent_files(self) -> list[str]:
        return list(self.data["recent_files"])

    def add_recent_file(self, path: str | os.PathLike[str]) -> None:
        """Put ``path`` (absolute) first; keep at most :data:`MAX_RECENT`."""
        entry = str(Path(path).expanduser().resolve())
        files = [entry] + [f for f in self.data["recent_files"] if f != entry]
        self.data["recent_files"] = files[:MAX_RECENT]

    def remove_recent_file(self, path: str | os.PathLike[str]) -> None:
        entry = str(Path(path).expanduser().resolve())
        self.data["recent_files"] = [f for f in self.data["recent_files"] if f != entry]

    def clear_recent_files(self) -> None:
        self.data["recent_files"] = []

    @property
    def recent_projects(self) -> list[str]:
        return list(self.data["recent_projects"])

    def add_recent_project(self, path: str | os.PathLike[str]) -> None:
        """Put the project file ``path`` (absolute) first; keep at most :data:`MAX_RECENT`."""
        entry = str(Path(path).expanduser().resolve())
        files = [entry] + [f for f in self.data["recent_projects"] if f != entry]
        self.data["recent_projects"] = files[:MAX_RECENT]

    def remove_recent_project(self, path: str | os.PathLike[str]) -> None:
        entry = str(Path(path).expanduser().resolve())
        self.data["recent_projects"] = [f for f in self.data["recent_projects"] if f != entry]

    def clear_recent_projects(self) -> None:
        self.data["recent_projects"] = []

    @property
    def last_choices(self) -> dict[str, Any]:
        """A dict the session owns: change it in place or assign a new one."""
        return self.data["last_choices"]

    @last_choices.setter
    def last_choices(self, choices: dict[str, Any]) -> None:
        if not isinstance(choices, dict):
            raise TypeError("last_choices must be a dict")
        self.data["last_choices"] = choices

    def window_bytes(self, key: str) -> QByteArray | None:
        """The saved ``"geometry"`` or ``"state"`` of the main window, if any."""
        value = self.data["window"].get(key)
        if not value:
            return None
        try:
            return QByteArray(base64.b64decode(value.encode("ascii"), validate=True))
        except (ValueError, binascii.Error):
            return None

    def set_window_bytes(self, key: str, value: QByteArray | bytes) -> None:
        raw = bytes(value.data()) if isinstance(value, QByteArray) else bytes(value)
        self.data["window"][key] = base64.b64encode(raw).decode("ascii")
