"""A run's plan: what every chunk shares (engine, parameters, labelers) and every stage's content key,
computed once before the first chunk (the `model` stage of a run).

The keys come from the stage declarations (flows/stages.py) fed with this run's inputs (`stage_inputs`);
each chunk's keys are computed here once and read by `needs_engine` and by the chunk loop alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.domains import Domain, reference_identity
from prm_factory.flows.engines import engine_settings, judge_settings
from prm_factory.flows.resume import canonical_order, chunks, is_cached, problems_fingerprint
from prm_factory.flows.shards import Shard, in_shard
from prm_factory.flows.stages import GENERATION
from prm_factory.labels.assemble import ChainIdentity, RecordContext
from prm_factory.labels.consensus import weighing
from prm_factory.labels.judge import prompt_hash
from prm_factory.labels.registry import run_sources
from prm_factory.labels.source import SourceSetup, source_identity
from prm_factory.sampling.model_prep import weights_hash
from prm_factory.sampling.protocol import GenerationParams
from prm_factory.sampling.vllm_sampler import EngineSettings, engine_choice, engine_reproducibility
from prm_factory.schemas.records import Problem
from prm_factory.storage.staging import chunk_dir, is_staged
from prm_factory.verifiers.identity import code_digest, identity_tag, labeler_identity
from prm_factory.verifiers.protocol import Verifier


def run_labelers(
    verifier: Verifier, domain: Domain, config: RunConfig | None = None, judge_model: str = ""
) -> dict[str, dict[str, str]]:
    """Identities of the labelers a run uses (name, version, code digest): they key the labels and caches."""
    labelers = {"verifier": labeler_identity(verifier)}
    if domain.reference is not None:
        labelers["reference"] = reference_identity()
    if config is not None and config.judge.enabled:
        labelers["judge"] = {
            "name": judge_model,
            "version": prompt_hash(),
            "code": code_digest(("prm_factory.labels.judge",)),
        }
    return labelers


def plugin_labelers(
    config: RunConfig, domain: Domain, verifier: Verifier, settings: EngineSettings
) -> dict[str, dict[str, str]]:
    """Identities of the run's label sources (labels.source.source_identity, the one function `run`, `label`
    and `relabel` share: a source's options are in it), over `run_labelers`' defaults: they key the labels
    and caches, so a changed source or changed options give new rows."""
    setup = SourceSetup(config, domain.name, verifier, settings)
    return {
        source.name: source_identity(source, setup)
        for source in run_sources(config.labels.sources, config.judge.enabled)
        if source.name not in ("mc", "judge") and source.applies(setup)
    }


def labeler_versions(labelers: dict[str, dict[str, str]]) -> dict[str, str]:
    """The runs table's `verifier_versions`: each labeler's name -> version+code digest."""
    return {ident["name"]: f"{ident['version']}+{ident['code']}" for ident in labelers.values()}


def stage_inputs(
    config: RunConfig,
    problems: list[Problem],
    settings: EngineSettings,
    weights: str,
    labelers: dict[str, dict[str, str]],
    context: RecordContext,
    judging: EngineSettings,
) -> dict[str, Any]:
    """The named inputs the stages declare (flows/stages.py); resource settings (KV cache size) stay out."""
    m = config.model
    choice = engine_choice(settings)
    # batch-invariant kernels round differently (GPU engines): in the key only when on, as request_seeds
    invariant = (
        settings.backend == "vllm" and engine_reproducibility(settings, choice).mode == "batch-invariant"
    )
    return {
        "problems": problems_fingerprint(canonical_order(problems)),  # the set, not the file's order
        "engine": {
            "model": settings.model_id,
            "weights": weights,
            "seed": m.seed,
            "dtype": choice.dtype,  # what `auto` became on this host
            "max_model_len": m.max_model_len,
            # servers' draws change with it; only when on, so the keys of every other config stay as they were
            **({"request_seeds": True} if m.request_seeds else {}),
            **({"batch_invariant": True} if invariant else {}),
        },
        "sampling": config.sampling.model_dump(mode="json"),
        "segmentation": config.segmentation.model_dump(mode="json"),
        "verifier": {
            **labelers["verifier"],  # name, version and code digest: a verifier fix invalidates the cache
            "config": config.verifier.model_dump(mode="json"),
            "sandbox": config.sandbox.model_dump(mode="json") if config.problems.domain == "code" else None,
        },
        "rollouts": config.rollouts.model_dump(mode="json"),
        "domain": config.problems.domain,
        "labels": context.label_config_hash,
        "judge": [config.judge.model_dump(mode="json"), judging.model_id],
    }


@dataclass(frozen=True)
class ChunkKeys:
    """Content keys of one chunk's stages (by stage name) and of its staged rows."""

    stages: dict[str, str]
    staged: str  # the `rows` key when resume is on, else one per run (never reused)

    def __getitem__(self, stage: str) -> str:
        return self.stages[stage]


