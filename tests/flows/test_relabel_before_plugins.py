"""A dataset written before label sources became plug-ins (tests/storage/data/dataset_ns_move) takes a
relabel and new runs with today's code: the new rows add today's columns by schema evolution, the old
versions read as they did, and the judge's stored verdicts still vote."""

from __future__ import annotations

import json

from prm_factory.config.run_config import load_config
from prm_factory.storage.sql import query
from tests.storage_fixtures import copy_of_old_dataset


def test_an_old_dataset_is_relabelled_and_labelled_into(prefect_server: None, tmp_path) -> None:
    from prm_factory.flows.label_run import label_external
    from prm_factory.flows.relabel_run import relabel_dataset
    from prm_factory.verifiers.math import MathVerifier

    old = copy_of_old_dataset(tmp_path)
    config = load_config(None, {"dataset.root": old.root})
    relabelled = relabel_dataset(config)
    assert (relabelled.from_version, relabelled.version) == (2, 3)
    assert relabelled.unchanged == 0 and relabelled.sources == ("verifier", "reference")
    sql = "SELECT DISTINCT verifier_code FROM steps"
    assert {r["verifier_code"] for r in query(old, sql, version=3).to_pylist()} != {"oldcode"}
    assert "oldcode" in {r["verifier_code"] for r in query(old, sql, version=2).to_pylist()}  # as it was
    judged = query(
        old,
        "SELECT step_index, verdict, judge_verdict, judge_labeler, consensus, first_error, verdict_kind "
        "FROM steps WHERE judge_verdict IS NOT NULL ORDER BY step_index",
        version=3,
    ).to_pylist()
    assert [(r["judge_verdict"], r["judge_labeler"]) for r in judged] == [
        ("incorrect", "critic@abc"),
        ("unverifiable", "critic@abc"),
    ]
    assert judged[0]["consensus"] == "negative" and judged[0]["first_error"]
    assert judged[0]["verdict"] == "incorrect"  # 2 + 3 = 6 is false, checked again
    # the consensus is computed again as a probability (issue 47); the old version exports as it did
    from prm_factory.exports.formats import ExportError, ExportOptions, export_table

    soft = ExportOptions(label="consensus", soft=True)
    assert all(r["label"] is not None for r in export_table(old, "steps", 3, soft).to_pylist())
    assert export_table(old, "trl", 2, ExportOptions(label="consensus")).num_rows > 0
    try:
        export_table(old, "steps", 2, soft)
        raise AssertionError("a version without p_correct exported soft consensus labels")
    except ExportError as error:
        assert "relabel" in str(error)
    assert relabel_dataset(config).version is None  # labels and consensus now current
    path = tmp_path / "chains.jsonl"
    path.write_text(
        json.dumps({"id": "n", "problem": "1 + 1?", "steps": ["1 + 1 = 2"], "answer": "2"}) + "\n"
    )
    added = label_external(str(path), config)
    assert added.version == 4
    row = query(old, "SELECT verdict, verifier_version FROM steps WHERE text = '1 + 1 = 2'").to_pylist()
    assert row == [{"verdict": "correct", "verifier_version": MathVerifier.version}]
    assert query(old, "SELECT count(*) AS n FROM steps", version=2).to_pylist() == [{"n": 6}]
