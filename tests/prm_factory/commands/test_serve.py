"""`prm-factory serve` as a module-level app (prm_factory.commands.serve): every config problem and a bad
cron are reported together, one line each, before anything is served (the console script's run is in
tests/flows/test_serve.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from prm_factory.commands import serve


def test_every_problem_is_one_line_and_exit_2(command_app, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        command_app(serve.register), ["serve", str(tmp_path / "absent.toml"), "--cron", "61 * * * *"]
    )
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 2 and "bad cron schedule '61 * * * *'" in lines[0] and "absent.toml" in lines[1]


def test_checked_configs_returns_the_loaded_configs_when_nothing_is_wrong(tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps({"question": "What is 2 + 3?", "answer": "2 + 3 = 5\n#### 5"}) + "\n")
    good = tmp_path / "good.toml"
    good.write_text(f'name = "gsm8k"\n[problems]\npath = "{problems}"\nlimit = 3\n')
    (item,) = serve._checked_configs([good], "0 * * * *")
    assert item.path == good and item.config.problems.limit == 3
    with pytest.raises(typer.Exit):
        serve._checked_configs([good], "every hour")
