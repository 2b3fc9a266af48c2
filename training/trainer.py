"""The training loop: accelerate, checkpoints and resume, held-out evaluation each epoch, the final model.

One process trains on CPU or one GPU; `accelerate launch -m prm_factory.cli train ...` (or `accelerate launch
$(which prm-factory) train ...`) spreads batches over GPUs with the same code: `Accelerator` shards the
data loader and averages gradients, and only the main process evaluates, prints and writes.

Resumable by construction: the batch order of epoch e is a permutation seeded by (seed, e), and a checkpoint
(`OUTPUT/checkpoints/step-N`: accelerate's state of model, optimiser, scheduler and RNGs, plus
`trainer_state.json`) records the epoch and the batches of it already done, so `--resume` skips exactly those
and continues with the next batch. A checkpoint made from other rows or settings is refused, not silently
mixed (its fingerprint of rows and settings must match).

The final checkpoint in OUTPUT is a Hugging Face folder (weights, tokenizer, `prm_factory.json` with head and
layout, README.md model card naming the data, label source and provenance).
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prm_factory.training.layout import Example, Skipped, prepare
from prm_factory.training.model import (
    HeadSpec,
    collate,
    load_model,
    position_logits,
    score_examples,
    step_loss,
)
from prm_factory.training.rows import TrainRow, split_by_problem
from prm_factory.training.step_metrics import (
    THRESHOLD,
    StepMetrics,
    ThresholdChoice,
    choose_threshold,
    step_metrics,
)

STATE_FILE = "trainer_state.json"


class TrainingError(RuntimeError):
    """Training cannot start or resume as asked (no rows, an empty split, a checkpoint of other data)."""


@dataclass(frozen=True)
class TrainSettings:
    base_model: Path
    output_dir: Path
    separator: str
    max_length: int | None = 1024
    soft: bool = False
    epochs: int = 1
    max_steps: int | None = None  # optimiser steps; stops before the epochs end when reached
    batch_size: int = 4
    gradient_accumulation: int = 1
    learning_rate: float = 1e-5
    weight_decay: float = 0.0
    held_out: float = 0.2
    seed: int = 0
    save_every: int | None = None  # optimiser steps between checkpoints (and one at each epoch's end)
    keep_checkpoints: int = 2
    eval_batch_size: int = 8

    @property
    def head(self) -> str:
        return "value" if self.soft else "classes"


@dataclass(frozen=True)
class Provenance:
    """Where the rows came from, for the model card and `prm_factory.json`."""

    source: str  # dataset root or export file
    dataset_version: int | None
    label: str
    agreement_only: bool = False
    since_version: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class TrainResult:
    global_step: int
    epochs_done: int  # whole epochs behind the checkpoint
    train_loss: float | None  # mean over the optimiser steps of this call
    evaluations: list[tuple[int, StepMetrics]]  # (epoch, held-out metrics)
    skipped: list[Skipped]
    n_train: int
    n_held_out: int
    train_seconds: float  # the training loop, held-out evaluation and checkpoint writes excluded
    other_seconds: float  # held-out evaluation and checkpoint writes
    train_cpu_seconds: float  # CPU time of this process in the loop (a fair measure on a shared machine)
    train_tokens: int  # tokens read in training by this call, padding excluded, summed over processes
    output_dir: Path
    main_process: bool = True  # False in the other processes of `accelerate launch`: they print nothing


def fingerprint(examples: Sequence[Example], settings: TrainSettings, processes: int = 1) -> str:
    """Rows and the settings that decide batches and targets: a resume must see the same. The number of
    processes is part of it when above 1: a checkpoint counts the batches each process has done, which
    another number of processes would skip wrongly."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(
            json.dumps([example.chain_id, example.input_ids, example.labels, example.values]).encode()
        )
    fixed = {
        k: str(v) for k, v in asdict(settings).items() if k in ("separator", "max_length", "soft", "seed")
    }
    fixed |= {
        "batch": str(settings.batch_size * settings.gradient_accumulation),
        "held_out": str(settings.held_out),
    }
    if processes > 1:  # left out at 1, so single-process checkpoints keep their fingerprint
        fixed["processes"] = str(processes)
    digest.update(json.dumps(fixed, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    import torch

    generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
    return torch.randperm(n, generator=generator).tolist()


def latest_checkpoint(output_dir: Path) -> Path | None:
    folder = output_dir / "checkpoints"
    found = [p for p in folder.glob("step-*") if (p / STATE_FILE).exists()] if folder.is_dir() else []
    return max(found, key=lambda p: int(p.name.split("-")[1]), default=None)


def train(
    rows: Sequence[TrainRow],
    settings: TrainSettings,
    provenance: Provenance,
    *,
    resume: bool = False,
    progress: Callable[[str], Any] | None = None,
    console: Any | None = None,
) -> TrainResult:
    """Train a PRM on `rows` (training.rows) and write the checkpoint to `settings.output_dir`."""
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed
    from torch.utils.data import DataLoader
    from transformers import get_linear_schedule_with_warmup

    say = progress or (lambda _line: None)
    accelerator = Accelerator(gradient_accumulation_steps=settings.gradient_accumulation)
    main = accelerator.is_main_process
    if not main:
        say = lambda _line: None  # noqa: E731

    model, tokenizer = load_model(settings.base_model, num_labels=1 if settings.soft else 2)
    if settings.soft and any(row.values is None for row in rows):
        raise TrainingError("soft training needs MC values on every row (rows from --label mc --soft)")
    examples, skipped = prepare(rows, tokenizer, settings.separator, settings.max_length)
    for problem in skipped:
        say(f"skipped {problem.chain_id}: {problem.reason}")
    by_id = {row.chain_id: row for row in rows}
    train_rows, held_rows = split_by_problem([by_id[e.chain_id] for e in examples], settings.held_out)
    train_ids, held_ids = {r.chain_id for r in train_rows}, {r.chain_id for r in held_rows}
    train_examples = [e for e in examples if e.chain_id in train_ids]
    held_examples = [e for e in examples if e.chain_id in held_ids]
    if not train_examples:
        raise TrainingError(
            f"no training rows: {len(rows)} rows, {len(skipped)} skipped by the alignment check, "
            f"{len(held_examples)} held out (--held-out {settings.held_out})"
        )
    n_train_steps = sum(len(e.positions) for e in train_examples)
    n_held_steps = sum(len(e.positions) for e in held_examples)
    say(
        f"{len(rows)} rows: {len(train_examples)} train ({n_train_steps} steps), "
        f"{len(held_examples)} held out ({n_held_steps} steps), "
        f"{len(skipped)} skipped by the alignment check"
    )

    steps_per_epoch = math.ceil(
        math.ceil(len(train_examples) / settings.batch_size / accelerator.num_processes)
        / settings.gradient_accumulation
    )
    total_steps = settings.epochs * steps_per_epoch
    if settings.max_steps is not None:
        total_steps = min(total_steps, settings.max_steps) if settings.max_steps > 0 else total_steps
    # fused: one kernel over all parameters (CPU and CUDA), several times faster than the per-tensor loop
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay, fused=True
    )
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, max(total_steps, 1))
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)

    stamp = fingerprint(examples, settings, accelerator.num_processes)
    state = {"global_step": 0, "epoch": 0, "batches_done": 0, "fingerprint": stamp}
    if resume:
        checkpoint = latest_checkpoint(settings.output_dir)
        if checkpoint is None:
            raise TrainingError(f"--resume: no checkpoint under {settings.output_dir / 'checkpoints'}")
        saved = json.loads((checkpoint / STATE_FILE).read_text())
        if saved["fingerprint"] != stamp:
            raise TrainingError(
                f"--resume: {checkpoint} was made from other rows, settings or number of processes "
                f"(fingerprint {saved['fingerprint']}, now {stamp}); train into a new --output-dir"
            )
        accelerator.load_state(str(checkpoint))
        state = saved
        say(f"resumed from {checkpoint} (step {state['global_step']}, epoch {state['epoch'] + 1})")

    pad_id = tokenizer.pad_token_id
    losses: list[float] = []
    evaluations: list[tuple[int, StepMetrics]] = []
    tokens = 0
    started, started_cpu = time.perf_counter(), time.process_time()
    aside = [0.0, 0.0]  # wall and CPU seconds of evaluation and checkpoint writes inside the loop

    def save_checkpoint() -> None:
        mark, mark_cpu = time.perf_counter(), time.process_time()
        accelerator.wait_for_everyone()
        folder = settings.output_dir / "checkpoints" / f"step-{state['global_step']}"
        accelerator.save_state(str(folder))
        if main:
            (folder / STATE_FILE).write_text(json.dumps(state, indent=2))
            older = sorted(
                (p for p in folder.parent.glob("step-*") if p != folder),
                key=lambda p: int(p.name.split("-")[1]),
            )
            for stale in older[: max(0, len(older) - settings.keep_checkpoints + 1)]:
                shutil.rmtree(stale, ignore_errors=True)
        aside[0] += time.perf_counter() - mark
        aside[1] += time.process_time() - mark_cpu

    # the last held-out evaluation's threshold choice: the `prm` label source calls steps with it
    threshold: list[ThresholdChoice] = [ThresholdChoice(THRESHOLD, "default: no held-out steps", 0, None)]

    def evaluate(epoch: int) -> None:
        mark, mark_cpu = time.perf_counter(), time.process_time()
        accelerator.wait_for_everyone()
        if main and held_examples:
            scores = score_examples(
                accelerator.unwrap_model(model),
                held_examples,
                settings.head,
                pad_id,
                settings.eval_batch_size,
            )
            metrics = step_metrics(scores, [e.labels for e in held_examples])
            evaluations.append((epoch, metrics))
            threshold[0] = choose_threshold(scores, [e.labels for e in held_examples])
            say(f"epoch {epoch + 1} held out: {metrics.line()}")
        accelerator.wait_for_everyone()
        aside[0] += time.perf_counter() - mark
        aside[1] += time.process_time() - mark_cpu

    bar = _progress_bar(console if main else None)
    model.train()
    with bar as live:
        task = live.add_task("train", total=total_steps, completed=state["global_step"]) if live else None
        while state["epoch"] < settings.epochs and state["global_step"] < total_steps:
            order = epoch_order(len(train_examples), settings.seed, state["epoch"])
            loader = accelerator.prepare_data_loader(
                DataLoader(
                    [train_examples[i] for i in order],
                    batch_size=settings.batch_size,
                    shuffle=False,
                    collate_fn=lambda chunk: collate(chunk, pad_id),
                )
            )
            n_batches = len(loader)
            if state["batches_done"]:
                loader = accelerator.skip_first_batches(loader, state["batches_done"])
            step_losses: list[float] = []
            for batch in loader:
                # dropout's draws depend on the batch's place only, so a resumed run continues exactly
                set_seed(settings.seed * 1_000_003 + state["epoch"] * 100_003 + state["batches_done"], True)
                with accelerator.accumulate(model):
                    loss = step_loss(position_logits(model, batch), batch, settings.head)
                    accelerator.backward(loss)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad()
                tokens += int(batch["attention_mask"].sum())
                state["batches_done"] += 1
                step_losses.append(float(accelerator.gather(loss.detach()).mean()))
                if not accelerator.sync_gradients:
                    continue
                state["global_step"] += 1
                losses.append(sum(step_losses) / len(step_losses))
                step_losses = []
                if live:
                    live.update(task, advance=1, description=f"train loss {losses[-1]:.4f}")
                if settings.save_every and state["global_step"] % settings.save_every == 0:
                    save_checkpoint()
                if state["global_step"] >= total_steps:
                    break
            evaluate(state["epoch"])  # each epoch's end, or where --max-steps stopped inside one
            if state["batches_done"] >= n_batches:
                state["epoch"] += 1
                state["batches_done"] = 0
            save_checkpoint()
    seconds = time.perf_counter() - started - aside[0]
    cpu_seconds = time.process_time() - started_cpu - aside[1]
    tokens = int(accelerator.reduce(torch.tensor(tokens, device=accelerator.device), reduction="sum"))

    train_loss = sum(losses) / len(losses) if losses else None
    if main:
        _write_final(
            accelerator,
            model,
            tokenizer,
            settings,
            provenance,
            evaluations,
            train_loss,
            state,
            skipped,
            threshold[0],
        )
    accelerator.wait_for_everyone()
    return TrainResult(
        global_step=state["global_step"],
        epochs_done=state["epoch"],
        train_loss=train_loss,
        evaluations=evaluations,
        skipped=skipped,
        n_train=len(train_examples),
        n_held_out=len(held_examples),
        train_seconds=seconds,
        other_seconds=aside[0],
        train_cpu_seconds=cpu_seconds,
        train_tokens=tokens,
        output_dir=settings.output_dir,
        main_process=main,
    )


class _NoBar:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _progress_bar(console: Any | None) -> Any:
    if console is None:
        return _NoBar()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def _write_final(
    accelerator: Any,
    model: Any,
    tokenizer: Any,
    settings: TrainSettings,
    provenance: Provenance,
    evaluations: list[tuple[int, StepMetrics]],
    train_loss: float | None,
    state: dict[str, Any],
    skipped: list[Skipped],
    threshold: ThresholdChoice,
) -> None:
    from prm_factory.training.card import model_card

    out = settings.output_dir
    out.mkdir(parents=True, exist_ok=True)
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.save_pretrained(out, state_dict=accelerator.get_state_dict(model), safe_serialization=True)
    tokenizer.save_pretrained(out)
    record = {
        "provenance": asdict(provenance),
        "training": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(settings).items()},
        "global_step": state["global_step"],
        "train_loss": train_loss,
        "held_out": [{"epoch": e + 1, **asdict(m)} for e, m in evaluations],
        "skipped": [asdict(s) for s in skipped],
        "threshold": asdict(threshold),
    }
    HeadSpec(settings.head, settings.separator, settings.max_length).save(out, record)
    (out / "README.md").write_text(
        model_card(settings, provenance, evaluations, train_loss, state), encoding="utf-8"
    )
