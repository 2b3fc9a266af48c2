"""What a generation run keeps while it goes (flows/generation_run.py): its running totals and staged chunks,
what it was started with and has planned, and what each chunk's stages are handed."""

from __future__ import annotations

from dataclasses import dataclass, field

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.chunk_loop import ChunkLoop
from prm_factory.flows.domains import Domain
from prm_factory.flows.plan import RunPlan
from prm_factory.flows.runner import ChunkExecutor
from prm_factory.flows.shards import ShardRun
from prm_factory.flows.stage_clock import StageClock
from prm_factory.flows.tasks import RolloutStage
from prm_factory.labels.registry import ALWAYS, Registry, configured, run_sources
from prm_factory.labels.source import LabelSource, SourceSetup
from prm_factory.schemas.records import Rejection
from prm_factory.verifiers.protocol import Verifier


@dataclass
class RunProgress:
    """What a streaming run keeps across chunks besides its chunk loop: rollout and prefix cache counters."""

    rollout_chains: int = 0  # chains whose rollouts are done, for the rollouts progress bar
    cache_queried: int = 0
    cache_hit: int = 0
    has_cache_counters: bool = False

    def add_rollouts(self, stage: RolloutStage, chains: int) -> None:
        self.rollout_chains += chains
        if stage.prefix_cache is not None:
            self.has_cache_counters = True
            self.cache_queried += stage.prefix_cache[0]
            self.cache_hit += stage.prefix_cache[1]

    def hit_rate(self) -> float | None:
        """Prefix cache hit rate over every chunk that has counters."""
        return self.cache_hit / self.cache_queried if self.has_cache_counters and self.cache_queried else None


@dataclass
class RunState:
    """One run as it goes: what it was started with, and what it has found, planned and done so far."""

    config: RunConfig
    domain: Domain
    run_id: str
    started: str
    root: str  # the dataset root, resolved once
    clock: StageClock
    sharded: ShardRun | None = None
    progress: RunProgress = field(default_factory=RunProgress)
    verifier: Verifier | None = None
    plan: RunPlan | None = None
    rejections: list[Rejection] = field(default_factory=list)
    error: str = ""
    loop: ChunkLoop = field(init=False)  # the run's totals and staged chunks (flows/chunk_loop.py)

    def __post_init__(self) -> None:
        self.loop = ChunkLoop(self.root, self.config.resume.enabled)


@dataclass(frozen=True)
class ChunkRun:
    """Everything one chunk's stages need (the run's plan, its config, its label sources, its executor)."""

    config: RunConfig
    domain: Domain
    verifier: Verifier
    plan: RunPlan
    root: str
    clock: StageClock
    progress: RunProgress
    total_problems: int
    sources: RunSources
    executor: ChunkExecutor
    loop: ChunkLoop


@dataclass(frozen=True)
class RunSources:
    """The run's label sources: the registry its labels vote by, what they are handed, and those that run
    after the verifier and MC (whose labels the registry's two sources make from the cached verify and
    rollouts stages: `labels_of`)."""

    registry: Registry
    setup: SourceSetup
    others: tuple[LabelSource, ...]

    @classmethod
    def of(cls, config: RunConfig, domain: Domain, verifier: Verifier, plan: RunPlan) -> RunSources:
        setup = SourceSetup(config, domain.name, verifier, plan.settings, plan.context.run_id)
        chosen = run_sources(config.labels.sources, config.judge.enabled)
        others = tuple(s for s in chosen if s.name not in ALWAYS and s.applies(setup))
        return cls(configured(config.labels.sources), setup, others)
