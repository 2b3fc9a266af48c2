"""The one chunk loop of every pipeline: a chunk's rows are staged on disk as it finishes, and the run commits
all staged chunks as one dataset version at its end.

`run` (flows/generation_run.py), `label` (flows/label_run.py) and `relabel` (flows/relabel_run.py) read
their input as a stream of chunks by a stable key (problems in canonical order, chains in file order, a
version's problems in id order), label each chunk through the stages their pipeline declares, and hand the
chunk's records here. What a run keeps across chunks is its running totals (labels/tally.py) and the paths
of its staged chunks, never its chains or steps, so memory is bounded by a chunk, not by the input.

Resume: a chunk is staged under a content key of everything that decides its rows (storage/staging.py), so
the same command started again after a crash or a `kill -9` finds the chunks it finished and reuses them
without labelling them again; the commit then writes one version with every chunk's rows once.

>>> loop = ChunkLoop("/tmp/ds", resume=True)                                           # doctest: +SKIP
>>> loop.chunk(key, lambda: (problems, chains, steps, RunTally.of(chains, steps)))   # doctest: +SKIP
>>> loop.commit(run, rejections)                                                     # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prm_factory.flows.tasks import TALLY_NOTE, commit_staged_task, stage_task
from prm_factory.labels.tally import RunTally
from prm_factory.schemas.records import Chain, Problem, Rejection, RunInfo, Step
from prm_factory.storage.staging import chunk_dir, drop_staged, is_staged, read_note

ChunkRecords = tuple[Sequence[Problem], Sequence[Chain], Sequence[Step], RunTally]
"""What a chunk's stages produce: its records and their totals."""


@dataclass
class ChunkLoop:
    """Stages each chunk's records under its key and commits them all at the end (module docstring).

    `resume` False stages every chunk afresh (a chunk with the same key is still found, since a staged
    directory is complete, but its rows are recomputed and the staged ones kept)."""

    root: str
    resume: bool = True
    tally: RunTally = field(default_factory=RunTally)
    staged: list[str] = field(default_factory=list)
    reused: int = 0  # chunks found staged by an earlier, interrupted run
    replaces: bool = False  # the run gives stored chains new labels (relabel): its commit rewrites the tables

    def is_done(self, key: str) -> bool:
        """Whether the chunk with this key is staged already and will be reused."""
        return self.resume and is_staged(chunk_dir(self.root, key))

    def reuse(self, key: str) -> None:
        """Count a chunk an earlier run staged, from the totals staged beside its rows."""
        directory = chunk_dir(self.root, key)
        self.tally.merge(RunTally.from_json(read_note(directory, TALLY_NOTE)))
        self.staged.append(str(directory))
        self.reused += 1

    def chunk(self, key: str, work: Callable[[], ChunkRecords]) -> bool:
        """Stage the records `work` makes for the chunk `key`, or reuse them when they are staged already;
        True when the chunk was labelled now."""
        if self.is_done(key):
            self.reuse(key)
            return False
        problems, chains, steps, tally = work()
        self.stage(key, problems, chains, steps, tally)
        return True

    def stage(
        self,
        key: str,
        problems: Sequence[Problem],
        chains: Sequence[Chain],
        steps: Sequence[Step],
        tally: RunTally,
    ) -> None:
        directory = str(chunk_dir(self.root, key))
        stage_task(self.root, directory, list(problems), list(chains), list(steps), tally)
        self.added(directory, tally)

    def added(self, directory: str, tally: RunTally) -> None:
        """A chunk staged by the pipeline's own stage (the generation run's `rows`)."""
        self.tally.merge(tally)
        self.staged.append(directory)

    def commit(self, run: RunInfo, rejections: Sequence[Rejection]) -> int:
        """Commit every staged chunk as one dataset version (storage.dataset.Dataset.commit_staged)."""
        return commit_staged_task(self.root, run, self.staged, list(rejections), self.replaces)

    def drop(self) -> None:
        """Remove the staged chunks (a failed run that will not be resumed)."""
        drop_staged([Path(d) for d in self.staged])
