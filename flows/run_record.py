"""The runs-table row of one run, built the same way for sampled runs and for labelled external chains.

Counts, accuracy and cost are derived from the rows the run commits, never passed in separately, so the
runs table cannot disagree with the chains and steps tables; provenance (git commit, package versions,
config hash, verifier versions) is filled in here for every kind of run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from prm_factory.config.provenance import git_commit, package_versions
from prm_factory.config.run_config import RunConfig
from prm_factory.labels.tally import RunTally
from prm_factory.rollouts import ChainValues
from prm_factory.schemas.records import Chain, Problem, Rejection, RunInfo, Step


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunOutput:
    """What a run commits (empty lists for a failed run), the source of every count in its record."""

    problems: Sequence[Problem] = ()
    chains: Sequence[Chain] = ()
    steps: Sequence[Step] = ()
    rejections: Sequence[Rejection] = ()
    values: Sequence[ChainValues] = ()  # rollout estimates, for the cost columns
    tally: RunTally | None = None  # a streaming run's totals (its rows are staged, not held); else from rows

    def totals(self) -> RunTally:
        if self.tally is not None:
            return self.tally
        tally = RunTally.of(self.chains, self.steps, self.values)
        tally.problems = len(self.problems)
        return tally


def run_record(
    *,
    run_id: str,
    started_at: str,
    config: RunConfig,
    output: RunOutput,
    model: str,
    weights_hash: str = "",
    verifiers: dict[str, str] | None = None,
    error: str = "",
    stage_seconds: dict[str, float] | None = None,
    prefix_cache_hit_rate: float | None = None,
    config_json: str | None = None,
    engine: dict | None = None,
    shard: tuple[str, int, int] | None = None,
) -> RunInfo:
    """The `RunInfo` of a run that ends now: `failed` when `error` is set, else `succeeded`.

    `shard` is (parent run id, shard index, shard count) for one shard of a sharded run (flows/shards.py).
    """
    tally = output.totals()
    counts = {
        "problems": tally.problems,
        "chains": tally.chains,
        "steps": tally.steps,
        "rejected": len(output.rejections),
    }
    return RunInfo(
        run_id=run_id,
        started_at=started_at,
        ended_at=utc_now(),
        status="failed" if error else "succeeded",
        error=error,
        config=config_json if config_json is not None else config.to_json(),
        config_hash=config.config_hash(),
        git_commit=git_commit(),
        package_versions=json.dumps(package_versions(), sort_keys=True),
        model=model,
        model_weights_hash=weights_hash,
        verifier_versions=json.dumps(verifiers or {}),
        counts=json.dumps(counts),
        stage_seconds=json.dumps(stage_seconds or {}),
        n_problems=counts["problems"],
        n_chains=counts["chains"],
        n_steps=counts["steps"],
        n_rejected=counts["rejected"],
        chain_accuracy=tally.chain_accuracy,
        rollout_tokens=tally.rollout_tokens,
        rollouts_drawn=tally.rollouts_drawn,
        rollout_seconds=round(tally.rollout_seconds, 3),
        prefix_cache_hit_rate=prefix_cache_hit_rate,
        engine=json.dumps(engine or {}, sort_keys=True),
        parent_run_id=shard[0] if shard else None,
        shard_index=shard[1] if shard else None,
        shard_count=shard[2] if shard else None,
        reproducibility=(engine or {}).get("reproducibility", {}).get("mode"),
    )


def chain_accuracy(chains: Sequence[Chain]) -> float:
    """Share of chains whose final answer (or program) was graded correct; 0.0 for no chains.

    >>> chain_accuracy([])
    0.0
    """
    return sum(c.outcome == "correct" for c in chains) / len(chains) if chains else 0.0
