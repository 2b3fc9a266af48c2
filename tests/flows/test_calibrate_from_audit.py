"""A user's audit refines the calibration tables and moves the consensus (issue 47): 200 reviewed steps
where the verifier's flags were wrong on this data lower its measured precision there, and `relabel
--calibrate-from-audit` commits a version whose consensus reads the refined table, recorded in the run."""

from __future__ import annotations

import json

from prm_factory.audit.create import create_audit
from prm_factory.audit.sample import SampleDesign
from prm_factory.labels.calibration import DATASET_TABLES, CalibrationTable, Cell, read_table
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query


def test_a_200_step_audit_moves_the_table_and_the_consensus(prefect_server: None, tmp_path) -> None:
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.label_run import label_external
    from prm_factory.flows.relabel_run import relabel_dataset

    path = tmp_path / "chains.jsonl"
    rows = [
        {"id": f"c{k}", "problem": f"{k} + {k}?", "steps": [f"{k} + {k} = {2 * k + 1}"], "answer": str(2 * k)}
        for k in range(200)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    # a table that measured the verifier's flags nearly always right (the shipped one is what it is)
    cells = tuple(
        Cell("incorrect", kind, "math", 1000, 999)
        for kind in ("closed_arithmetic", "word_problem_arithmetic")
    )
    CalibrationTable("verifier", "math-sympy", "dev set", 0.5, cells).write(tmp_path / "verifier.json")
    overrides = {"dataset.root": str(tmp_path / "ds"), "labels.sources": []}
    tables = {"labels.consensus": {"tables": {"verifier": str(tmp_path / "verifier.json")}}}
    config = load_config(None, {**overrides, **tables})
    labelled = label_external(str(path), config)
    flagged = [s for s in labelled.steps if s.label("verifier").verdict == "incorrect"]
    assert len(flagged) == 200 and all(s.consensus == "negative" for s in flagged)
    before = {s.chain_id: s.p_correct for s in labelled.steps}

    dataset = Dataset(str(tmp_path / "ds"))
    store = create_audit(dataset, tmp_path / "audit", SampleDesign(size=200, seed=0, double_share=0.0))
    items = store.items()
    assert len(items) == 200
    for item in items:  # on this user's data every flag was a false alarm
        store.record_answer(item.item_id, "ana", "correct", answered_at="2026-01-02T10:00:00Z")
    store.close()

    summary = relabel_dataset(config, calibrate_from=str(tmp_path / "audit"))
    assert summary.version == labelled.version + 1
    table = read_table(tmp_path / "ds" / DATASET_TABLES / "verifier.json")
    assert "audit 400 steps" in table.origin  # each answered label counted pooled and where it was read
    after = {s.chain_id: s for s in summary.steps}
    assert all(after[c].p_correct > before[c] for c in before)
    assert all(s.consensus != "negative" and not s.first_error for s in after.values())
    run = query(
        dataset, "SELECT verifier_versions, config FROM runs ORDER BY started_at DESC LIMIT 1"
    ).to_pylist()[0]
    assert json.loads(run["verifier_versions"])["consensus"].startswith("p_correct-2+")
    assert json.loads(run["config"])["calibrate_from_audit"] == str(tmp_path / "audit")
    assert relabel_dataset(config).version is None  # the consensus now matches the refined table
    # the same audit read straight from the version's stream of chunks gives the table for the same source
    from prm_factory.flows.audit_calibration import calibrate_from_audit
    from prm_factory.flows.stored_rows import stored_chunks

    chunks = stored_chunks(str(tmp_path / "ds"), labelled.version, size=16)
    assert calibrate_from_audit(str(tmp_path / "audit"), str(tmp_path / "again"), config, chunks) == [
        "verifier"
    ]
    assert "audit 400 steps" in read_table(tmp_path / "again" / DATASET_TABLES / "verifier.json").origin


def test_an_audit_refines_the_joint_cells_the_consensus_reads(
    prefect_server: None, tmp_path, monkeypatch
) -> None:
    """Steps both the verifier and the reference labelled, read where a joint table measured (word problems
    without LaTeX read in `math/gsm8k`; here a stand-in table has cells there): the audit's
    answers are added to that table's cells, written under the dataset root, and the relabelled consensus
    reads them (labels/joint_calibration.py)."""
    from prm_factory.config.run_config import load_config
    from prm_factory.flows import audit_calibration
    from prm_factory.flows.label_run import label_external
    from prm_factory.flows.relabel_run import relabel_dataset
    from prm_factory.labels.joint_calibration import JointCell, JointTable, joint_file, read_joint_table

    path = tmp_path / "chains.jsonl"
    rows = [
        {"id": f"c{k}", "problem": f"{k} + {k}?", "steps": [f"{k} + {k} = {2 * k + 1}"],
         "answer": f"{k} + {k} = {2 * k}\n#### {2 * k}"}
        for k in range(1, 41)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    pair = ("verifier", "reference")
    pairs = [
        (a, b)
        for a in ("correct", "incorrect", "unverifiable")
        for b in ("correct", "incorrect", "unverifiable")
    ]
    cells = tuple(JointCell(v, "math/gsm8k", 50, 1) for v in pairs if v != ("unverifiable", "unverifiable"))
    shipped = JointTable(pair, ("v", "r"), "dev set", cells, (("math/gsm8k", 0.5),))
    monkeypatch.setattr(audit_calibration, "load_joint_tables", lambda: {pair: shipped})
    config = load_config(None, {"dataset.root": str(tmp_path / "ds"), "labels.sources": ["reference"]})
    labelled = label_external(str(path), config)
    assert all({label.source for label in s.labels} >= set(pair) for s in labelled.steps)

    dataset = Dataset(str(tmp_path / "ds"))
    store = create_audit(dataset, tmp_path / "audit", SampleDesign(size=40, seed=0, double_share=0.0))
    for item in store.items():  # every step was right after all
        store.record_answer(item.item_id, "ana", "correct", answered_at="2026-01-02T10:00:00Z")
    store.close()
    summary = relabel_dataset(config, calibrate_from=str(tmp_path / "audit"))
    refined = read_joint_table(joint_file(tmp_path / "ds", pair))
    assert refined.origin == "dev set + audit 40 steps"
    assert sum(c.n for c in refined.cells) == sum(c.n for c in shipped.cells) + 40
    assert sum(c.n_right for c in refined.cells) == sum(c.n_right for c in shipped.cells) + 40
    before = {s.chain_id: s.p_correct for s in labelled.steps}
    assert all(s.p_correct > before[s.chain_id] for s in summary.steps)  # the refined cells were read
