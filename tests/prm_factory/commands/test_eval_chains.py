"""`eval` on chain sets (prm_factory.commands.eval_chains): figures per split, rejected rows by place."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import typer
from rich.console import Console

from prm_factory.commands.eval_chains import ChainOptions, _pct, _where, eval_chains
from prm_factory.schemas.rejected import RejectedRow

RIGHT = {"problem": "What is 2 + 2 + 3?", "steps": ["2 + 2 = 4", "4 + 3 = 7"], "label": -1}
WRONG = {"problem": "What is 2 + 2 + 3?", "steps": ["2 + 2 = 5", "5 + 3 = 8"], "label": 0}


def printed(path: Path, options: ChainOptions) -> str:
    sink = io.StringIO()
    eval_chains(Console(file=sink, width=200), path, options)
    return sink.getvalue()


def test_a_split_is_scored_and_written_as_json(tmp_path: Path) -> None:
    split = tmp_path / "math.json"
    split.write_text(json.dumps([{"id": f"m{i}", **r} for i, r in enumerate([RIGHT, WRONG])]))
    out = printed(split, ChainOptions(json_out=tmp_path / "f.json"))
    assert "label quality: math (math.json)" in out and "2 chains: 1 erroneous, 1 correct" in out
    figures = json.loads((tmp_path / "f.json").read_text())
    assert figures["splits"][0]["sources"]["verifier"]["first_error_f1"] == 1.0
    assert figures["limit"] is None and figures["spread"] is False and figures["solutions"] is None


def test_chains_without_gold_and_a_missing_prm_are_refused(tmp_path: Path) -> None:
    bare = tmp_path / "bare.jsonl"
    bare.write_text(json.dumps({"id": "x", "problem": "2 + 2?", "steps": ["2 + 2 = 4"]}) + "\n")
    with pytest.raises(typer.Exit):
        printed(bare, ChainOptions())
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "y", **RIGHT}) + "\n")
    with pytest.raises(typer.Exit):
        printed(gold, ChainOptions(prm=tmp_path / "absent"))


def test_where_names_an_item_of_a_list_and_a_line_otherwise() -> None:
    assert _where(RejectedRow("a.json", 3, "label", "label must be an int")) == "a.json item 3"
    assert _where(RejectedRow("a.json", 1, "<line>", "invalid JSON: x")) == "a.json line 1"
    assert _where(RejectedRow("a.jsonl", 2, "steps", "steps must be a list")) == "a.jsonl line 2"
    assert _pct(None) == "n/a" and _pct(0.5) == "50.0"


def test_eval_reads_plugins_options_from_config_and_a_failing_plugin_is_one_line(
    tmp_path, monkeypatch
) -> None:
    from tests.plugin_fixtures import PLUGIN_SOURCE, install_plugin, uninstall_plugin

    # `digits` with an option: calls a step `incorrect` when it has more digits than [labels.options.digits]
    code = PLUGIN_SOURCE.replace(
        '"incorrect" if "WRONG" in span.text',
        '"incorrect" if digits > int(setup.options("digits").get("most", 99))',
    ).replace(
        "        tag = self.labeler(setup)", "        tag = self.labeler(setup)\n        assert setup.config"
    )
    split = tmp_path / "math.json"
    split.write_text(json.dumps([{"id": f"m{i}", **r} for i, r in enumerate([RIGHT, WRONG])]))
    config = tmp_path / "run.toml"
    config.write_text('[labels]\nsources = ["digits"]\n[labels.options.digits]\nmost = 1\n')
    install_plugin(tmp_path, monkeypatch, code)
    try:
        out_default = json.loads(
            (printed(split, ChainOptions(json_out=tmp_path / "a.json")), (tmp_path / "a.json").read_text())[1]
        )
        out_config = json.loads(
            (
                printed(split, ChainOptions(json_out=tmp_path / "b.json", config=config)),
                (tmp_path / "b.json").read_text(),
            )[1]
        )
        default = out_default["splits"][0]["sources"]["digits"]
        configured = out_config["splits"][0]["sources"]["digits"]
        assert default != configured  # `most = 1` flags every step with two digits or more
        uninstall_plugin(monkeypatch)
        install_plugin(
            tmp_path / "broken",
            monkeypatch,
            code.replace("        tag = self.labeler", "        1 / 0\n        tag = self.labeler"),
        )
        with pytest.raises(typer.Exit) as stopped:
            printed(split, ChainOptions(config=config))
        assert stopped.value.exit_code == 1
    finally:
        uninstall_plugin(monkeypatch)
