"""One logical run split into N shards: a stable hash slice of the problems per shard, one parent run id.

Each shard is an ordinary generation run over its slice (own engine, own chunks staged and cached under
the dataset root, own commit into the same Delta dataset); its runs row names the parent run id and the
shard, so `versions` and `stats` group the shards as one run. A shard is picked by a hash of the problem
id, not by position, so the slice of a problem never depends on which other problems were loaded, on the
order of the file, or on N machines agreeing on anything but the config and N. A shard that failed or was
killed is started again alone: its chunks keep their content keys (flows/resume.py), so the rerun reuses
what the killed run staged and commits rows whose ids the killed run never made visible.

>>> spec = Shard.parse("1/3")
>>> spec.index, spec.count, str(spec)
(1, 3, '1/3')
>>> shard_of("gsm8k-abc", 1)
0
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from prm_factory.config.run_config import ConfigError, RunConfig

P = TypeVar("P")

SHARD_PATTERN = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (counted from 0, like a rank in a world of `count`)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ConfigError(f"shard count must be at least 1, got {self.count}")
        if not 0 <= self.index < self.count:
            raise ConfigError(
                f"shard {self.index}/{self.count}: the index counts from 0, so it is 0..{self.count - 1}"
            )

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`I/N` as written on the command line ("0/2", "1/2").

        >>> Shard.parse("2/2")
        Traceback (most recent call last):
        ...
        config.run_config.ConfigError: shard 2/2: the index counts from 0, so it is 0..1
        """
        match = SHARD_PATTERN.match(text)
        if match is None:
            raise ConfigError(f"--shard expects I/N (e.g. 0/2), got {text!r}")
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(problem_id: str, count: int) -> int:
    """The shard a problem belongs to: its id's SHA-256 modulo `count` (ids are content hashes already;
    hashing again spreads ids that share a prefix, and Python's `hash` would change per process)."""
    digest = hashlib.sha256(problem_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def select_shard(problems: Sequence[P], shard: Shard, key=lambda p: p.problem_id) -> list[P]:
    """The problems of `shard`, in their original order (chains are drawn in that order)."""
    return [p for p in problems if shard_of(key(p), shard.count) == shard.index]


def derived_parent_id(config: RunConfig, count: int) -> str:
    """The parent run id shards started separately agree on without talking: the hash of the config (its
    paths made absolute, as every shard runs it) and N. `--parent-run` names another one."""
    payload = f"prm-shards\x00{absolute_paths(config).config_hash()}\x00{count}"
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ShardRun:
    """What a shard's flow run knows of its logical run: which shard, and the parent run id."""

    shard: Shard
    parent_run_id: str

    @classmethod
    def of(cls, config: RunConfig, shard: str | None, parent_run_id: str | None) -> ShardRun | None:
        """From the flow's parameters; None for an unsharded run (a parent id alone is refused)."""
        if shard is None:
            if parent_run_id:
                raise ConfigError("a parent run id needs a shard (I/N)")
            return None
        spec = Shard.parse(shard)
        return cls(spec, parent_run_id or derived_parent_id(config, spec.count))

    def record(self) -> tuple[str, int, int]:
        """(parent run id, index, count) for the runs row."""
        return self.parent_run_id, self.shard.index, self.shard.count

    def keeps_rejections(self) -> bool:
        """Every shard reads the whole input, so only shard 0 records its rejected rows (once per run)."""
        return self.shard.index == 0


def absolute_paths(config: RunConfig) -> RunConfig:
    """The config with its dataset root, problems file and model path absolute (workers run elsewhere)."""
    dataset = config.dataset.model_copy(update={"root": str(config.dataset_root())})
    problems = config.problems
    if problems.path is not None:
        problems = problems.model_copy(update={"path": str(Path(problems.path).expanduser().resolve())})
    model = config.model
    if model.path is not None and Path(model.path).expanduser().exists():
        model = model.model_copy(update={"path": str(Path(model.path).expanduser().resolve())})
    return config.model_copy(update={"dataset": dataset, "problems": problems, "model": model})
