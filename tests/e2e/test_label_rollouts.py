"""`prm-factory label --rollouts` on the real engine: chains from elsewhere get MC values from the policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.engine, pytest.mark.slow]

ROW = {
    "problem": "Tom has 3 apples and buys 4 more. How many apples does he have?",
    "answer": "3+4=<<3+4=7>>7\n#### 7",
}


def test_label_with_rollouts_continues_every_prefix_on_the_engine(
    engine, small_config, tmp_path: Path
) -> None:
    from prm_factory.flows.label_run import label_external
    from prm_factory.flows.resume import cache_dir
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    rows = [
        {
            **ROW,
            "id": "right",
            "steps": ["Tom starts with 3 apples.", "He buys 4, so 3 + 4 = 7.", "The answer is 7."],
        },
        {
            **ROW,
            "id": "wrong",
            "steps": ["Tom starts with 3 apples.", "He buys 4, so 3 * 4 = 12.", "The answer is 12."],
        },
    ]
    path = tmp_path / "chains.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cfg = small_config(tmp_path / "ds", None)
    summary = label_external(str(path), cfg, rollouts=True)

    assert sorted(c.outcome for c in summary.chains) == ["correct", "incorrect"]
    mc = [(s.label("mc"), json.loads(s.label("mc").evidence)) for s in summary.steps]
    probed = [(label, evidence) for label, evidence in mc if evidence["value_source"] == "rollouts"]
    assert probed, "some step prefix must have been continued by the policy"
    for label, evidence in probed:
        assert evidence["n_rollouts"] == 2 and 0 <= evidence["n_judged"] <= 2
        if evidence["n_judged"]:
            assert label.value == evidence["n_correct"] / evidence["n_judged"]
    # both chains open with the same step: its rollouts are drawn once and charged to one chain
    assert sum(evidence["tokens"] for _, evidence in probed) > 0
    last = [label for label, evidence in mc if evidence["value_source"] == "outcome"]
    assert sorted(label.verdict for label in last) == [
        "correct",
        "incorrect",
    ]  # the chain's own graded outcome

    ds = Dataset(str(tmp_path / "ds"))
    (run,) = query(ds, "SELECT model, rollouts_drawn, rollout_tokens FROM runs").to_pylist()
    assert run["model"] != "external" and run["rollouts_drawn"] > 0 and run["rollout_tokens"] > 0
    assert any(p.name.startswith("rollouts-") for p in cache_dir(tmp_path / "ds").iterdir())
    again = label_external(str(path), cfg, rollouts=True)  # the cached stage is reused, not drawn again
    assert (
        again.tally.steps == summary.tally.steps
        and again.tally.rollouts_drawn == summary.tally.rollouts_drawn
    )
    assert again.steps == []  # the same rows: nothing new to commit, the first run's rows stand
    stored = query(ds, "SELECT mc_value FROM steps ORDER BY chain_id, step_index", version=again.version)
    first = sorted(summary.steps, key=lambda s: (s.chain_id, s.step_index))
    assert stored["mc_value"].to_pylist() == [s.label("mc").value for s in first]
