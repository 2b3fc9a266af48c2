"""`prm-factory train` beside TRL 1.13.0's PRMTrainer on the same rows, and soft beside hard MC labels.

Why a bench: TRL dropped its PRM trainer after 1.13.0 and training/ replaces it, so the replacement must learn
as well (held-out step accuracy within the bootstrap interval) at no lower training throughput, on the same
rows, the same initial weights, the same layout (" ки\\n" after each step, the label on its last token),
batch size, learning rate, epochs and seed. And the factory stores soft (MC value) labels that only
training/ reads: do they beat hard labels (any rollout succeeded) at equal rows?

Rows, without an engine: synthetic problems (schemas.synthetic, +, - and * only) written as chains from their
reference solutions, one right chain and `--wrong` chains per problem with an arithmetic slip at a random
step carried forward (the step and every later one wrong, the exact truth). For the soft / hard comparison
each step gets a simulated MC value: k rollouts, each reaching the answer with probability `--p-right`
from a right prefix and `--p-wrong` from a wrong one; hard = any success (Math-Shepherd's estimate), soft =
the share. Both are scored against the exact truth. The MC values are a simulation of the label noise, not
the embedded model's rollouts.

    python -m bench.bench_train --problems 60 --layers 4 --epochs 1 --out /tmp/bench-train

`--from-dataset ROOT [--dataset-version V]` takes the rows from a dataset version made by `prm-factory run
--config configs/synthetic.toml` instead: real MC rollouts of the embedded model (the steps with an MC value,
cut as `--label mc --soft` cuts them), each step's exact truth from evaluation.step_truth (the stored problem
rebuilt from its spec, the chain's whole text and graded outcome). The label counts are printed first, so
degenerate MC values (all 0) show before any training:

    python -m bench.bench_train --from-dataset /tmp/syn --skip-trl --folds 4 --out /tmp/bench-train-real

`--folds N` (N > 1) cross-fits instead of one split: problems fall into N folds by the same hash as the
held-out split, each fold is scored by a model trained on the other folds, so every chain is held out once
and the intervals (bootstrap over all problems) are not those of a handful of held-out problems.

Intervals are 95 % percentile bootstraps over held-out problems; "Δ" is the paired bootstrap of the
difference. The backbone is the embedded SmolLM2-135M cut to its first `--layers` layers (both trainers get
the same one; the 30-layer model trains far too slowly on a shared 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm_factory.training.rows import TrainRow, split_by_problem  # noqa: E402

SEPARATOR = " ки\n"


def _apply(operation: str, left: int, right: int) -> int:
    return {"+": left + right, "-": left - right, "*": left * right}[operation]


def synthetic_rows(
    n_problems: int, steps: int, wrong: int, seed: int, k: int, p_right: float, p_wrong: float
) -> list[TrainRow]:
    """Chains with exact step truth (`labels`) and simulated MC values (`values`): the module docstring."""
    from prm_factory.schemas.synthetic import SyntheticSpec, synthetic_problem

    rng = random.Random(seed)
    spec = SyntheticSpec(seed=seed, steps=steps, operations="+-*")
    rows = []
    for index in range(n_problems):
        problem = synthetic_problem(spec, index)
        prefixes = [s.line.split(f" {s.expression} = ")[0] for s in problem.steps]
        items = problem.steps[0].line.split(f">>{problem.steps[0].value} ")[1].rstrip(".")
        error_steps = [None, *rng.sample(range(len(problem.steps)), min(wrong, len(problem.steps)))]
        for chain_number, error_at in enumerate(error_steps):
            value, texts, truth = problem.start_value, [], []
            for number, (step, prefix) in enumerate(zip(problem.steps, prefixes, strict=True)):
                left, result = value, _apply(step.operation, value, step.right)
                if number == error_at:
                    result += rng.choice([-3, -2, -1, 1, 2, 3])
                texts.append(f"{prefix} {left}{step.operation}{step.right} = {result} {items}.")
                truth.append(error_at is None or number < error_at)
                value = result
            texts.append(f"The answer is {value}.")
            truth.append(error_at is None)
            values = tuple(
                sum(rng.random() < (p_right if right else p_wrong) for _ in range(k)) / k for right in truth
            )
            rows.append(
                TrainRow(
                    chain_id=f"{problem.problem.problem_id}-{chain_number}",
                    problem_id=problem.problem.problem_id,
                    prompt=re.sub(r"\s+", " ", problem.problem.text),
                    steps=tuple(texts),
                    labels=tuple(truth),
                    values=values,
                )
            )
    return rows


def dataset_rows(root: str, version: str | None) -> tuple[list[TrainRow], dict[str, Any]]:
    """Rows of a synthetic dataset version: MC values as stored, labels the exact step truth (module doc)."""
    from dataclasses import fields, replace

    from prm_factory.evaluation.step_truth import chain_truth
    from prm_factory.schemas.records import Problem
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.versions import resolve
    from prm_factory.training.rows import rows_from_dataset

    store = Dataset(root)
    resolved = resolve(store, version)
    mc_rows = rows_from_dataset(store, resolved, "mc", soft=True)
    tables = store.tables(resolved)
    names = [f.name for f in fields(Problem)]
    problems = {
        row["problem_id"]: Problem(**{n: row[n] for n in names})
        for row in tables["problems"].to_table(columns=names).to_pylist()
    }
    outcomes = {
        row["chain_id"]: row["outcome"]
        for row in tables["chains"].to_table(columns=["chain_id", "outcome"]).to_pylist()
    }
    texts: dict[str, dict[int, str]] = {}
    sources: dict[tuple[str, int], str] = {}
    step_columns = ["chain_id", "step_index", "text", "value_source"]
    for step in tables["steps"].to_table(columns=step_columns).to_pylist():
        texts.setdefault(step["chain_id"], {})[step["step_index"]] = step["text"]
        sources[(step["chain_id"], step["step_index"])] = step["value_source"]
    rows, counts = [], {"value_source": {}, "mc_value": {}}
    for row in mc_rows:
        chain = [texts[row.chain_id][i].strip() for i in sorted(texts[row.chain_id])]
        truth = chain_truth(problems[row.problem_id], chain, outcomes[row.chain_id])
        labels = tuple(s.label == "correct" for s in truth.steps[: len(row.steps)])
        rows.append(replace(row, labels=labels))
        for index, value in enumerate(row.values or ()):
            source = sources[(row.chain_id, index)]
            counts["value_source"][source] = counts["value_source"].get(source, 0) + 1
            key = f"{source} {'0' if value == 0 else '1' if value == 1 else '(0,1)'}"
            counts["mc_value"][key] = counts["mc_value"].get(key, 0) + 1
    steps = [(t, v) for r in rows for t, v in zip(r.labels, r.values or (), strict=True)]
    counts |= {
        "dataset_version": resolved,
        "chains": len(rows),
        "problems": len({r.problem_id for r in rows}),
        "chains_in_version": len(outcomes),
        "chains_correct": sum(outcome == "correct" for outcome in outcomes.values()),
        "steps": len(steps),
        "truth_wrong_steps": sum(not t for t, _ in steps),
        "mc_hard_wrong_steps": sum(v == 0 for _, v in steps),
        "mc_hard_agrees_with_truth": sum((v > 0) == t for t, v in steps),
    }
    return rows, counts


def fold_of(problem_id: str, folds: int) -> int:
    """The cross-fitting fold of a problem: the held-out split's hash (training.rows.is_held_out) cut in N."""
    import hashlib

    fraction = int(hashlib.sha256(problem_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return min(int(fraction * folds), folds - 1)


def with_labels(rows: Sequence[TrainRow], kind: str) -> list[TrainRow]:
    """truth: exact labels; hard: MC any-success labels; soft: MC values (labels stay the truth for eval)."""
    from dataclasses import replace

    if kind == "truth":
        return [replace(r, values=None) for r in rows]
    if kind == "hard":
        return [replace(r, labels=tuple(v > 0 for v in r.values or ()), values=None) for r in rows]
    return list(rows)


def initial_checkpoint(layers: int, out: Path, seed: int) -> Path:
    """The embedded model cut to `layers` layers with a seeded 2-label head: both trainers start here."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from prm_factory.sampling.model_prep import prepare_default_model

    target = out / f"init-{layers}-layers-seed{seed}"
    if not (target / "config.json").exists():
        source = prepare_default_model()
        torch.manual_seed(seed)
        model = AutoModelForTokenClassification.from_pretrained(
            source, num_hidden_layers=layers, num_labels=2, dtype=torch.float32
        )
        model.save_pretrained(target)
        AutoTokenizer.from_pretrained(source).save_pretrained(target)
    return target


def train_ours(
    rows: list[TrainRow], base: Path, out: Path, args: argparse.Namespace, soft: bool = False
) -> dict[str, Any]:
    from prm_factory.training.trainer import Provenance, TrainSettings, train

    settings = TrainSettings(
        base_model=base,
        output_dir=out,
        separator=SEPARATOR,
        max_length=512,
        soft=soft,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        held_out=args.held_out,
        seed=args.seed,
    )
    result = train(rows, settings, Provenance("bench: synthetic chains", None, "soft" if soft else "hard"))
    return {
        "seconds": result.train_seconds,  # the loop only: evaluation and checkpoint writes excluded
        "eval_and_checkpoint_seconds": result.other_seconds,
        "cpu_seconds": result.train_cpu_seconds,
        "rows": result.n_train * args.epochs,
        "tokens": result.train_tokens,
        "loss": result.train_loss,
        "steps": result.global_step,
    }


def train_trl(rows: list[TrainRow], base: Path, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """TRL 1.13.0's PRMTrainer on the same training rows (as `export trl` writes them)."""
    import torch
    from datasets import Dataset as HFDataset
    from trl.experimental.prm import PRMConfig, PRMTrainer

    from prm_factory.training.model import load_model

    train_rows, _ = split_by_problem(rows, args.held_out)
    data = HFDataset.from_list(
        [{"prompt": r.prompt, "completions": list(r.steps), "labels": list(r.labels)} for r in train_rows]
    )
    model, tokenizer = load_model(base)
    config = PRMConfig(
        output_dir=str(out),
        use_cpu=not torch.cuda.is_available(),
        bf16=False,
        gradient_checkpointing=False,
        per_device_train_batch_size=args.batch_size,
        num_train_epochs=args.epochs,
        learning_rate=args.learning_rate,
        lr_scheduler_type="linear",
        warmup_steps=0,
        weight_decay=0.0,
        save_strategy="no",
        report_to="none",
        seed=args.seed,
        dataloader_num_workers=0,
        max_length=512,
        step_separator=SEPARATOR,
        logging_steps=10,
    )
    trainer = PRMTrainer(model=model, args=config, train_dataset=data, processing_class=tokenizer)
    tokens = sum(len(ids) for ids in trainer.train_dataset["input_ids"]) * args.epochs
    started, started_cpu = time.perf_counter(), time.process_time()
    result = trainer.train()
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - started_cpu
    trainer.save_model(str(out))
    tokenizer.save_pretrained(out)
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "rows": len(train_rows) * args.epochs,
        "tokens": tokens,
        "loss": result.training_loss,
        "steps": result.global_step,
    }


def cross_fitted_scores(
    rows: Sequence[TrainRow], kind: str, base: Path, out: Path, args: argparse.Namespace
) -> tuple[list[list[float]], list[dict[str, Any]]]:
    """Every row scored by the model trained on the other folds (rows in order), and each fold's stats."""
    labelled = with_labels(rows, kind)
    scores: list[list[float] | None] = [None] * len(rows)
    stats = []
    for fold in range(args.folds):
        held = [i for i, r in enumerate(rows) if fold_of(r.problem_id, args.folds) == fold]
        if not held:
            continue
        train_rows = [r for i, r in enumerate(labelled) if i not in set(held)]
        folder = out / f"mc-{kind}-fold{fold}"
        fold_args = argparse.Namespace(**{**vars(args), "held_out": 0.0})  # the fold is held out here
        stats.append(train_ours(train_rows, base, folder, fold_args, soft=kind == "soft"))
        for i, fold_scores in zip(held, held_out_scores(folder, [rows[i] for i in held]), strict=True):
            scores[i] = fold_scores
        print(f"{kind} labels, fold {fold}", json.dumps(stats[-1]), flush=True)
    return [s or [] for s in scores], stats


def aligned_rows(rows: Sequence[TrainRow], base: Path) -> tuple[list[TrainRow], int]:
    """The rows every trainer keeps (the alignment check at max_length 512), and how many it refuses."""
    from transformers import AutoTokenizer

    from prm_factory.training.layout import alignment_problem

    tokenizer = AutoTokenizer.from_pretrained(base)
    kept = [r for r in rows if alignment_problem(tokenizer, r.prompt, r.steps, SEPARATOR, 512) is None]
    return kept, len(rows) - len(kept)


def held_out_scores(checkpoint: Path, held: Sequence[TrainRow]) -> list[list[float]]:
    from prm_factory.training.scorer import PrmScorer

    scorer = PrmScorer(checkpoint, separator=SEPARATOR, max_length=512)
    return [list(s.scores) for s in scorer.score([(r.prompt, r.steps) for r in held])]


def _accuracy(scores: Sequence[Sequence[float]], labels: Sequence[Sequence[bool]]) -> float:
    pairs = [
        (s >= 0.5) == t for cs, cl in zip(scores, labels, strict=True) for s, t in zip(cs, cl, strict=True)
    ]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def _auroc(scores: Sequence[Sequence[float]], labels: Sequence[Sequence[bool]]) -> float:
    from prm_factory.training.step_metrics import auroc

    value = auroc([s for c in scores for s in c], [t for c in labels for t in c])
    return float("nan") if value is None else value


def bootstrap(
    held: Sequence[TrainRow],
    scored: dict[str, list[list[float]]],
    metric: Callable[[Sequence[Sequence[float]], Sequence[Sequence[bool]]], float],
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Point value and 95 % interval per method, and the paired difference of each method to the first."""
    problems = sorted({r.problem_id for r in held})
    by_problem = {p: [i for i, r in enumerate(held) if r.problem_id == p] for p in problems}
    rng = random.Random(seed)
    names = list(scored)
    draws: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(resamples):
        picked = [i for _ in problems for i in by_problem[rng.choice(problems)]]
        labels = [held[i].labels for i in picked]
        for name in names:
            draws[name].append(metric([scored[name][i] for i in picked], labels))

    def interval(values: list[float]) -> list[float]:
        ordered = sorted(v for v in values if v == v)
        return [ordered[int(0.025 * len(ordered))], ordered[int(0.975 * len(ordered)) - 1]] if ordered else []

    labels = [r.labels for r in held]
    out: dict[str, Any] = {}
    for name in names:
        out[name] = {"value": metric(scored[name], labels), "interval": interval(draws[name])}
        if name != names[0]:
            diffs = [a - b for a, b in zip(draws[name], draws[names[0]], strict=True)]
            out[name]["delta_vs_" + names[0]] = {
                "value": out[name]["value"] - out[names[0]]["value"],
                "interval": interval(diffs),
            }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problems", type=int, default=60)
    p.add_argument("--steps", type=int, default=3, help="operations per synthetic problem")
    p.add_argument("--wrong", type=int, default=2, help="wrong chains per problem (one right chain)")
    p.add_argument("--k", type=int, default=4, help="simulated rollouts per step")
    p.add_argument("--p-right", type=float, default=0.5, help="rollout success from a right prefix")
    p.add_argument("--p-wrong", type=float, default=0.05, help="rollout success from a wrong prefix")
    p.add_argument("--layers", type=int, default=4, help="backbone: the first L layers of SmolLM2-135M")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--learning-rate", type=float, default=5e-5)
    p.add_argument("--held-out", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--skip-trl", action="store_true", help="only the soft / hard comparison")
    p.add_argument("--skip-soft", action="store_true", help="only the TRL comparison")
    p.add_argument(
        "--trl-first", action="store_true", help="train with TRL first (load drifts on a shared host)"
    )
    p.add_argument("--from-dataset", help="rows from this synthetic dataset root (real MC rollouts)")
    p.add_argument("--dataset-version", help="with --from-dataset: version number or tag (default: latest)")
    p.add_argument("--folds", type=int, default=1, help="soft / hard: cross-fit over N problem folds")
    p.add_argument("--with-truth", action="store_true", help="soft / hard: also train on the exact truth")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch

    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    if args.from_dataset:
        rows, counts = dataset_rows(args.from_dataset, args.dataset_version)
        summary["labels"] = counts
        print(json.dumps(counts), flush=True)
    else:
        rows = synthetic_rows(
            args.problems, args.steps, args.wrong, args.seed, args.k, args.p_right, args.p_wrong
        )
    base = initial_checkpoint(args.layers, args.out, args.seed)
    rows, misaligned = aligned_rows(rows, base)
    train_rows, held = split_by_problem(rows, args.held_out)
    summary["rows"] = {
        "rows": len(rows),
        "problems": len({r.problem_id for r in rows}),
        "refused_by_the_alignment_check": misaligned,
        "train": len(train_rows),
        "held_out": len(held),
        "held_out_problems": len({r.problem_id for r in held}),
    }
    print(json.dumps(summary["rows"]), flush=True)
    values = [v for r in rows for v in r.values or ()]
    if not args.skip_soft and not any(v > 0 for v in values):
        summary["soft_vs_hard"] = f"degenerate MC values: all {len(values)} are 0; nothing to compare"
        print(summary["soft_vs_hard"], flush=True)
        args.skip_soft = True

    if not args.skip_trl:
        truth = with_labels(rows, "truth")
        runs = {
            "prm-factory train": lambda: train_ours(truth, base, args.out / "ours", args),
            "trl 1.13.0 PRMTrainer": lambda: train_trl(truth, base, args.out / "trl", args),
        }
        folders = {"prm-factory train": args.out / "ours", "trl 1.13.0 PRMTrainer": args.out / "trl"}
        if args.trl_first:
            runs = dict(reversed(runs.items()))
        throughput, scored = {}, {}
        for name, run in runs.items():
            stats = run()
            stats["rows_per_s"] = stats["rows"] / stats["seconds"]
            stats["tokens_per_s"] = stats["tokens"] / stats["seconds"]
            stats["tokens_per_cpu_s"] = stats["tokens"] / stats["cpu_seconds"]
            throughput[name] = stats
            scored[name] = held_out_scores(folders[name], held)
            print(name, json.dumps(stats), flush=True)
        summary["trainers"] = {
            "throughput": throughput,
            "step_accuracy": bootstrap(held, scored, _accuracy),
            "step_auroc": bootstrap(held, scored, _auroc),
        }
        print(json.dumps(summary["trainers"], indent=1), flush=True)

    if not args.skip_soft:
        scored, fold_stats = {}, {}
        kinds = ("hard", "soft", "truth") if args.with_truth else ("hard", "soft")
        for kind in kinds:
            name = "exact truth" if kind == "truth" else f"mc {kind}"
            if args.folds > 1:
                scored[name], fold_stats[name] = cross_fitted_scores(rows, kind, base, args.out, args)
                continue
            folder = args.out / f"mc-{kind}"
            stats = train_ours(with_labels(rows, kind), base, folder, args, soft=kind == "soft")
            scored[name] = held_out_scores(folder, held)
            print(name, json.dumps(stats), flush=True)
        scored_rows = rows if args.folds > 1 else held  # cross-fitted: every row is held out once
        summary["soft_vs_hard"] = {
            "scored_rows": len(scored_rows),
            "scored_steps": sum(len(r.labels) for r in scored_rows),
            "scored_problems": len({r.problem_id for r in scored_rows}),
            "step_auroc": bootstrap(scored_rows, scored, _auroc),
            "step_accuracy": bootstrap(scored_rows, scored, _accuracy),
            "fold_stats": fold_stats,
        }
        print(json.dumps(summary["soft_vs_hard"], indent=1), flush=True)
    (args.out / "bench_train.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
