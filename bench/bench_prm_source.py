"""The trained PRM as a label source, end to end, on chains whose every step's truth is known.

What it measures: a PRM trained on the rules' labels (the verifier's and the reference's consensus) scores
held-out steps as the `prm` source does (`relabel --source prm`), and its step AUROC is read against the
exact truth and against the rules' own labels, with the threshold training chose on its held-out split.

The chains, without an engine: synthetic problems (schemas.synthetic, +, - and *) written as chains from
their reference solutions, one right chain and `--wrong` chains per problem with an arithmetic slip at a
random step carried forward (bench/bench_train.py's `synthetic_rows`: the slipped step and every later one
wrong, the exact truth). They go through the pipeline a user runs:

1. `prm-factory label` of the chains with their worked solutions (verifier + reference, graded outcomes);
2. `prm-factory train --label consensus` on that version (held-out problems by the stable hash), from the
   embedded SmolLM2-135M cut to `--layers` layers (the whole model trains far too slowly on 2 cores);
3. `prm-factory relabel --source prm` with the checkpoint: every step gets a `prm` label;
4. held-out steps: AUROC of `prm_value` against the exact truth and against the consensus (steps where it
   is positive or negative), the threshold and the balanced accuracy against the truth at it, and how many
   held-out steps the PRM and the rules disagree on (a query a user would run).

    python -m bench.bench_prm_source --problems 120 --layers 4 --epochs 3 --out /tmp/bench-prm-source

Prints one JSON object; docs/labels.md quotes it. Figures depend on the machine only through time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_train import initial_checkpoint, synthetic_rows  # noqa: E402


def write_chains(args: argparse.Namespace, path: Path) -> dict[str, tuple[bool, ...]]:
    """The chains as a `prm-factory label` file (with worked solutions); their exact truth by chain id."""
    from prm_factory.schemas.synthetic import SyntheticSpec, synthetic_problem

    spec = SyntheticSpec(seed=args.seed, steps=args.steps, operations="+-*")
    problems = {
        synthetic_problem(spec, i).problem.problem_id: synthetic_problem(spec, i)
        for i in range(args.problems)
    }
    rows = synthetic_rows(args.problems, args.steps, args.wrong, args.seed, 4, 0.5, 0.1)
    truth = {}
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            problem = problems[row.problem_id].problem
            record = {
                "id": row.chain_id,
                "problem": row.prompt,
                "steps": list(row.steps),
                "reference_answer": problem.reference_answer,
                "solution": problem.reference_solution,
            }
            out.write(json.dumps(record) + "\n")
            truth[row.chain_id] = row.labels
    return truth


def evaluate(
    store: Any, checkpoint: Path, truth: dict[str, tuple[bool, ...]], held_out: float, version: int | None
) -> dict[str, Any]:
    """Held-out figures of the `prm` labels of a dataset version (see the module docstring)."""
    from prm_factory.storage.sql import query
    from prm_factory.training.rows import is_held_out
    from prm_factory.training.step_metrics import auroc

    steps = query(
        store,
        "SELECT c.source_row_id AS chain, s.problem_id, s.step_index, s.prm_value, s.prm_verdict, "
        "s.consensus FROM steps s JOIN chains c USING (chain_id) ORDER BY chain, step_index",
        version=version,
        sources=["prm"],
    ).to_pylist()
    held = [s for s in steps if is_held_out(s["problem_id"], held_out) and s["prm_value"] is not None]
    ruled = [s for s in held if s["consensus"] in ("positive", "negative")]
    unruled = [s for s in held if s["consensus"] not in ("positive", "negative")]

    def exact(subset: list[dict[str, Any]]) -> list[bool]:
        return [truth[s["chain"]][s["step_index"]] for s in subset]

    def scores(subset: list[dict[str, Any]]) -> list[float]:
        return [s["prm_value"] for s in subset]

    threshold = json.loads((checkpoint / "prm_factory.json").read_text())["threshold"]
    cut = threshold["threshold"]
    truths = exact(held)
    right_recall = sum(s >= cut for s, t in zip(scores(held), truths, strict=True) if t) / max(1, sum(truths))
    wrong_recall = sum(s < cut for s, t in zip(scores(held), truths, strict=True) if not t) / max(
        1, len(truths) - sum(truths)
    )
    disagree = query(
        store,
        "SELECT count(*) AS n FROM steps WHERE prm_verdict IS NOT NULL "
        "AND consensus IN ('positive', 'negative') AND (prm_verdict = 'correct') <> (consensus = 'positive')",
        version=version,
    ).to_pylist()[0]["n"]
    return {
        "steps": len(steps),
        "held_out_steps": len(held),
        "held_out_wrong_steps": len(truths) - sum(truths),
        "threshold": threshold,
        "auroc_vs_truth": auroc(scores(held), truths),
        "auroc_vs_truth_where_rules_label": auroc(scores(ruled), exact(ruled)),
        "auroc_vs_rules": auroc(scores(ruled), [s["consensus"] == "positive" for s in ruled]),
        "held_out_steps_rules_leave_unlabelled": len(unruled),
        "of_which_truly_wrong": len(unruled) - sum(exact(unruled)),
        "mean_prm_value_there": sum(scores(unruled)) / len(unruled) if unruled else None,
        "balanced_accuracy_vs_truth_at_threshold": (right_recall + wrong_recall) / 2,
        "rules_accuracy_vs_truth": sum(
            (s["consensus"] == "positive") == t for s, t in zip(ruled, exact(ruled), strict=True)
        )
        / max(1, len(ruled)),
        "prm_rules_disagreements_all_steps": disagree,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=120)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--wrong", type=int, default=2)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--held-out", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--evaluate-only", action="store_true", help="read the figures off a finished --out folder again"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.evaluate_only:
        from prm_factory.storage.dataset import Dataset

        truth = write_chains(args, args.out / "chains.jsonl")
        figures = evaluate(Dataset(str(args.out / "dataset")), args.out / "prm", truth, args.held_out, None)
        print(json.dumps(figures, indent=2))
        return figures

    from prm_factory.config.run_config import load_config
    from prm_factory.flows.label_run import label_external
    from prm_factory.flows.relabel_run import relabel_dataset
    from prm_factory.storage.dataset import Dataset
    from prm_factory.training.rows import rows_from_dataset
    from prm_factory.training.trainer import Provenance, TrainSettings, train

    args.out.mkdir(parents=True, exist_ok=True)
    chains_file = args.out / "chains.jsonl"
    truth = write_chains(args, chains_file)
    root = args.out / "dataset"
    config = load_config(None, {"dataset.root": str(root)})
    started = time.perf_counter()
    labelled = label_external(str(chains_file), config)
    seconds = {"label": time.perf_counter() - started}

    store = Dataset(str(root))
    rows = rows_from_dataset(store, labelled.version, "consensus")
    checkpoint = args.out / "prm"
    settings = TrainSettings(
        base_model=initial_checkpoint(args.layers, args.out, args.seed),
        output_dir=checkpoint,
        separator=" ки\n",
        max_length=512,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        held_out=args.held_out,
        seed=args.seed,
    )
    started = time.perf_counter()
    result = train(rows, settings, Provenance(str(root), labelled.version, "consensus"))
    seconds["train"] = time.perf_counter() - started
    scoring = load_config(
        None,
        {
            "dataset.root": str(root),
            "labels.sources": ["reference", "prm"],
            "labels.options": {"prm": {"checkpoint": str(checkpoint)}},
        },
    )
    started = time.perf_counter()
    scored = relabel_dataset(scoring, sources=["prm"])
    seconds["score"] = time.perf_counter() - started
    figures = evaluate(store, checkpoint, truth, args.held_out, scored.version)
    figures |= {
        "chains": len(truth),
        "train_rows": result.n_train,
        "held_out_chains": result.n_held_out,
        "seconds": seconds,
        "train_loss": result.train_loss,
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
    }
    print(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    main()
