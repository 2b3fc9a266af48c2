"""What a `relabel` decides per domain before its chunks (flows/relabel_run.py): the verifier and the sources
it runs again, and each chunk's content key (the key its rows are staged and resumed by,
flows/chunk_loop.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.domains import domain_for
from prm_factory.flows.engines import engine_settings
from prm_factory.flows.resume import stage_key
from prm_factory.flows.stages import GENERATION
from prm_factory.labels.consensus import weighing
from prm_factory.labels.registry import RegistryError, configured, order_by_reads, run_sources
from prm_factory.labels.relabel import StoredChain
from prm_factory.labels.source import LabelSource, SourceSetup, source_identity
from prm_factory.verifiers.protocol import Verifier

DomainSources = Mapping[str, tuple[Verifier, SourceSetup, list[LabelSource]]]
"""Per domain of the version's chains: the verifier, what the sources are handed, the sources run again."""


def rerun_sources(config: RunConfig, setup: SourceSetup, names: Sequence[str] = ()) -> list[LabelSource]:
    """What a relabel runs again: `names` (each must apply here), else the configured sources that need no
    engine; in an order where a source comes after those it reads."""
    registry = configured(config.labels.sources)
    if names:
        chosen = [registry[name] for name in names]
        refused = [s.name for s in chosen if not s.applies(setup)]
        if refused:
            raise RegistryError(
                f"label sources {refused} do not run on {setup.domain} chains with this config"
            )
        return order_by_reads(chosen)
    return [
        s
        for s in run_sources(config.labels.sources, config.judge.enabled)
        if "engine" not in s.needs and s.applies(setup)
    ]


def _setup(
    config: RunConfig, domain: str, verifier: Verifier, run_id: str, names: Sequence[str]
) -> SourceSetup:
    registry = configured(config.labels.sources)
    engine = None
    if any("engine" in registry[name].needs for name in names):
        engine = engine_settings(config)
    return SourceSetup(
        config, domain, verifier, engine, run_id, pipeline="relabel", rollouts=engine is not None
    )


def domain_sources(
    config: RunConfig, domain: str, run_id: str, names: Sequence[str]
) -> tuple[Verifier, SourceSetup, list[LabelSource]]:
    """The verifier, what sources are handed and the sources to run again, for the chains of one domain."""
    domain_config = config.model_copy(
        update={"problems": config.problems.model_copy(update={"domain": domain})}
    )
    verifier = domain_for(domain_config).make_verifier()
    setup = _setup(domain_config, domain, verifier, run_id, names)
    return verifier, setup, rerun_sources(domain_config, setup, names)


def chunk_key(
    config: RunConfig,
    from_version: int,
    part: Sequence[StoredChain],
    by_domain: DomainSources,
) -> str:
    """A relabel chunk's rows are decided by its stored rows (chain ids, the runs that wrote them, their
    steps' label hashes), the sources run again (their identities) and the consensus' tables."""
    stored = [
        [item.chain.chain_id, item.chain.run_id, [s.label_config_hash for s in item.steps]] for item in part
    ]
    identities = {
        domain: [source_identity(s, setup) for s in rerun] for domain, (_, setup, rerun) in by_domain.items()
    }
    return stage_key(
        "relabel-rows",
        {
            "from_version": from_version,
            "stored": stored,
            "sources": identities,
            "consensus": weighing(config).identity(),
        },
        code=RELABEL_ROWS_CODE,
    )


RELABEL_ROWS_CODE = (
    *GENERATION["rows"].code,
    "prm_factory.flows.relabel_run",
    "prm_factory.flows.stored_rows",
)
"""The code that decides a relabel chunk's rows beyond its sources (whose versions are in the key)."""
