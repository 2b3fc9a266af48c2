"""`prm-factory search-eval` on the real engine at a tiny scale: 2 synthetic problems, N = 2, beam at N = 2.

The reward models are tiny random Llamas with the embedded tokenizer (training is tests/e2e/
test_trl_training.py's job, and the bench's): what is checked is the command's plumbing on real chains:
every method at every budget, beam search through the engine's stop strings, compute counted, the JSON
`prm-factory report --search` reads, and the shared engine left running. Chains are cut at 96 tokens (the
config's `sampling.max_tokens`, default 256) to keep the test short: truncated chains still count, unparsed,
and nothing asserted needs an answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prm_factory.commands.search import register
from prm_factory.sampling.protocol import GenerationParams

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def test_search_eval_compares_every_method_on_real_chains(
    engine, command_app, tiny_token_classifier, tmp_path: Path
) -> None:
    prm = tiny_token_classifier(tmp_path / "prm", seed=0)
    orm = tiny_token_classifier(tmp_path / "orm", seed=1)
    out = tmp_path / "search.json"
    config = tmp_path / "search.toml"  # the model section stays the default: the session's engine is used
    config.write_text("[sampling]\nmax_tokens = 96\n")
    result = CliRunner().invoke(
        command_app(register),
        ["search-eval", "--prm", str(prm), "--orm", str(orm), "--steps", "1", "--limit", "2"]
        + ["--n", "2", "--beam", "2", "--config", str(config), "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "| method | N = 1 | N = 2 |" in result.output and "prm beam search" in result.output

    saved = json.loads(out.read_text())
    assert saved["problems"] == 2 and saved["n"] == 2 and saved["beam_budgets"] == [2]
    rows = {(r["method"], r["n"]): r for r in saved["rows"]}
    methods = {method for method, _ in rows}
    assert {"majority vote", "orm best-of-n", "prm best-of-n (min)", "prm-weighted vote (last)"} <= methods
    assert {n for method, n in rows if method == "majority vote"} == {1, 2}
    assert set(rows) >= {("prm beam search", 2)} and ("prm beam search", 1) not in rows
    for (method, n), row in rows.items():
        assert 0.0 <= row["ci_low"] <= row["accuracy"] <= row["ci_high"] <= 1.0
        assert row["policy_tokens"] > 0
        reads = "prm" in method or "orm" in method
        assert (row["scorer_tokens"] > 0) == reads, (method, n)
    # two chains read twice the tokens of one; the beam's PRM re-reads its prefixes every round
    assert rows["majority vote", 2]["policy_tokens"] > rows["majority vote", 1]["policy_tokens"]
    assert rows["prm beam search", 2]["scorer_tokens"] > 0
    assert any(stage.startswith("beam search N = 2") for stage in saved["timings"])

    # the session's engine was not the command's to stop
    (generation,) = engine.generate(["1 + 1 ="], GenerationParams(max_tokens=4))[0:1]
    assert generation[0].n_tokens > 0
