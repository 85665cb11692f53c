"""Build the standalone desktop application and its archive: what ``make package`` runs.

    .venv/bin/python packaging/build_bundle.py [--no-archive]

1. PyInstaller builds ``dist/dpstudio/`` from ``packaging/dpstudio.spec`` (one folder: the
   executable ``dist/dpstudio/dpstudio`` and its libraries; no Python needed to run it).
2. The folder is packed as ``dist/dpstudio-<version>-<os>-<machine>.tar.gz``, the file a
   user downloads, unpacks anywhere and runs (``dpstudio/dpstudio``).
3. The unpacked and packed sizes are printed, with a warning above 400 MB unpacked.

Between 1 and 2, symbols are stripped from the libraries where that is safe (see
:func:`strip_libraries`).

PyInstaller's own working files go to ``build/pyinstaller``. Exit status: 0 built,
1 PyInstaller failed or the bundle is incomplete.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import struct
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "dpstudio.spec"
DIST = ROOT / "dist"
WORK = ROOT / "build" / "pyinstaller"
BUNDLE = DIST / "dpstudio"
#: Above this unpacked size the build warns: the issue's "reasonable" bound.
SIZE_LIMIT_MB = 400


def folder_size(folder: Path) -> int:
    """Bytes of the regular files under ``folder``, links not followed.

    Parameters
    ----------
    folder : Path
        The folder to measure.

    Returns
    -------
    int
        The total, as ``du --apparent-size`` would count it.
    """
    total = 0
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            path = Path(dirpath) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def archive_name(version: str) -> str:
    """``dpstudio-<version>-<os>-<machine>.tar.gz``, e.g. ``dpstudio-0.1.0-linux-x86_64``.

    Parameters
    ----------
    version : str
        The package version.

    Returns
    -------
    str
        The archive's file name.
    """
    system = platform.system().lower() or sys.platform
    return f"dpstudio-{version}-{system}-{platform.machine().lower()}.tar.gz"


def _version() -> str:
    sys.path.insert(0, str(ROOT))  # the checkout's dpstudio, whatever is installed
    from dpstudio import __version__

    return __version__


def loadable_layout(path: Path) -> bool:
    """Tell whether a 64-bit little-endian ELF file passes the loader's alignment check.

    glibc refuses a library whose loadable segment has ``(p_vaddr - p_offset) % p_align``
    non-zero ("ELF load command address/offset not page-aligned"). That is how ``strip``
    breaks a library that ``patchelf`` (auditwheel) has rewritten; checking the rule on a
    stripped copy tells whether the copy can replace the original.

    Parameters
    ----------
    path : Path
        The file to check.

    Returns
    -------
    bool
        True for a 64-bit little-endian ELF file whose every ``PT_LOAD`` segment is
        aligned; False for any other file or a misaligned one.
    """
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:  # ELFCLASS64, little-endian
        return False
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for at in range(phoff, phoff + phnum * phentsize, phentsize):
        p_type, _flags, p_offset, p_vaddr = struct.unpack_from("<IIQQ", data, at)
        p_align, = struct.unpack_from("<Q", data, at + 0x30)
        if p_type == 1 and p_align > 1 and (p_vaddr - p_offset) % p_align:  # PT_LOAD
            return False
    return True


def strip_libraries(folder: Path) -> int:
    """Strip symbol tables and debug information from the bundle's shared libraries.

    Symbols are a large part of some libraries: three quarters of a source-built
    libpython (its debug information), a fifth of pyarrow's and of the Rust cryptography
    library. ``strip --strip-unneeded`` keeps the dynamic symbols the loader needs. But
    ``strip`` breaks libraries that auditwheel patched (numpy.libs/ and the like), which is
    why PyInstaller's own ``strip=True`` is not used: here each library is stripped into a
    copy that replaces it only if :func:`loadable_layout` accepts the copy. Linux only;
    skipped where binutils' ``strip`` is missing. The smoke test runs the result.

    Parameters
    ----------
    folder : Path
        The bundle.

    Returns
    -------
    int
        Bytes saved.
    """
    strip = shutil.which("strip")
    if not sys.platform.startswith("linux") or strip is None:
        return 0
    saved = 0
    for path in sorted(folder.rglob("*.so*")):
        if path.is_symlink() or not path.is_file() or not loadable_layout(path):
            continue
        copy = path.with_name(path.name + ".stripped")
        done = subprocess.run([strip, "--strip-unneeded", "-o", str(copy), str(path)],
                              capture_output=True, check=False)
        before = path.stat().st_size
        if done.returncode == 0 and loadable_layout(copy) and copy.stat().st_size < before:
            saved += before - copy.stat().st_size
            copy.chmod(path.stat().st_mode)
            copy.replace(path)
        else:
            copy.unlink(missing_ok=True)
    return saved


def _archive(folder: Path, target: Path) -> None:
    # Written under a temporary name: an interrupted build leaves no half archive behind.
    partial = target.with_name(target.name + ".part")
    with tarfile.open(partial, "w:gz", compresslevel=6) as tar:
        tar.add(folder, arcname=folder.name)
    partial.replace(target)


def _mb(size: int) -> str:
    return f"{size / 1e6:.0f} MB"


def main(argv: list[str] | None = None) -> int:
    """Build, archive, report sizes; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-archive", action="store_true",
                        help="build dist/dpstudio/ only, skip the .tar.gz")
    args = parser.parse_args(argv)

    started = time.monotonic()
    build = subprocess.run(
        # ERROR: its warnings (hidden imports of optional extras, Windows DLLs probed by
        # ctypes, GTK for an excluded plugin) are expected here, and they stay readable in
        # build/pyinstaller/dpstudio/warn-dpstudio.txt; the smoke test is the real check.
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level=ERROR",
         "--distpath", str(DIST), "--workpath", str(WORK), str(SPEC)],
        cwd=ROOT, check=False)
    executable = BUNDLE / ("dpstudio.exe" if sys.platform == "win32" else "dpstudio")
    if build.returncode != 0 or not executable.is_file():
        print(f"PyInstaller failed (exit {build.returncode}); no bundle in {BUNDLE}",
              file=sys.stderr)
        return 1
    saved = strip_libraries(BUNDLE)
    built = time.monotonic() - started
    unpacked = folder_size(BUNDLE)
    if saved:
        print(f"Symbols stripped from the libraries: {_mb(saved)}")
    print(f"Bundle: {BUNDLE.relative_to(ROOT)}/ ({_mb(unpacked)} unpacked, "
          f"built in {built:.0f} s); run {executable.relative_to(ROOT)}")
    if unpacked > SIZE_LIMIT_MB * 1e6:
        print(f"warning: the bundle is over {SIZE_LIMIT_MB} MB unpacked; see the excludes "
              "in packaging/dpstudio.spec", file=sys.stderr)

    if not args.no_archive:
        target = DIST / archive_name(_version())
        _archive(BUNDLE, target)
        print(f"Archive: {target.relative_to(ROOT)} ({_mb(target.stat().st_size)}, "
              f"{time.monotonic() - started - built:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
