"""An audit's answers as calibration tables for one dataset's consensus (`relabel --calibrate-from-audit`).

Each automatic label of a step a reviewer judged is counted against the reviewer's verdict; the counts refine
the shipped tables and land under the dataset root, where every later run, label and relabel of that
dataset reads them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from prm_factory.audit.human import human_labels
from prm_factory.audit.store import AuditStore
from prm_factory.config.run_config import RunConfig
from prm_factory.labels.calibration import DATASET_TABLES, audit_tables, load_tables
from prm_factory.labels.consensus import domains_of
from prm_factory.labels.joint_calibration import joint_file, load_joint_tables, refine_joint
from prm_factory.labels.registry import registry
from prm_factory.labels.relabel import StoredChain
from prm_factory.labels.source import tables_per_labeler

VOTED = ("correct", "incorrect")


def calibrate_from_audit(
    audit: str, root: str, config: RunConfig, stored: Iterable[Sequence[StoredChain]]
) -> list[str]:
    """Refine the calibration tables with an audit's answers: each automatic label of a step a reviewer
    judged is counted against the reviewer's verdict, added to the shipped table (and `[labels.consensus]
    tables`), and the result written to `<root>/calibration/<source>.json`, which the consensus of every
    later run, label and relabel of this dataset reads (a later audit replaces it). Returns the sources."""
    store = AuditStore.open(Path(audit).expanduser())
    try:
        items = {item.item_id: (item.chain_id, item.step_index) for item in store.items()}
        answers = human_labels(items, store.answers())
    finally:
        store.close()
    truth = {(a.chain_id, a.step_index): a.verdict == "correct" for a in answers if a.verdict in VOTED}
    rows = []
    sources = registry()
    labelers: dict[str, str] = {}  # the audited labeler of each source whose tables are per labeler
    verdicts: list[tuple[dict[str, str], tuple[str, ...], bool]] = []  # a reviewed step's verdicts
    for step, problem in ((s, item.problem) for part in stored for item in part for s in item.steps):
        right = truth.get((step.chain_id, step.step_index))
        if right is not None:
            domain = f"{problem.domain}/{problem.source}"
            rows.extend(
                (label.source, label.verdict, label.kind, domain, right)
                for label in step.labels
                if label.source != "human" and label.verdict in VOTED
            )
            labelers.update(
                (label.source, label.labeler)
                for label in step.labels
                if label.verdict in VOTED and tables_per_labeler(sources.get(label.source))
            )
            read_in = domains_of(problem.domain, problem.source, problem.text)
            verdicts.append(({label.source: label.verdict for label in step.labels}, read_in, right))
    tables = audit_tables(rows, load_tables(config.labels.consensus.tables), Path(audit).name, labelers)
    for source, table in tables.items():
        table.write(Path(root) / DATASET_TABLES / f"{source}.json")
    for (
        pair,
        joint,
    ) in load_joint_tables().items():  # the shipped joint cells, where a reviewed step reads them
        read = [
            (v[pair[0]], v[pair[1]], domain, right) for v, domain, right in verdicts if set(pair) <= set(v)
        ]
        refined = refine_joint(joint, read, Path(audit).name)
        if refined is not None:
            refined.write(joint_file(Path(root), pair))
    return sorted(tables)
