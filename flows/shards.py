"""One logical run split into N shards: whole chunks of the run's problems per shard, one parent run id.

Each shard is an ordinary generation run over its chunks (own engine, own chunks staged and cached under
the dataset root, own commit into the same Delta dataset); its runs row names the parent run id and the
shard, so `versions` and `stats` group the shards as one run. The run's problems are cut into chunks first,
in an order that does not depend on the file (flows/resume.py: canonical order, `resume.chunk_problems` at a
time), and shard I of N takes chunks I, I + N, I + 2N, ...: so a chunk is the same batch in a single run and
in any shard (sampling/reproducibility.py), the shards differ by at most one chunk, and N machines need to
agree on nothing but the config and N. A shard that failed or was killed is started again alone: its chunks
keep their content keys (flows/resume.py), so the rerun reuses what the killed run staged and commits rows
whose ids the killed run never made visible. With fewer chunks than shards some shards get none.

>>> spec = Shard.parse("1/3")
>>> spec.index, spec.count, str(spec)
(1, 3, '1/3')
>>> [index for index in range(7) if in_shard(index, spec)]
[1, 4]
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from prm_factory.config.run_config import ConfigError, RunConfig

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


def in_shard(chunk_index: int, shard: Shard | None) -> bool:
    """Whether `shard` runs the chunk at `chunk_index` of the whole run's chunks (every chunk when
    unsharded): round robin over the chunks in canonical order, which balances the shards to one chunk."""
    return shard is None or chunk_index % shard.count == shard.index


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
