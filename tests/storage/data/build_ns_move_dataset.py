"""Build `dataset_ns_move/`: a small dataset written by the code before label sources became plug-ins.

Run with a checkout of commit 42aee51 (branch `ns-move`) as the imported `prm_factory`, never with this one:
its records still have one column group per source (`reference_verdict`, `judge_verdict`, ...), which is
what tests/storage/test_dataset_before_plugins.py reads back with the current code.

    git worktree add /tmp/ns-move 42aee51   # or any copy of that commit, installed or on sys.path
    python tests/storage/data/build_ns_move_dataset.py OUT_DIR

Version 1 is `prm-factory label` of the two chains below (verifier, reference alignment, graded outcomes);
version 2 commits one sampled-style run whose steps carry MC values and a judge's verdicts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(out: Path) -> None:
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.label_run import label_external
    from prm_factory.schemas.ids import content_id
    from prm_factory.schemas.records import Chain, Problem, RunInfo, Step
    from prm_factory.storage.dataset import Dataset

    solution = "16 - 3 - 4 = <<16-3-4=9>>9 eggs.\nShe makes 9 * 2 = $<<9*2=18>>18.\n#### 18"
    problem = "Janet's ducks lay 16 eggs a day. She eats 3 and bakes with 4. She sells the rest at $2 each."
    rows = [
        {
            "id": "right",
            "problem": problem,
            "answer": solution,
            "steps": ["16 - 3 - 4 = 9 eggs.", "9 * 2 = 18."],
        },
        {
            "id": "wrong",
            "problem": problem,
            "answer": solution,
            "steps": ["16 - 3 = 13 eggs.", "13 * 2 = 27"],
        },
    ]
    chains_file = out.parent / "chains.jsonl"
    chains_file.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    label_external(str(chains_file), load_config(None, {"dataset.root": str(out)}))

    run_id = content_id("run", "ns-move-judged")
    p = Problem(content_id("gsm8k", "2 + 3?"), "gsm8k", "math", "What is 2 + 3?", reference_answer="5")
    chain_id = content_id("chain", p.problem_id, "toy", 0)
    chain = Chain(
        chain_id, p.problem_id, run_id, "toy", "{}", 7, 0, "2 + 3?", "2 + 3 = 6\nThe answer is 6.", 9, "stop",
        "6", "incorrect", "6 != 5", "{}", 2, 0, 0, label_config_hash="judgedhash", first_error_reference=None,
        first_error_judge=0,
    )  # fmt: skip
    steps = [
        Step(
            content_id("step", chain_id, i, "judgedhash"),
            chain_id,
            p.problem_id,
            run_id,
            i,
            text,
            0,
            1,
            verdict,
            "checked",
            "{}",
            "math-sympy",
            "2.5.0",
            mc,
            4,
            correct,
            hard,
            mc,
            source,
            "negative",
            True,
            i == 0,
            40,
            0.25,
            "toy",
            "judgedhash",
            4,
            "oldcode",
            None,
            None,
            None,
            None,
            "incorrect" if i == 0 else "unverifiable",
            "critic named this step" if i == 0 else "after the error",
            "critic@abc",
        )  # fmt: skip
        for i, (text, verdict, mc, correct, hard, source) in enumerate(
            [
                ("2 + 3 = 6", "incorrect", 0.0, 0, False, "rollouts"),
                ("The answer is 6.", "unverifiable", 0.0, 0, False, "outcome"),
            ]
        )
    ]
    run = RunInfo(
        run_id, "2026-11-28T00:00:00Z", "2026-11-28T00:01:00Z", "succeeded", "", "{}", "cfg", "42aee51", "{}",
        "toy", "weights", "{}", "{}", "{}", 1, 1, 2, 0, 0.0, 80,
    )  # fmt: skip
    Dataset(str(out)).commit_run(run, [p], [chain], steps, [])


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
