"""The training loop: accelerate, checkpoints and resume, held-out evaluation each epoch, the final model.

One process trains on CPU or one GPU; `accelerate launch -m prm_factory.cli train ...` (or `accelerate launch
$(which prm-factory) train ...`) spreads batches over GPUs with the same code: each process streams its own
batches (training/stream.py), `Accelerator` averages gradients, and only the main process evaluates, prints
and writes.

Streamed, with flat memory: the rows come from a row source (training/chain_source.py) one partition at a
time (about 16 k steps of a dataset version, whatever its size), are laid out into tokens as batches need
them, and the held-out split is scored a partition at a time. A census pass first counts every partition, so
the epoch's length, the learning-rate schedule and the checkpoint fingerprint are known before the first
step (training/stream.py). Rows given as a list (an `export trl` file) are one partition, held in memory.

Resumable by construction: the order of epoch e is a pure function of (seed, e) and the rows, and a
checkpoint (`OUTPUT/checkpoints/step-N`: accelerate's state of model, optimiser, scheduler and RNGs, plus
`trainer_state.json`) records the epoch and the batches of it already done, so `--resume` starts the stream
right after them and continues with the next batch. A checkpoint made from other rows or settings is
refused, not silently mixed (its fingerprint of rows and settings must match).

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

from prm_factory.training.chain_source import RowSource, as_source
from prm_factory.training.layout import Skipped
from prm_factory.training.model import (
    HeadSpec,
    collate,
    load_model,
    load_tokenizer,
    position_logits,
    step_loss,
)
from prm_factory.training.rows import TrainRow
from prm_factory.training.step_metrics import THRESHOLD, StepMetrics, ThresholdChoice
from prm_factory.training.stream import (
    Census,
    EpochExamples,
    ExampleSpec,
    TrainingError,
    batches_per_process,
    held_out_tally,
    take_census,
)

STATE_FILE = "trainer_state.json"


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


def fingerprint(digests: Sequence[str], settings: TrainSettings, processes: int = 1) -> str:
    """Rows (the census's digest of each partition's examples) and the settings that decide batches and
    targets: a resume must see the same. The number of processes is part of it when above 1: a checkpoint
    counts the batches each process has done, which another number of processes would skip wrongly."""
    digest = hashlib.sha256()
    for part in digests:
        digest.update(part.encode())
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


def latest_checkpoint(output_dir: Path) -> Path | None:
    folder = output_dir / "checkpoints"
    found = [p for p in folder.glob("step-*") if (p / STATE_FILE).exists()] if folder.is_dir() else []
    return max(found, key=lambda p: int(p.name.split("-")[1]), default=None)


def train(
    rows: Sequence[TrainRow] | RowSource,
    settings: TrainSettings,
    provenance: Provenance,
    *,
    resume: bool = False,
    progress: Callable[[str], Any] | None = None,
    console: Any | None = None,
) -> TrainResult:
    """Train a PRM on `rows` (a row source of training.chain_source, streamed; or a list of training.rows
    rows, held in memory) and write the checkpoint to `settings.output_dir`."""
    import torch
    from accelerate import Accelerator
    from accelerate.data_loader import prepare_data_loader
    from accelerate.utils import gather_object, set_seed
    from torch.utils.data import DataLoader
    from transformers import get_linear_schedule_with_warmup

    say = progress or (lambda _line: None)
    accelerator = Accelerator(gradient_accumulation_steps=settings.gradient_accumulation)
    main = accelerator.is_main_process
    if not main:
        say = lambda _line: None  # noqa: E731
    processes, rank = accelerator.num_processes, accelerator.process_index

    tokenizer = load_tokenizer(settings.base_model)
    source = as_source(rows)
    spec = ExampleSpec(tokenizer, settings.separator, settings.max_length, settings.held_out)
    census = take_census(source, spec, rank, processes, gather_object if processes > 1 else None)
    _check_census(census, settings)
    for problem in census.skipped:
        say(f"skipped {problem.chain_id}: {problem.reason}")
    say(
        f"{census.total('rows')} rows: {census.train} train ({census.total('train_steps')} steps), "
        f"{census.held_out} held out ({census.total('held_out_steps')} steps), "
        f"{len(census.skipped)} skipped by the alignment check"
    )

    stamp = fingerprint(census.digests, settings, processes)
    # a resume from another run is refused before the model loads (minutes for a large one)
    resumed = _resumable(settings.output_dir, stamp) if resume else None
    model, _ = load_model(settings.base_model, num_labels=1 if settings.soft else 2, tokenizer=tokenizer)

    n_batches = batches_per_process(census.train, settings.batch_size, processes)
    steps_per_epoch = math.ceil(n_batches / settings.gradient_accumulation)
    total_steps = settings.epochs * steps_per_epoch
    if settings.max_steps is not None:
        total_steps = min(total_steps, settings.max_steps) if settings.max_steps > 0 else total_steps
    # fused: one kernel over all parameters (CPU and CUDA), several times faster than the per-tensor loop
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay, fused=True
    )
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, max(total_steps, 1))
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)

    state = {"global_step": 0, "epoch": 0, "batches_done": 0, "fingerprint": stamp}
    if resumed is not None:
        checkpoint, state = resumed
        accelerator.load_state(str(checkpoint))
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
        if main and census.held_out:
            tally = held_out_tally(
                accelerator.unwrap_model(model),
                source,
                census,
                spec,
                settings.head,
                pad_id,
                settings.eval_batch_size,
            )
            metrics = tally.metrics()
            evaluations.append((epoch, metrics))
            threshold[0] = tally.threshold_choice()
            say(f"epoch {epoch + 1} held out: {metrics.line()}")
        accelerator.wait_for_everyone()
        aside[0] += time.perf_counter() - mark
        aside[1] += time.process_time() - mark_cpu

    bar = _progress_bar(console if main else None)
    model.train()
    with bar as live:
        task = live.add_task("train", total=total_steps, completed=state["global_step"]) if live else None
        while state["epoch"] < settings.epochs and state["global_step"] < total_steps:
            examples = EpochExamples(
                source,
                census,
                spec,
                seed=settings.seed,
                epoch=state["epoch"],
                batch_size=settings.batch_size,
                rank=rank,
                processes=processes,
                batches_done=state["batches_done"],
            )
            # this process's batches already: accelerate only moves them to the device and tells the
            # gradient accumulation where the epoch ends (no sharding of its own: num_processes=1)
            loader = prepare_data_loader(
                DataLoader(
                    examples,
                    batch_size=settings.batch_size,
                    collate_fn=lambda chunk: collate(chunk, pad_id),
                ),
                device=accelerator.device,
                num_processes=1,
                process_index=0,
                put_on_device=True,
                dispatch_batches=False,
            )
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
            census.skipped,
            threshold[0],
        )
    accelerator.wait_for_everyone()
    return TrainResult(
        global_step=state["global_step"],
        epochs_done=state["epoch"],
        train_loss=train_loss,
        evaluations=evaluations,
        skipped=census.skipped,
        n_train=census.train,
        n_held_out=census.held_out,
        train_seconds=seconds,
        other_seconds=aside[0],
        train_cpu_seconds=cpu_seconds,
        train_tokens=tokens,
        output_dir=settings.output_dir,
        main_process=main,
    )


def _check_census(census: Census, settings: TrainSettings) -> None:
    """Refuse what cannot train before anything is written."""
    rows = census.total("rows")
    if not rows:
        raise TrainingError("no rows with labels of that source: nothing to train on")
    if settings.soft and census.total("without_values"):
        raise TrainingError("soft training needs MC values on every row (rows from --label mc --soft)")
    if not census.train:
        raise TrainingError(
            f"no training rows: {rows} rows, {len(census.skipped)} skipped by the alignment check, "
            f"{census.held_out} held out (--held-out {settings.held_out})"
        )


def _resumable(output_dir: Path, stamp: str) -> tuple[Path, dict[str, Any]]:
    """The latest checkpoint under `output_dir` and its saved state; refused unless it was made from the
    same rows and settings (its saved fingerprint is `stamp`)."""
    checkpoint = latest_checkpoint(output_dir)
    if checkpoint is None:
        raise TrainingError(f"--resume: no checkpoint under {output_dir / 'checkpoints'}")
    saved = json.loads((checkpoint / STATE_FILE).read_text())
    if saved["fingerprint"] != stamp:
        raise TrainingError(
            f"--resume: {checkpoint} was made from other rows, settings or number of processes "
            f"(fingerprint {saved['fingerprint']}, now {stamp}); train into a new --output-dir"
        )
    return checkpoint, saved


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
