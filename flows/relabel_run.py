"""`prm-factory relabel`: the verifier and reference labels of a dataset version, recomputed with the current
labelers and committed as a new version, without sampling or rolling out again (see labels.relabel)."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from dataclasses import dataclass

from prefect import flow, get_run_logger

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.domains import domain_for, reference_identity, reference_labels
from prm_factory.flows.run_record import RunOutput, run_record, utc_now
from prm_factory.flows.tasks import write_task
from prm_factory.labels.relabel import relabel_chain
from prm_factory.schemas.records import Chain, Problem, Step, from_table
from prm_factory.storage.dataset import Dataset
from prm_factory.verifiers.identity import labeler_identity


@dataclass
class RelabelSummary:
    run_id: str
    dataset_root: str
    from_version: int
    version: int | None  # None: every chain was already current, nothing committed
    chains: list[Chain]
    steps: list[Step]
    unchanged: int  # chains whose stored labels already carried the current labelers


@flow(name="prm-relabel", log_prints=True)
def relabel_dataset(config: RunConfig, version: int | None = None) -> RelabelSummary:
    """Relabel every chain of `version` (None: the latest) of the config's dataset with the config's
    verifiers; math chains also get the reference source."""
    logger = get_run_logger()
    root = str(config.dataset_root())
    dataset = Dataset(root)
    from_version = dataset.resolve_version(version)
    tables = dataset.tables(from_version)
    problems = {p.problem_id: p for p in from_table(Problem, tables["problems"].to_table())}
    chains = from_table(Chain, tables["chains"].to_table())
    steps_by_chain: dict[str, list[Step]] = defaultdict(list)
    for step in from_table(Step, tables["steps"].to_table()):
        steps_by_chain[step.chain_id].append(step)
    run_id = uuid.uuid4().hex[:16]
    started = utc_now()
    verifiers: dict[str, object] = {}
    new_chains: list[Chain] = []
    new_steps: list[Step] = []
    unchanged = 0
    try:
        for chain in chains:
            problem = problems.get(chain.problem_id)
            if problem is None:
                logger.warning(
                    "chain %s: its problem %s is not in the dataset", chain.chain_id, chain.problem_id
                )
                continue
            domain = problem.domain
            if domain not in verifiers:
                domain_config = config.model_copy(
                    update={"problems": config.problems.model_copy(update={"domain": domain})}
                )
                verifiers[domain] = domain_for(domain_config).make_verifier()
            verifier = verifiers[domain]
            labelers = {"verifier": labeler_identity(verifier)}
            if domain == "math":
                labelers["reference"] = reference_identity()
            result = relabel_chain(
                problem,
                chain,
                steps_by_chain.get(chain.chain_id, []),
                verifier,  # type: ignore[arg-type]
                labelers,
                reference_labels if domain == "math" else None,
                run_id,
            )
            if result is None:
                unchanged += 1
                continue
            new_chains.append(result[0])
            new_steps.extend(result[1])
    finally:
        for verifier in verifiers.values():
            close = getattr(verifier, "close", None)
            if callable(close):
                close()
    logger.info("relabel: %d chains relabelled, %d already current", len(new_chains), unchanged)
    if not new_chains:
        return RelabelSummary(run_id, root, from_version, None, [], [], unchanged)
    identities = [labeler_identity(v) for v in verifiers.values()]
    if "math" in verifiers:
        identities.append(reference_identity())
    versions = {ident["name"]: f"{ident['version']}+{ident['code']}" for ident in identities}
    run = run_record(
        run_id=run_id,
        started_at=started,
        config=config,
        output=RunOutput((), new_chains, new_steps, ()),
        model="relabel",
        verifiers=versions,
        config_json=json.dumps({"relabel_of_version": from_version, **json.loads(config.to_json())}),
    )
    new_version = write_task(root, run, [], new_chains, new_steps, [])
    return RelabelSummary(run_id, root, from_version, new_version, new_chains, new_steps, unchanged)
