"""Resume after a crash: stage results cached under the dataset root by a content key.

Prefect's default task cache key includes the flow run id, so a run started again after SIGKILL would redo
everything. Here each expensive stage gets an explicit key built from what decides its output (problem ids,
model weights hash, sampling parameters, seed, verifier version, the stage's own source code) and chained
from the key of the stage it consumes, so changing anything upstream invalidates everything downstream;
flows/stages.py declares the stages and derives their keys.
Results persist as Prefect result files in `<dataset root>/_cache/<stage>-<hash>`; a run with the same
config finds them, Prefect marks the task `Cached`, and the run commits the same rows (content-hash keys)
an uninterrupted run would have.

Sampling and rollouts, the long stages, are cached per chunk of `resume.chunk_problems` problems
(`chunk_key`), so a run killed half-way through them keeps the chunks it finished.

A failed task stores nothing, so only finished stages (and chunks) are skipped. Delete `_cache/` to force
recomputation; it is never read by dataset readers (the underscore keeps it out of the record kinds).

>>> a = stage_key("sample", {"problems": ["p1"], "seed": 0}, code=())
>>> a == stage_key("sample", {"problems": ["p1"], "seed": 0}, code=())
True
>>> a.startswith("sample-") and a != stage_key("sample", {"problems": ["p1"], "seed": 1}, code=())
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from prefect import Task
from prefect.cache_policies import NO_CACHE, CacheKeyFnPolicy

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.identity import code_digest

CACHE_DIR = "_cache"

T = TypeVar("T", bound=Task)


def cache_dir(dataset_root: str | Path) -> Path:
    return Path(dataset_root) / CACHE_DIR


def stage_key(stage: str, inputs: dict[str, Any], code: Sequence[str]) -> str:
    """`<stage>-<hash>` of the stage's inputs and code version (the source of the modules `code` names);
    readable in `ls _cache/`. Stages get theirs from their declaration (flows/stages.py)."""
    payload = json.dumps(
        {"stage": stage, "inputs": inputs, "code": code_digest(tuple(code))},
        sort_keys=True,
        default=str,
    )
    return f"{stage}-{hashlib.sha256(payload.encode()).hexdigest()[:32]}"


def problems_fingerprint(problems: Iterable[Problem]) -> str:
    """Problem ids are content hashes already; their order matters (a chunk's prompts reach the engine in
    that order)."""
    return hashlib.sha256("\n".join(p.problem_id for p in problems).encode()).hexdigest()[:32]


def canonical_order(problems: Iterable[Problem]) -> list[Problem]:
    """Problems sorted by a hash of their id: an order that does not depend on the file's, so a shuffled
    input file, a shard and a resumed run all see the same sequence."""
    return sorted(problems, key=lambda p: hashlib.sha256(p.problem_id.encode()).digest())


def chunks(problems: Sequence[Problem], size: int) -> list[list[Problem]]:
    """The run's problems in canonical order, `size` at a time: the unit a stage batches (each of a chunk's
    engine calls is one batch), caches (a crash loses at most one chunk) and shards take whole. Cut from the
    whole run's problems, never from a shard's, so a chunk holds the same problems in the same order in a
    single run, in any shard of any count and in a rerun (sampling/reproducibility.py says why that matters).

    >>> ps = [Problem(problem_id=f"p{i}", source="s", domain="math", text="") for i in range(5)]
    >>> ids = lambda parts: [[p.problem_id for p in part] for part in parts]
    >>> ids(chunks(ps, 2)) == ids(chunks(ps[::-1], 2)) and [len(c) for c in chunks(ps, 2)]
    [2, 2, 1]
    """
    ordered = canonical_order(problems)
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def chunk_key(stage_key: str, index: int, problems: Sequence[Problem]) -> str:
    """Key of one chunk of a stage: the stage's key, the chunk's place and its problems.

    >>> chunk_key("rollouts-ab12", 3, [])
    'rollouts-ab12-c0003-e3b0c44298fc'
    """
    return f"{stage_key}-c{index:04d}-{problems_fingerprint(problems)[:12]}"


def is_cached(dataset_root: str | Path, key: str) -> bool:
    """Whether a finished result for `key` is on disk (used to skip starting the engine at all)."""
    return (cache_dir(dataset_root) / key).is_file()


def with_stage_cache(task: T, dataset_root: str | Path, key: str | None) -> T:
    """`task` whose result is persisted under `<root>/_cache/<key>` and reused by any later run.

    `key=None` turns caching off (the `resume.enabled = false` option).
    """
    if key is None:
        return task.with_options(cache_policy=NO_CACHE)
    directory = cache_dir(dataset_root)
    directory.mkdir(parents=True, exist_ok=True)
    return task.with_options(
        cache_policy=CacheKeyFnPolicy(cache_key_fn=lambda _context, _parameters: key),
        persist_result=True,
        # A Path (not an unsaved block) is accepted without a server-side block document.
        result_storage=directory,
        refresh_cache=False,
        # Prefect otherwise keeps up to 1000 results in an in-process LRU: every chunk's chains would stay in
        # memory for a streaming run's whole length. They are on disk; a rerun reads them from there.
        cache_result_in_memory=False,
    )
