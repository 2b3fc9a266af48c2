"""A label source from outside the product tree, registered through the entry-point group by a package
built in the test (tests/plugin_fixtures.py, put on sys.path, installed into nothing): its labels appear in
a generation run, a `label` of external chains and a relabel, and it shows in a query, an export and a
training row set (fake engine: tests/flows/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from prm_factory.labels.registry import registered_names, registry
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query
from tests.plugin_fixtures import install_plugin, uninstall_plugin

SOURCES = {"labels.sources": ["reference", "digits"]}


@pytest.fixture
def plugin(tmp_path, monkeypatch) -> Iterator[None]:
    install_plugin(tmp_path, monkeypatch)
    yield
    uninstall_plugin(monkeypatch)


def test_a_plugin_source_labels_a_run_and_shows_in_query_export_and_training_rows(
    fake_engine, flow_config, tmp_path, plugin
) -> None:
    from prm_factory.exports.formats import ExportOptions, export_table, label_kinds
    from prm_factory.flows.generation_run import generation_run
    from prm_factory.storage.stats import headline_stats
    from prm_factory.training.rows import label_sources, rows_from_dataset

    summary = generation_run(flow_config(**SOURCES))
    assert summary.status == "succeeded", summary.error
    ds = Dataset(str(tmp_path / "ds"))
    rows = query(
        ds,
        "SELECT step_index, text, digits_verdict, digits_value, digits_labeler FROM steps "
        "ORDER BY chain_id, step_index",
    ).to_pylist()
    assert len(rows) == summary.steps
    for row in rows:  # the fake chains: "Step 1: We compute the result." / "Step 2: The answer is N."
        assert row["digits_verdict"] == "correct" and row["digits_value"] > 0, row
        assert row["digits_labeler"].startswith("digits@1.0+")
    # its identity keys the run's labels like the built-in sources' (flows/plan.py), and the run records it
    (run,) = query(ds, "SELECT verifier_versions FROM runs").to_pylist()
    assert json.loads(run["verifier_versions"])["digits"].startswith("1.0+")
    long = query(ds, "SELECT source, count(*) AS n FROM step_labels GROUP BY source ORDER BY source")
    assert {"source": "digits", "n": summary.steps} in long.to_pylist()
    assert headline_stats(ds, None, registered_names())["digits_correct"] == sum(
        r["digits_verdict"] == "correct" for r in rows
    )
    assert "digits" in label_kinds() and "digits" in label_sources()
    exported = export_table(ds, "steps", None, ExportOptions(label="digits")).to_pylist()
    assert len(exported) == summary.steps and {r["label"] for r in exported} == {True}
    trl = export_table(ds, "trl", None, ExportOptions(label="digits")).to_pylist()
    assert len(trl) == summary.chains and all(r["labels"] == [True, True] for r in trl)
    trained = rows_from_dataset(ds, None, "digits")
    assert len(trained) == summary.chains and all(r.labels == (True, True) for r in trained)
    chains = query(ds, "SELECT first_error_digits FROM chains").to_pylist()
    assert chains and all(c["first_error_digits"] is None for c in chains)


def test_a_plugin_source_labels_external_chains_and_a_relabel_runs_it_alone(
    prefect_server: None, tmp_path, plugin, monkeypatch
) -> None:
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.label_run import label_external
    from prm_factory.flows.relabel_run import relabel_dataset
    from prm_factory.training.rows import rows_from_dataset

    path = tmp_path / "chains.jsonl"
    rows = [
        {"id": "a", "problem": "2 + 2?", "steps": ["2 + 2 = 4", "The answer is 4."], "answer": "4"},
        {"id": "b", "problem": "3 + 3?", "steps": ["3 + 3 = 6", "WRONG turn", "so 7"], "answer": "6"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    config = load_config(None, {"dataset.root": str(tmp_path / "ds"), **SOURCES})
    labelled = label_external(str(path), config)
    by_text = {s.text: s for s in labelled.steps}
    assert by_text["2 + 2 = 4"].label("digits").verdict == "correct"
    assert by_text["WRONG turn"].label("digits").verdict == "incorrect"
    # a lone vote of unmeasured precision (no calibration table) decides nothing: disputed, no first error
    assert by_text["WRONG turn"].consensus == "disputed" and not by_text["WRONG turn"].first_error
    assert 0.05 < by_text["WRONG turn"].p_correct < 0.5
    ds = Dataset(str(tmp_path / "ds"))
    wrong = query(ds, "SELECT first_error_digits AS f FROM chains WHERE source_row_id = 'b'").to_pylist()
    assert wrong == [{"f": 1}]
    trained = rows_from_dataset(ds, None, "digits")
    assert sorted(r.labels for r in trained) == [(True, False, True), (True, True)]

    assert relabel_dataset(config, sources=["digits"]).version is None  # its labels are current
    monkeypatch.setattr(type(registry()["digits"]), "version", "2.0")  # a new release of the plug-in
    relabelled = relabel_dataset(config, sources=["digits"])
    assert relabelled.sources == ("digits",)
    assert relabelled.version == labelled.version + 1 and relabelled.unchanged == 0
    rerun = {s.text: s for s in relabelled.steps}
    assert rerun["WRONG turn"].label("digits").labeler.startswith("digits@2.0+")
    assert rerun["WRONG turn"].label("digits").verdict == "incorrect" and not rerun["WRONG turn"].first_error
    assert rerun["2 + 2 = 4"].label("verifier") == by_text["2 + 2 = 4"].label("verifier")  # kept as it was
    versions = query(ds, "SELECT DISTINCT digits_labeler AS l FROM steps").to_pylist()
    assert [v["l"][:9] for v in versions] == ["digits@2."]


def test_changing_a_plugins_options_gives_new_rows_in_relabel_as_in_label(
    prefect_server: None, tmp_path, plugin
) -> None:
    """One identity (labels.source.source_identity) keys `label` and `relabel`: after a change of
    `[labels.options.digits]`, `relabel --source digits` relabels instead of calling the labels current."""
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.label_run import label_external
    from prm_factory.flows.relabel_run import relabel_dataset

    path = tmp_path / "chains.jsonl"
    path.write_text(
        json.dumps({"id": "a", "problem": "2 + 2?", "steps": ["2 + 2 = 4"], "answer": "4"}) + "\n"
    )
    overrides = {"dataset.root": str(tmp_path / "ds"), **SOURCES}
    config = load_config(None, {**overrides, "labels.options": {"digits": {"limit": 1}}})
    labelled = label_external(str(path), config)
    first_tag = labelled.steps[0].label("digits").labeler
    assert "+options." in first_tag
    assert relabel_dataset(config, sources=["digits"]).version is None  # same options: current
    changed = load_config(None, {**overrides, "labels.options": {"digits": {"limit": 2}}})
    relabelled = relabel_dataset(changed, sources=["digits"])
    assert relabelled.version == labelled.version + 1 and relabelled.unchanged == 0
    assert relabelled.steps[0].label("digits").labeler not in (first_tag, None)
