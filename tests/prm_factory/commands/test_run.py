"""`prm-factory run` (prm_factory.commands.run): options become a checked config before anything starts;
wrong calls end with one `error:` line and exit 2."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from prm_factory.cli import app
from prm_factory.commands.run import parse_sets


def test_set_values_are_read_as_toml_scalars_or_kept_as_text() -> None:
    assert parse_sets(["rollouts.k=8", "model.dtype=float32", "x.flag=true", "y.name= a b"]) == {
        "rollouts.k": 8,
        "model.dtype": "float32",
        "x.flag": True,
        "y.name": " a b",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "rollouts.k"], "--set expects KEY=VALUE"),
        (["--shards", "2"], "--shards N needs --pool NAME"),
        (["--parent-run", "abc"], "--parent-run needs --shard I/N"),
        (["--shard", "3/2"], "shard"),
        (["--config", "missing.toml"], "config file not found"),
    ],
)
def test_a_wrong_call_is_one_error_line_before_anything_starts(tmp_path, args, message) -> None:
    result = CliRunner().invoke(app, ["run", "--dataset", str(tmp_path / "ds"), *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[0].startswith("error:") and message in result.output
    assert not (tmp_path / "ds").exists()