@dataclass(frozen=True)
class ChunkPlan:
    index: int
    problems: list[Problem]
    keys: ChunkKeys


@dataclass(frozen=True)
class RunPlan:
    """What every chunk of one run shares: engine, parameters, labelers, and the chunks with their keys."""

    settings: EngineSettings
    judging: EngineSettings
    params: GenerationParams
    identity: ChainIdentity
    context: RecordContext
    labelers: dict[str, dict[str, str]]
    keys: dict[str, str]  # run-scoped stage keys
    chunks: list[ChunkPlan]


def plan_run(
    config: RunConfig,
    domain: Domain,
    verifier: Verifier,
    problems: list[Problem],
    run_id: str,
    shard: Shard | None = None,
) -> RunPlan:
    """Resolve the model and build what the chunks share, with every chunk's stage keys. `problems` are the
    whole (logical) run's: the chunks are cut from them, and a shard keeps its own (`in_shard`), with the
    index and keys each chunk has in every shard and in a single run."""
    settings = engine_settings(config)
    weights = weights_hash(Path(settings.checkpoint))
    judging = judge_settings(config, settings)
    weighs = weighing(config)  # the consensus's tables: their digest keys the rows as a labeler's does
    labelers = {
        **run_labelers(verifier, domain, config, judging.model_id),
        **plugin_labelers(config, domain, verifier, settings),
        "consensus": weighs.identity(),
    }
    s = config.sampling
    params = GenerationParams(n=s.n, temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens)
    sampling_json = json.dumps(params.to_dict(), sort_keys=True)
    context = RecordContext(
        run_id=run_id,
        model_id=settings.model_id,
        sampling_json=sampling_json,
        seed=settings.seed,
        verifier_name=verifier.name,
        verifier_version=verifier.version,
        label_config_hash=config.label_config_hash(labelers),
        verifier_code=labelers["verifier"]["code"],
        reference_labeler=identity_tag(labelers["reference"]) if "reference" in labelers else None,
        weighing=weighs,
    )
    inputs = stage_inputs(config, problems, settings, weights, labelers, context, judging)
    keys = GENERATION.run_keys(inputs)
    parts = []
    for index, part in enumerate(chunks(problems, config.resume.chunk_problems)):
        if not in_shard(index, shard):
            continue
        by_stage = GENERATION.chunk_keys(keys, inputs, index, part)
        staged = by_stage["rows"] if config.resume.enabled else f"{run_id}-c{index:04d}"
        parts.append(ChunkPlan(index, part, ChunkKeys(by_stage, staged)))
    return RunPlan(
        settings=settings,
        judging=judging,
        params=params,
        identity=ChainIdentity(settings.model_id, weights, sampling_json, settings.seed),
        context=context,
        labelers=labelers,
        keys=keys,
        chunks=parts,
    )


def needs_engine(root: str, config: RunConfig, plan: RunPlan) -> bool:
    """Whether any chunk still has engine work: a resumed run whose chunks are staged or whose engine
    stages are cached, or a run with no (fresh) problems left, never starts the engine, the most
    expensive minute of a small run."""
    if not config.resume.enabled:
        return bool(plan.chunks)
    for chunk in plan.chunks:
        if is_staged(chunk_dir(root, chunk.keys.staged)):
            continue
        if not (is_cached(root, chunk.keys["sample"]) and is_cached(root, chunk.keys["rollouts"])):
            return True
    return False
