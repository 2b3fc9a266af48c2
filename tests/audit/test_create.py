"""audit.create: a dataset version (and optional PRM scores) to an audit file."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prm_factory.audit.create import create_audit, read_prm_scores
from prm_factory.audit.sample import SampleDesign, SampleError


def test_an_audit_of_a_dataset_version(audit_dataset, tmp_path):
    store = create_audit(audit_dataset, tmp_path / "a", SampleDesign(size=10, seed=4), version=1)
    meta = store.meta()
    assert meta["dataset_root"] == audit_dataset.root and meta["dataset_version"] == "1"
    assert json.loads(meta["design"])["seed"] == 4 and json.loads(meta["sources"]) == [
        "verifier",
        "mc",
        "consensus",
    ]
    assert len(store.items()) == 10
    for item in store.items():
        assert store.chain(item.chain_id)["steps"][item.step_index]


def test_prm_scores_from_the_score_command_in_both_formats(audit_dataset, tmp_path):
    chains = [row["chain_id"] for row in audit_dataset.tables()["chains"].to_table().to_pylist()]
    records = [{"id": chain, "scores": [0.9, 0.45, None]} for chain in chains]
    jsonl = tmp_path / "scores.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    parquet = tmp_path / "scores.parquet"
    pq.write_table(pa.Table.from_pylist(records), parquet)
    for path in (jsonl, parquet):
        table = read_prm_scores(path)
        assert table.num_rows == 2 * len(chains) and set(table["step_index"].to_pylist()) == {0, 1}
    store = create_audit(audit_dataset, tmp_path / "b", SampleDesign(size=50), prm_scores=jsonl)
    assert "prm" in json.loads(store.meta()["sources"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"chain": 1}\n')
    with pytest.raises(SampleError, match="record 1"):
        read_prm_scores(bad)
