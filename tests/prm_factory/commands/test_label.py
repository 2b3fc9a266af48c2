"""`prm-factory label` and `relabel` are as quiet as `run`: the counts on the terminal, Prefect's INFO lines
in the log under the dataset root (issue 26). Run as the console script, against the session's Prefect
server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from prm_factory.cli import app

CHAINS = [
    {"id": "a", "problem": "What is 2 + 2 + 3?", "steps": ["2 + 2 = 4", "4 + 3 = 7"], "label": -1},
    {"id": "b", "problem": "What is 2 + 2 + 3?", "steps": ["2 + 2 = 5", "5 + 3 = 8"], "label": 0},
]


def cli(*args: str) -> subprocess.CompletedProcess:
    from prefect.settings import PREFECT_API_URL

    env = {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value())}  # no temporary server per call
    exe = Path(sys.executable).with_name("prm-factory")
    done = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=600, env=env)
    done.stdout = " ".join(done.stdout.split())  # lines are wrapped at the pipe's 80 columns
    return done


def test_label_then_relabel_print_counts_and_keep_prefect_in_the_log(
    prefect_server: None, tmp_path: Path
) -> None:
    chains = tmp_path / "chains.jsonl"
    chains.write_text("".join(json.dumps(row) + "\n" for row in CHAINS))
    root = tmp_path / "ds"
    labelled = cli("label", str(chains), "--dataset", str(root))
    assert labelled.returncode == 0, labelled.stderr
    assert "(version 1)" in labelled.stdout and "steps 4, verifier" in labelled.stdout
    relabelled = cli("relabel", "--dataset", str(root))
    assert relabelled.returncode == 0, relabelled.stderr
    # nothing to do, unless the verifiers' code changed in between (others edit this tree as it runs)
    current, redone = "version 1 already carries the current labels", "version 1 -> 2 (2 chains"
    assert current in relabelled.stdout or redone in relabelled.stdout
    for done in (labelled, relabelled):
        assert (
            "INFO" not in done.stdout + done.stderr and "Finished in state" not in done.stdout + done.stderr
        )
        assert "log (engine and library output):" in done.stdout
    logs = sorted((root / "_logs").iterdir())
    assert len(logs) == 2
    assert "prm-label-external" in logs[0].read_text() and "Finished in state" in logs[0].read_text()
    assert "prm-relabel" in logs[1].read_text()


def test_relabel_of_no_dataset_is_one_line_and_leaves_no_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["relabel", "--dataset", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert "no dataset at" in result.output and "log" not in result.output
    assert not (tmp_path / "none").exists()  # refused before a log folder would be made there


def test_label_of_a_missing_input_is_refused_before_any_log(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["label", str(tmp_path / "absent.jsonl"), "--dataset", str(tmp_path / "ds")]
    )
    assert result.exit_code == 2 and "input not found" in result.output
    assert not (tmp_path / "ds").exists()


def test_a_failing_label_source_is_one_line_and_exit_1(tmp_path: Path, monkeypatch) -> None:
    import prm_factory.api as api
    from prm_factory.labels.registry import LabelSourceFailed

    def failing(*args, **kwargs):
        raise LabelSourceFailed("label source 'digits' on the chunk of 2 chains a..b raised ValueError: x")

    monkeypatch.setattr(api, "label", failing)
    chains = tmp_path / "chains.jsonl"
    chains.write_text("".join(json.dumps(row) + "\n" for row in CHAINS))
    result = CliRunner().invoke(app, ["label", str(chains), "--dataset", str(tmp_path / "ds")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "label source 'digits' on the chunk of 2 chains a..b raised ValueError: x" in result.output
    assert "Traceback" not in result.output
