"""Train a process reward model with TRL's own PRM trainer, straight from `prm-factory export trl`.

    prm-factory export trl -o /tmp/trl.parquet --label hard --check-tokenizer MODEL_DIR
    python examples/train_prm_trl.py --data /tmp/trl.parquet --output-dir /tmp/prm-trl --max-steps 50

The exported rows (`prompt`, `completions`, `labels`, plus `chain_id` and `problem_id`) are loaded into a
`datasets.Dataset` unchanged and handed to `trl.experimental.prm.PRMTrainer` (trl 1.13.0, the last release
that ships it), which tokenizes them itself: each step followed by `step_separator`, the step's label on the
separator's last token. The model is `AutoModelForTokenClassification` with two labels on the embedded
SmolLM2-135M checkpoint (or `--model`), on CPU unless a GPU is there.

Before training, every row goes through the same tokenizer check as `export --check-tokenizer`
(exports/tokenizer_check.py): a row whose steps would not land on exactly one label position each stops the
script, naming the row, instead of training on shifted or missing labels.

Rows are split by problem (a stable hash of `problem_id`), so no held-out problem is seen in training. On the
held-out rows the script prints step-level accuracy (the trainer's own `compute_accuracy` over label
positions) next to two trivial baselines: always "correct", and the training split's majority label.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm_factory.exports.tokenizer_check import TrainerSettings, check_rows  # noqa: E402


def is_held_out(problem_id: str, fraction: float) -> bool:
    return int(hashlib.sha256(problem_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < fraction


def load_rows(path: Path) -> Any:
    """The export file as a `datasets.Dataset` (parquet, or JSON Lines), columns as written."""
    from datasets import load_dataset

    kind = {".parquet": "parquet", ".jsonl": "json", ".json": "json"}.get(path.suffix)
    if kind is None:
        raise SystemExit(f"{path}: expected a .parquet or .jsonl file from `prm-factory export trl`")
    rows = load_dataset(kind, data_files=str(path), split="train")
    missing = {"prompt", "completions", "labels", "problem_id"} - set(rows.column_names)
    if missing:
        raise SystemExit(f"{path} lacks {sorted(missing)}: export it with `prm-factory export trl`")
    return rows


def split_by_problem(rows: Any, fraction: float) -> tuple[Any, Any]:
    held = [is_held_out(problem_id, fraction) for problem_id in rows["problem_id"]]
    train = rows.select([i for i, h in enumerate(held) if not h])
    held_out = rows.select([i for i, h in enumerate(held) if h])
    return train, held_out


def require_aligned(rows: Any, tokenizer: Any, settings: TrainerSettings) -> None:
    problems = check_rows(rows, tokenizer, settings)
    if problems:
        listing = "\n".join(f"  {p.row_id}: {p.reason}" for p in problems)
        raise SystemExit(f"{len(problems)} of {len(rows)} rows would train misaligned:\n{listing}")


def load_model(model_dir: Path) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForTokenClassification.from_pretrained(model_dir, num_labels=2, dtype=torch.float32)
    model.config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def build_trainer(
    model: Any,
    tokenizer: Any,
    train: Any,
    held_out: Any | None,
    output_dir: Path,
    *,
    max_steps: int,
    batch_size: int,
    learning_rate: float,
    max_length: int | None,
    seed: int,
    step_separator: str | None = None,
    trainer_class: type | None = None,
) -> Any:
    """A PRMTrainer on the exported rows as they are; `trainer_class` lets a test record what it sees."""
    import torch
    from trl.experimental.prm import PRMConfig, PRMTrainer

    args = PRMConfig(
        output_dir=str(output_dir),
        use_cpu=not torch.cuda.is_available(),
        bf16=False,  # float32 on CPU; the checkpoint is small
        gradient_checkpointing=False,  # PRMConfig turns it on; it only slows a 135M model down
        per_device_train_batch_size=batch_size,
        per_device_eval_batch_size=batch_size,
        max_steps=max_steps,
        learning_rate=learning_rate,
        logging_steps=max(1, max_steps // 10),
        save_strategy="no",
        report_to="none",
        seed=seed,
        dataloader_num_workers=0,
        # unset: PRMConfig's own defaults, which `export --check-tokenizer` also assumes
        **({} if max_length is None else {"max_length": max_length}),
        **({} if step_separator is None else {"step_separator": step_separator}),
    )
    return (trainer_class or PRMTrainer)(
        model=model, args=args, train_dataset=train, eval_dataset=held_out, processing_class=tokenizer
    )


def baselines(
    train_labels: Sequence[Sequence[bool]], held_labels: Sequence[Sequence[bool]]
) -> dict[str, float]:
    train_steps = [label for row in train_labels for label in row]
    held_steps = [label for row in held_labels for label in row]
    majority = sum(train_steps) * 2 >= len(train_steps)
    return {
        "always correct": sum(held_steps) / len(held_steps),
        f"train majority ({'correct' if majority else 'incorrect'})": sum(
            label == majority for label in held_steps
        )
        / len(held_steps),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="`prm-factory export trl` output")
    parser.add_argument("--output-dir", type=Path, required=True, help="where the trained PRM is saved")
    parser.add_argument("--model", type=Path, help="checkpoint to start from (default: embedded SmolLM2)")
    parser.add_argument("--max-steps", type=int, default=50, help="optimiser steps")
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--max-length", type=int, help="PRMConfig.max_length (default: TRL's 1024)")
    parser.add_argument(
        "--step-separator",
        help="PRMConfig.step_separator (default: TRL's '\\n'); must match `export --check-tokenizer`. "
        "Multi-line steps need another one, e.g. ' ки\\n'",
    )
    parser.add_argument("--held-out", type=float, default=0.2, help="fraction of problems held out")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    timings: dict[str, float] = {}
    started = time.perf_counter()
    if args.model is None:
        from prm_factory.sampling.model_prep import prepare_default_model

        args.model = prepare_default_model()
    rows = load_rows(args.data)
    model, tokenizer = load_model(args.model)
    timings["load data and model"] = time.perf_counter() - started

    mark = time.perf_counter()
    require_aligned(rows, tokenizer, TrainerSettings(args.step_separator, max_length=args.max_length))
    train, held_out = split_by_problem(rows, args.held_out)
    if len(train) == 0 or len(held_out) == 0:
        raise SystemExit(
            f"{len(train)} training and {len(held_out)} held-out rows from {len(set(rows['problem_id']))} "
            "problems: export more problems or change --held-out"
        )
    timings["tokenizer check"] = time.perf_counter() - mark
    print(
        f"{len(rows)} rows: {len(train)} train ({sum(map(len, train['labels']))} steps), "
        f"{len(held_out)} held out ({sum(map(len, held_out['labels']))} steps)"
    )

    mark = time.perf_counter()
    trainer = build_trainer(
        model,
        tokenizer,
        train,
        held_out,
        args.output_dir,
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        max_length=args.max_length,
        seed=args.seed,
        step_separator=args.step_separator,
    )
    timings["tokenize (PRMTrainer)"] = time.perf_counter() - mark
    mark = time.perf_counter()
    result = trainer.train()
    timings[f"train ({args.max_steps} steps)"] = time.perf_counter() - mark
    mark = time.perf_counter()
    trainer.save_model(str(args.output_dir))
    timings["save"] = time.perf_counter() - mark
    mark = time.perf_counter()
    metrics = trainer.evaluate()
    timings["evaluate"] = time.perf_counter() - mark

    print(f"train loss {result.training_loss:.4f}; saved to {args.output_dir}")
    print(f"held-out step accuracy: {metrics['eval_accuracy']:.3f}")
    for name, value in baselines(train["labels"], held_out["labels"]).items():
        print(f"  baseline {name}: {value:.3f}")
    for name, seconds in timings.items():
        print(f"  {name}: {seconds:.1f} s")


if __name__ == "__main__":
    main()
