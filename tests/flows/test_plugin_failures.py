"""A plug-in label source that fails (issue 45): it raises, gives the wrong number of labels, or labels under
another name; or its package fails to import. Each ends in one line naming the source, the chunk and what
was kept, never a traceback through Prefect, and a broken plug-in no config names breaks nothing."""

from __future__ import annotations

import json

import pytest

from prm_factory.labels.registry import LabelSourceFailed, RegistryError, registry, run_sources
from prm_factory.storage.dataset import Dataset
from tests.plugin_fixtures import PLUGIN_SOURCE, install_plugin, uninstall_plugin

RAISES = PLUGIN_SOURCE.replace("tag = self.labeler(setup)", "raise ValueError('the digit table is missing')")
SHORT = PLUGIN_SOURCE.replace("out.append(tuple(labels))", "out.append(tuple(labels[:-1]))")
RENAMED = PLUGIN_SOURCE.replace('StepLabel("digits", ', 'StepLabel("length", ')
BROKEN = "import no_such_module_for_prm_factory_tests\n"


def _chains(tmp_path):
    path = tmp_path / "chains.jsonl"
    rows = [
        {"id": "a", "problem": "2 + 2?", "steps": ["2 + 2 = 4", "The answer is 4."], "answer": "4"},
        {"id": "b", "problem": "3 + 3?", "steps": ["3 + 3 = 6", "WRONG turn", "so 7"], "answer": "6"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (RAISES, "raised ValueError: the digit table is missing"),
        (SHORT, "gave 1 labels for the 2 steps of chain a"),
        (RENAMED, "gave a label of 'length' on chain a"),
    ],
)
def test_a_failing_plugin_is_one_line_naming_the_source_the_chunk_and_what_was_kept(
    prefect_server: None, no_retry_delays, tmp_path, monkeypatch, code, said
) -> None:
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.label_run import label_external

    install_plugin(tmp_path, monkeypatch, code)
    try:
        config = load_config(None, {"dataset.root": str(tmp_path / "ds"), "labels.sources": ["digits"]})
        with pytest.raises(LabelSourceFailed) as failed:
            label_external(str(_chains(tmp_path)), config)
    finally:
        uninstall_plugin(monkeypatch)
    message = str(failed.value)
    assert "\n" not in message and said in message, message
    assert "label source 'digits' on the chunk of 2 chains a..b" in message
    assert "nothing of this run was committed" in message
    assert Dataset(str(tmp_path / "ds")).latest_version() is None  # nothing half-written


def test_a_plugin_that_fails_to_import_is_refused_only_where_it_is_used(tmp_path, monkeypatch) -> None:
    install_plugin(tmp_path, monkeypatch, BROKEN)
    try:
        assert "reference" in registry() and "digits" not in registry()
        assert [s.name for s in run_sources(["reference"])] == ["verifier", "mc", "reference"]
        with pytest.raises(RegistryError, match="no_such_module_for_prm_factory_tests"):
            run_sources(["digits"])
        assert "digits" in registry().refused()
    finally:
        uninstall_plugin(monkeypatch)


def test_a_source_named_by_module_and_attribute_reaches_export_and_relabel(
    prefect_server: None, tmp_path, monkeypatch
) -> None:
    """The documented route without packaging: `sources = ["prm_lengthy:SOURCE"]`, no entry point."""
    import prm_factory as pf
    from prm_factory.labels import registry as registry_module

    site = tmp_path / "site"
    (site / "prm_lengthy").mkdir(parents=True)
    (site / "prm_lengthy" / "__init__.py").write_text(PLUGIN_SOURCE.replace('"digits"', '"lengthy"'))
    monkeypatch.syspath_prepend(str(site))
    registry_module.reset()
    try:
        config = pf.load_config(
            None, {"dataset.root": str(tmp_path / "ds"), "labels.sources": ["prm_lengthy:SOURCE"]}
        )
        labelled = pf.label(_chains(tmp_path), config)
        assert {s.label("lengthy").verdict for s in labelled.steps} >= {"correct", "incorrect"}
        rows = pf.export(str(tmp_path / "ds"), "steps", label="prm_lengthy:SOURCE")
        assert rows.num_rows == len(labelled.steps)
        plain = pf.load_config(None, {"dataset.root": str(tmp_path / "ds")})  # names it only on the call
        relabelled = pf.relabel(plain, sources=["prm_lengthy:SOURCE"])
        assert relabelled.sources == ("lengthy",)
    finally:
        registry_module.reset()
