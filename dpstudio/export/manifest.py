"""Manifests: what a release is, beside its files, with their SHA-256 to re-check them.

A manifest (``<stem>.manifest.json``) names the dataset by its content fingerprint, gives
its declared schema and bounds, the trust model, the mechanism and every parameter, ε, δ,
the accountant, the confidence level, the engine version and the time, and lists every
other file of the release with its size and SHA-256. It states how missing values were
treated (:func:`missing_treatment`). It never holds random seeds (releases draw from the
OS CSPRNG, which has none), raw data, or the analyst-only counts of values outside the
declaration or missing: :func:`check_public` refuses such keys.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpstudio.engine.queries import missing_statement as missing_treatment
from dpstudio.export.errors import ExportError

__all__ = [
    "FORBIDDEN_KEYS",
    "MANIFEST_KIND",
    "MANIFEST_VERSION",
    "ManifestCheck",
    "check_public",
    "file_entry",
    "manifest_bytes",
    "missing_treatment",
    "verify_manifest",
]

MANIFEST_VERSION = 1
MANIFEST_KIND = "dpstudio-release-manifest"
#: Keys no manifest may contain, at any depth.
FORBIDDEN_KEYS = frozenset({"clamped", "seed", "seeds", "raw", "raw_values", "analyst_only",
                            "missing_count", "non_finite_count", "non_finite"})

def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_entry(name: str, role: str, data: bytes) -> dict[str, Any]:
    """A manifest's record of one file: name, role, size and SHA-256."""
    return {"name": name, "role": role, "bytes": len(data), "sha256": sha256_bytes(data)}


def check_public(value: Any, where: str = "manifest") -> None:
    """Raise ExportError if ``value`` holds a forbidden key (seed, clamped count, raw data)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if str(key).lower() in FORBIDDEN_KEYS:
                raise ExportError(f"{where} would contain {key!r}, which is never exported")
            check_public(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for item in value:
            check_public(item, where)


def manifest_bytes(manifest: Mapping[str, Any]) -> bytes:
    """The manifest as UTF-8 JSON, after checking it holds nothing private."""
    check_public(manifest)
    if manifest.get("schema_version") != MANIFEST_VERSION:
        raise ExportError("a manifest needs schema_version "
                          f"{MANIFEST_VERSION}, got {manifest.get('schema_version')!r}")
    return (json.dumps(manifest, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


@dataclass
class ManifestCheck:
    """The result of :func:`verify_manifest`: ``ok`` when every listed file matches."""

    path: Path
    ok: bool
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)


def _hash_file(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def verify_manifest(path: str | os.PathLike[str]) -> ManifestCheck:
    """Re-check every file a manifest lists (beside it) against its size and SHA-256.

    Returns a :class:`ManifestCheck`; raises ExportError only when the manifest itself
    cannot be read or is not a DP Studio manifest.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExportError(f"{p.name}: cannot read manifest ({exc.strerror or exc})") from None
    except (UnicodeError, json.JSONDecodeError) as exc:
        raise ExportError(f"{p.name}: not a JSON manifest ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != MANIFEST_KIND:
        raise ExportError(f"{p.name}: not a DP Studio release manifest")
    version = data.get("schema_version")
    if version != MANIFEST_VERSION:
        raise ExportError(f"{p.name}: unsupported manifest schema_version {version!r} "
                          f"(this DP Studio reads {MANIFEST_VERSION})")
    files = data.get("files")
    if not isinstance(files, list) or not files:
        raise ExportError(f"{p.name}: the manifest lists no files")
    problems, checked = [], []
    for entry in files:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or Path(name).name != name or name in (".",
                                                                                        ".."):
            problems.append(f"invalid file entry {entry!r:.60}")
            continue
        target = p.parent / name
        try:
            size, digest = _hash_file(target)
        except FileNotFoundError:
            problems.append(f"{name}: missing")
            continue
        except OSError as exc:
            problems.append(f"{name}: cannot read ({exc.strerror or exc})")
            continue
        if size != entry.get("bytes"):
            problems.append(f"{name}: size {size} bytes, manifest says {entry.get('bytes')}")
        elif digest != entry.get("sha256"):
            problems.append(f"{name}: SHA-256 differs from the manifest (file altered)")
        else:
            checked.append(name)
    return ManifestCheck(p, not problems, problems, checked, data)
