"""The /dev/shm cleanup before an engine start: what killed engines left goes, what a live process maps or
may be about to map stays.

Stand-ins: a temporary folder for /dev/shm and one for /proc whose `<pid>/maps` name the files by device
and inode. One test runs on the real /dev/shm and /proc with shared-memory segments of this process.
"""

from __future__ import annotations

import logging
import os
import time
from multiprocessing import resource_tracker, shared_memory
from pathlib import Path

import pytest

from prm_factory.sampling import shm_cleanup
from prm_factory.sampling.shm_cleanup import (
    MIN_AGE_S,
    ShmCleanup,
    clean_before_engine_start,
    mapped_files,
    remove_stale_shm,
)

LATER = MIN_AGE_S + 1.0  # seconds to add to "now" so that files made by the test count as old


def _maps_line(path: Path) -> str:
    info = path.stat()
    dev = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}"
    return f"7f0000000000-7f0000001000 rw-s 00000000 {dev} {info.st_ino}                    {path}\n"


def _stand_in_proc(root: Path, maps: dict[str, str]) -> Path:
    """A /proc with one folder per pid and its maps text; `self` and other non-pid entries beside them."""
    proc = root / "proc"
    proc.mkdir()
    (proc / "self").mkdir()
    (proc / "self" / "maps").write_text("not a pid: never read\n")
    (proc / "meminfo").write_text("MemTotal: 1 kB\n")
    for pid, text in maps.items():
        (proc / pid).mkdir()
        (proc / pid / "maps").write_text(text)
    return proc


@pytest.fixture
def shm(tmp_path: Path) -> Path:
    folder = tmp_path / "shm"
    folder.mkdir()
    for name in ("psm_dead0001", "psm_live0001", "psm_dead0002", "other_file"):
        (folder / name).write_bytes(b"\0" * 4096)
    (folder / "psm_link").symlink_to(folder / "psm_dead0002")
    return folder


def test_old_unmapped_files_go_mapped_ones_and_others_stay(shm: Path, tmp_path: Path, caplog) -> None:
    live = shm / "psm_live0001"
    heap = "55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]\n"
    proc = _stand_in_proc(tmp_path, {"101": heap + _maps_line(live), "102": heap})
    with caplog.at_level(logging.INFO, logger="prm_factory.sampling.shm_cleanup"):
        result = remove_stale_shm(shm, proc, now=time.time() + LATER)
    assert result.removed == ("psm_dead0001", "psm_dead0002")
    assert result.mapped == 1 and result.young == 0 and result.unreadable == 0
    assert sorted(p.name for p in shm.iterdir()) == ["other_file", "psm_link", "psm_live0001"]
    assert "removed 2 psm_* file(s)" in caplog.text


def test_young_files_stay(shm: Path, tmp_path: Path) -> None:
    proc = _stand_in_proc(tmp_path, {})
    result = remove_stale_shm(shm, proc, now=time.time())  # just made: an engine may be about to map them
    assert result == ShmCleanup(young=3)
    assert len(list(shm.glob("psm_*"))) == 4


def test_files_of_another_user_stay(shm: Path, tmp_path: Path) -> None:
    proc = _stand_in_proc(tmp_path, {})
    result = remove_stale_shm(shm, proc, uid=os.getuid() + 1, now=time.time() + LATER)
    assert result == ShmCleanup()
    assert len(list(shm.glob("psm_*"))) == 4


def test_an_unreadable_process_is_counted_and_ended_ones_skipped(shm: Path, tmp_path: Path) -> None:
    proc = _stand_in_proc(tmp_path, {"101": _maps_line(shm / "psm_live0001")})
    (proc / "103").mkdir()
    (proc / "103" / "maps").mkdir()  # reading it fails with an OSError other than "gone", as EACCES would
    (proc / "104").mkdir()  # ended between the listing and the read: no maps file
    mapped, unreadable = mapped_files(proc)
    assert unreadable == 1 and len(mapped) == 1
    result = remove_stale_shm(shm, proc, now=time.time() + LATER)
    assert result.unreadable == 1 and result.removed == ("psm_dead0001", "psm_dead0002")


def test_without_proc_nothing_goes(shm: Path, tmp_path: Path) -> None:
    result = remove_stale_shm(shm, tmp_path / "no-proc", now=time.time() + LATER)
    assert result.removed == () and len(list(shm.glob("psm_*"))) == 4


def test_a_failing_cleanup_never_stops_the_engine_start(monkeypatch, tmp_path: Path, caplog) -> None:
    def refuses(*_args: object, **_kwargs: object) -> ShmCleanup:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(shm_cleanup, "remove_stale_shm", refuses)
    assert clean_before_engine_start(tmp_path, tmp_path) == ShmCleanup()
    assert "cleanup of" in caplog.text


@pytest.mark.skipif(
    not (Path("/dev/shm").is_dir() and Path("/proc/self/maps").is_file()), reason="Linux only"
)
def test_real_proc_keeps_a_mapped_segment_and_removes_an_unmapped_one() -> None:
    """Two segments of this process in the real /dev/shm: one still mapped, one closed without unlinking
    (what a killed engine leaves: nobody maps it any more)."""
    prefix = f"psm_prmtest_{os.getpid()}_"
    mapped = shared_memory.SharedMemory(name=prefix + "mapped", create=True, size=4096)
    left = shared_memory.SharedMemory(name=prefix + "left", create=True, size=4096)
    left.close()  # unmapped, the file stays
    try:
        result = remove_stale_shm(
            Path("/dev/shm"), Path("/proc"), now=time.time() + LATER, pattern=prefix + "*"
        )
        assert result.removed == (prefix + "left",)
        assert result.mapped == 1
        assert Path("/dev/shm", prefix + "mapped").exists()
        assert not Path("/dev/shm", prefix + "left").exists()
        mapped.buf[:5] = b"still"  # the survivor is intact and can still be attached by name
        view = shared_memory.SharedMemory(name=prefix + "mapped")
        try:
            assert bytes(view.buf[:5]) == b"still"
        finally:
            view.close()
    finally:
        mapped.close()
        mapped.unlink()
        Path("/dev/shm", prefix + "left").unlink(missing_ok=True)
        resource_tracker.unregister("/" + prefix + "left", "shared_memory")
