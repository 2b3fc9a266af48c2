"""`prm-factory train` and `prm-factory score`: a PRM trained from a dataset version (or a `export trl` file)
on transformers and accelerate, and its step scores on any ProcessBench-shape chain file (training/)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from prm_factory.commands.options import AgreementOnlyOption, SinceVersionOption, VersionOption


def _fail(message: str, code: int = 2) -> NoReturn:
    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)


def _threads(threads: int | None) -> None:
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def register(app: typer.Typer) -> None:
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
            str, typer.Option(help="Label source: consensus | verifier | reference | mc | judge.")
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
        max_length: Annotated[
            int, typer.Option(help="Tokens per chain; a row cut shorter is skipped.")
        ] = 1024,
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
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from prm_factory.storage.errors import StorageError
        from prm_factory.training.chain_source import DatasetRows
        from prm_factory.training.rows import RowsError, rows_from_export
        from prm_factory.training.trainer import Provenance, TrainingError, TrainSettings, train

        console = Console()
        _threads(threads)
        try:
            if data is not None:
                if soft or agreement_only or since_version or version:
                    _fail(
                        "--data reads an export file as it is: --soft, --agreement-only, --since-version and "
                        "--version apply to a dataset"
                    )
                rows = rows_from_export(data)  # in memory: the file is read whole
                if not rows:
                    _fail("no rows with labels of that source: nothing to train on", 1)
                provenance = Provenance(str(data), None, f"export file ({label} as given at export)")
            else:
                from prm_factory.config.run_config import default_dataset_root
                from prm_factory.storage.dataset import Dataset
                from prm_factory.storage.versions import resolve

                store = Dataset(str(dataset or default_dataset_root()))
                resolved = resolve(store, version)
                since = None if since_version is None else resolve(store, since_version)
                # streamed a partition at a time (training/chain_source.py), never held whole
                rows = DatasetRows(
                    store, resolved, label, soft=soft, agreement_only=agreement_only, since_version=since
                )
                provenance = Provenance(store.root, resolved, label, agreement_only, since)
        except (RowsError, StorageError, OSError) as error:
            _fail(str(error), 1)
        if model is None:
            from prm_factory.sampling.model_prep import prepare_default_model

            model = prepare_default_model()
        settings = TrainSettings(
            base_model=model,
            output_dir=output_dir,
            separator=step_separator,
            max_length=max_length,
            soft=soft,
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
        try:
            result = train(
                rows,
                settings,
                provenance,
                resume=resume,
                progress=lambda line: console.print(escape(line), soft_wrap=True, highlight=False),
                console=console,
            )
        except (TrainingError, RowsError, StorageError) as error:  # the rows are read while training
            _fail(str(error), 1)
        if not result.main_process:
            return
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
        checkpoint: Annotated[
            Path, typer.Argument(help="A PRM from `prm-factory train` (or TRL's PRMTrainer).")
        ],
        file: Annotated[
            Path | None,
            typer.Argument(help="Chains: ProcessBench-shape JSONL / JSON, or a folder (or use --dataset)."),
        ] = None,
        dataset: Annotated[
            Path | None,
            typer.Option(
                help="Score a dataset version's chains against its stored labels instead of a file."
            ),
        ] = None,
        version: Annotated[
            str | None, typer.Option(help="With --dataset: version number or tag (default: latest).")
        ] = None,
        label: Annotated[
            str,
            typer.Option(
                help="With --dataset: the labels scored against: consensus | verifier | reference | mc."
            ),
        ] = "consensus",
        agreement_only: AgreementOnlyOption = False,
        since_version: SinceVersionOption = None,
        held_out_only: Annotated[
            bool,
            typer.Option(
                "--held-out-only",
                help="With --dataset: only the problems the checkpoint held out in training.",
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
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from prm_factory.training.scorer import PrmScorer, score_file, write_scores

        if not (checkpoint / "config.json").is_file():
            _fail(f"{checkpoint}: not a saved checkpoint (no config.json)")
        if (file is None) == (dataset is None):
            _fail("give a chain FILE or --dataset ROOT (one of them)")
        if file is not None and (version or since_version or agreement_only or held_out_only):
            _fail("--version, --since-version, --agreement-only and --held-out-only apply to --dataset")
        if file is not None and not file.exists():
            _fail(f"{file}: no such file or folder")
        rows = None
        if dataset is not None:
            rows = _dataset_rows(dataset, version, label, agreement_only, since_version)
            if held_out_only:
                from prm_factory.training.scorer import held_out_rows

                try:
                    rows = held_out_rows(checkpoint, rows)
                except ValueError as error:
                    _fail(str(error))
            if not rows:
                _fail("no chains with labels of that source to score", 1)
        _threads(threads)
        console = Console()
        scorer = PrmScorer(checkpoint, separator=step_separator, max_length=max_length, batch_size=batch_size)
        if rows is not None:
            from prm_factory.training.scorer import score_rows

            scored_rows = score_rows(scorer, rows, threshold)
            chains = scored_rows.chains
            console.print(
                f"{len(chains)} chains of {escape(str(dataset))} scored against their {label} labels; "
                f"{scored_rows.n_misaligned} refused by the alignment check (left out of the figures)",
                soft_wrap=True,
                highlight=False,
            )
        else:
            result = score_file(scorer, file, threshold)  # type: ignore[arg-type]  # checked above
            chains = result.chains
            console.print(
                f"{len(chains)} chains scored ({result.rejected} rows refused by the reader); "
                f"{sum(c.problem is not None for c in chains)} read off their step ends (alignment check)",
                highlight=False,
            )
        for chain in [c for c in chains if c.problem is not None][:5]:
            console.print(f"  {chain.id}: {escape(chain.problem or '')}", soft_wrap=True, highlight=False)
        if output is not None:
            write_scores(chains, output)
            console.print(f"wrote {output}", highlight=False)
        if rows is not None:
            metrics = scored_rows.metrics
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
            return
        if result.first_error is None:
            console.print("no gold first errors in the file: no F1", highlight=False)
            return
        fe = result.first_error
        console.print(
            f"first-error F1 {fe.f1:.3f} (threshold {threshold}): erroneous {fe.accuracy_erroneous:.3f} "
            f"of {fe.n_erroneous}, correct {fe.accuracy_correct:.3f} of {fe.n_correct}",
            highlight=False,
        )


def _dataset_rows(
    dataset: Path | None, version: str | None, label: str, agreement_only: bool, since_version: str | None
) -> list:
    """A dataset version's rows for `label`, chosen as training chooses them (training.rows)."""
    from prm_factory.storage.errors import StorageError
    from prm_factory.training.rows import RowsError, rows_from_dataset

    try:
        from prm_factory.config.run_config import default_dataset_root
        from prm_factory.storage.dataset import Dataset
        from prm_factory.storage.versions import resolve

        store = Dataset(str(dataset or default_dataset_root()))
        resolved = resolve(store, version)
        since = None if since_version is None else resolve(store, since_version)
        return rows_from_dataset(store, resolved, label, agreement_only=agreement_only, since_version=since)
    except (RowsError, StorageError, OSError) as error:
        _fail(str(error), 1)
