"""`prm-factory reward serve`: the options reach the server; beyond loopback a token is made, an empty one
refused."""

from __future__ import annotations

from typer.testing import CliRunner

from prm_factory.commands import reward as reward_commands


def test_serve_passes_its_limits_and_makes_a_token_beyond_loopback(command_app, monkeypatch) -> None:
    import prm_factory.reward.server as server

    calls = []
    monkeypatch.setattr(
        server,
        "run",
        lambda scorer, limits, host, port, token: calls.append((scorer, limits, host, port, token)),
    )
    app = command_app(reward_commands.register)
    runner = CliRunner()
    result = runner.invoke(app, ["reward", "serve", "--workers", "3", "--max-steps", "50", "--queue", "5"])
    assert result.exit_code == 0, result.output
    scorer, limits, host, port, token = calls[-1]
    assert (scorer.workers, limits.max_steps, limits.queue, limits.concurrency, host, token) == (
        3,
        50,
        5,
        3,
        "127.0.0.1",
        None,
    )
    assert "/get_reward" in result.output
    wide = runner.invoke(app, ["reward", "serve", "--host", "0.0.0.0"])
    assert wide.exit_code == 0 and calls[-1][4] and f"?token={calls[-1][4]}" in wide.output
    empty = runner.invoke(app, ["reward", "serve", "--token", " "])
    assert empty.exit_code != 0 and "empty" in empty.output
