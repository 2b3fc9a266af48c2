"""Make an audit from a dataset version: draw the sample, copy out what the page shows, write the audit file.

>>> store = create_audit(Dataset("prm-datasets/default"), Path("audits/first"), SampleDesign(size=300))
...                                                                                   # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from prm_factory.audit.context import chain_contexts
from prm_factory.audit.sample import SampleDesign, SampleError, draw_sample, sources_for
from prm_factory.audit.store import FILE_NAME, AuditStore
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import connect


def read_prm_scores(path: Path) -> pa.Table:
    """Per-step PRM scores (chain_id, step_index, prm_score) from `prm-factory score --dataset ... -o FILE`
    (one record per chain: `id` = chain id, `scores` = P(step is right) per step), parquet or JSON Lines."""
    if path.suffix == ".parquet":
        records = pq.read_table(path, columns=["id", "scores"]).to_pylist()
    else:
        with path.open(encoding="utf-8") as lines:
            records = [json.loads(line) for line in lines if line.strip()]
    chain_ids, indices, scores = [], [], []
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict) or "id" not in record or not isinstance(record.get("scores"), list):
            raise SampleError(f"{path}: record {number} has no `id` and `scores` list (prm-factory score)")
        for index, score in enumerate(record["scores"]):
            if score is not None:
                chain_ids.append(str(record["id"]))
                indices.append(index)
                scores.append(float(score))
    return pa.table(
        {
            "chain_id": pa.array(chain_ids, pa.string()),
            "step_index": pa.array(indices, pa.int64()),
            "prm_score": pa.array(scores, pa.float64()),
        }
    )


def create_audit(
    dataset: Dataset,
    folder: Path,
    design: SampleDesign,
    version: int | None = None,
    source_names: Sequence[str] | None = None,
    prm_scores: Path | None = None,
) -> AuditStore:
    """Draw `design` from a dataset version (None = latest) into `folder/audit.sqlite` and open it."""
    resolved = dataset.resolve_version(version)
    connection = connect(dataset, resolved)
    try:
        step_columns = [row[0] for row in connection.execute("DESCRIBE steps").fetchall()]
        sources = sources_for(step_columns, source_names)
        scores = read_prm_scores(prm_scores) if prm_scores is not None else None
        sample = draw_sample(connection, design, sources, scores)
        contexts = chain_contexts(connection, [item.chain_id for item in sample.items], sources)
    finally:
        connection.close()
    meta = {
        "dataset_root": dataset.root,
        "dataset_version": str(resolved),
        "population": str(sample.population),
        "prm_scores": "" if prm_scores is None else str(prm_scores),
    }
    return AuditStore.create(folder / FILE_NAME, sample, contexts, meta)
