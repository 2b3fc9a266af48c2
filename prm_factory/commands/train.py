"""`prm-factory train` and `prm-factory score`: a PRM trained from a dataset version (or a `export trl` file)
on transformers and accelerate, and its step scores on any ProcessBench-shape chain file (training/).

`app` is this group's Typer app; `register(app)` merges its commands into the main one (prm_factory/cli.py).
Both commands print through the module's one `console`; a call that cannot work fails through
prm_factory.console.fail: one `error:` line on stderr, exit 2 for a wrong call and 1 for data that cannot
serve (no rows, an unknown version, a checkpoint of other rows), never a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from prm_factory.commands.options import AgreementOnlyOption, SinceVersionOption, VersionOption
from prm_factory.console import fail
from prm_factory.training.rows import label_sources

if TYPE_CHECKING:
    from prm_factory.training.scorer import ScoredChain, ScoredFile, ScoredRows
    from prm_factory.training.trainer import TrainResult

app = typer.Typer()
"""The training commands; prm_factory/cli.py merges them into the main app."""

console = Console()
"""Where both commands print (rich resolves stdout at each print, so a test's CliRunner captures it)."""


def register(parent: typer.Typer) -> None:
    """Merge this group's commands into `parent` (the main app, or a test's)."""
    parent.add_typer(app)


@contextmanager
def failing_cleanly(*also: type[Exception]) -> Iterator[None]:
    """What the data or a checkpoint refuses (training.rows.RowsError, storage's StorageError,
    training.stream.TrainingError, and the types in `also`) as one error line and exit status 1."""
    from prm_factory.storage.errors import StorageError
    from prm_factory.training.rows import RowsError
    from prm_factory.training.stream import TrainingError

    try:
        yield
    except (RowsError, StorageError, TrainingError, *also) as error:
        fail(escape(str(error)), 1)


def _threads(threads: int | None) -> None:
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def _say(line: str) -> None:
    console.print(escape(line), soft_wrap=True, highlight=False)


@app.command("train")
def train_command(
    output_dir: Annotated[Path, typer.Option("--output-dir", "-o", help="Where the trained PRM goes.")],
    dataset: Annotated[
        Path | None,
        typer.Option(help="Dataset root (default: ./prm-datasets/default or $PRM_FACTORY_DATASET)."),
    ] = None,
    version: VersionOption = None,
    data: Annotated[
        Path | None, typer.Option(help="Train from a `prm-factory export trl` file instead of a dataset.")
    ] = None,
    label: Annotated[
        str, typer.Option(help="Label source: " + " | ".join(label_sources()) + " (plug-ins included).")
    ] = "consensus",
    soft: Annotated[
        bool, typer.Option("--soft", help="With --label mc: regress the MC value (1 output, BCE).")
    ] = False,
    agreement_only: AgreementOnlyOption = False,
    since_version: SinceVersionOption = None,
    model: Annotated[
        Path | None, typer.Option(help="Base checkpoint (default: the embedded SmolLM2-135M-Instruct).")
    ] = None,
    step_separator: Annotated[
        str, typer.Option(help="Written after each step; its last token carries the step's label.")
    ] = " ки\n",
    max_length: Annotated[int, typer.Option(help="Tokens per chain; a row cut shorter is skipped.")] = 1024,
    epochs: Annotated[int, typer.Option(min=1)] = 1,
    max_steps: Annotated[
        int | None, typer.Option(min=1, help="Stop after this many optimiser steps.")
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Chains per batch and process.")] = 4,
    gradient_accumulation: Annotated[int, typer.Option(min=1)] = 1,
    learning_rate: Annotated[float, typer.Option()] = 1e-5,
    held_out: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of problems held out.")] = 0.2,
    seed: Annotated[int, typer.Option()] = 0,
    save_every: Annotated[
        int | None, typer.Option(min=1, help="Checkpoint every N optimiser steps (and each epoch's end).")
    ] = None,
    keep_checkpoints: Annotated[int, typer.Option(min=1, help="Checkpoints kept (the newest).")] = 2,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue from the latest checkpoint in --output-dir.")
    ] = False,
    threads: Annotated[int | None, typer.Option(min=1, help="torch CPU threads.")] = None,
) -> None:
    """Train a PRM on a dataset version's step labels (hard: cross-entropy; --soft: BCE on MC values)."""
    from prm_factory.api import train
    from prm_factory.config.run_config import ConfigError

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _threads(threads)
    if data is not None and (soft or agreement_only or since_version or version):
        fail(
            "--data reads an export file as it is: --soft, --agreement-only, --since-version and "
            "--version apply to a dataset"
        )
    with failing_cleanly(ConfigError, OSError):  # rows are read while training: errors come from there too
        result = train(
            output_dir,
            dataset=dataset if data is None else None,
            version=version,
            export_file=data,
            label=label,
            soft=soft,
            agreement_only=agreement_only,
            since_version=since_version,
            base_model=model,
            resume=resume,
            progress=_say,
            console=console,
            separator=step_separator,
            max_length=max_length,
            epochs=epochs,
            max_steps=max_steps,
            batch_size=batch_size,
            gradient_accumulation=gradient_accumulation,
            learning_rate=learning_rate,
            held_out=held_out,
            seed=seed,
            save_every=save_every,
            keep_checkpoints=keep_checkpoints,
        )
    if result.main_process:
        _print_training(result)


def _print_training(result: TrainResult) -> None:
    loss = "n/a" if result.train_loss is None else f"{result.train_loss:.4f}"
    rate = result.train_tokens / result.train_seconds if result.train_seconds else 0.0
    console.print(
        f"step {result.global_step}: mean train loss {loss}, {result.train_seconds:.1f} s "
        f"({rate:.0f} tokens/s; evaluation and checkpoints {result.other_seconds:.1f} s); saved to "
        f"{result.output_dir}",
        soft_wrap=True,
        highlight=False,
    )


@app.command("score")
def score_command(
    checkpoint: Annotated[Path, typer.Argument(help="A PRM from `prm-factory train` (or TRL's PRMTrainer).")],
    file: Annotated[
        Path | None,
        typer.Argument(help="Chains: ProcessBench-shape JSONL / JSON, or a folder (or use --dataset)."),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(help="Score a dataset version's chains against its stored labels instead of a file."),
    ] = None,
    version: Annotated[
        str | None, typer.Option(help="With --dataset: version number or tag (default: latest).")
    ] = None,
    label: Annotated[
        str,
        typer.Option(help="With --dataset: the labels scored against: " + " | ".join(label_sources()) + "."),
    ] = "consensus",
    agreement_only: AgreementOnlyOption = False,
    since_version: SinceVersionOption = None,
    held_out_only: Annotated[
        bool,
        typer.Option(
            "--held-out-only", help="With --dataset: only the problems the checkpoint held out in training."
        ),
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write per-chain step scores: .parquet, else JSON Lines."),
    ] = None,
    step_separator: Annotated[
        str | None, typer.Option(help="Override the checkpoint's separator (prm_factory.json).")
    ] = None,
    threshold: Annotated[float, typer.Option(help="A step is called wrong below this P(right).")] = 0.5,
    max_length: Annotated[
        int | None, typer.Option(min=1, help="Override the checkpoint's max length (tokens per chain).")
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 8,
    threads: Annotated[int | None, typer.Option(min=1, help="torch CPU threads.")] = None,
) -> None:
    """Score every step of every chain: of a file (first-error F1 with gold first errors), or of a dataset
    version (step AUROC, accuracy and first-error F1 against its stored labels)."""
    from prm_factory.api import score_dataset, score_file
    from prm_factory.config.run_config import ConfigError

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if (file is None) == (dataset is None):
        fail("give a chain FILE or --dataset ROOT (one of them)")
    if dataset is None and (version or since_version or agreement_only or held_out_only):
        fail("--version, --since-version, --agreement-only and --held-out-only apply to --dataset")
    if not (checkpoint / "config.json").is_file():
        fail(escape(f"{checkpoint}: not a saved checkpoint (no config.json)"))
    _threads(threads)
    model = {"step_separator": step_separator, "max_length": max_length, "batch_size": batch_size}
    if dataset is None:
        try:
            scored_file = score_file(checkpoint, file, threshold=threshold, **model)  # type: ignore[arg-type]
        except ConfigError as error:
            fail(escape(str(error)))
        _print_file(scored_file, threshold, output)
        return
    with failing_cleanly(ConfigError, OSError):
        scored = score_dataset(
            checkpoint,
            dataset,
            version=version,
            label=label,
            agreement_only=agreement_only,
            since_version=since_version,
            held_out_only=held_out_only,
            threshold=threshold,
            **model,
        )
    _print_dataset(scored, f"{dataset}", label, threshold, output)


def _print_dataset(
    scored: ScoredRows, dataset: str, label: str, threshold: float, output: Path | None
) -> None:
    """The figures of a dataset version's chains against their stored labels."""
    console.print(
        f"{len(scored.chains)} chains of {escape(dataset)} scored against their {label} labels; "
        f"{scored.n_misaligned} refused by the alignment check (left out of the figures)",
        soft_wrap=True,
        highlight=False,
    )
    _show_and_write(scored.chains, output)
    metrics = scored.metrics
    if metrics is None:
        console.print("no chain passed the alignment check: no figures", highlight=False)
        return
    roc = "n/a (one kind of label only)" if metrics.auroc is None else f"{metrics.auroc:.3f}"
    console.print(
        f"step AUROC {roc}, first-error F1 {metrics.first_error_f1:.3f}, step accuracy "
        f"{metrics.accuracy:.3f} (threshold {threshold}; always right {metrics.always_correct:.3f}) "
        f"over {metrics.n_chains} chains, {metrics.n_steps} steps",
        soft_wrap=True,
        highlight=False,
    )


def _print_file(result: ScoredFile, threshold: float, output: Path | None) -> None:
    """The first-error F1 of a chain file, where it carries gold first errors."""
    chains = result.chains
    console.print(
        f"{len(chains)} chains scored ({result.rejected} rows refused by the reader); "
        f"{sum(c.problem is not None for c in chains)} read off their step ends (alignment check)",
        highlight=False,
    )
    _show_and_write(chains, output)
    if result.first_error is None:
        console.print("no gold first errors in the file: no F1", highlight=False)
        return
    fe = result.first_error
    console.print(
        f"first-error F1 {fe.f1:.3f} (threshold {threshold}): erroneous {fe.accuracy_erroneous:.3f} "
        f"of {fe.n_erroneous}, correct {fe.accuracy_correct:.3f} of {fe.n_correct}",
        highlight=False,
    )


def _show_and_write(chains: Sequence[ScoredChain], output: Path | None) -> None:
    """The first five alignment problems, then the scores written to `output` when given."""
    from prm_factory.training.scorer import write_scores

    for chain in [c for c in chains if c.problem is not None][:5]:
        console.print(f"  {chain.id}: {escape(chain.problem or '')}", soft_wrap=True, highlight=False)
    if output is not None:
        write_scores(chains, output)
        console.print(f"wrote {output}", highlight=False)
