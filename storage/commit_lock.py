"""One writer at a time commits to a local dataset: an advisory lock file beside the staged chunks.

Delta's optimistic concurrency makes racing *merges* safe (each reads the whole table, a loser retries), but
a merge reads every row of the table, so its memory grows with the dataset. Under this lock a commit may
instead check which keys the table already holds and *append* the rest (storage/delta_io.insert_rows), which
reads only the key columns: no other factory writer can insert the same key between the check and the
append. The lock is `fcntl.flock` on `<root>/_staging/.commit.lock`, released by the kernel when its holder
dies, so a writer killed mid-commit never blocks the next one.

Object-store roots (`s3://...`) have no such lock: their commits keep merging, as before.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prm_factory.storage.staging import staging_root

LOCK_FILE = ".commit.lock"  # hidden, like the scratch databases: not a staged chunk


def local_root(root: str) -> Path | None:
    """The filesystem path of a local dataset root (`/data/ds`, `file:///data/ds`); None for an object store.

    >>> local_root("s3://bucket/ds") is None
    True
    >>> str(local_root("file:///data/ds"))
    '/data/ds'
    """
    if root.startswith("file://"):
        return Path(root[len("file://") :])
    if "://" in root:
        return None
    return Path(root)


@contextmanager
def commit_lock(root: str) -> Iterator[bool]:
    """Hold the dataset's commit lock for the block; yields whether one is held (False: an object store)."""
    path = local_root(root)
    if path is None:
        yield False
        return
    lock = staging_root(path) / LOCK_FILE
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
