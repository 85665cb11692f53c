"""The one atomic-write helper: whole new content or the old one, never a part or a leftover."""

import errno
import os
import stat
import sys

import pytest

from dpstudio.data import atomic
from dpstudio.data.atomic import atomic_path, write_atomic, write_durably

posix_only = pytest.mark.skipif(sys.platform.startswith("win"), reason="POSIX permissions")


def listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_bytes_and_text_are_written_exactly(tmp_path):
    target = tmp_path / "out.txt"
    assert write_atomic(target, b"\x00\xffbytes") == target
    assert target.read_bytes() == b"\x00\xffbytes"
    # Text is encoded as given: no newline translation, the encoding asked for.
    write_atomic(target, "é\r\nz\n", encoding="latin-1")
    assert target.read_bytes() == b"\xe9\r\nz\n"
    write_atomic(target, "é\n")
    assert target.read_bytes() == "é\n".encode()
    assert listing(tmp_path) == ["out.txt"]


def _partial_write(real):
    """os.write that writes a few bytes of the first chunk, then fails as a full disk."""
    calls = []

    def write(fd, data):
        calls.append(fd)
        if len(calls) == 1:
            return real(fd, bytes(data)[:3])
        raise OSError(errno.ENOSPC, "No space left on device")
    return write


@pytest.mark.parametrize("durable", [True, False])
@pytest.mark.parametrize("step", ["write", "fsync", "replace"])
def test_a_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch, step,
                                                              durable):
    if step == "fsync" and not durable:
        pytest.skip("nothing is fsynced when not durable")
    target = tmp_path / "settings.json"
    target.write_bytes(b"old content")

    def fail(*args, **kwargs):
        raise OSError(errno.EIO, "I/O error")

    fake = _partial_write(os.write) if step == "write" else fail
    monkeypatch.setattr(atomic.os, step, fake)
    with pytest.raises(OSError):
        write_atomic(target, b"new content that is longer", durable=durable)
    monkeypatch.undo()
    assert target.read_bytes() == b"old content"
    assert listing(tmp_path) == ["settings.json"]


def test_a_failure_on_a_new_file_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic.os, "write", _partial_write(os.write))
    with pytest.raises(OSError, match="No space"):
        write_atomic(tmp_path / "new.csv", b"a,b\n1,2\n")
    monkeypatch.undo()
    assert listing(tmp_path) == []


def test_a_named_temporary_is_used_and_removed_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "r0001.csv"
    target.write_bytes(b"old")
    seen = []

    def replace(src, dst):
        seen.append((os.fspath(src), os.path.exists(src), os.fspath(dst)))
        raise OSError(errno.EXDEV, "cross-device link")

    monkeypatch.setattr(atomic.os, "replace", replace)
    with pytest.raises(OSError, match="cross-device"):
        write_atomic(target, b"new", tmp_name=".r0001.csv.abc123.tmp")
    assert seen == [(str(tmp_path / ".r0001.csv.abc123.tmp"), True, str(target))]
    assert listing(tmp_path) == ["r0001.csv"] and target.read_bytes() == b"old"


def test_an_existing_temporary_name_is_neither_overwritten_nor_removed(tmp_path):
    target, other = tmp_path / "spec.toml", tmp_path / ".spec.toml.tmp"
    target.write_bytes(b"old")
    other.write_bytes(b"another writer's file")
    with pytest.raises(FileExistsError):
        write_atomic(target, b"new", tmp_name=other.name)
    with pytest.raises(FileExistsError):
        with atomic_path(target, tmp_name=other.name) as tmp:
            tmp.write_bytes(b"new")
    assert other.read_bytes() == b"another writer's file" and target.read_bytes() == b"old"


@posix_only
@pytest.mark.parametrize("durable", [True, False])
def test_durable_fsyncs_the_file_before_the_rename_and_the_folder_after(tmp_path, monkeypatch,
                                                                        durable):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        kind = "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        events.append(f"fsync {kind}")
        real_fsync(fd)

    def replace(src, dst):
        events.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    monkeypatch.setattr(atomic.os, "replace", replace)
    write_atomic(tmp_path / "a.json", b"{}", durable=durable)
    with atomic_path(tmp_path / "b.png", durable=durable) as tmp:
        tmp.write_bytes(b"png")
    expected = ["fsync file", "rename", "fsync folder"] if durable else ["rename"]
    assert events == expected * 2
    assert (tmp_path / "b.png").read_bytes() == b"png"


@posix_only
def test_new_files_get_the_umask_permissions_not_mkstemps(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "a", b"x")
        write_atomic(tmp_path / "b", b"x", mode=0o600)
        write_durably(tmp_path / "c", b"x")
    finally:
        os.umask(old)
    modes = [stat.S_IMODE((tmp_path / n).stat().st_mode) for n in "abc"]
    assert modes == [0o640, 0o600, 0o640]


def test_atomic_path_publishes_on_success_and_cleans_up_on_error(tmp_path):
    target = tmp_path / "plot.svg"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="exporter"):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half an svg")
            raise RuntimeError("exporter crashed")
    assert listing(tmp_path) == ["plot.svg"] and target.read_bytes() == b"old"
    with atomic_path(target, tmp_name=".plot.1.tmp.svg") as tmp:
        assert tmp.name == ".plot.1.tmp.svg" and not tmp.exists()
        tmp.write_bytes(b"<svg/>")
    assert listing(tmp_path) == ["plot.svg"] and target.read_bytes() == b"<svg/>"


def test_atomic_path_fails_when_nothing_was_written(tmp_path):
    with pytest.raises(FileNotFoundError):
        with atomic_path(tmp_path / "x.png"):
            pass
    assert listing(tmp_path) == []


@pytest.mark.parametrize("hard_links", [True, False])
def test_exclusive_never_replaces_an_existing_file(tmp_path, monkeypatch, hard_links):
    if not hard_links:  # e.g. FAT or some network file systems
        def no_link(src, dst):
            raise PermissionError(errno.EPERM, "Operation not permitted")
        monkeypatch.setattr(atomic.os, "link", no_link)
    target = tmp_path / "study.dpstudio"
    with atomic_path(target, exclusive=True) as tmp:
        tmp.write_bytes(b"first")
    assert listing(tmp_path) == ["study.dpstudio"] and target.read_bytes() == b"first"
    with pytest.raises(FileExistsError):
        with atomic_path(target, exclusive=True) as tmp:
            tmp.write_bytes(b"second")
    assert listing(tmp_path) == ["study.dpstudio"] and target.read_bytes() == b"first"


def test_write_durably_creates_only_new_files(tmp_path, monkeypatch):
    existing = tmp_path / "a.tmp"
    existing.write_bytes(b"keep")
    with pytest.raises(FileExistsError):
        write_durably(existing, b"new")
    assert existing.read_bytes() == b"keep"
    monkeypatch.setattr(atomic.os, "write", _partial_write(os.write))
    with pytest.raises(OSError, match="No space"):
        write_durably(tmp_path / "b.tmp", b"0123456789")
    monkeypatch.undo()
    assert listing(tmp_path) == ["a.tmp"]  # the partial file it created is gone
