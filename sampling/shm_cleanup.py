"""Removing the shared-memory files that killed vLLM engines leave in /dev/shm.

Why: vLLM's engine processes talk through shared-memory message queues (`psm_*` files, Python's
`multiprocessing.shared_memory`). An engine that exits normally unlinks them; one killed with SIGKILL (a
stopped test, a timed-out stage) cannot, and nothing else ever does, so they pile up run after run
(122 files on one test machine). Before an engine starts, the files of this user that no live process maps
are removed. A file is kept when any process maps it (matched by device and inode in /proc/*/maps, so a
process in another mount namespace or a file already unlinked cannot confuse the match), when it is younger
than `min_age_s` (an engine starting right now may have created it and not mapped it yet).

A process whose maps cannot be read (another security context: even root cannot read PID 1 of some
sandbox runtimes) is counted, not waited for. What removing a file such a process maps would cost: the name
goes, the memory does not (a mapping outlives the unlink), so only a process attaching by name later would
miss it, and vLLM's readers attach within seconds of the file's creation, which the age rule covers.

Pure over its paths (`shm_dir`, `proc`) and its clock, so tests run it on temporary folders.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

PATTERN = "psm_*"
MIN_AGE_S = 60.0
SHM_DIR = Path("/dev/shm")
PROC = Path("/proc")


@dataclass(frozen=True)
class ShmCleanup:
    """What one cleanup did: the files removed, and how many were kept for each reason."""

    removed: tuple[str, ...] = ()
    mapped: int = 0
    young: int = 0
    unreadable: int = 0  # processes whose maps could not be read


def mapped_files(proc: Path) -> tuple[set[tuple[int, int, int]], int]:
    """(major, minor, inode) of every file some process maps, and how many processes could not be read.
    A process that ended meanwhile is simply skipped."""
    mapped: set[tuple[int, int, int]] = set()
    unreadable = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            lines = (entry / "maps").read_text(errors="replace").splitlines()
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended meanwhile
        except OSError:
            unreadable += 1
            continue
        for line in lines:
            fields = line.split(maxsplit=5)
            if len(fields) < 6 or fields[4] == "0":
                continue  # anonymous memory
            major, _, minor = fields[3].partition(":")
            try:
                mapped.add((int(major, 16), int(minor, 16), int(fields[4])))
            except ValueError:
                continue
    return mapped, unreadable


def remove_stale_shm(
    shm_dir: Path,
    proc: Path,
    *,
    uid: int | None = None,
    now: float | None = None,
    min_age_s: float = MIN_AGE_S,
    pattern: str = PATTERN,
) -> ShmCleanup:
    """Remove `shm_dir/pattern` files owned by `uid` (this process's user) that no live process maps and
    that are at least `min_age_s` old; logs how many went. Never raises on a file or process that changes
    under it."""
    uid = os.getuid() if uid is None else uid
    now = time.time() if now is None else now
    candidates: list[tuple[Path, os.stat_result]] = []
    young = 0
    for path in sorted(shm_dir.glob(pattern)):
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        if info.st_uid != uid or not stat.S_ISREG(info.st_mode):
            continue
        if now - max(info.st_mtime, info.st_ctime) < min_age_s:
            young += 1
            continue
        candidates.append((path, info))
    if not candidates or not proc.is_dir():  # no /proc: who maps what cannot be told, so nothing goes
        return ShmCleanup(young=young)
    mapped, unreadable = mapped_files(proc)
    removed: list[str] = []
    kept_mapped = 0
    freed = 0
    for path, info in candidates:
        if (os.major(info.st_dev), os.minor(info.st_dev), info.st_ino) in mapped:
            kept_mapped += 1
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue  # another cleanup was faster
        except OSError as exc:
            log.warning("shared memory: could not remove %s: %s", path, exc)
            continue
        removed.append(path.name)
        freed += info.st_blocks * 512
    log.log(
        logging.INFO if removed else logging.DEBUG,
        "shared memory: removed %d %s file(s) left by killed engines (%.1f MB); kept %d mapped, %d young; "
        "%d process(es) unreadable",
        len(removed),
        pattern,
        freed / 1e6,
        kept_mapped,
        young,
        unreadable,
    )
    return ShmCleanup(removed=tuple(removed), mapped=kept_mapped, young=young, unreadable=unreadable)


def clean_before_engine_start(shm_dir: Path = SHM_DIR, proc: Path = PROC) -> ShmCleanup:
    """`remove_stale_shm` on this machine before a vLLM engine starts; a cleanup that fails is logged and
    never stops the engine start."""
    try:
        return remove_stale_shm(shm_dir, proc)
    except OSError as exc:
        log.warning("shared memory: cleanup of %s skipped: %s", shm_dir, exc)
        return ShmCleanup()
