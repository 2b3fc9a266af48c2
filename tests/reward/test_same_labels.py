"""The reward gives the verdicts `prm-factory label` gives: every chain of the GSM8K dev sets under
evaluation/data is labelled once by the factory's `label` flow and once by `score_batch`, and each step's
verifier and reference verdicts, its consensus and each chain's first error must match.

The rows are written without their `final_answer` field, so both paths grade the outcome from the chain's
text (a trainer hands the reward a response, not a separately extracted answer); the steps are the rows' own,
given to the reward as `steps=` (a trainer with its own step delimiters) and, where the factory's splitter
gives the same steps back from the joined text, as the response alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm_factory.labels.assemble import join_steps
from prm_factory.reward import RewardScorer, score_batch
from prm_factory.sampling.segment import segment

DATA = Path(__file__).resolve().parents[2] / "evaluation" / "data"
DEV_SETS = ("altered_gsm8k.jsonl", "real_errors_gsm8k.jsonl")
CONSENSUS = {
    "positive": "correct",
    "negative": "incorrect",
    "disputed": "disputed",
    "unlabeled": "unverifiable",
}


def dev_rows() -> list[dict]:
    rows = []
    for name in DEV_SETS:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            row.pop("final_answer", None)
            row["id"] = f"{name}:{row['id']}"
            rows.append(row)
    return rows


@pytest.fixture(scope="module")
def labelled(tmp_path_factory, prefect_server) -> tuple[list[dict], dict[str, list], Path]:
    """The dev rows, by row id the steps `label` stored for them, and the dataset it wrote."""
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.label_run import label_external

    folder = tmp_path_factory.mktemp("same-labels")
    rows = dev_rows()
    path = folder / "chains.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    summary = label_external(str(path), load_config(None, {"dataset.root": str(folder / "ds")}))
    assert not summary.rejected
    row_of = {chain.chain_id: chain.source_row_id for chain in summary.chains}
    steps: dict[str, list] = {}
    for step in sorted(summary.steps, key=lambda s: (s.chain_id, s.step_index)):
        steps.setdefault(row_of[step.chain_id], []).append(step)
    return rows, steps, folder / "ds"


def reward_of(row: dict, given_steps: bool) -> dict:
    return {
        "prompt": row["problem"],
        "response": "" if given_steps else join_steps(row["steps"])[0],
        "steps": row["steps"] if given_steps else None,
        "answer": row.get("reference_answer") or row.get("answer"),
        "solution": row.get("solution"),
    }


def test_score_batch_gives_the_verdicts_label_gives_on_every_dev_chain(labelled, monkeypatch) -> None:
    rows, stored, dataset = labelled
    # the consensus reads the dataset's audited tables: the one `label` wrote, not whatever the working
    # folder holds (another run's ./prm-datasets/default made steps near a threshold `disputed` once)
    monkeypatch.setenv("PRM_FACTORY_DATASET", str(dataset))
    scorer = RewardScorer(deadline_s=600.0)  # the subject is the verdicts: no deadline on a loaded machine
    try:
        results = score_batch([reward_of(row, given_steps=True) for row in rows], scorer=scorer)
        splittable = [
            row for row in rows if [s.text for s in segment(join_steps(row["steps"])[0])] == row["steps"]
        ]
        split = score_batch([reward_of(row, given_steps=False) for row in splittable], scorer=scorer)
    finally:
        scorer.close()
    assert len(rows) == 1230 and len(splittable) > 1000  # the sets, and most of them splittable
    by_id = dict(zip([row["id"] for row in rows], results, strict=True))
    mismatches = []
    for row_id, result in [*by_id.items(), *zip([r["id"] for r in splittable], split, strict=True)]:
        steps = stored[row_id]
        assert result.status == "ok", (row_id, result.reason)
        assert [(s.start, s.end) for s in result.steps] == [(s.char_start, s.char_end) for s in steps]
        want = [
            (s.label("verifier").verdict, s.label("reference").verdict, CONSENSUS[s.consensus]) for s in steps
        ]
        got = [
            (
                *(
                    next(v.verdict for v in step.sources if v.source == name)
                    for name in ("verifier", "reference")
                ),
                step.verdict,
            )
            for step in result.steps
        ]
        first = next((s.step_index for s in steps if s.first_error), None)
        if got != want or result.first_error != first:
            mismatches.append((row_id, want, got, first, result.first_error))
    assert not mismatches, (len(mismatches), mismatches[:3])
    flagged = sum(r.first_error is not None for r in results)
    assert flagged > 500  # the check can fail: most altered chains carry a found error
