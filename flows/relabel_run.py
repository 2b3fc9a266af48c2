"""`prm-factory relabel`: a dataset version's labels recomputed with the current label sources and committed
as a new version, without sampling (see labels.relabel). By default every configured source that needs no
engine runs again (the verifier, the reference alignment, plug-in sources); `sources` names the ones to run
(`relabel --source NAME`), an engine source included, which then starts the config's engine."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace

from prefect import flow, get_run_logger

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.audit_calibration import calibrate_from_audit
from prm_factory.flows.chunk_loop import ChunkLoop
from prm_factory.flows.relabel_plan import DomainSources, chunk_key, domain_sources, rerun_sources
from prm_factory.flows.run_record import RunOutput, run_record, utc_now
from prm_factory.flows.runner import ChunkExecutor
from prm_factory.flows.stored_rows import committed_rows, stored_chunks
from prm_factory.labels.consensus import weighing
from prm_factory.labels.registry import Registry, configured
from prm_factory.labels.relabel import StoredChain, relabel_chains
from prm_factory.labels.source import LabelSource, SourceSetup, source_identity
from prm_factory.labels.tally import RunTally
from prm_factory.schemas.records import Chain, Step
from prm_factory.storage.dataset import Dataset
from prm_factory.verifiers.protocol import Verifier

__all__ = ["RelabelSummary", "calibrate_from_audit", "relabel_dataset", "rerun_sources"]


@dataclass
class RelabelSummary:
    """What a relabel committed: its totals; `chains` and `steps` read its new rows back from the version."""

    run_id: str
    dataset_root: str
    from_version: int
    version: int | None  # None: every chain was already current, nothing committed
    tally: RunTally
    unchanged: int  # chains whose stored labels already carried the current labelers
    sources: tuple[str, ...] = ()  # the sources run again
    reused_chunks: int = 0  # chunks an interrupted relabel had staged, committed without relabelling them

    @property
    def chains(self) -> list[Chain]:
        if self.version is None:
            return []
        return committed_rows(self.dataset_root, self.version, self.run_id, "chains")

    @property
    def steps(self) -> list[Step]:
        if self.version is None:
            return []
        return committed_rows(self.dataset_root, self.version, self.run_id, "steps")


@flow(name="prm-relabel", log_prints=True)
def relabel_dataset(
    config: RunConfig,
    version: int | None = None,
    sources: Sequence[str] = (),
    calibrate_from: str | None = None,
) -> RelabelSummary:
    """Relabel every chain of `version` (None: the latest) of the config's dataset (module docstring),
    streamed `resume.chunk_chains` chains (whole problems) at a time through the shared chunk loop
    (flows/chunk_loop.py): each source's batch call is one stage per chunk (flows/runner.py), each chunk is
    staged, and a killed relabel started again reuses the chunks it staged. `calibrate_from`: an audit whose
    answers refine the calibration tables first (`calibrate_from_audit`), so the consensus of every chain is
    computed again with them."""
    logger = get_run_logger()
    root = str(config.dataset_root())
    from_version = Dataset(root).resolve_version(version)
    size = config.resume.chunk_chains
    if calibrate_from is not None:
        refined = calibrate_from_audit(calibrate_from, root, config, stored_chunks(root, from_version, size))
        logger.info("calibration tables refined by %s: %s", calibrate_from, ", ".join(refined) or "none")
    run_id = uuid.uuid4().hex[:16]
    started = utc_now()
    registry: Registry = configured(config.labels.sources)
    by_domain: dict[str, tuple[Verifier, SourceSetup, list[LabelSource]]] = {}
    executor = ChunkExecutor(root, resume=config.resume.enabled, config=config)
    loop = ChunkLoop(root, resume=config.resume.enabled, replaces=True)
    orphans: list[str] = []
    try:
        for part in stored_chunks(root, from_version, size, orphans):
            for domain in sorted({item.problem.domain for item in part}):
                if domain not in by_domain:
                    by_domain[domain] = domain_sources(config, domain, run_id, sources)
            key = chunk_key(config, from_version, part, by_domain)
            if loop.is_done(key):
                loop.reuse(key)
                continue
            loop.stage(key, (), *relabel_part(part, by_domain, registry, executor, run_id))
    finally:
        for verifier, _, _ in by_domain.values():
            close = getattr(verifier, "close", None)
            if callable(close):
                close()
    for chain_id in orphans:
        logger.warning("chain %s: its problem is not in the dataset", chain_id)
    ran = tuple(dict.fromkeys(s.name for _, _, rerun in by_domain.values() for s in rerun))
    tally, unchanged = loop.tally, loop.tally.current_chains
    logger.info(
        "relabel (%s): %d chains relabelled, %d already current", ", ".join(ran), tally.chains, unchanged
    )
    if not tally.chains:
        loop.drop()
        return RelabelSummary(run_id, root, from_version, None, tally, unchanged, ran, loop.reused)
    identities = [source_identity(s, setup) for _, setup, rerun in by_domain.values() for s in rerun]
    identities.append(weighing(config).identity())  # the tables the new consensus read
    versions = {ident["name"]: f"{ident['version']}+{ident['code']}" for ident in identities}
    run = run_record(
        run_id=run_id,
        started_at=started,
        config=config,
        output=RunOutput(tally=tally),
        model="relabel",
        verifiers=versions,
        config_json=json.dumps(
            {
                "relabel_of_version": from_version,
                "sources": list(ran),
                "calibrate_from_audit": calibrate_from,
                **json.loads(config.to_json()),
            }
        ),
    )
    new_version = loop.commit(run, [])
    return RelabelSummary(run_id, root, from_version, new_version, tally, unchanged, ran, loop.reused)


def relabel_part(
    part: Sequence[StoredChain],
    by_domain: DomainSources,
    registry: Registry,
    executor: ChunkExecutor,
    run_id: str,
) -> tuple[list[Chain], list[Step], RunTally]:
    """One chunk's new chain and step rows, domain by domain, and their totals."""
    new_chains: list[Chain] = []
    new_steps: list[Step] = []
    unchanged = 0
    for domain, (_, setup, rerun) in sorted(by_domain.items()):
        stored = [item for item in part if item.problem.domain == domain]
        if not stored:
            continue
        label_with = replace(executor, domain=domain).label_sources
        results, current = relabel_chains(stored, rerun, registry, setup, run_id, label_with)
        unchanged += current
        for new_chain, rows in results:
            new_chains.append(new_chain)
            new_steps.extend(rows)
    tally = RunTally.of(new_chains, new_steps)
    tally.current_chains = unchanged
    return new_chains, new_steps, tally
