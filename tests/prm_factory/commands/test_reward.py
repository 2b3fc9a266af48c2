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


def test_serve_budget_reaches_the_scorer_and_cuts_its_sympy_checks(command_app, monkeypatch) -> None:
    import prm_factory.reward.server as server
    from prm_factory.reward import score_steps

    scorers = []
    monkeypatch.setattr(server, "run", lambda scorer, *rest: scorers.append(scorer))
    app = command_app(reward_commands.register)
    result = CliRunner().invoke(app, ["reward", "serve", "--workers", "1", "--budget", "0"])
    assert result.exit_code == 0, result.output
    (scorer,) = scorers
    try:  # sqrt(16) = 5 is read by SymPy alone: incorrect without a budget (tests/reward/test_budget.py)
        cut = score_steps(
            "What is $\\sqrt{16}$?",
            "We have $\\sqrt{16} = 5$.\n\nThe answer is $5$.",
            answer="4",
            scorer=scorer,
        )
    finally:
        scorer.close()
    verifier = next(s for s in cut.steps[0].sources if s.source == "verifier")
    assert scorer.budget_s == 0 and verifier.verdict == "unverifiable" and cut.outcome == "incorrect"
